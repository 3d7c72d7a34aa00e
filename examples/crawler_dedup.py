#!/usr/bin/env python3
"""Crawler frontier de-duplication with a Bloom filter (rsbloom / RedisBloom BF.* commands).

Usage: REDIS_URL=redis://127.0.0.1:6379 python examples/crawler_dedup.py [N]

Reserves `crawler:seen` (error rate 0.001, capacity N), streams N URLs of which ~30% repeat
earlier ones, and asks BF.MADD (batches of 1000) which are new. A Python set gives the truth,
so skips of URLs never seen before are counted as false positives. Then compares the filter's
MEMORY USAGE with that of a Redis SET holding the same distinct URLs.
"""
import os
import random
import sys

import redis

BATCH = 1000
FILTER_KEY = "crawler:seen"
SET_KEY = "crawler:set"


def frontier(n, repeat_ratio=0.3, seed=42):
    rng = random.Random(seed)
    emitted = []
    for i in range(n):
        if emitted and rng.random() < repeat_ratio:
            yield rng.choice(emitted)
        else:
            url = f"https://example.com/site{i % 997}/page/{i}?ref={rng.randrange(1 << 30)}"
            emitted.append(url)
            yield url


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    r = redis.Redis.from_url(os.environ.get("REDIS_URL", "redis://127.0.0.1:6379"))
    r.delete(FILTER_KEY, SET_KEY)
    r.execute_command("BF.RESERVE", FILTER_KEY, 0.001, n)

    truth = set()
    fetched = skipped = fp_skips = 0
    urls = list(frontier(n))
    for start in range(0, len(urls), BATCH):
        batch = urls[start:start + BATCH]
        replies = r.execute_command("BF.MADD", FILTER_KEY, *batch)
        for url, added in zip(batch, replies):
            new = url not in truth
            truth.add(url)
            if added:
                fetched += 1
            else:
                skipped += 1
                if new:
                    fp_skips += 1

    print(f"urls: {len(urls)}")
    print(f"distinct: {len(truth)}")
    print(f"fetched: {fetched}")
    print(f"skipped: {skipped}")
    print(f"fp_skips: {fp_skips}")
    print(f"fp_rate: {fp_skips / max(len(truth), 1):.5f}")

    info = r.execute_command("BF.INFO", FILTER_KEY)
    if isinstance(info, dict):
        items = list(info.items())
    else:
        items = list(zip(info[::2], info[1::2]))
    print("BF.INFO:")
    for k, v in items:
        k = k.decode() if isinstance(k, bytes) else k
        print(f"  {k}: {v}")

    filter_mem = r.memory_usage(FILTER_KEY, samples=0)
    distinct = list(truth)
    for start in range(0, len(distinct), BATCH):
        r.sadd(SET_KEY, *distinct[start:start + BATCH])
    set_mem = r.memory_usage(SET_KEY, samples=0)
    r.delete(SET_KEY)
    print(f"filter_memory: {filter_mem}")
    print(f"set_memory: {set_mem}")
    print(f"ratio: {set_mem / filter_mem:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
