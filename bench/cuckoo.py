#!/usr/bin/env python3
"""`make bench` (third part): rsbloom's cuckoo filters (CF.*) against RedisBloom 2.8.2's.

Two redis-servers, one per module, as bench.py runs them; every throughput row alternates
between them for BENCH_ROUNDS rounds (redis-benchmark -c 50) and quotes the medians and their
ratio against the issue's target:

- CF.EXISTS, CF.ADD and CF.DEL at pipeline 32 (ops/s, target 1.2 x), CF.MEXISTS and CF.INSERT of
  100 items at pipeline 32 (items/s, target 2 x), on a filter of 10,000,000 capacity (16 MiB
  of slots) and on one of 1,073,741,824 (1 GiB), each created with the defaults (bucket size
  2) and holding BENCH_FILL items the lookups hit about half the time. ADD and INSERT rows on
  the 10M filter each start on a freshly reserved one, filled to at most 20% of its
  capacity (RedisBloom's may still grow a sub-filter: the note says); on the big one they add to it. DEL rows run last and delete random filled items
  (some twice: the second finds nothing);
- memory: MEMORY USAGE of a filter of 10,000,000 capacity at bucket sizes 1, 2 and 4 (target:
  no more than RedisBloom's);
- load before full: the share of slots filled when a non-growing filter (EXPANSION 0, capacity
  1,048,576, 20 iterations) first answers "full" to distinct items, at bucket sizes 1, 2 and 4
  (target: at least RedisBloom's). RedisBloom hashes with a fixed public seed, rsbloom with a
  random one per filter: the same algorithm, different draws.

Output: a Markdown table on stdout and in bench/CUCKOO.md. Environment: as bench.py
(BENCH_ROUNDS, BENCH_SECONDS, BENCH_CLIENTS, BENCH_FILL).
"""

import datetime
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench as b  # noqa: E402

RESULTS = os.path.join(b.REPO, "bench", "CUCKOO.md")
SMALL = 10_000_000
BIG = 1 << 30
FRESH_SHARE = 0.2
LOAD_CAPACITY = 1 << 20
BATCH = b.BATCH


def cf_info(con, key):
    reply = con.execute_command("CF.INFO", key)
    pairs = reply.items() if isinstance(reply, dict) else zip(reply[::2], reply[1::2])
    return {k.decode() if isinstance(k, bytes) else k: v for k, v in pairs}


def prefill(servers, key, capacity, items):
    for server in servers:
        con = server.client()
        con.execute_command("CF.RESERVE", key, capacity)
        began = time.monotonic()
        b.send_multi(server, insert_commands(key, items))
        info = cf_info(con, key)
        b.log(f"  {server.name:<10} {key}: {len(items):,} items in "
              f"{time.monotonic() - began:.1f} s, MEMORY USAGE {con.memory_usage(key):,} B, "
              f"{info['Number of filters']} sub-filter(s)")
        con.close()


def insert_commands(key, items, per_command=1000):
    """Raw RESP `CF.INSERT key ITEMS ...` commands of `per_command` items."""
    out = []
    for at in range(0, len(items), per_command):
        chunk = items[at:at + per_command]
        head = [b"CF.INSERT", key.encode(), b"ITEMS"]
        payload = b"*%d\r\n" % (len(head) + len(chunk)) + b"".join(map(b.bulk, head + chunk))
        out.append((payload, len(chunk)))
    return out


def filters_of(server, key):
    con = server.client()
    n = cf_info(con, key)["Number of filters"]
    con.close()
    return n


def throughput_rows(bench, size, key, capacity, fresh):
    query = b.QUERY_TEMPLATE
    keyspace = 2 * b.FILL
    for op, multi in (("CF.EXISTS", False), ("CF.MEXISTS", True)):
        per = BATCH if multi else 1
        target = (2.0, ">= 2x") if multi else (1.2, ">= 1.2x")
        bench.throughput(f"{size} {op} P32", [op, key] + [query] * per, per, 32, keyspace,
                         target=target[0], target_text=target[1])
    add_key = f"{key}:add" if fresh else key
    prepare = None
    if fresh:
        def prepare(server):
            con = server.client()
            con.delete(add_key)
            con.execute_command("CF.RESERVE", add_key, capacity)
            con.close()
    for op, per in (("CF.ADD", 1), ("CF.INSERT", BATCH)):
        args = [op, add_key] + (["ITEMS"] if per > 1 else []) + [b.ADD_TEMPLATE] * per
        target = (2.0, ">= 2x") if per > 1 else (1.2, ">= 1.2x")
        cap = int(capacity * FRESH_SHARE / per) if fresh else None
        row = bench.throughput(f"{size} {op} P32", args, per, 32, b.ADD_RANGE, prepare=prepare,
                               max_requests=cap, target=target[0], target_text=target[1])
        if fresh:
            # RedisBloom's kicking may already fail (and grow a sub-filter) this early.
            grown = ", ".join(f"{s.name} {filters_of(s, add_key)}" for s in bench.servers)
            row.note += f"; each on a freshly reserved filter (sub-filters at the end: {grown})"


def del_rows(bench, size, key):
    bench.throughput(f"{size} CF.DEL P32", ["CF.DEL", key, b.QUERY_TEMPLATE], 1, 32, b.FILL,
                     target=1.2, target_text=">= 1.2x")


def memory_rows(bench):
    for bucket_size in (1, 2, 4):
        row = bench.row(section="memory", label=f"MEMORY USAGE, 10M capacity, bucket size "
                        f"{bucket_size}", unit="bytes", better="lower", target=1.0,
                        target_text="<= 1x")
        for system, server in zip(b.SYSTEMS, bench.servers):
            con = server.client()
            key = f"mem:{bucket_size}"
            con.execute_command("CF.RESERVE", key, SMALL, "BUCKETSIZE", bucket_size)
            row.values[system].append(con.memory_usage(key))
            con.delete(key)
            con.close()


def load_rows(bench):
    for bucket_size in (1, 2, 4):
        row = bench.row(section="memory", label=f"load before the first full, bucket size "
                        f"{bucket_size}", unit="share", better="higher", fmt="{:.4f}",
                        target=1.0, target_text=">= 1x")
        for system, server in zip(b.SYSTEMS, bench.servers):
            con = server.client()
            for attempt in range(3):
                key = f"load:{bucket_size}:{attempt}"
                con.execute_command("CF.RESERVE", key, LOAD_CAPACITY, "BUCKETSIZE", bucket_size,
                                    "EXPANSION", 0)
                added, n = 0, 0
                while True:
                    items = [f"load-{attempt}-{n + i}" for i in range(1000)]
                    n += 1000
                    replies = con.execute_command("CF.INSERT", key, "ITEMS", *items)
                    ok = [r for r in replies if r in (1, True)]
                    added += len(ok)
                    if len(ok) < len(replies):
                        # Items after the first refusal may still fit: count up to it only.
                        first = next(i for i, r in enumerate(replies) if r not in (1, True))
                        added -= len(ok) - first
                        break
                info = cf_info(con, key)
                slots = info["Number of buckets"] * info["Bucket size"]
                row.values[system].append(added / slots)
                con.delete(key)
            con.close()
        row.note = "3 filters each"


def main():
    started = datetime.datetime.now(datetime.timezone.utc)
    began = time.monotonic()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    servers = []
    try:
        for name, module in zip(b.SYSTEMS, (b.RSBLOOM_SO, b.redisbloom_path())):
            server = b.Server(name, module)
            servers.append(server)
            server.start()
        bench = b.Bench(servers)
        b.log("== memory and load factors")
        memory_rows(bench)
        load_rows(bench)
        present = b.numbered_items(b.PRESENT_PREFIX, b.FILL)
        b.log(f"== 10M filter, prefill of {b.FILL:,} items")
        prefill(servers, "cf10m", SMALL, present)
        throughput_rows(bench, "10M", "cf10m", SMALL, fresh=True)
        b.log(f"== 1 GiB filter (capacity {BIG:,}), prefill of {b.FILL:,} items")
        prefill(servers, "cfbig", BIG, present)
        del present
        throughput_rows(bench, "1GiB", "cfbig", BIG, fresh=False)
        del_rows(bench, "10M", "cf10m")
        del_rows(bench, "1GiB", "cfbig")
    finally:
        for server in servers:
            server.cleanup()
    elapsed = time.monotonic() - began
    info = b.machine()
    rows = sorted(bench.rows, key=lambda r: r.section != "throughput")
    text = b.table(rows)
    b.log("\n" + text)
    body = [
        "# Cuckoo filters: rsbloom vs RedisBloom 2.8.2",
        "",
        f"Written by `make bench` (bench/cuckoo.py) on {started:%Y-%m-%d %H:%M UTC}, in "
        f"{elapsed / 60:.1f} minutes. Medians of {b.ROUNDS} alternating rounds; ratio = "
        "rsbloom / RedisBloom. The machine is shared (2 cores, redis-benchmark on one of "
        "them), so the figures are noisy. What each row does: the docstring of "
        "bench/cuckoo.py.",
        "",
        text,
        "",
        "## Machine",
        "",
        *[f"- {k}: {v}" for k, v in info.items()],
        f"- load average at the end: {' '.join(open('/proc/loadavg').read().split()[:3])}",
        "",
        "## Every round",
        "",
        b.details(rows),
        "",
    ]
    with open(RESULTS, "w") as f:
        f.write("\n".join(body))
    b.log(f"bench: wrote {RESULTS} ({elapsed / 60:.1f} minutes)")


if __name__ == "__main__":
    main()
