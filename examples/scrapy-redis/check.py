"""Checks what the crawl left in the server: every page crawled, across all processes, with
few duplicates, the Bloom filter's bitmap and the shared stats hash present.

scrapy-redis-bloomfilter tests a URL (GETBIT x k) and then adds it (SETBIT x k) in two
round trips, so two processes can both see a new URL as unseen: against redis-server too, a
three-process crawl of 300 pages fetches a few pages twice. The check allows up to 5%."""

import json
import os
import sys

import redis

pages = int(sys.argv[1])
r = redis.Redis.from_url(os.environ["REDIS_URL"])
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
