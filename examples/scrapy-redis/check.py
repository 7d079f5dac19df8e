"""Checks what the crawl left in the server: every page crawled, across all processes, with
few duplicates, the Bloom filter's bitmap and the shared stats hash present.

scrapy-redis-bloomfilter tests a URL (GETBIT x k) and then adds it (SETBIT x k) in two
round trips, so two processes can both see a new URL as unseen: against redis-server too, a
three-process crawl of 300 pages fetches a few pages twice. The check allows up to 5%.

`check.py PAGES` checks; `check.py --ping` and `check.py --seed URL` are run.sh's start-up steps
through the same client."""

import json
import os
import sys

import redis

# The client the crawlers use: redis-py's RedisCluster when REDIS_CLS names it.
if os.environ.get("REDIS_CLS") == "redis.cluster.RedisCluster":
    r = redis.cluster.RedisCluster.from_url(os.environ["REDIS_URL"])
else:
    r = redis.Redis.from_url(os.environ["REDIS_URL"])
if sys.argv[1] == "--ping":
    sys.exit(0 if r.ping() else 1)
if sys.argv[1] == "--seed":
    r.lpush("site:start_urls", sys.argv[2])
    sys.exit(0)
pages = int(sys.argv[1])
items = [json.loads(x) for x in r.lrange("site:items", 0, -1)]
urls = [i["url"] for i in items]
want = {"http://127.0.0.1:%s/page/%d" % (os.environ["SITE_PORT"], i) for i in range(pages)}
missing, extra = want - set(urls), set(urls) - want
dupes = len(urls) - len(set(urls))
print("items: %d, distinct pages: %d of %d, duplicates: %d" % (len(urls), len(set(urls)), pages, dupes))
print("Bloom filter bitmap bytes: %d" % r.strlen("site:bloomfilter"), "| keys:", sorted(k.decode() for k in r.keys("site:*")))
stats = r.hgetall("site:stats")
print("stats hash fields:", len(stats), "| response_received_count:", stats.get(b"response_received_count"))
if missing or extra or dupes > pages // 20 or not stats or r.strlen("site:bloomfilter") == 0:
    print("FAIL: missing %d, unexpected %d, duplicates %d" % (len(missing), len(extra), dupes))
    sys.exit(1)
print("OK: every page crawled by", os.environ.get("CRAWLERS", "?"), "processes sharing one queue and filter")
