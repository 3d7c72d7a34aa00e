#!/usr/bin/env python3
"""Growing filters (`EXPANDABLE`) against a reserved filter and a BF.ADD-created chain, for
rsbloom and RedisBloom 2.8.2 side by side (`make bench`, or alone: `python bench/growing.py`),
written to bench/GROWING.md.

From 100 items to BENCH_GROWING_MAX (104,857,600 = 100 × 2^20 by default), at every doubling:

- memory (MEMORY USAGE) of the growing filter, of a chain created by BF.ADD (capacity 100,
  expansion 2: what a client that never sizes gets) and of a filter BF.RESERVEd for exactly the
  items held, in bits per item;
- the false-positive rate of each among 20,000 items never added, and a sample of the items
  added (no false negatives allowed);
- absent lookups (redis-benchmark, BF.MEXISTS of 100 random items, pipeline 32) on the growing
  filter, the chain and a filter reserved for that size holding the same items (at the largest
  size the one reserved for it, filled along), BENCH_ROUNDS rounds alternating, paired ratios;
- adds: the fill's items/s into the growing filter against the reserved one (BF.MADD of 1,000);
- the slowest command the rsbloom server ran (its slow log, from 10 ms).
"""

import datetime
import os
import statistics
import sys
import time

import bench
from bench import log

REPO = bench.REPO
GROWING_MD = os.path.join(REPO, "bench", "GROWING.md")
ERROR = 0.01
START = 100
MAX = bench.env_number("BENCH_GROWING_MAX", START << 20)
ROUNDS = bench.ROUNDS
ITEM_PREFIX = b"https://example.com/g/"
ABSENT = bench.numbered_items(b"https://example.org/absent/", 20_000)
SLOW_US = 10_000
PART = 1_000_000


def items(start, end):
    return [ITEM_PREFIX + b"%012d" % i for i in range(start, end)]


def memory(server, key):
    con = server.client()
    try:
        return con.memory_usage(key, samples=0)
    finally:
        con.close()


# The key MEMORY USAGE weighs a reserved filter by: a name as long as "growing", so that the two
# keys' names take the same bytes (with "sized" the reserved key took 8 fewer: 1.52 x at 100 items).
SIZED = "reserve"


def reserved_bytes(server, n):
    """MEMORY USAGE of an empty filter BF.RESERVEd for n items (its bits do not depend on what
    it holds)."""
    con = server.client()
    try:
        con.delete(SIZED)
        con.execute_command("BF.RESERVE", SIZED, ERROR, n)
        return con.memory_usage(SIZED, samples=0)
    finally:
        con.delete(SIZED)
        con.close()


def false_positive_rate(server, key):
    positives = bench.send_multi(server, bench.multi_commands(b"BF.MEXISTS", key, ABSENT))
    return positives / len(ABSENT)


class Run:
    def __init__(self, rs, rb):
        self.rs, self.rb = rs, rb
        # rsbloom: growing, chain, reserved; RedisBloom: chain, reserved.
        self.keys = {rs: [b"growing", b"chain"], rb: [b"chain"]}
        self.rows = []
        self.speed = []
        self.fill = {"growing": [0.0, 0], "reserved": [0.0, 0]}

    def create(self):
        for server in (self.rs, self.rb):
            con = server.client()
            con.execute_command("CONFIG", "SET", "slowlog-log-slower-than", SLOW_US)
            con.execute_command("SLOWLOG", "RESET")
            con.execute_command("BF.ADD", "chain", b"https://example.com/seed")
            con.execute_command("BF.RESERVE", "reserved:big", ERROR, MAX)
            con.close()
        self.rs.client().execute_command("BF.RESERVE", "growing", ERROR, START, "EXPANDABLE")

    def add(self, start, end):
        for part in range(start, end, PART):
            chunk = items(part, min(end, part + PART))
            for server in (self.rs, self.rb):
                for key in list(self.keys[server]) + [b"reserved:big"]:
                    began = time.monotonic()
                    bench.send_multi(server, bench.multi_commands(b"BF.MADD", key, chunk))
                    took = time.monotonic() - began
                    if server is self.rs and key in (b"growing", b"reserved:big"):
                        name = "growing" if key == b"growing" else "reserved"
                        self.fill[name][0] += took
                        self.fill[name][1] += len(chunk)

    def check(self, n):
        sample = items(0, n)[:: max(1, n // 2_000)]
        answers = bench.send_multi(self.rs, bench.multi_commands(b"BF.MEXISTS", b"growing",
                                                                  sample))
        if answers != len(sample):
            raise RuntimeError(f"growing filter: a false negative among {len(sample)} at {n}")
        row = {"items": n}
        for name, server in (("rs", self.rs), ("rb", self.rb)):
            row[f"{name} reserved"] = reserved_bytes(server, n)
            row[f"{name} chain"] = memory(server, "chain")
            row[f"{name} chain fp"] = false_positive_rate(server, b"chain")
        row["rs growing"] = memory(self.rs, "growing")
        row["rs growing fp"] = false_positive_rate(self.rs, b"growing")
        self.rows.append(row)
        log(f"  {n:,}: growing {row['rs growing'] * 8 / n:.2f} bits/item, "
            f"{row['rs growing fp']:.4%}; reserved {row['rs reserved'] * 8 / n:.2f}; chain "
            f"{row['rs chain'] * 8 / n:.2f} ({row['rs chain fp']:.4%}); RedisBloom chain "
            f"{row['rb chain'] * 8 / n:.2f} ({row['rb chain fp']:.4%})")

    def reserved_filled(self, n):
        """A filter reserved for n items on each server, holding the growing filter's n items
        (BF.MADD of 1,000): what the lookups at n compare with. Its key is SIZED."""
        for server in (self.rs, self.rb):
            con = server.client()
            con.delete(SIZED)
            con.execute_command("BF.RESERVE", SIZED, ERROR, n)
            con.close()
        for part in range(0, n, PART):
            chunk = items(part, min(n, part + PART))
            for server in (self.rs, self.rb):
                bench.send_multi(server, bench.multi_commands(b"BF.MADD", SIZED.encode(), chunk))
        return SIZED

    def drop_reserved(self):
        for server in (self.rs, self.rb):
            con = server.client()
            con.delete(SIZED)
            con.close()

    def lookups(self, n, reserved_key):
        b = bench.Bench([self.rs, self.rb])
        args = lambda key: ["BF.MEXISTS", key] + [bench.QUERY_TEMPLATE] * 100  # noqa: E731
        rate = lambda server, key: b.run_benchmark(  # noqa: E731
            server, args(key), 20_000, 32, bench.ADD_RANGE)[0] * 100
        rounds = []
        for _ in range(ROUNDS):
            rounds.append({
                "rs growing": rate(self.rs, "growing"),
                "rs reserved": rate(self.rs, reserved_key),
                "rs chain": rate(self.rs, "chain"),
                "rb reserved": rate(self.rb, reserved_key),
                "rb chain": rate(self.rb, "chain"),
            })
        ratios = [r["rs growing"] / r["rs reserved"] for r in rounds]
        median = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
        self.speed.append((n, median, ratios))
        log(f"  lookups at {n:,}: growing/reserved {statistics.median(ratios):.2f} "
            f"({min(ratios):.2f}-{max(ratios):.2f})")

    def slowest(self):
        """The slow log's entries as (µs, command and key)."""
        con = self.rs.client()
        entries = con.execute_command("SLOWLOG", "GET", 1024)
        con.close()
        return [(e[2], b" ".join(e[3][:2]).decode(errors="replace")) for e in entries]


def report(run, started):
    lines = [
        "# Growing filters",
        "",
        f"{started:%Y-%m-%d %H:%M} UTC, `python bench/growing.py`; "
        f"{'; '.join(f'{k}: {v}' for k, v in bench.machine().items())}. Every "
        f"filter at {ERROR}; the growing filter created by `BF.RESERVE growing {ERROR} {START} "
        "EXPANDABLE`, the chain by `BF.ADD` (capacity 100, expansion 2), the reserved filter by "
        "`BF.RESERVE` for exactly the items held. Memory is MEMORY USAGE in bits per item; the "
        f"rate is measured among {len(ABSENT):,} items never added.",
        "",
        "| items | rsbloom growing | rate | reserved | growing / reserved | rsbloom chain | rate "
        "| RedisBloom reserved | RedisBloom chain | rate |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in run.rows:
        n = r["items"]
        bits = lambda key: f"{r[key] * 8 / n:.2f}"  # noqa: E731
        lines.append(
            f"| {n:,} | {bits('rs growing')} | {r['rs growing fp']:.3%} | {bits('rs reserved')} "
            f"| {r['rs growing'] / r['rs reserved']:.2f} | {bits('rs chain')} | "
            f"{r['rs chain fp']:.3%} | {bits('rb reserved')} | {bits('rb chain')} | "
            f"{r['rb chain fp']:.3%} |")
    lines += ["", f"Absent lookups, BF.MEXISTS of 100 random items, pipeline 32, {ROUNDS} rounds "
              "(items/s, medians; the reserved filter was created for the size and holds the "
              "growing filter's items):", "",
              "| items | rsbloom growing | rsbloom reserved | growing / reserved (min-max) | "
              "rsbloom chain | RedisBloom reserved | RedisBloom chain |",
              "|---:|---:|---:|---:|---:|---:|---:|"]
    for n, m, ratios in run.speed:
        lines.append(
            f"| {n:,} | {m['rs growing']:,.0f} | {m['rs reserved']:,.0f} | "
            f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f}) | "
            f"{m['rs chain']:,.0f} | {m['rb reserved']:,.0f} | {m['rb chain']:,.0f} |")
    grow_t, grow_n = run.fill["growing"]
    res_t, res_n = run.fill["reserved"]
    slow = run.slow
    lines += ["", f"Adds (the fill, BF.MADD of 1,000): growing {grow_n / grow_t:,.0f} items/s, "
              f"reserved {res_n / res_t:,.0f} items/s ({(grow_n / grow_t) / (res_n / res_t):.2f})"
              ".", ""]
    growing = [e for e in slow if e[1].endswith(" growing")]
    others = [e for e in slow if not e[1].endswith(" growing")]
    if growing:
        worst = max(growing)
        lines.append(f"Commands on the growing filter over {SLOW_US // 1000} ms (the rsbloom "
                     f"server's slow log): {len(growing)}, the slowest {worst[0] / 1000:.1f} ms "
                     f"(`{worst[1]}`).")
    else:
        lines.append(f"No command on the growing filter took {SLOW_US // 1000} ms or more (the "
                     "rsbloom server's slow log, every fill and lookup included).")
    if others:
        worst = max(others)
        lines.append(f"On the other filters: {len(others)} over {SLOW_US // 1000} ms, the slowest "
                     f"{worst[0] / 1000:.1f} ms (`{worst[1]}`: the first writes into a reserved "
                     "filter's fresh pages, or a chain's new link).")
    lines.append("")
    return "\n".join(lines)


def main():
    started = datetime.datetime.now(datetime.timezone.utc)
    with bench.side_by_side() as servers:
        run = Run(*servers)
        run.create()
        added, n = 0, START
        while n <= MAX:
            run.add(added, n)
            added = n
            run.check(n)
            if n == MAX:
                run.lookups(n, "reserved:big")
            else:
                run.lookups(n, run.reserved_filled(n))
                run.drop_reserved()
            n *= 2
        if added != MAX:
            run.add(added, MAX)
            run.check(MAX)
            run.lookups(MAX, "reserved:big")
        run.slow = run.slowest()
    text = report(run, started)
    log("\n" + text)
    with open(GROWING_MD, "w") as f:
        f.write(text)
    log(f"growing: wrote {GROWING_MD}")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit("growing: interrupted; servers stopped")
