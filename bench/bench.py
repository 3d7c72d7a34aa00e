#!/usr/bin/env python3
"""`make bench`: rsbloom against RedisBloom 2.8.2, one redis-server each, in the same run.

Both servers are the same /usr/bin/redis-server with the same settings (127.0.0.1, free ports,
no persistence, own temp dirs); only the module differs. Every figure is measured on both, the
two measurements alternating (rsbloom, RedisBloom, rsbloom, ...) for BENCH_ROUNDS rounds, and
the table quotes the medians, since this machine is shared and noisy. Nothing here asserts
anything about speed: the run prints and writes the figures, that is all.

Output: a Markdown table on stdout and in bench/RESULTS.md (with the machine and settings and
every round's figures), and a chart of the ratios in bench/results.png.

Environment (all optional):
  BENCH_ROUNDS        measurements per row and system (default 5)
  BENCH_SECONDS       target length of one throughput measurement in seconds (default 3)
  BENCH_CLIENTS       redis-benchmark connections (default 50)
  BENCH_BIG_CAPACITY  capacity of the big filter (default 800000000, about 1.03 GiB at 0.01)
  BENCH_FILL          items put in the filters before the EXISTS rows (default 5000000)
  BENCH_MEMORY_ITEMS  items for the memory and false-positive rows (default 1000000)
  REDISBLOOM_SO       RedisBloom's module (default: what scripts/redisbloom-so prints)
"""

import contextlib
import csv
import datetime
import math
import os
import re
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field


REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
# The server process class the Python tests use.
sys.path.insert(0, os.path.join(REPO, "tests", "py"))
from redis_server import REDIS_SERVER, Server  # noqa: E402
RSBLOOM_SO = os.path.join(REPO, "target", "release", "librsbloom.so")
REDISBLOOM_TOOL = os.path.join(REPO, "scripts", "redisbloom-so")
REDIS_BENCHMARK = shutil.which("redis-benchmark") or "/usr/bin/redis-benchmark"
RESULTS_MD = os.path.join(REPO, "bench", "RESULTS.md")
# Small filters per kind for the bytes-per-key rows.
SMALL_KEYS = 100_000
RESULTS_PNG = os.path.join(REPO, "bench", "results.png")


def env_number(name, default, kind=int):
    raw = os.environ.get(name, "")
    if not raw:
        return default
    try:
        value = kind(raw)
    except ValueError:
        sys.exit(f"bench: {name}={raw!r} is not a number")
    if value <= 0:
        sys.exit(f"bench: {name} must be positive")
    return value


ROUNDS = env_number("BENCH_ROUNDS", 5)
SECONDS = env_number("BENCH_SECONDS", 3.0, float)
CLIENTS = env_number("BENCH_CLIENTS", 50)
BIG_CAPACITY = env_number("BENCH_BIG_CAPACITY", 800_000_000)
FILL = env_number("BENCH_FILL", 5_000_000)
MEMORY_ITEMS = env_number("BENCH_MEMORY_ITEMS", 1_000_000)

SMALL_CAPACITY = 10_000_000
ERROR_RATE = 0.01
BATCH = 100  # items per BF.MADD / BF.MEXISTS in the throughput rows
PIPELINES = (1, 32)
# A fresh small filter per ADD measurement may take at most this share of its capacity, so it
# never grows a second link.
MAX_ADD_SHARE = 0.9

# Every item is 32 bytes: a host and 12 digits. redis-benchmark replaces each __rand_int__ with
# its own zero-padded 12-digit random number below -r, the same text prefill_items() makes.
# EXISTS rows query example.com numbers below 2 * FILL, of which those below FILL were
# prefilled: about half the lookups hit. ADD rows add example.net numbers, never prefilled,
# from a range so wide that nearly every add is new.
PRESENT_PREFIX = b"https://example.com/"
ADD_TEMPLATE = "https://example.net/__rand_int__"
QUERY_TEMPLATE = "https://example.com/__rand_int__"
ADD_RANGE = 2_000_000_000
MEMORY_PREFIX = b"https://example.com/m/"
ABSENT_PREFIX = b"https://example.org/m/"

SYSTEMS = ("rsbloom", "RedisBloom")
SECTIONS = ("throughput", "memory", "rdb")  # the table's order


def log(msg):
    print(msg, flush=True)


# ---------------------------------------------------------------------------------------------
# Servers


def cpu_seconds(pid):
    """utime + stime of a process, from /proc (the name field may hold spaces)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def busy_seconds():
    """CPU time all cores spent outside idle and iowait, from /proc/stat."""
    with open("/proc/stat") as f:
        user, nice, system, idle, iowait, irq, softirq, steal = map(int, f.readline().split()[1:9])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


# ---------------------------------------------------------------------------------------------
# Fast pipelined fills: raw RESP over one socket, the same bytes for both servers.


def bulk(b):
    return b"$%d\r\n%s\r\n" % (len(b), b)


def multi_commands(command, key, items, per_command=1000):
    """BF.MADD / BF.MEXISTS commands of `per_command` items each, as RESP bytes."""
    head = bulk(command) + bulk(key)
    out = []
    for start in range(0, len(items), per_command):
        chunk = items[start:start + per_command]
        out.append((b"*%d\r\n" % (2 + len(chunk)) + head + b"".join(map(bulk, chunk)), len(chunk)))
    return out


def numbered_items(prefix, count):
    return [prefix + b"%012d" % i for i in range(count)]


def send_multi(server, commands, window=16):
    """Sends the commands, `window` at a time, and returns how many items answered 1. Each
    reply is an array of `:0`/`:1`, so its length is known and it is checked, not parsed."""
    positives = 0
    with socket.create_connection(("127.0.0.1", server.port), timeout=600) as sock:
        for start in range(0, len(commands), window):
            group = commands[start:start + window]
            sock.sendall(b"".join(payload for payload, _ in group))
            items = sum(n for _, n in group)
            expected = sum(len(b"*%d\r\n" % n) + 4 * n for _, n in group)
            reply = bytearray()
            while len(reply) < expected:
                chunk = sock.recv(max(65536, expected - len(reply)))
                if not chunk:
                    raise RuntimeError(f"{server.name}: connection closed during a fill")
                reply += chunk
            ones, zeros = reply.count(b":1\r\n"), reply.count(b":0\r\n")
            if len(reply) != expected or ones + zeros != items:
                raise RuntimeError(f"{server.name}: unexpected reply {bytes(reply[:200])!r}")
            positives += ones
    return positives


# ---------------------------------------------------------------------------------------------
# Rows and results


@dataclass
class Row:
    section: str
    label: str
    unit: str
    better: str  # "higher" or "lower"
    fmt: str = "{:,.0f}"
    target: float = None  # on the ratio rsbloom / RedisBloom
    target_text: str = ""
    absolute_target: float = None  # on rsbloom's own figure (at most this)
    values: dict = field(default_factory=lambda: {s: [] for s in SYSTEMS})
    cpu: dict = field(default_factory=lambda: {s: [] for s in SYSTEMS})
    note: str = ""

    def median(self, system):
        v = self.values[system]
        return statistics.median(v) if v else float("nan")

    def ratio(self):
        a, b = self.median(SYSTEMS[0]), self.median(SYSTEMS[1])
        return a / b if b else float("nan")

    def met(self):
        if self.absolute_target is not None:
            return self.median(SYSTEMS[0]) <= self.absolute_target
        if self.target is None:
            return None
        r = self.ratio()
        return r >= self.target if self.better == "higher" else r <= self.target


class Bench:
    def __init__(self, servers):
        self.servers = servers  # in SYSTEMS order
        self.rows = []
        self.notes = []

    def row(self, **kw):
        r = Row(**kw)
        self.rows.append(r)
        return r

    # --- throughput ---------------------------------------------------------------------------

    def run_benchmark(self, server, args, requests, pipeline, keyspace):
        """One redis-benchmark run; returns requests/s and the CPU shares (of one core) of the
        server, of redis-benchmark and of every other process on the machine."""
        command_name = args[0].lower()
        con = server.client()
        calls_before = command_calls(con, command_name)
        errors_before = error_count(con)
        cmd = [
            REDIS_BENCHMARK, "-h", "127.0.0.1", "-p", str(server.port), "-c", str(CLIENTS),
            "-n", str(requests), "-P", str(pipeline), "-r", str(keyspace), "--csv", *args,
        ]
        usage_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        server_before = cpu_seconds(server.proc.pid)
        busy_before = busy_seconds()
        began = time.monotonic()
        out = subprocess.run(cmd, capture_output=True, text=True, check=False)
        wall = time.monotonic() - began
        server_cpu = (cpu_seconds(server.proc.pid) - server_before) / wall
        busy = (busy_seconds() - busy_before) / wall
        usage_after = resource.getrusage(resource.RUSAGE_CHILDREN)
        client_cpu = (usage_after.ru_utime + usage_after.ru_stime
                      - usage_before.ru_utime - usage_before.ru_stime) / wall
        rate = None
        for line in csv.reader(out.stdout.splitlines()):
            if len(line) >= 2 and line[0] != "test":
                rate = float(line[1])
        if out.returncode != 0 or rate is None or not math.isfinite(rate):
            raise RuntimeError(f"{server.name}: redis-benchmark failed: {out.stdout[-500:]}"
                               f"{out.stderr[-2000:]}")
        # redis-benchmark counts error replies as answers: make sure there were none.
        calls = command_calls(con, command_name) - calls_before
        errors = error_count(con) - errors_before
        con.close()
        # With -P, each client may send up to one pipeline more than -n asks.
        if errors or not requests <= calls <= requests + CLIENTS * pipeline:
            raise RuntimeError(f"{server.name}: {args[0]}: {calls} calls of {requests}, "
                               f"{errors} errors")
        return rate, (server_cpu, client_cpu, max(0.0, busy - server_cpu - client_cpu))

    def throughput(self, label, args, items_per_command, pipeline, keyspace, prepare=None,
                   max_requests=None, target=None, target_text=""):
        unit = "items/s" if items_per_command > 1 else "ops/s"
        row = self.row(section="throughput", label=label, unit=unit, better="higher",
                       target=target, target_text=target_text)
        # Rough requests/s on this machine, only to size the probe.
        guess = {(1, False): 40_000, (32, False): 400_000, (1, True): 10_000,
                 (32, True): 15_000}[pipeline, items_per_command > 1]

        def measure(server, requests):
            if prepare:
                prepare(server)
            return self.run_benchmark(server, args, requests, pipeline, keyspace)

        # A short probe on each system (also a warm-up) sets the request count for the rounds.
        probe = max(1000, int(guess * 0.4))
        if max_requests:
            probe = min(probe, max_requests)
        rates = [measure(s, probe)[0] for s in self.servers]
        requests = max(1000, int(SECONDS * math.sqrt(rates[0] * rates[1])))
        if max_requests and requests > max_requests:
            requests = max_requests
        log(f"  {label}: probe {rates[0]:,.0f} / {rates[1]:,.0f} req/s -> {requests:,} "
            f"requests per measurement")
        for rnd in range(1, ROUNDS + 1):
            for system, server in zip(SYSTEMS, self.servers):
                rate, cpu = measure(server, requests)
                row.values[system].append(rate * items_per_command)
                row.cpu[system].append(cpu)
                log(f"    round {rnd}/{ROUNDS} {system:<10} {rate * items_per_command:>14,.0f} "
                    f"{unit}  (CPU: server {cpu[0]:4.0%}, redis-benchmark {cpu[1]:4.0%}, "
                    f"others {cpu[2]:4.0%})")
        row.note = f"{requests:,} requests of pipeline {pipeline}"
        return row

    def filter_rows(self, size, key, fresh_add_key=None):
        """EXISTS rows on `key` (prefilled), then ADD rows (on `key`, or on `fresh_add_key`
        reserved anew before every measurement)."""
        query_range = 2 * FILL
        for op, multi in (("BF.EXISTS", False), ("BF.MEXISTS", True)):
            for p in PIPELINES:
                args = [op, key] + [QUERY_TEMPLATE] * (BATCH if multi else 1)
                target, text = target_for(size, op, p)
                self.throughput(f"{size} {op} P{p}", args, BATCH if multi else 1, p,
                                query_range, target=target, target_text=text)
        add_key = fresh_add_key or key
        prepare = None
        if fresh_add_key:
            def prepare(server):
                con = server.client()
                con.delete(fresh_add_key)
                con.execute_command("BF.RESERVE", fresh_add_key, ERROR_RATE, SMALL_CAPACITY)
                con.close()
        for op, multi in (("BF.ADD", False), ("BF.MADD", True)):
            for p in PIPELINES:
                per = BATCH if multi else 1
                args = [op, add_key] + [ADD_TEMPLATE] * per
                cap = int(SMALL_CAPACITY * MAX_ADD_SHARE / per) if fresh_add_key else None
                target, text = target_for(size, op, p)
                row = self.throughput(f"{size} {op} P{p}", args, per, p, ADD_RANGE,
                                      prepare=prepare, max_requests=cap, target=target,
                                      target_text=text)
                if fresh_add_key:
                    for server in self.servers:
                        check_one_link(server, fresh_add_key)
                    row.note += "; each on a freshly reserved filter"

    # --- memory -------------------------------------------------------------------------------

    def memory(self):
        stored = numbered_items(MEMORY_PREFIX, MEMORY_ITEMS)
        absent = numbered_items(ABSENT_PREFIX, MEMORY_ITEMS)
        for rate in (0.01, 0.001):
            key = f"mem:{rate}".encode()
            adds = multi_commands(b"BF.MADD", key, stored)
            checks = multi_commands(b"BF.MEXISTS", key, absent)
            usage = self.row(section="memory", label=f"bytes/item at {rate}, MEMORY USAGE",
                             unit="bytes", better="lower", fmt="{:.3f}", target=1.0,
                             target_text="<= 1x")
            growth = self.row(section="memory", label=f"bytes/item at {rate}, used_memory growth",
                              unit="bytes", better="lower", fmt="{:.3f}", target=1.0,
                              target_text="<= 1x")
            fpr = self.row(section="memory", label=f"false-positive rate at {rate}",
                           unit="", better="lower", fmt="{:.5f}", absolute_target=rate,
                           target_text=f"rsbloom <= {rate}")
            for system, server in zip(SYSTEMS, self.servers):
                con = server.client()
                before = con.info("memory")["used_memory"]
                con.execute_command("BF.RESERVE", key, rate, MEMORY_ITEMS)
                send_multi(server, adds)
                time.sleep(0.2)  # let the server drop the fill connection's buffers
                after = con.info("memory")["used_memory"]
                mem = con.memory_usage(key)
                positives = send_multi(server, checks)
                info = bf_info(con, key)
                con.close()
                usage.values[system].append(mem / MEMORY_ITEMS)
                growth.values[system].append((after - before) / MEMORY_ITEMS)
                fpr.values[system].append(positives / MEMORY_ITEMS)
                log(f"  {system:<10} error {rate}: MEMORY USAGE {mem:,} B "
                    f"({mem / MEMORY_ITEMS:.3f} B/item), used_memory +{after - before:,} B, "
                    f"{info['Number of items inserted']:,} items counted in "
                    f"{info['Number of filters']} link(s), "
                    f"{positives:,} of {MEMORY_ITEMS:,} absent items answered 1")
            note = (f"BF.RESERVE {key.decode()} {rate} {MEMORY_ITEMS} (scaling), then "
                    f"{MEMORY_ITEMS:,} items {MEMORY_PREFIX.decode()}<12 digits>")
            usage.note = growth.note = note
            fpr.note = f"BF.MEXISTS of {MEMORY_ITEMS:,} items {ABSENT_PREFIX.decode()}<12 digits>"

    def small_filters(self):
        """used_memory per key over SMALL_KEYS small filters of each kind (one round: the figure
        is a count of bytes, not a timing), and MEMORY USAGE of one of them."""
        kinds = [
            ("BF.ADD (created by an add)", lambda k: [[b"BF.ADD", k, b"x"]]),
            ("BF.RESERVE 0.01 1000, one add",
             lambda k: [[b"BF.RESERVE", k, b"0.01", b"1000"], [b"BF.ADD", k, b"x"]]),
            ("CF.ADD (created by an add)", lambda k: [[b"CF.ADD", k, b"x"]]),
        ]
        for label, make in kinds:
            per_key = self.row(section="memory", label=f"bytes/key, {label}", unit="bytes",
                               better="lower", fmt="{:.1f}", target=1.0, target_text="<= 1x")
            usage = self.row(section="memory", label=f"MEMORY USAGE, {label}", unit="bytes",
                             better="lower", fmt="{:.0f}")
            for system, server in zip(SYSTEMS, self.servers):
                con = server.client()
                keys = [f"small:{i:07d}".encode() for i in range(SMALL_KEYS)]
                before = con.info("memory")["used_memory"]
                pipe = con.pipeline(transaction=False)
                for n, key in enumerate(keys):
                    for command in make(key):
                        pipe.execute_command(*command)
                    if n % 1000 == 999:
                        pipe.execute()
                pipe.execute()
                after = con.info("memory")["used_memory"]
                per_key.values[system].append((after - before) / SMALL_KEYS)
                usage.values[system].append(con.memory_usage(keys[1]))
                for start in range(0, SMALL_KEYS, 1000):
                    con.delete(*keys[start:start + 1000])
                con.close()
            per_key.note = (f"{SMALL_KEYS:,} keys made in pipelines, used_memory before and after "
                            "divided by the keys (tests/memory.rs checks the same in make test)")

    # --- RDB ----------------------------------------------------------------------------------

    def rdb(self, key):
        size_row = self.row(section="rdb", label="dump.rdb size", unit="MiB", better="lower",
                            fmt="{:,.1f}")
        save_row = self.row(section="rdb", label="SAVE time", unit="s", better="lower",
                            fmt="{:.3f}", target=1.0, target_text="<= 1x")
        load_row = self.row(section="rdb", label="load time (server log)", unit="s",
                            better="lower", fmt="{:.3f}", target=1.0, target_text="<= 1x")
        ready_row = self.row(section="rdb", label="restart until PING", unit="s",
                             better="lower", fmt="{:.3f}")
        cards = {}
        for server in self.servers:
            con = server.client()
            for k in con.scan_iter(count=1000):
                if k != key.encode():
                    con.delete(k)
            cards[server.name] = con.execute_command("BF.CARD", key)
            con.close()
        for rnd in range(1, ROUNDS + 1):
            for system, server in zip(SYSTEMS, self.servers):
                con = server.client()
                began = time.monotonic()
                con.save()
                saved = time.monotonic() - began
                con.close()
                size = os.path.getsize(os.path.join(server.dir, "dump.rdb"))
                server.stop()
                ready = server.start()
                found = re.findall(r"DB loaded from disk: ([0-9.]+) seconds", server.log_text())
                if not found:
                    raise RuntimeError(f"{system}: no 'DB loaded' line:\n{server.log_text()}")
                loaded = float(found[-1])
                con = server.client()
                card = con.execute_command("BF.CARD", key)
                con.close()
                if card != cards[system]:
                    raise RuntimeError(f"{system}: BF.CARD {card} after the reload, "
                                       f"{cards[system]} before")
                size_row.values[system].append(size / 2**20)
                save_row.values[system].append(saved)
                load_row.values[system].append(loaded)
                ready_row.values[system].append(ready)
                log(f"    round {rnd}/{ROUNDS} {system:<10} SAVE {saved:.3f} s, "
                    f"dump.rdb {size / 2**20:,.1f} MiB, loaded in {loaded:.3f} s "
                    f"(PING after {ready:.3f} s)")
        note = f"the big filter alone ({cards[SYSTEMS[0]]:,} / {cards[SYSTEMS[1]]:,} items)"
        for r in (size_row, save_row, load_row, ready_row):
            r.note = note


def target_for(size, op, pipeline):
    if size == "10M" and op in ("BF.ADD", "BF.EXISTS") and pipeline == 32:
        return 1.5, ">= 1.5x"
    if size == "big" and op in ("BF.MADD", "BF.MEXISTS"):
        return 2.0, ">= 2x"
    return None, ""


def command_calls(con, name):
    stats = con.info("commandstats").get(f"cmdstat_{name}")
    return stats["calls"] if stats else 0


def error_count(con):
    return sum(v["count"] for v in con.info("errorstats").values())


def bf_info(con, key):
    reply = con.execute_command("BF.INFO", key)
    pairs = reply.items() if isinstance(reply, dict) else zip(reply[::2], reply[1::2])
    return {k.decode() if isinstance(k, bytes) else k: v for k, v in pairs}


def check_one_link(server, key):
    con = server.client()
    info = bf_info(con, key)
    con.close()
    if info["Number of filters"] != 1:
        raise RuntimeError(f"{server.name}: {key} grew to {info['Number of filters']} links")


def prefill(servers, key, capacity, items):
    """Reserves `key` on every server and adds the items; returns MEMORY USAGE per server."""
    commands = multi_commands(b"BF.MADD", key.encode(), items)
    sizes = {}
    for server in servers:
        con = server.client()
        con.execute_command("BF.RESERVE", key, ERROR_RATE, capacity)
        began = time.monotonic()
        send_multi(server, commands)
        info = bf_info(con, key)
        mem = con.memory_usage(key)
        con.close()
        log(f"  {server.name:<10} {key}: {len(items):,} items in {time.monotonic() - began:.1f} s, "
            f"MEMORY USAGE {mem:,} B ({mem / 2**30:.3f} GiB), {info['Number of filters']} link(s)")
        sizes[server.name] = mem
    return sizes


# ---------------------------------------------------------------------------------------------
# Report


def machine():
    fields = {}
    with open("/proc/cpuinfo") as f:
        for line in f:
            if not line.strip():
                break  # the first processor is enough
            name, _, value = line.partition(":")
            fields[name.strip()] = value.strip()
    # In a VM the model name may be bare ("AMD EPYC"); family 26 is Zen 5.
    cpu = (f"{fields.get('model name', 'unknown')} (family {fields.get('cpu family', '?')}, "
           f"model {fields.get('model', '?')}, L2 {fields.get('cache size', '?')} per core)")
    with open("/proc/meminfo") as f:
        mem_kib = int(f.readline().split()[1])
    version = subprocess.run([REDIS_SERVER, "--version"], capture_output=True,
                             text=True).stdout.strip()
    commit = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip() or "unknown"
    dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    return {
        "CPU": f"{cpu}, {os.cpu_count()} cores",
        "RAM": f"{mem_kib / 2**20:.1f} GiB",
        "redis-server": version,
        "git commit": commit + (" (with uncommitted changes)" if dirty else ""),
    }


def fmt_ratio(ratio):
    # Three decimals near 1, where "a hair above" and "a hair below" mean different verdicts.
    return f"{ratio:.3f}x" if abs(ratio - 1) < 0.01 else f"{ratio:.2f}x"


def fmt_value(row, value):
    return row.fmt.format(value) if math.isfinite(value) else "n/a"


def table(rows):
    lines = ["| row | unit | rsbloom | RedisBloom | ratio | better | target | met |",
             "|---|---|---:|---:|---:|---|---|---|"]
    for r in rows:
        met = r.met()
        lines.append(
            f"| {r.label} | {r.unit} | {fmt_value(r, r.median(SYSTEMS[0]))} | "
            f"{fmt_value(r, r.median(SYSTEMS[1]))} | {fmt_ratio(r.ratio())} | {r.better} | "
            f"{r.target_text} | {'' if met is None else ('yes' if met else 'no')} |")
    return "\n".join(lines)


def details(rows):
    lines = ["| row | system | each round | server CPU | redis-benchmark CPU | other CPU | "
             "workload |",
             "|---|---|---|---:|---:|---:|---|"]
    for r in rows:
        paired = [a / b for a, b in zip(*(r.values[s] for s in SYSTEMS)) if b]
        if len(paired) > 1:
            lines.append(f"| {r.label} | ratio per round | "
                         f"{', '.join(f'{x:.2f}x' for x in paired)} (median "
                         f"{statistics.median(paired):.2f}x) | | | | |")
        for system in SYSTEMS:
            rounds = ", ".join(fmt_value(r, v) for v in r.values[system])
            cpu = [f"{statistics.median(c[i] for c in r.cpu[system]):.0%}" if r.cpu[system]
                   else "" for i in range(3)]
            lines.append(f"| {r.label} | {system} | {rounds} | {' | '.join(cpu)} | {r.note} |")
    return "\n".join(lines)


def write_results(bench, info, settings, started, elapsed):
    body = [
        "# Benchmark results: rsbloom vs RedisBloom 2.8.2",
        "",
        f"Written by `make bench` (bench/bench.py) on {started:%Y-%m-%d %H:%M UTC}, in "
        f"{elapsed / 60:.1f} minutes. Medians of {ROUNDS} alternating rounds; ratio = "
        "rsbloom / RedisBloom (for ops/s and items/s higher is better, for bytes, rates and "
        "seconds lower is better). The machine is shared, so the figures are noisy.",
        "",
        "![ratios](results.png)",
        "",
        table(bench.rows),
        "",
        "## Machine and settings",
        "",
        *[f"- {k}: {v}" for k, v in {**info, **settings}.items()],
        "",
        "## Workload",
        "",
        *[f"- {n}" for n in bench.notes],
        "",
        "## Every round",
        "",
        "CPU columns: median share of one core that redis-server, redis-benchmark and all "
        "other processes on the machine used during a measurement (100% = one core busy all "
        f"the time; the machine has {os.cpu_count()}). A server near 100% is the limit; "
        "much CPU in other processes means the figure was squeezed by them.",
        "",
        details(bench.rows),
        "",
    ]
    with open(RESULTS_MD, "w") as f:
        f.write("\n".join(body))


def chart(bench):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [
        ("Throughput: rsbloom / RedisBloom (higher is better)",
         [r for r in bench.rows if r.better == "higher"]),
        ("Memory, false positives, RDB: rsbloom / RedisBloom (lower is better)",
         [r for r in bench.rows if r.better == "lower"]),
    ]
    heights = [len(rows) for _, rows in panels]
    fig, axes = plt.subplots(2, 1, figsize=(10, 0.32 * sum(heights) + 3),
                             gridspec_kw={"height_ratios": heights})
    # Colour says whether a row with a target meets it; rows without one are grey.
    colours = {True: "#55A868", False: "#DD8452", None: "#8C9BAB"}
    for ax, (title, rows) in zip(axes, panels):
        labels = [f"{r.label} ({r.unit})" if r.unit else r.label for r in rows]
        ratios = [r.ratio() for r in rows]
        y = range(len(rows))
        ax.barh(y, ratios, color=[colours[r.met()] for r in rows])
        ax.set_yticks(list(y), labels, fontsize=8)
        ax.invert_yaxis()
        ax.axvline(1.0, color="black", linewidth=1)
        for i, r in enumerate(rows):
            ax.text(ratios[i], i, f" {fmt_ratio(ratios[i])}", va="center", fontsize=7)
            if r.target is not None and r.target != 1.0:
                ax.plot([r.target, r.target], [i - 0.45, i + 0.45], color="red", linewidth=2)
        ax.set_title(title, fontsize=10)
        ax.set_xlim(0, max([2.2] + [x * 1.15 for x in ratios if math.isfinite(x)]))
        ax.grid(axis="x", alpha=0.3)
    from matplotlib.patches import Patch

    axes[0].legend(handles=[Patch(color=colours[True], label="target met"),
                            Patch(color=colours[False], label="target missed"),
                            Patch(color=colours[None], label="no target"),
                            plt.Line2D([], [], color="red", linewidth=2, label="target ratio")],
                   loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(RESULTS_PNG, dpi=110)
    plt.close(fig)


# ---------------------------------------------------------------------------------------------


def own_core(servers):
    """Gives the servers a core of their own: the servers run on the first core, this process
    and every client it starts (threads, redis-benchmark) on the others. Unpinned on two cores,
    the scheduler put clients beside the server in some rounds and not others: rsbloom's bulk
    lookups ran at 14-29 M items/s round to round, the server idle up to 40% of the time;
    pinned, 28.4-29.6 M (6 rounds), RedisBloom's BF.MEXISTS 6.0-6.4 M (6.0-6.7 unpinned).
    Nothing is pinned on a single core."""
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2:
        return
    for server in servers:
        os.sched_setaffinity(server.proc.pid, cores[:1])
    os.sched_setaffinity(0, cores[1:])


@contextlib.contextmanager
def side_by_side():
    """rsbloom's and RedisBloom's servers, started, as the other benches' pair; stopped (by
    pid) on the way out, whatever happened."""
    servers = []
    try:
        for name, module in zip(SYSTEMS, (RSBLOOM_SO, redisbloom_path())):
            server = Server(name, module)
            servers.append(server)
            server.start()
        yield servers
    finally:
        for server in servers:
            server.cleanup()


def redisbloom_path():
    path = os.environ.get("REDISBLOOM_SO")
    if not path:
        path = subprocess.run([REDISBLOOM_TOOL], check=True, capture_output=True,
                              text=True).stdout.strip().splitlines()[-1]
    return path


def main():
    started = datetime.datetime.now(datetime.timezone.utc)
    began = time.monotonic()
    for path in (RSBLOOM_SO, REDIS_SERVER, REDIS_BENCHMARK):
        if not os.path.exists(path):
            sys.exit(f"bench: {path} is missing (make bench builds and installs everything)")
    modules = (RSBLOOM_SO, redisbloom_path())
    # SIGTERM unwinds like Ctrl-C, so the servers are stopped either way.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    servers = []
    try:
        for name, module in zip(SYSTEMS, modules):
            server = Server(name, module)
            servers.append(server)
            server.start()
            log(f"{name}: redis-server pid {server.proc.pid} on 127.0.0.1:{server.port}, "
                f"dir {server.dir}, module {module}")
        bench = Bench(servers)
        run(bench)
        elapsed = time.monotonic() - began
        versions = {}
        for server in servers:
            con = server.client()
            versions[server.name] = [m for m in con.module_list() if m[b"name"] == b"bf"]
            con.close()
    finally:
        for server in servers:
            server.cleanup()
    info = machine()
    settings = {
        # File names only: a path of this machine means nothing to a reader of RESULTS.md.
        "modules": ", ".join(f"{n} {v[0][b'ver'] if v else '?'} ({os.path.basename(m)})"
                             for (n, v), m in zip(versions.items(), modules)),
        "server settings": "127.0.0.1, --save '' --appendonly no, one server per module, "
                           "both running during the whole run",
        "redis-benchmark": f"-c {CLIENTS} -P 1 / 32, --csv; request counts set per row from a "
                           f"probe so that one measurement takes about {SECONDS:g} s",
        "rounds": str(ROUNDS),
        "load average at the end": " ".join(open("/proc/loadavg").read().split()[:3]),
    }
    bench.rows.sort(key=lambda r: SECTIONS.index(r.section))
    text = table(bench.rows)
    log("\n" + text + "\n")
    write_results(bench, info, settings, started, elapsed)
    chart(bench)
    log(f"bench: wrote {RESULTS_MD} and {RESULTS_PNG} ({elapsed / 60:.1f} minutes)")


def run(bench):
    servers = bench.servers
    bench.notes += [
        f"Items are 32-byte URLs: a host and 12 digits. redis-benchmark replaces each "
        f"`__rand_int__` with its own random number below `-r`.",
        f"10M filter: `BF.RESERVE k {ERROR_RATE} {SMALL_CAPACITY}`. EXISTS rows query it after a "
        f"fill of {FILL:,} items `{PRESENT_PREFIX.decode()}<0..{FILL - 1}>`, drawing from "
        f"0..{2 * FILL - 1}, so about half the lookups hit. ADD rows each start on a freshly "
        f"reserved filter and add `{ADD_TEMPLATE}` with -r {ADD_RANGE:,} (nearly all new), "
        f"at most {MAX_ADD_SHARE:.0%} of its capacity, so it stays one link.",
        f"Big filter: `BF.RESERVE big {ERROR_RATE} {BIG_CAPACITY}`, the same fill and EXISTS "
        f"queries, then the ADD rows add to it (all items new). Its RDB rows follow.",
        f"{BATCH} items per BF.MADD / BF.MEXISTS; items/s = {BATCH} x commands/s.",
    ]
    log(f"\n== memory and false positives ({MEMORY_ITEMS:,} items per filter)")
    bench.memory()
    log(f"\n== memory per small filter ({SMALL_KEYS:,} keys of each kind)")
    bench.small_filters()

    log(f"\n== throughput: PING (rounds {ROUNDS}, about {SECONDS:g} s per measurement)")
    for p in PIPELINES:
        bench.throughput(f"PING P{p}", ["PING"], 1, p, 1)
    # BF.EXISTS on a missing key does no filter work: the ceiling of a module command on this
    # server (Redis's own cost of dispatching one), against which the single-item rows read.
    bench.throughput("BF.EXISTS missing key P32 (no filter work)",
                     ["BF.EXISTS", "missing", QUERY_TEMPLATE], 1, 32, 2 * FILL)

    log(f"\n== throughput: 10M filter, prefill of {FILL:,} items")
    fill_items = numbered_items(PRESENT_PREFIX, FILL)
    prefill(servers, "small", SMALL_CAPACITY, fill_items)
    bench.filter_rows("10M", "small", fresh_add_key="small:add")

    log(f"\n== throughput: big filter (capacity {BIG_CAPACITY:,}), prefill of {FILL:,} items")
    sizes = prefill(servers, "big", BIG_CAPACITY, fill_items)
    del fill_items
    below = [n for n, mem in sizes.items() if mem < 2**30]
    bench.notes.append("Big filter MEMORY USAGE: " + ", ".join(
        f"{n} {mem:,} B ({mem / 2**30:.3f} GiB)" for n, mem in sizes.items())
        + (f" -- below 1 GiB for {', '.join(below)}" if below else ""))
    if below:
        log(f"  warning: the big filter is below 1 GiB on {', '.join(below)}")
    for server in servers:
        con = server.client()
        con.delete("small", "small:add")
        con.close()
    bench.filter_rows("big", "big")
    for server in servers:
        check_one_link(server, "big")

    log(f"\n== RDB of the big filter (rounds {ROUNDS})")
    bench.rdb("big")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit("bench: interrupted; servers stopped")
