#!/usr/bin/env python3
"""`make bench` (fourth part): lookups and adds on a valkey-bloom key (type `bloomfltr`, loaded
from valkey-bloom's data) against rsbloom's own filter of the same capacity and rate.

One rsbloom redis-server holds both keys: `native`, made by BF.RESERVE 0.01 10,000,000, and
`valkey`, an empty valkey-bloom filter of 10,000,000 at 0.01 (expansion 2) made by BF.LOAD of
the blob the valkey_filter example writes, as a valkey-bloom user's AOF would. Each is filled
with BENCH_FILL items, which the lookups hit about half the time. Every row alternates the two
keys for BENCH_ROUNDS rounds (redis-benchmark -c 50) and quotes the medians and their ratio
(valkey / native): BF.EXISTS and BF.ADD at pipeline 32, BF.MEXISTS of 100 items at pipeline 1
and 32, BF.MADD of 100 items at pipeline 32; and MEMORY USAGE of both.

A valkey-bloom lookup hashes the item twice with SipHash-1-3 and reads k bits spread over the
whole array, in every sub-filter; a native one hashes once with xxh3 and prefetches a batch's
lines ahead. The ratio is the price of keeping valkey-bloom's layout (so that its answers and
its saved bytes stay its own).

Output: a Markdown table on stdout and in bench/VALKEY.md. Environment: as bench.py
(BENCH_ROUNDS, BENCH_SECONDS, BENCH_CLIENTS, BENCH_FILL).
"""

import datetime
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench as b  # noqa: E402
import window as w  # noqa: E402

RESULTS = os.path.join(b.REPO, "bench", "VALKEY.md")
CAPACITY = b.SMALL_CAPACITY
RATE = b.ERROR_RATE
VALKEY_FILTER = os.path.join(b.REPO, "target", "release", "examples", "valkey_filter")
ROWS = (
    ("BF.EXISTS", False, 32),
    ("BF.MEXISTS", True, 1),
    ("BF.MEXISTS", True, 32),
    ("BF.ADD", False, 32),
    ("BF.MADD", True, 32),
)


def main():
    started = datetime.datetime.now(datetime.timezone.utc)
    began = time.monotonic()
    server = b.Server("rsbloom", b.RSBLOOM_SO)
    lines = []
    try:
        server.start()
        runner = b.Bench([server])
        con = server.client()
        blob = subprocess.run([VALKEY_FILTER, str(RATE), str(CAPACITY)], check=True,
                              capture_output=True).stdout
        con.execute_command("BF.LOAD", "valkey", blob)
        con.execute_command("BF.RESERVE", "native", RATE, CAPACITY)
        assert con.type("valkey") == b"bloomfltr" and con.type("native") == b"MBbloom--"
        present = b.numbered_items(b.PRESENT_PREFIX, b.FILL)
        b.log(f"filling both keys with {b.FILL:,} items")
        for key in ("valkey", "native"):
            w.fill(server, key, present)
        del present
        memory = {key: con.memory_usage(key, samples=0) for key in ("valkey", "native")}
        for op, multi, pipeline in ROWS:
            per = b.BATCH if multi else 1
            adds = op.endswith("ADD")
            template = b.ADD_TEMPLATE if adds else b.QUERY_TEMPLATE
            space = b.ADD_RANGE if adds else 2 * b.FILL

            def command(key):
                return [op, key] + [template] * per

            label = f"{op}{f' x{per}' if multi else ''} P{pipeline}"
            valkey, native, _ = w.compare(runner, server, label, command("valkey"),
                                          command("native"), per, pipeline, space)
            unit = "items/s" if multi else "ops/s"
            lines.append(f"| {label} ({unit}) | {valkey:,.0f} | {native:,.0f} | "
                         f"{valkey / native:.2f} |")
        lines.append(f"| MEMORY USAGE (bytes) | {memory['valkey']:,} | {memory['native']:,} | "
                     f"{memory['valkey'] / memory['native']:.2f} |")
        con.close()
    finally:
        server.cleanup()
    elapsed = time.monotonic() - began
    info = b.machine()
    table = "\n".join(["| row | valkey-bloom key | native key | ratio |", "|---|---:|---:|---:|",
                       *lines])
    b.log("\n" + table)
    body = [
        "# A valkey-bloom key against a native one",
        "",
        f"Written by `make bench` (bench/valkey.py) on {started:%Y-%m-%d %H:%M UTC}, in "
        f"{elapsed / 60:.1f} minutes. Medians of {b.ROUNDS} alternating rounds; ratio = "
        "valkey-bloom key / native key, both 10,000,000 at 0.01 holding "
        f"{b.FILL:,} items. The machine is shared (2 cores, redis-benchmark on one of them), so "
        "the figures are noisy. What each row does: the docstring of bench/valkey.py.",
        "",
        table,
        "",
        "## Machine",
        "",
        *[f"- {k}: {v}" for k, v in info.items()],
        "",
    ]
    with open(RESULTS, "w") as f:
        f.write("\n".join(body))
    b.log(f"bench: wrote {RESULTS} ({elapsed / 60:.1f} minutes)")


if __name__ == "__main__":
    main()
