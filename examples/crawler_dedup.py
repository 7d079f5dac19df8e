#!/usr/bin/env python3
"""A web crawler's URL dedup shared by many crawler processes, through bloomkv-server.

Every crawler asks one shared Bloom filter "have we seen this URL?" with BF.ADD: the answer 1
means new (crawl it), 0 means seen (skip it). The filter lives in bloomkv-server, on disk, so
it survives restarts and any number of crawlers on any number of machines share it.

Run (from the repository root):

    cargo run --release -p bloomkv-server -- --dir /tmp/crawl-db --port 6380 &
    pip install redis
    python3 examples/crawler_dedup.py --port 6380 --workers 4 --urls 20000

It simulates crawlers discovering links (with many duplicates), reports how many URLs each
crawled and skipped, and checks that no URL was crawled twice and that the skips that were
false positives stay near the filter's error rate.
"""

import argparse
import random
import threading

import redis


def discovered_links(seed, n_unique, n_links):
    """Links a crawler runs into: drawn from n_unique pages, so most repeat."""
    rng = random.Random(seed)
    for _ in range(n_links):
        yield f"https://example.com/page/{rng.randrange(n_unique)}"


def crawler(worker, args, crawled, skipped, lock):
    r = redis.Redis(host=args.host, port=args.port, password=args.password)
    pipe_size = 100
    links = list(discovered_links(worker, args.urls, args.links_per_worker))
    mine = []
    skips = 0
    for start in range(0, len(links), pipe_size):
        batch = links[start:start + pipe_size]
        # One round trip for a hundred "seen?" checks; each BF.ADD is atomic on the server,
        # so two crawlers racing on the same URL cannot both get 1.
        answers = r.execute_command("BF.MADD", args.key, *batch)
        for url, new in zip(batch, answers):
            if new == 1:
                mine.append(url)  # a real crawler would fetch the page here
            else:
                skips += 1
    with lock:
        crawled.extend(mine)
        skipped[0] += skips


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=6379)
    p.add_argument("--password", default=None)
    p.add_argument("--key", default="crawler:seen")
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--urls", type=int, default=20000, help="distinct pages on the web")
    p.add_argument("--links-per-worker", type=int, default=20000)
    p.add_argument("--error-rate", type=float, default=0.001)
    args = p.parse_args()

    r = redis.Redis(host=args.host, port=args.port, password=args.password)
    r.delete(args.key)
    # Reserve for the expected number of pages; the filter scales if the web is bigger.
    r.execute_command("BF.RESERVE", args.key, args.error_rate, args.urls)

    crawled, skipped, lock = [], [0], threading.Lock()
    threads = [
        threading.Thread(target=crawler, args=(w, args, crawled, skipped, lock))
        for w in range(args.workers)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    distinct_seen = set()
    for w in range(args.workers):
        distinct_seen.update(discovered_links(w, args.urls, args.links_per_worker))
    assert len(crawled) == len(set(crawled)), "a URL was crawled twice"
    missed = len(distinct_seen) - len(crawled)  # new URLs the filter wrongly called seen
    info = r.execute_command("BF.INFO", args.key)
    print(f"links checked: {args.workers * args.links_per_worker}")
    print(f"distinct URLs: {len(distinct_seen)}, crawled: {len(crawled)}, skipped: {skipped[0]}")
    print(f"never crawled because of a false positive: {missed} "
          f"({missed / max(1, len(distinct_seen)):.4%}, target {args.error_rate:.4%})")
    print(f"BF.INFO: {info}")
    print(f"BF.CARD: {r.execute_command('BF.CARD', args.key)}")


if __name__ == "__main__":
    main()
