#!/usr/bin/env python3
"""The bulk commands against one argument per item (`make bench`, or alone:
`python bench/bulk.py`), written to bench/BULK.md.

Two servers side by side, rsbloom and RedisBloom 2.8.2, each with a 10M filter at 1% holding
BENCH_FILL items, then a filter of BENCH_BIG_CAPACITY (about 1 GiB) holding as many (its rows
left out with BENCH_BULK_BIG=0). Every figure alternates between the two, BENCH_ROUNDS rounds,
medians quoted:

- RedisBloom's BF.MADD and BF.MEXISTS of 100 items, pipeline 32 (redis-benchmark, as
  bench.py measures them), and CF.INSERT / CF.MEXISTS of 100 on a cuckoo filter;
- rsbloom's BF.BULKADD, BF.BULKEXISTS, CF.BULKADD, CF.BULKEXISTS of 1,000 URL-like items of
  about 40 bytes per blob, from CONNECTIONS connections each keeping PIPELINE blobs in flight
  (the blobs are built before the clock starts, so the client costs little), and the server's
  CPU time per item;
- the blob size: BF.BULKEXISTS items/s for blobs of 100 to 100,000 items;
- what one blob of 100,000 items costs other clients: its time in the server (INFO
  commandstats), which a PING sent beside it waits out.
"""

import datetime
import os
import socket
import statistics
import sys
import threading
import time

import bench
from bench import ERROR_RATE, Bench, log

REPO = bench.REPO
BULK_MD = os.path.join(REPO, "bench", "BULK.md")
ROUNDS = bench.ROUNDS
SECONDS = bench.SECONDS
FILL = bench.FILL
# Four connections of four blobs each keep the server busy: with two, it idled between a
# connection's replies and its next blobs (BF.BULKEXISTS on the 10M filter, 3 rounds each,
# medians: 26.5-26.7 M items/s with the server busy 95-96% of the time; four: 29.3-29.8 M,
# 99%; three 29.1 M, six 28.7 M; more blobs in flight per connection, 8 or 16, 23-26 M).
# RedisBloom's side runs redis-benchmark's 50 connections.
CONNECTIONS = 4
PIPELINE = 4
BLOB_ITEMS = 1000
SIZES = (100, 1000, 10_000, 100_000)
CUCKOO_CAPACITY = 4_000_000
BIG = bench.env_number("BENCH_BULK_BIG", 1) != 0


def url(prefix, i):
    # About 40 bytes, as a crawler's URLs are.
    return b"https://%s.example.com/p/%012d" % (prefix, i)


def resp(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def blobs(prefix, count, per_blob, start=0):
    """`count` newline-separated blobs of `per_blob` URLs."""
    return [b"\n".join(url(prefix, start + b * per_blob + i) for i in range(per_blob))
            for b in range(count)]


def read_bulk_replies(sock, n, size):
    """Reads n bulk replies of `size` bytes each; returns how many '1' bytes they held."""
    expected = n * (len(b"$%d\r\n" % size) + size + 2)
    buf = bytearray()
    while len(buf) < expected:
        chunk = sock.recv(max(1 << 20, expected - len(buf)))
        if not chunk:
            raise RuntimeError("connection closed")
        buf += chunk
        if buf[:1] == b"-":
            raise RuntimeError(bytes(buf[:200]).decode())
    if len(buf) != expected:
        raise RuntimeError(f"unexpected reply length {len(buf)} != {expected}: {bytes(buf[:100])}")
    return buf.count(b"1")


def read_replies(sock, n, reply):
    """Reads n copies of a fixed `reply` (a blob's SET)."""
    buf = bytearray()
    while len(buf) < n * len(reply):
        chunk = sock.recv(1 << 16)
        if not chunk:
            raise RuntimeError("connection closed")
        buf += chunk
    if buf != reply * n:
        raise RuntimeError(f"unexpected reply: {bytes(buf[:100])}")


def drive(port, commands, per_blob, reply=None):
    """Sends the commands over CONNECTIONS connections, PIPELINE in flight each; returns the
    wall seconds. Each reply is a bulk string of `per_blob` bytes, or `reply`."""
    parts = [commands[i::CONNECTIONS] for i in range(CONNECTIONS)]
    errors = []

    def run(cmds):
        try:
            with socket.create_connection(("127.0.0.1", port)) as s:
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                for i in range(0, len(cmds), PIPELINE):
                    group = cmds[i:i + PIPELINE]
                    s.sendall(b"".join(group))
                    if reply:
                        read_replies(s, len(group), reply)
                    else:
                        read_bulk_replies(s, len(group), per_blob)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(p,)) for p in parts]
    began = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return time.monotonic() - began


class BulkBench:
    def __init__(self, servers):
        self.rs, self.rb = servers
        self.runner = Bench(servers)
        self.rows = []

    def one_each(self, label, args, items, prepare=None, keyspace=2 * FILL):
        """RedisBloom's one-argument-per-item command through redis-benchmark, P32, its items
        numbered below `keyspace`."""
        values = []

        def measure(requests):
            if prepare:
                prepare(self.rb)
            rate, cpu = self.runner.run_benchmark(self.rb, args, requests, 32, keyspace)
            return rate * items, cpu[0] / (rate * items)

        probe = measure(2000)[0]
        requests = max(1000, int(SECONDS * probe / items))
        if prepare:
            # A fresh filter per measurement takes at most 90% of its capacity (one link).
            requests = min(requests, int(bench.SMALL_CAPACITY * 0.9 / items))
        return measure, requests, values

    def bulk(self, cmds, per_blob, repeats=1, reply=None):
        """One rsbloom bulk measurement of prebuilt commands, sent `repeats` times: items/s and
        server CPU seconds per item."""
        cpu0 = bench.cpu_seconds(self.rs.proc.pid)
        wall = drive(self.rs.port, cmds * repeats, per_blob, reply)
        cpu = bench.cpu_seconds(self.rs.proc.pid) - cpu0
        items = len(cmds) * repeats * per_blob
        return items / wall, cpu / items

    def pair(self, label, rb, rs, adds, keyspace=2 * FILL):
        """`rb`: (redis-benchmark args, items per command, prepare); `rs`: (prebuilt bulk
        commands, or a function of the round giving them; prepare). Adds send the commands once
        per round (into a fresh filter, or new items); lookups repeat them for about SECONDS."""
        rb_args, rb_items, rb_prepare = rb
        cmds, rs_prepare = rs
        rb_measure, requests, _ = self.one_each(label, rb_args, rb_items, rb_prepare, keyspace)
        repeats = 1
        if not adds:
            rate = self.bulk(cmds, BLOB_ITEMS)[0]
            repeats = max(1, round(SECONDS * rate / (len(cmds) * BLOB_ITEMS)))
        rounds = []
        for rnd in range(ROUNDS):
            if rs_prepare:
                rs_prepare()
            rs_figures = self.bulk(cmds(rnd) if callable(cmds) else cmds, BLOB_ITEMS, repeats)
            rb_figures = rb_measure(requests)
            rounds.append((rs_figures, rb_figures))
            log(f"    {label} round {rnd + 1}/{ROUNDS}: rsbloom {rs_figures[0]:,.0f} items/s "
                f"({rs_figures[1] * 1e9:.0f} ns CPU/item), RedisBloom {rb_figures[0]:,.0f} "
                f"items/s ({rb_figures[1] * 1e9:.0f} ns CPU/item), "
                f"{rs_figures[0] / rb_figures[0]:.1f}x")
        self.rows.append((label, rounds))


def commands(command, key, prefix, items, start=0, per_blob=BLOB_ITEMS):
    return [resp(command, key, blob)
            for blob in blobs(prefix, items // per_blob, per_blob, start)]


def fill_rsbloom(server, key, prefix, count):
    """Adds `count` URLs to `key` in blobs of 100,000."""
    for start in range(0, count, 100_000):
        chunk = blobs(prefix, 1, min(100_000, count - start), start)[0]
        with socket.create_connection(("127.0.0.1", server.port)) as s:
            s.sendall(resp(b"BF.BULKADD", key, chunk))
            read_bulk_replies(s, 1, chunk.count(b"\n") + 1)


def big_rows(b, servers):
    """The BF rows on a filter of BENCH_BIG_CAPACITY (about 1 GiB, beyond every cache and
    every TLB with 4 KiB pages) holding FILL items, deleted after."""
    rs, rb = servers
    log(f"\n== 1 GiB filters (capacity {bench.BIG_CAPACITY:,}), holding {FILL:,} items")
    fill = bench.numbered_items(bench.PRESENT_PREFIX, FILL)
    bench.prefill([rb], "big", bench.BIG_CAPACITY, fill)
    del fill
    reserve(rs, "big", "BF.RESERVE", "big", ERROR_RATE, bench.BIG_CAPACITY)
    fill_rsbloom(rs, b"big", b"q", FILL)
    for server in servers:
        con = server.client()
        log(f"  {server.name}: big MEMORY USAGE {con.memory_usage('big'):,} B")
        con.close()
    query = commands(b"BF.BULKEXISTS", b"big", b"q", 2_000_000, FILL - 1_000_000)
    mexists = ["BF.MEXISTS", "big"] + [bench.QUERY_TEMPLATE] * 100
    b.pair("1GiB BF.BULKEXISTS / BF.MEXISTS", (mexists, 100, None), (query, None), False)
    del query

    # Adds go into the same filter, new items every round: its pages are all written by the
    # fill, as a filter in use has them (into a fresh one, RedisBloom's first writes fault in
    # a 4 KiB page each: 5.7 us per item, 28x; rsbloom's are 2 MiB pages).
    per_round = 2_000_000
    rounds = [commands(b"BF.BULKADD", b"big", b"a", per_round, r * per_round)
              for r in range(ROUNDS)]
    madd = ["BF.MADD", "big"] + [bench.ADD_TEMPLATE] * 100
    b.pair("1GiB BF.BULKADD / BF.MADD", (madd, 100, None), (rounds.__getitem__, None), True)
    for server in servers:
        con = server.client()
        con.delete("big")
        con.close()


def fill_redisbloom_cf(server, count):
    """A fresh cuckoo filter on RedisBloom holding the numbered items redis-benchmark's
    CF.MEXISTS asks for, below `count`."""
    reserve(server, "cf", "CF.RESERVE", "cf", CUCKOO_CAPACITY)
    items = bench.numbered_items(bench.PRESENT_PREFIX, count)
    head = bench.bulk(b"CF.INSERT") + bench.bulk(b"cf") + bench.bulk(b"ITEMS")
    commands = [(b"*%d\r\n" % (3 + len(chunk)) + head + b"".join(map(bench.bulk, chunk)),
                 len(chunk)) for chunk in (items[i:i + 1000] for i in range(0, count, 1000))]
    added = bench.send_multi(server, commands)
    if added != count:
        raise RuntimeError(f"{server.name}: cf took {added} of {count} items")


def receive_floor(b, lookups):
    """Server CPU per item of SET with each lookup blob as its value: what receiving a blob
    costs the server with no work per item, the least any bulk command can cost."""
    cmds = [resp(b"SET", b"floor", cmd.split(b"\r\n")[-2]) for cmd in lookups]
    figures = [b.bulk(cmds, BLOB_ITEMS, 3, reply=b"+OK\r\n") for _ in range(ROUNDS)]
    cpu = statistics.median(f[1] for f in figures)
    log(f"  SET of the CF.BULKEXISTS blobs: {cpu * 1e9:.1f} ns of server CPU an item")
    return cpu


def reserve(server, key, *args):
    con = server.client()
    con.delete(key)
    con.execute_command(*args)
    con.close()


def sizes(b):
    """BF.BULKEXISTS items/s by blob size, on rsbloom's 10M filter."""
    out = []
    for size in SIZES:
        cmds = commands(b"BF.BULKEXISTS", b"small", b"q", 2_000_000, FILL - 1_000_000, size)
        rate = b.bulk(cmds, size)[0]
        repeats = max(1, round(SECONDS * rate / 2_000_000))
        rates = [b.bulk(cmds, size, repeats)[0] for _ in range(max(1, ROUNDS // 2))]
        out.append((size, statistics.median(rates)))
        log(f"  blob of {size:,}: {out[-1][1]:,.0f} items/s")
    return out


def big_blob_latency(server):
    """The server time of one BF.BULKADD of 100,000 new items into a reserved 10M filter
    holding 5M, and a PING's wait beside it."""
    con = server.client()
    con.delete("lat")
    con.execute_command("BF.RESERVE", "lat", ERROR_RATE, bench.SMALL_CAPACITY)
    # Half full first, so the measured blobs meet a filter whose pages are in memory (the
    # first writes to a new filter fault its zeroed pages in).
    for start in range(0, FILL, 100_000):
        with socket.create_connection(("127.0.0.1", server.port)) as s:
            s.sendall(resp(b"BF.BULKADD", b"lat", blobs(b"fill", 1, 100_000, start)[0]))
            read_bulk_replies(s, 1, 100_000)
    con.config_resetstat()
    waits = []
    for i in range(5):
        blob = blobs(b"lat", 1, 100_000, i * 100_000)[0]
        done = threading.Event()

        def ping():
            with socket.create_connection(("127.0.0.1", server.port)) as s:
                done.wait()
                t = time.monotonic()
                s.sendall(resp(b"PING"))
                s.recv(100)
                waits.append(time.monotonic() - t)

        t = threading.Thread(target=ping)
        t.start()
        with socket.create_connection(("127.0.0.1", server.port)) as s:
            s.sendall(resp(b"BF.BULKADD", b"lat", blob))
            done.set()
            read_bulk_replies(s, 1, 100_000)
        t.join()
    stats = con.info("commandstats")["cmdstat_bf.bulkadd"]
    con.close()
    return stats["usec_per_call"], max(waits)


def report(b, by_size, latency, floor, started):
    lines = [
        "# Bulk commands against one argument per item",
        "",
        f"{started:%Y-%m-%d %H:%M} UTC, `python bench/bulk.py`, {ROUNDS} rounds, medians. "
        f"rsbloom: blobs of {BLOB_ITEMS:,} URLs of about 40 bytes, {CONNECTIONS} connections "
        f"with {PIPELINE} blobs in flight each; RedisBloom 2.8.2: 100 items per command, "
        f"redis-benchmark -P 32 -c {bench.CLIENTS}. Filters: 10M at {ERROR_RATE} holding "
        f"{FILL:,} items"
        + (f"; 1 GiB (capacity {bench.BIG_CAPACITY:,}) holding as many, adds of new items "
           "into it" if BIG else "")
        + f"; cuckoo filters of {CUCKOO_CAPACITY:,}. Machine: {os.cpu_count()} cores: "
        "the server on the first, the clients on the rest (bench.own_core).",
        "",
        "| row | rsbloom bulk items/s | server CPU per item | RedisBloom items/s | server CPU per "
        "item | ratio (min-max) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for label, rounds in b.rows:
        rs = statistics.median(r[0][0] for r in rounds)
        rs_cpu = statistics.median(r[0][1] for r in rounds)
        rb = statistics.median(r[1][0] for r in rounds)
        rb_cpu = statistics.median(r[1][1] for r in rounds)
        ratios = [r[0][0] / r[1][0] for r in rounds]
        lines.append(f"| {label} | {rs:,.0f} | {rs_cpu * 1e9:.0f} ns | {rb:,.0f} | "
                     f"{rb_cpu * 1e9:.0f} ns | {statistics.median(ratios):.1f}x "
                     f"({min(ratios):.1f}-{max(ratios):.1f}) |")
    cf_lookups = dict(b.rows)["CF.BULKEXISTS / CF.MEXISTS"]
    rb_cpu = statistics.median(r[1][1] for r in cf_lookups)
    lines += ["", f"The floor: the server receiving the CF.BULKEXISTS blobs with no work per item "
              f"(SET of each blob, the same connections) costs {floor * 1e9:.1f} ns of server "
              f"CPU an item, so no blob command of these items can pass "
              f"{rb_cpu / floor:.1f}x RedisBloom's CF.MEXISTS ({rb_cpu * 1e9:.0f} ns an item) "
              "on this machine, even one that neither hashes nor reads its filter."]
    lines += ["", "BF.BULKEXISTS by blob size (rsbloom, 10M filter):", "",
              "| items per blob | items/s |", "|---:|---:|"]
    lines += [f"| {size:,} | {rate:,.0f} |" for size, rate in by_size]
    usec, wait = latency
    lines += ["", f"One BF.BULKADD of 100,000 new items into a 10M filter holding {FILL:,} takes "
              f"{usec / 1000:.1f} ms in the server "
              f"(INFO commandstats, mean of 5); a PING sent beside it waited at most "
              f"{wait * 1000:.1f} ms.", ""]
    return "\n".join(lines)


def main():
    started = datetime.datetime.now(datetime.timezone.utc)
    with bench.side_by_side() as servers:
        rs, rb = servers
        bench.own_core(servers)
        # Each filter holds FILL items of the shape its lookups query, so half of them hit:
        # RedisBloom's the numbered items redis-benchmark asks for, rsbloom's URLs like the
        # blobs' (it once held both, twice RedisBloom's items, with its bits half set).
        fill = bench.numbered_items(bench.PRESENT_PREFIX, FILL)
        bench.prefill([rb], "small", bench.SMALL_CAPACITY, fill)
        del fill
        log("  rsbloom: the lookup filter gets URLs like the blobs'")
        reserve(rs, "small", "BF.RESERVE", "small", ERROR_RATE, bench.SMALL_CAPACITY)
        fill_rsbloom(rs, b"small", b"q", FILL)
        b = BulkBench(servers)
        # Lookups: half the items added (the filter holds q0..q<FILL>).
        log("  building the blobs")
        query = commands(b"BF.BULKEXISTS", b"small", b"q", 2_000_000, FILL - 1_000_000)
        adds = commands(b"BF.BULKADD", b"small:add", b"a", int(bench.SMALL_CAPACITY * 0.9))
        cf_items = int(CUCKOO_CAPACITY * 0.8)
        cf_adds = commands(b"CF.BULKADD", b"cf", b"c", cf_items)
        cf_query = commands(b"CF.BULKEXISTS", b"cf", b"c", 2_000_000, cf_items // 2)

        def fresh(server):
            reserve(server, "small:add", "BF.RESERVE", "small:add", ERROR_RATE,
                    bench.SMALL_CAPACITY)

        def fresh_cf(server):
            reserve(server, "cf", "CF.RESERVE", "cf", CUCKOO_CAPACITY)

        mexists = ["BF.MEXISTS", "small"] + [bench.QUERY_TEMPLATE] * 100
        madd = ["BF.MADD", "small:add"] + [bench.ADD_TEMPLATE] * 100
        b.pair("10M BF.BULKEXISTS / BF.MEXISTS", (mexists, 100, None), (query, None), False)
        b.pair("10M BF.BULKADD / BF.MADD", (madd, 100, fresh), (adds, lambda: fresh(rs)), True)
        del adds
        if BIG:
            big_rows(b, servers)
        cf_insert = ["CF.INSERT", "cf", "ITEMS"] + [bench.ADD_TEMPLATE] * 100
        b.pair("CF.BULKADD / CF.INSERT", (cf_insert, 100, fresh_cf),
               (cf_adds, lambda: fresh_cf(rs)), True)
        # RedisBloom's lookups meet a filter as full as rsbloom's, half of them present: a
        # fresh one (as this row once had) answered from untouched zero pages, all in cache
        # (84 ns of server CPU an item, 2.1x, on 2026-12-07).
        fill_redisbloom_cf(rb, cf_items)
        cf_mexists = ["CF.MEXISTS", "cf"] + [bench.QUERY_TEMPLATE] * 100
        b.pair("CF.BULKEXISTS / CF.MEXISTS", (cf_mexists, 100, None), (cf_query, None), False,
               keyspace=2 * cf_items)
        log("\n== the floor: the server receiving the same blobs")
        floor = receive_floor(b, cf_query)
        log("\n== blob sizes")
        by_size = sizes(b)
        latency = big_blob_latency(rs)
    text = report(b, by_size, latency, floor, started)
    log("\n" + text)
    with open(BULK_MD, "w") as f:
        f.write(text)
    log(f"bulk: wrote {BULK_MD}")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit("bulk: interrupted; servers stopped")
