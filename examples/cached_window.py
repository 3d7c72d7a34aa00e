#!/usr/bin/env python3
"""redis-py's client-side cache over a time window: a cached BF.EXISTS answer is dropped when
the window forgets the item, by the invalidation rsbloom sends then (no write is needed).

Usage: REDIS_URL=redis://127.0.0.1:6379 python examples/cached_window.py

redis-py's cache (RESP3, `cache_config`) needs Redis 7.4 or later and caches only the commands
of its allow list, which holds no BF or CF command: allow the reads in a CacheConfig subclass,
and pass the key (`keys=[key]`), which redis-py cannot find in a module command by itself.
"""
import os
import time

import redis
from redis.cache import CacheConfig


class BloomReads(CacheConfig):
    """redis-py's allow list plus the Bloom reads."""

    def is_allowed_to_cache(self, command):
        return command in ("BF.EXISTS", "BF.CARD") or super().is_allowed_to_cache(command)


def main():
    url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379")
    plain = redis.Redis.from_url(url, protocol=3, cache_config=CacheConfig())
    r = redis.Redis.from_url(url, protocol=3, cache_config=BloomReads())
    r.delete("seen")
    r.execute_command("BF.RESERVE", "seen", 0.01, 1000, "WINDOW", 2)
    added = time.monotonic()
    r.execute_command("BF.ADD", "seen", "a")

    exists = lambda client: client.execute_command("BF.EXISTS", "seen", "a", keys=["seen"])
    print(f"default_cache_present: {int(exists(plain))}")
    print(f"default_cache_entries: {plain.get_cache().size}")
    print(f"present: {int(exists(r))}")
    print(f"cached_entries: {r.get_cache().size}")
    # Cached reads answer from the client until the invalidation drops the entry.
    while exists(r) and time.monotonic() - added < 20:
        time.sleep(0.02)
    print(f"forgotten_after_seconds: {time.monotonic() - added:.2f}")
    print(f"present_after: {int(exists(r))}")
    r.delete("seen")


if __name__ == "__main__":
    main()
