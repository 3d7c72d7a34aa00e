#!/usr/bin/env python3
"""Cache-penetration guard with a Bloom filter (rsbloom / RedisBloom BF.* commands).

Usage: REDIS_URL=redis://127.0.0.1:6379 python examples/cache_guard.py [USERS] [REQUESTS]

A "database" of USERS (default 10000) user ids sits behind a slow lookup (1 ms each). The
filter `users:exists` holds every id; of REQUESTS (default 5000) random requests, half ask for
ids that don't exist. The guard calls BF.EXISTS first and only does the slow lookup when the id
may exist. Prints lookups avoided, false positives and time with and without the guard.
"""
import os
import random
import sys
import time

import redis

KEY = "users:exists"


def main():
    users = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    requests = int(sys.argv[2]) if len(sys.argv) > 2 else 5_000
    rng = random.Random(7)
    database = {f"user:{i}": {"name": f"User {i}"} for i in range(users)}

    def slow_lookup(uid):
        time.sleep(0.001)
        return database.get(uid)

    r = redis.Redis.from_url(os.environ.get("REDIS_URL", "redis://127.0.0.1:6379"))
    r.delete(KEY)
    r.execute_command("BF.RESERVE", KEY, 0.01, users)
    ids = list(database)
    for start in range(0, len(ids), 1000):
        r.execute_command("BF.MADD", KEY, *ids[start:start + 1000])

    reqs = [
        rng.choice(ids) if rng.random() < 0.5 else f"user:{users + rng.randrange(10 * users)}"
        for _ in range(requests)
    ]
    missing = sum(1 for u in reqs if u not in database)

    t0 = time.perf_counter()
    found_plain = sum(1 for u in reqs if slow_lookup(u) is not None)
    t_plain = time.perf_counter() - t0

    t0 = time.perf_counter()
    lookups = found_guard = false_pos = 0
    for u in reqs:
        if not r.execute_command("BF.EXISTS", KEY, u):
            continue
        lookups += 1
        if slow_lookup(u) is None:
            false_pos += 1
        else:
            found_guard += 1
    t_guard = time.perf_counter() - t0

    print(f"requests: {requests}")
    print(f"missing: {missing}")
    print(f"found_without_guard: {found_plain}")
    print(f"found_with_guard: {found_guard}")
    print(f"lookups: {lookups}")
    print(f"lookups_avoided: {requests - lookups}")
    print(f"false_positives: {false_pos}")
    print(f"time_without_guard: {t_plain:.3f}")
    print(f"time_with_guard: {t_guard:.3f}")
    r.delete(KEY)
    return 0


if __name__ == "__main__":
    sys.exit(main())
