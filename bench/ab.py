#!/usr/bin/env python3
"""`make bench-ab BASE=<commit>`: this build against an earlier one, on the same machine.

A regression on the batch path (BF.MADD / BF.MEXISTS) is a few percent to a few tens of percent,
and this machine's noise is of the same order: one run of each build proves nothing. So both
builds run at once, each in its own redis-server (same binary, same settings), and every round
measures both, in alternating order (this, base; then base, this), so that a drift in the
machine's load falls on both. A round gives a paired ratio (this / base); the report quotes the
median of the ratios and their range, with every round's figures.

The base build is the module built from `git archive <commit>` in target/ab/src-<sha>, cached
as target/ab/librsbloom-<sha>.so, so a second comparison against the same commit builds nothing.

Rows: 100-item BF.MADD (a freshly reserved 10M filter per measurement, so it stays one link)
and BF.MEXISTS (a 10M filter at 1% holding BENCH_FILL items, half the lookups present), at
pipeline 32, the rows where the SplitMix64 regression showed; BF.BULKEXISTS of blobs of 1,000
URLs on the same filter when both builds have it; with BENCH_AB_BIG=1 the same on a filter of
BENCH_BIG_CAPACITY (1 GiB by default). The figures go to stdout and bench/AB.md.

Environment (all optional): BENCH_ROUNDS (default 5), BENCH_SECONDS (default 3), BENCH_CLIENTS,
BENCH_FILL (default 5000000), BENCH_AB_BIG, BENCH_BIG_CAPACITY.
"""

import datetime
import os
import shutil
import signal
import statistics
import subprocess
import sys

import bench
import bulk
from bench import BATCH, ERROR_RATE, SMALL_CAPACITY, Bench, Server, log

REPO = bench.REPO
AB_DIR = os.path.join(REPO, "target", "ab")
AB_MD = os.path.join(REPO, "bench", "AB.md")
PIPELINE = 32


def git(*args):
    return subprocess.run(["git", "-C", REPO, *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def base_module(commit):
    """The module built from `commit`: built once, then taken from the cache."""
    sha = git("rev-parse", "--verify", f"{commit}^{{commit}}")
    module = os.path.join(AB_DIR, f"librsbloom-{sha[:12]}.so")
    if os.path.exists(module):
        log(f"base {commit} ({sha[:12]}): {module} (built before)")
        return sha, module
    src = os.path.join(AB_DIR, f"src-{sha[:12]}")
    shutil.rmtree(src, ignore_errors=True)
    os.makedirs(src)
    log(f"base {commit} ({sha[:12]}): building in {src}")
    archive = subprocess.Popen(["git", "-C", REPO, "archive", sha], stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", src], stdin=archive.stdout, check=True)
    if archive.wait() != 0:
        sys.exit(f"bench-ab: git archive {sha} failed")
    # One target directory for every base, so the dependencies are built once.
    env = dict(os.environ, CARGO_TARGET_DIR=os.path.join(AB_DIR, "target"))
    subprocess.run(["cargo", "build", "--release", "-p", "rsbloom"], cwd=src, env=env,
                   check=True)
    shutil.copy(os.path.join(AB_DIR, "target", "release", "librsbloom.so"), module)
    shutil.rmtree(src)
    return sha, module


class Comparison:
    def __init__(self, servers):
        self.servers = servers  # (this build, base)
        self.runner = Bench(servers)
        self.rows = []

    def bulk_row(self, label, cmds):
        """Paired rounds of bulk lookups (prebuilt commands, sent by bulk.py's client)."""
        def measure(server, repeats):
            wall = bulk.drive(server.port, cmds * repeats, bulk.BLOB_ITEMS)
            return len(cmds) * repeats * bulk.BLOB_ITEMS / wall, 0.0

        probe = [measure(s, 1)[0] for s in self.servers]
        items = len(cmds) * bulk.BLOB_ITEMS
        repeats = max(1, round(SECONDS * statistics.geometric_mean(probe) / items))
        self.paired(label, measure, repeats)

    def paired(self, label, measure, amount):
        rounds = []
        for rnd in range(ROUNDS):
            order = (0, 1) if rnd % 2 == 0 else (1, 0)
            figures = [None, None]
            for i in order:
                figures[i] = measure(self.servers[i], amount)
            ratio = figures[0][0] / figures[1][0]
            rounds.append((figures, ratio))
            log(f"    round {rnd + 1}/{ROUNDS}: this {figures[0][0]:>12,.0f}  base "
                f"{figures[1][0]:>12,.0f} items/s  ratio {ratio:.3f}")
        self.rows.append((label, rounds))

    def row(self, label, args, prepare=None):
        """Paired rounds of one redis-benchmark row; items/s per build and the ratios."""
        def measure(server, requests):
            if prepare:
                prepare(server)
            rate, cpu = self.runner.run_benchmark(server, args, requests, PIPELINE, 2 * FILL)
            return rate * BATCH, cpu[0]

        probe = [measure(s, 2000)[0] for s in self.servers]
        requests = max(1000, int(SECONDS * statistics.geometric_mean(probe) / BATCH))
        if prepare:
            # A fresh filter per measurement stays one link: at most 90% of its capacity.
            requests = min(requests, int(SMALL_CAPACITY * 0.9 / BATCH))
        log(f"  {label}: {requests:,} requests of {BATCH} items per measurement")
        self.paired(label, measure, requests)


def has_bulk(server):
    """Whether the build answers BF.BULKEXISTS."""
    con = server.client()
    try:
        con.execute_command("BF.BULKEXISTS", "small", b"x")
        return True
    except Exception:  # noqa: BLE001 - an unknown command
        return False
    finally:
        con.close()


def fresh_filter(key, capacity):
    def prepare(server):
        con = server.client()
        con.delete(key)
        con.execute_command("BF.RESERVE", key, ERROR_RATE, capacity)
        con.close()
    return prepare


def report(rows, base, sha, started):
    lines = [
        f"# A/B: this build against {base} ({sha[:12]})",
        "",
        f"{started:%Y-%m-%d %H:%M} UTC, `make bench-ab BASE={base}`, {ROUNDS} rounds, "
        f"{BATCH} items per command, redis-benchmark -P {PIPELINE} -c {bench.CLIENTS}; "
        f"ratio = this / base, paired per round.",
        "",
        "| row | this (median items/s) | base (median items/s) | ratio: median | min | max |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for label, rounds in rows:
        this = statistics.median(f[0][0] for f, _ in rounds)
        that = statistics.median(f[1][0] for f, _ in rounds)
        ratios = [r for _, r in rounds]
        lines.append(f"| {label} | {this:,.0f} | {that:,.0f} | {statistics.median(ratios):.3f} "
                     f"| {min(ratios):.3f} | {max(ratios):.3f} |")
    lines += ["", "Every round (this, base, ratio):", ""]
    for label, rounds in rows:
        lines.append(f"- {label}: " + "; ".join(
            f"{f[0][0]:,.0f} / {f[1][0]:,.0f} = {r:.3f}" for f, r in rounds))
    return "\n".join(lines) + "\n"


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: bench/ab.py <base commit>   (make bench-ab BASE=<commit>)")
    base = sys.argv[1]
    started = datetime.datetime.now(datetime.timezone.utc)
    sha, module = base_module(base)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    servers = []
    try:
        for name, so in (("this", bench.RSBLOOM_SO), ("base", module)):
            server = Server(name, so)
            servers.append(server)
            server.start()
            log(f"{name}: redis-server pid {server.proc.pid} on 127.0.0.1:{server.port}, {so}")
        bench.own_core(servers)
        fill = bench.numbered_items(bench.PRESENT_PREFIX, FILL)
        comparison = Comparison(servers)
        query = ["BF.MEXISTS", "small"] + [bench.QUERY_TEMPLATE] * BATCH
        add = ["BF.MADD", "small:add"] + [bench.ADD_TEMPLATE] * BATCH
        bench.prefill(servers, "small", SMALL_CAPACITY, fill)
        comparison.row("10M BF.MEXISTS P32", query)
        comparison.row("10M BF.MADD P32", add, prepare=fresh_filter("small:add", SMALL_CAPACITY))
        if all(has_bulk(server) for server in servers):
            # Half of them present, as the BF.MEXISTS row's.
            urls = bench.numbered_items(bench.PRESENT_PREFIX, FILL + 500_000)[FILL - 500_000:]
            cmds = [bulk.resp(b"BF.BULKEXISTS", b"small", b"\n".join(urls[i:i + bulk.BLOB_ITEMS]))
                    for i in range(0, len(urls), bulk.BLOB_ITEMS)]
            comparison.bulk_row("10M BF.BULKEXISTS of 1,000", cmds)
        if os.environ.get("BENCH_AB_BIG"):
            for server in servers:
                server.client().delete("small", "small:add")
            bench.prefill(servers, "big", bench.BIG_CAPACITY, fill)
            comparison.row("big BF.MEXISTS P32", ["BF.MEXISTS", "big"] + query[2:])
            comparison.row("big BF.MADD P32", ["BF.MADD", "big"] + add[2:])
    finally:
        for server in servers:
            server.cleanup()
    text = report(comparison.rows, base, sha, started)
    log("\n" + text)
    with open(AB_MD, "w") as f:
        f.write(text)
    log(f"bench-ab: wrote {AB_MD}")


ROUNDS = bench.ROUNDS
SECONDS = bench.SECONDS
FILL = bench.FILL

if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit("bench-ab: interrupted; servers stopped")
