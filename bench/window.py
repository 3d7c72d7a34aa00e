#!/usr/bin/env python3
"""`make bench` (second part): rsbloom's window filters against a plain filter of the same
capacity, and against the hand-rolled alternative (two rotating plain filters).

One rsbloom redis-server; every row measures two keys on it, alternating for BENCH_ROUNDS
rounds, and quotes the medians and their ratio against the issue's target:

- throughput, redis-benchmark -c 50: BF.ADD and BF.EXISTS at pipeline 32 (ops/s, targets 0.9 x
  and 0.85 x the plain filter), BF.MADD and BF.MEXISTS of 100 items at pipeline 1 and 32
  (items/s, targets 0.8 x and 0.7 x), for a SLIDING and a WINDOW filter of 10,000,000
  capacity at 0.01, in the rotating layout (every new filter) and, beside them, the first
  layout (age-partitioned: loaded empty with BF.LOADCHUNK from the first_layout_filter
  example, as no command creates one any more), against a plain
  filter of 10,000,000 at 0.01, each holding 5,000,000 items the lookups hit about half the
  time, both window kinds in their steady state:
  - the SLIDING filter after a full window of other items;
  - the lookups on a WINDOW 3600 filter filled through `BF.INSERT ... AT` over the two hours
    before the run (a window of other items, then the 5,000,000);
  - the adds on a WINDOW filter whose window fits the traffic: redis-benchmark adds as fast as
    the server takes them (2 billion an hour, 200 times what a one-hour window of 10,000,000
    holds), so each add row gets a fresh filter whose window takes half its capacity at the
    plain filter's probed rate (room for the rate's swings on a shared machine), warmed up
    for one window first. The row says whether its memory stayed put (no growth);
  - and, informational, the one-hour filter under that traffic: a burst it grows for (new,
    larger slices), measured after its lookups;
- checks per second against rotation: "double buffering" keeps two plain NONSCALING filters of
  the window's capacity at half the rate and checks an item in both (two pipelined commands per
  check), so its checks/s are half its BF.EXISTS ops/s (target: the window filter at 2 x);
- memory: MEMORY USAGE of the SLIDING filter against the two rotating filters (target 0.9 x),
  and bits per window item of both layouts (target 17.5 at 0.01);
- and, informational, the checks per second against rotation again where none of the filters
  fits in the machine's cache: a SLIDING filter of BENCH_WINDOW_BIG_CAPACITY (default
  100,000,000; 0 skips the row) against one rotating filter of that capacity, filled as above
  (half its capacity of present items; the SLIDING filter after a window of other items).

Output: a Markdown table on stdout and in bench/WINDOW.md. Environment: as bench.py
(BENCH_ROUNDS, BENCH_SECONDS, BENCH_CLIENTS, BENCH_FILL), and BENCH_WINDOW_BIG_CAPACITY.
"""

import datetime
import math
import os
import statistics
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench as b  # noqa: E402

RESULTS = os.path.join(b.REPO, "bench", "WINDOW.md")
CAPACITY = b.SMALL_CAPACITY
RATE = b.ERROR_RATE
BIG_CAPACITY = b.env_number("BENCH_WINDOW_BIG_CAPACITY", 100_000_000)
PIPELINE_ROWS = (
    ("BF.ADD", False, 32, 0.9),
    ("BF.EXISTS", False, 32, 0.85),
    ("BF.MADD", True, 1, 0.8),
    ("BF.MADD", True, 32, 0.8),
    ("BF.MEXISTS", True, 1, 0.7),
    ("BF.MEXISTS", True, 32, 0.7),
)
# Window filters of the first layout (age-partitioned), which no command creates any more, are
# loaded empty from the SCANDUMP stream this example writes.
FIRST_LAYOUT = os.path.join(b.REPO, "target", "release", "examples", "first_layout_filter")


def reserve_first_layout(con, key, capacity, window):
    """An empty window filter of the first layout at `key` (`window`: "SLIDING" or seconds)."""
    stream = subprocess.run([FIRST_LAYOUT, str(RATE), str(capacity), str(window)],
                            check=True, capture_output=True).stdout
    while stream:
        iterator, length = struct.unpack_from("<QI", stream)
        con.execute_command("BF.LOADCHUNK", key, iterator, stream[12:12 + length])
        stream = stream[12 + length:]


def fill(server, key, items):
    b.send_multi(server, b.multi_commands(b"BF.MADD", key.encode(), items))


def fill_numbered(server, key, prefix, count, chunk=5_000_000):
    """fill() with `count` numbered items, `chunk` at a time (100 M items at once would take
    gigabytes of Python objects)."""
    for start in range(0, count, chunk):
        fill(server, key, [prefix + b"%012d" % i for i in range(start, min(count, start + chunk))])


def fill_over_time(server, key, items, start_ms, span_ms, per_command=1000):
    """BF.INSERT key AT <ms> ITEMS ... with the items spread evenly over `span_ms` from
    `start_ms`: a time window filled at a steady rate, as traffic fills it, without waiting."""
    commands = []
    for at in range(0, len(items), per_command):
        chunk = items[at:at + per_command]
        ms = start_ms + span_ms * at // len(items)
        head = [b"BF.INSERT", key.encode(), b"AT", str(ms).encode(), b"ITEMS"]
        payload = b"*%d\r\n" % (len(head) + len(chunk)) + b"".join(map(b.bulk, head + chunk))
        commands.append((payload, len(chunk)))
    b.send_multi(server, commands)


def steady_window(runner, server, command, per, pipeline, layout):
    """A fresh WINDOW filter `window:steady` of `layout` for an add row whose window takes half
    its capacity at the rate the plain filter probes at (rates here swing by half), after one
    window of that traffic (so it holds a window's items and turns as it goes); returns the
    key, the window and its MEMORY USAGE at creation."""
    con = server.client()
    rate = measure(runner, server, command("plain"), per, pipeline, b.ADD_RANGE, 20_000)
    seconds = max(1, int(0.5 * CAPACITY / rate))
    key = "window:steady"
    con.delete(key)
    if layout == "first":
        reserve_first_layout(con, key, CAPACITY, seconds)
    else:
        con.execute_command("BF.RESERVE", key, RATE, CAPACITY, "WINDOW", seconds)
    created = con.memory_usage(key, samples=0)
    measure(runner, server, command(key), per, pipeline, b.ADD_RANGE,
            int(rate * seconds / per))
    con.close()
    return key, seconds, created


def measure(runner, server, args, per, pipeline, keyspace, requests):
    rate, _ = runner.run_benchmark(server, args, requests, pipeline, keyspace)
    return rate * per


def compare(runner, server, label, a, b_, per, pipeline, keyspace):
    """Medians of `a` and `b_` (argument lists) alternating; returns (a, b, rounds)."""
    probe = [measure(runner, server, args, per, pipeline, keyspace, 2000) for args in (a, b_)]
    requests = max(1000, int(b.SECONDS * math.sqrt(probe[0] * probe[1]) / per))
    rounds = {0: [], 1: []}
    for rnd in range(b.ROUNDS):
        for i, args in enumerate((a, b_)):
            rounds[i].append(measure(runner, server, args, per, pipeline, keyspace, requests))
        b.log(f"  {label} round {rnd + 1}: {rounds[0][-1]:,.0f} / {rounds[1][-1]:,.0f}")
    return statistics.median(rounds[0]), statistics.median(rounds[1]), rounds


def main():
    started = datetime.datetime.now(datetime.timezone.utc)
    began = time.monotonic()
    server = b.Server("rsbloom", b.RSBLOOM_SO)
    rows = []
    try:
        server.start()
        runner = b.Bench([server])
        con = server.client()
        present = b.numbered_items(b.PRESENT_PREFIX, b.FILL)
        con.execute_command("BF.RESERVE", "plain", RATE, CAPACITY)
        con.execute_command("BF.RESERVE", "sliding", RATE, CAPACITY, "SLIDING")
        con.execute_command("BF.RESERVE", "window", RATE, CAPACITY, "WINDOW", 3600)
        reserve_first_layout(con, "sliding:first", CAPACITY, "SLIDING")
        reserve_first_layout(con, "window:first", CAPACITY, 3600)
        b.log("filling: a window of other items into the SLIDING filters, then "
              f"{b.FILL:,} items into each filter")
        old = b.numbered_items(b"https://example.org/old/", CAPACITY)
        for key in ("sliding", "sliding:first"):
            fill(server, key, old)
        for key in ("plain", "sliding", "sliding:first"):
            fill(server, key, present)
        # The time window: a window's worth of other items over the hour before last, then
        # the present items over the last hour (at half the capacity's rate), as steady
        # traffic leaves it.
        hour = 3_600_000
        now = int(time.time() * 1000)
        for key in ("window", "window:first"):
            fill_over_time(server, key, old, now - 2 * hour, hour)
            fill_over_time(server, key, present, now - hour, hour)
        # Double buffering: the window's items in the newer filter, the previous window's in
        # the older one; each NONSCALING for the capacity at half the rate.
        for i, prefix in ((0, b"https://example.org/prev/"), (1, None)):
            key = f"rot:{i}"
            con.execute_command("BF.RESERVE", key, RATE / 2, CAPACITY, "NONSCALING")
            fill(server, key, present if prefix is None else b.numbered_items(prefix, b.FILL))

        keyspace = 2 * b.FILL
        for kind, layout in (("sliding", "rotating"), ("sliding", "first"),
                             ("window", "rotating"), ("window", "first")):
            for op, multi, pipeline, target in PIPELINE_ROWS:
                per = b.BATCH if multi else 1
                adds = op.endswith("ADD")
                template = b.ADD_TEMPLATE if adds else b.QUERY_TEMPLATE
                space = b.ADD_RANGE if adds else keyspace

                def command(key):
                    return [op, key] + [template] * per

                key = kind if layout == "rotating" else f"{kind}:first"
                label = f"{kind} ({layout} layout) {op} P{pipeline}"
                if kind == "window" and adds:
                    key, seconds, created = steady_window(runner, server, command, per, pipeline,
                                                          layout)
                ours, plain, _ = compare(runner, server, label, command(key), command("plain"),
                                         per, pipeline, space)
                if key == "window:steady":
                    # More adds per window than it was sized for: it grew, and the label says so.
                    after = con.memory_usage(key, samples=0)
                    growth = ("no growth" if after == created
                              else f"{created:,} B at creation, {after:,} B after")
                    label = f"{label} (WINDOW {seconds} s, {growth})"
                unit = "items/s" if multi else "ops/s"
                rows.append((label, f"{ours:,.0f} {unit}", f"{plain:,.0f} {unit} (plain)",
                             ours / plain, f">= {target}" if layout == "rotating" else "-"))

        # The one-hour window under redis-benchmark's traffic: a burst it grows for.
        before = con.memory_usage("window", samples=0)
        ours, plain, _ = compare(runner, server, "window BF.ADD P32 burst",
                                 ["BF.ADD", "window", b.ADD_TEMPLATE],
                                 ["BF.ADD", "plain", b.ADD_TEMPLATE], 1, 32, b.ADD_RANGE)
        after = con.memory_usage("window", samples=0)
        rows.append((f"window BF.ADD P32, a burst: WINDOW 3600 at about 2 billion adds an hour "
                     f"(grew from {before:,} to {after:,} B)", f"{ours:,.0f} ops/s",
                     f"{plain:,.0f} ops/s (plain)", ours / plain, "-"))

        # Checks per second against rotation.
        label = "sliding BF.EXISTS P32 vs rotation"
        ours, rot, _ = compare(runner, server, label,
                               ["BF.EXISTS", "sliding", b.QUERY_TEMPLATE],
                               ["BF.EXISTS", "rot:1", b.QUERY_TEMPLATE], 1, 32, keyspace)
        rows.append(("checks/s, sliding vs 2 rotating filters", f"{ours:,.0f} checks/s",
                     f"{rot / 2:,.0f} checks/s ({rot:,.0f} BF.EXISTS/s, 2 per check)",
                     ours / (rot / 2), ">= 2"))

        # Memory.
        sliding = con.memory_usage("sliding", samples=0)
        first = con.memory_usage("sliding:first", samples=0)
        rotation = sum(con.memory_usage(f"rot:{i}", samples=0) for i in (0, 1))
        rows.append(("memory, sliding vs 2 rotating filters", f"{sliding:,} B",
                     f"{rotation:,} B", sliding / rotation, "<= 0.9"))
        rows.append(("bits per window item (MEMORY USAGE), rotating vs first layout",
                     f"{sliding * 8 / CAPACITY:.2f}", f"{first * 8 / CAPACITY:.2f} (first layout)",
                     sliding / first, "<= 17.5 bits"))
        window_info = con.execute_command("BF.INFO", "sliding", "WINDOW")

        if BIG_CAPACITY:
            # Checks per second against rotation where no filter fits in the cache.
            con.delete("plain", "sliding", "window", "window:steady", "rot:0", "rot:1",
                       "sliding:first", "window:first")
            big_fill = BIG_CAPACITY // 2
            b.log(f"filling: a SLIDING filter and a rotating one of {BIG_CAPACITY:,}")
            con.execute_command("BF.RESERVE", "big:sliding", RATE, BIG_CAPACITY, "SLIDING")
            con.execute_command("BF.RESERVE", "big:rot", RATE / 2, BIG_CAPACITY, "NONSCALING")
            fill_numbered(server, "big:sliding", b"https://example.org/old/", BIG_CAPACITY)
            for key in ("big:sliding", "big:rot"):
                fill_numbered(server, key, b.PRESENT_PREFIX, big_fill)
            sizes = [con.memory_usage(key, samples=0) for key in ("big:sliding", "big:rot")]
            ours, rot, _ = compare(runner, server, "big sliding BF.EXISTS P32 vs rotation",
                                   ["BF.EXISTS", "big:sliding", b.QUERY_TEMPLATE],
                                   ["BF.EXISTS", "big:rot", b.QUERY_TEMPLATE], 1, 32,
                                   2 * big_fill)
            rows.append((f"checks/s, sliding vs 2 rotating filters, {BIG_CAPACITY:,} items "
                         f"({sizes[0]:,} B against 2 x {sizes[1]:,} B)",
                         f"{ours:,.0f} checks/s",
                         f"{rot / 2:,.0f} checks/s ({rot:,.0f} BF.EXISTS/s, 2 per check)",
                         ours / (rot / 2), "-"))
        con.close()
    finally:
        server.cleanup()

    def met(ours, ratio, target):
        if target == "-":
            return "-"
        op, value = target.split()[0], float(target.split()[1])
        if "bits" in target:
            ratio = float(ours)  # the figure itself, not a ratio
        return "yes" if (ratio >= value if op == ">=" else ratio <= value) else "NO"

    lines = ["| row | window filter | compared with | ratio | target | met |",
             "|---|---|---|---|---|---|"]
    for label, ours, other, ratio, target in rows:
        lines.append(f"| {label} | {ours} | {other} | {ratio:.2f} | {target} | "
                     f"{met(ours, ratio, target)} |")
    text = "\n".join(lines)
    b.log("\n" + text + "\n")
    elapsed = time.monotonic() - began
    with open(RESULTS, "w") as f:
        f.write("# Window filters: `make bench` (bench/window.py)\n\n")
        f.write(f"Run {started:%Y-%m-%d %H:%M} UTC, {elapsed / 60:.1f} minutes, "
                f"{b.ROUNDS} rounds of about {b.SECONDS:g} s per figure (medians), "
                f"redis-benchmark -c {b.CLIENTS}, one rsbloom server.\n\n")
        f.write(f"Filters of capacity {CAPACITY:,} at {RATE}; {b.FILL:,} items each, "
                "lookups hit about half the time. SLIDING filter window info: "
                f"{window_info}.\n\n")
        f.write(text + "\n")
    b.log(f"bench: wrote {RESULTS}")


if __name__ == "__main__":
    main()
