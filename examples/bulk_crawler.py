#!/usr/bin/env python3
"""A crawler's "which of these URLs are new?" through redis-py: BF.MADD of 100 URLs per
command against BF.BULKADD of 1,000 per blob, end to end (building the commands, the round
trips, reading the answers), on two copies of one fresh filter; both must answer the same.

    python examples/bulk_crawler.py [URLS]      (REDIS_URL, default redis://127.0.0.1:6379)

Prints the items/s of each way and the share of URLs that were new.
"""

import os
import struct
import sys
import time

import redis

URLS = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
r = redis.Redis.from_url(os.environ.get("REDIS_URL", "redis://127.0.0.1:6379"))

# A crawl's URLs, a third of them seen twice.
distinct = max(1, URLS * 2 // 3)
urls = [f"https://site{j % 97}.example.com/page/{j}" for j in (i % distinct for i in range(URLS))]
r.delete("crawl:madd", "crawl:bulk")
r.execute_command("BF.RESERVE", "crawl:madd", 0.001, URLS)
# The same filter twice (same seed), so both ways meet the same false positives.
r.copy("crawl:madd", "crawl:bulk")


def with_madd(batch=100):
    new = []
    pipe = r.pipeline(transaction=False)
    for start in range(0, len(urls), batch):
        pipe.execute_command("BF.MADD", "crawl:madd", *urls[start:start + batch])
    for start, answers in zip(range(0, len(urls), batch), pipe.execute()):
        new += [u for u, added in zip(urls[start:start + batch], answers) if added]
    return new


def with_bulk(batch=1000):
    new = []
    pipe = r.pipeline(transaction=False)
    for start in range(0, len(urls), batch):
        blob = "\n".join(urls[start:start + batch]).encode()
        pipe.execute_command("BF.BULKADD", "crawl:bulk", blob)
    for start, answers in zip(range(0, len(urls), batch), pipe.execute()):
        # One byte per URL: b"1" new, b"0" seen before, b"E" refused.
        new += [u for u, a in zip(urls[start:start + batch], answers) if a == ord("1")]
    return new


t = time.perf_counter()
madd_new = with_madd()
madd_s = time.perf_counter() - t
t = time.perf_counter()
bulk_new = with_bulk()
bulk_s = time.perf_counter() - t
assert madd_new == bulk_new, "BF.BULKADD answered otherwise than BF.MADD"

# Binary-safe items go FRAMED: each preceded by its length, 4 bytes little-endian.
framed = b"".join(struct.pack("<I", len(u)) + u for u in (b"a\nb", b"", b"\xff"))
assert r.execute_command("BF.BULKADD", "crawl:bulk", "FRAMED", framed) == b"111"

print(f"urls: {URLS}")
print(f"new: {len(bulk_new)}")
print(f"madd_items_per_s: {URLS / madd_s:.0f}")
print(f"bulk_items_per_s: {URLS / bulk_s:.0f}")
print(f"speedup: {madd_s / bulk_s:.1f}")
