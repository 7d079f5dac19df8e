"""The crawl: a scrapy-redis spider whose request queue (a sorted set), start URLs (a list),
items (a list) and stats (a hash) live in the Redis-protocol server, with
scrapy-redis-bloomfilter's SETBIT/GETBIT dedup. Several processes run it at once; they share
one queue and one filter, so each page is fetched once in all."""

import os

from scrapy_redis.spiders import RedisSpider


class SiteSpider(RedisSpider):
    name = "site"
    redis_key = "site:start_urls"
    custom_settings = {
        "REDIS_URL": os.environ["REDIS_URL"],
        # scrapy-redis's client class (its `redis_cls` parameter, default redis.StrictRedis):
        # redis.cluster.RedisCluster against a cluster answering as Redis Cluster.
        "REDIS_PARAMS": {"redis_cls": os.environ.get("REDIS_CLS", "redis.StrictRedis")},
        "SCHEDULER": "scrapy_redis_bloomfilter.scheduler.Scheduler",
        "DUPEFILTER_CLASS": "scrapy_redis_bloomfilter.dupefilter.RFPDupeFilter",
        "BLOOMFILTER_HASH_NUMBER": 6,
        "BLOOMFILTER_BIT": 20,
        # The priority queue pops with MULTI on a plain pipeline, which redis-py's
        # RedisCluster refuses client-side ("multi() is not supported outside of
        # transactional context"), against Redis Cluster as here: run.sh picks the FIFO
        # queue (RPOP) for SERVER=cluster.
        "SCHEDULER_QUEUE_CLASS": os.environ.get(
            "SCHEDULER_QUEUE_CLASS", "scrapy_redis.queue.PriorityQueue"
        ),
        "SCHEDULER_PERSIST": True,
        "ITEM_PIPELINES": {"scrapy_redis.pipelines.RedisPipeline": 300},
        "STATS_CLASS": "scrapy_redis.stats.RedisStatsCollector",
        "MAX_IDLE_TIME_BEFORE_CLOSE": 8,
        "CONCURRENT_REQUESTS": 8,
        "LOG_LEVEL": "WARNING",
        "ROBOTSTXT_OBEY": False,
        "TELNETCONSOLE_ENABLED": False,
        "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7",
    }

    def parse(self, response):
        yield {"url": response.url, "title": response.css("h1::text").get()}
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href, self.parse)
