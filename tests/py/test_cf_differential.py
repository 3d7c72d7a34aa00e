"""Differential test of the cuckoo filters: the same seeded stream of CF.* commands, valid and
invalid, goes to rsbloom and to RedisBloom 2.8.2, and every reply is compared on the wire.

Filters are created with `CF.RESERVE ... SEED 0` (RedisBloom ignores the pair), which gives
rsbloom's filter RedisBloom's own hashing, so replies, CF.INFO sizes and SCANDUMP bytes must
match exactly: no false-positive allowance. Only the documented differences (README,
"Differences from RedisBloom") are normalised:

  (a) a filter created implicitly (CF.ADD / CF.INSERT on a missing key) has a random seed on
      rsbloom: that command's add results may differ by a false positive (ADDNX), and the key
      is then deleted on both servers, so every later command meets seed-0 filters only.
  (b) CF.EXISTS / MEXISTS / COUNT / DEL / COMPACT on a key of another type: rsbloom WRONGTYPE,
      RedisBloom 0 / "Not found" / "Cuckoo filter was not found".
  (c) CF.RESERVE with an unknown option: rsbloom refuses it, RedisBloom ignores it.
  (d) rsbloom also holds the CF_MAX_EXPANSIONS limit per item: the runner trims an INSERT so
      that it cannot grow a filter past the limit within one command (RedisBloom checks once
      per command), and otherwise compares it exactly.
  (e) MEMORY USAGE: RedisBloom reports its structs' sizes, rsbloom what the key's blocks take
      from the allocator (tests/memory.rs checks it against used_memory): never less, and
      within a quarter more plus the records.
"""

import random

import pytest

from test_differential import Resp

STRING_KEYS = ["s1"]
CF_KEYS = ["c1", "c2", "c3", "c4", "c5", "{t}c6"]
BLOOM_KEY = "b1"
KEYS = CF_KEYS + STRING_KEYS + [BLOOM_KEY]
MAX_EXPANSIONS = 32


def cf_like(key):
    """Whether a key may hold a cuckoo filter (not one of the other types' keys)."""
    return key not in STRING_KEYS and key != BLOOM_KEY


class Op:
    def __init__(self, args, kind="exact", key=None, creates=False):
        self.args = [a if isinstance(a, (bytes, str)) else str(a) for a in args]
        self.kind = kind
        self.key = key
        self.creates = creates  # may create the key implicitly

    def __repr__(self):
        return " ".join(a if isinstance(a, str) else repr(a) for a in self.args)


class Gen:
    def __init__(self, rng):
        self.rng = rng
        pool = [f"item{i}" for i in range(120)] + ["", "x", "a", "3", "foo", "hello world!"]
        pool += [bytes([rng.randrange(256) for _ in range(rng.randrange(1, 12))]) for _ in range(20)]
        self.pool = pool

    def key(self):
        r = self.rng.random()
        if r < 0.9:
            return self.rng.choice(CF_KEYS)
        return self.rng.choice(STRING_KEYS + [BLOOM_KEY, "missing"])

    def item(self):
        # Skewed towards a few hot items, so duplicates, deletes and full buckets happen.
        if self.rng.random() < 0.3:
            return self.rng.choice(self.pool[:8])
        return self.rng.choice(self.pool)

    def items(self, lo=1, hi=8):
        return [self.item() for _ in range(self.rng.randint(lo, hi))]

    def case(self, word):
        return self.rng.choice([word, word.lower(), word.capitalize()])

    def number(self, good, bad):
        if self.rng.random() < 0.1:
            return self.rng.choice(bad)
        return str(good)

    def reserve(self):
        rng = self.rng
        key = self.key()
        cap = self.number(rng.choice([4, 5, 7, 8, 16, 33, 64, 100, 256, 1000]),
                          ["abc", "-1", "0", "1", "3", "+10", "010", "1.5", "", "9223372036854775808",
                           "72057594037927936"])
        args = ["CF.RESERVE", key, cap]
        opts = []
        if rng.random() < 0.6:
            opts += [self.case("BUCKETSIZE"), self.number(rng.choice([1, 2, 3, 4]), ["0", "256", "-1", "x"])]
        if rng.random() < 0.5:
            opts += [self.case("MAXITERATIONS"), self.number(rng.choice([1, 2, 5, 20, 100]), ["0", "65536", "y"])]
        if rng.random() < 0.6:
            opts += [self.case("EXPANSION"), self.number(rng.choice([0, 1, 2, 3, 4]), ["-1", "32769", "z"])]
        pairs = [opts[i:i + 2] for i in range(0, len(opts), 2)]
        rng.shuffle(pairs)
        args += [w for p in pairs for w in p]
        kind = "exact"
        if rng.random() < 0.04:
            args += ["FOO", "1"]
            kind = "reserve_extra"
        if rng.random() < 0.04:
            args.append("BUCKETSIZE")  # even count: arity on both (RedisBloom crashes on odd)
            if len(args) % 2 == 1:
                args.append("2")
        args += ["SEED", "0"]
        return [Op(args, kind, key)]

    def add(self):
        cmd = self.rng.choice(["CF.ADD", "CF.ADDNX"])
        key = self.key()
        return [Op([cmd, key, self.item()], "add", key, creates=True)]

    def insert(self):
        rng = self.rng
        cmd = rng.choice(["CF.INSERT", "CF.INSERTNX"])
        key = self.key()
        args = [cmd, key]
        if rng.random() < 0.2:
            args += [self.case("CAPACITY"), self.number(rng.choice([4, 10, 100, 1000]), ["3", "x", "-5"])]
        nocreate = rng.random() < 0.3
        if nocreate:
            args.append(rng.choice(["NOCREATE", "nocreate", "NX"]))
        if rng.random() < 0.03:
            args.append(rng.choice(["BOGUS", "EXPANSION", ""]))
        if rng.random() < 0.97:
            args.append(self.case("ITEMS"))
            args += self.items(1, 12)
        return [Op(args, "insert", key, creates=not nocreate)]

    def flood(self):
        """Copies of one item (they cannot be kicked), which grow a filter towards the limit."""
        key = self.rng.choice(CF_KEYS)
        return [Op(["CF.INSERT", key, "NOCREATE", "ITEMS"] + [self.item()] * 20, "insert", key)]

    def read(self):
        rng = self.rng
        key = self.key()
        r = rng.random()
        if r < 0.4:
            return [Op(["CF.EXISTS", key, self.item()], "read", key)]
        if r < 0.7:
            return [Op(["CF.MEXISTS", key] + self.items(1, 10), "read", key)]
        return [Op(["CF.COUNT", key, self.item()], "read", key)]

    def delete(self):
        key = self.key()
        return [Op(["CF.DEL", key, self.item()], "del", key)]

    def meta(self):
        rng = self.rng
        key = self.key()
        cmd = rng.choice(["CF.INFO", "CF.DEBUG", "CF.COMPACT", "MEMORY"])
        if cmd == "MEMORY":
            return [Op(["MEMORY", "USAGE", key], "memory", key)]
        if cmd == "CF.COMPACT":
            return [Op([cmd, key], "compact", key)]
        return [Op([cmd, key], "exact", key)]

    def scandump(self):
        key = self.key()
        if self.rng.random() < 0.1:
            it = self.rng.choice(["-1", "x", "3", "100000", "0"])
            return [Op(["CF.SCANDUMP", key, it], "exact", key)]
        return [Op(["CF.COPY-ROUND-TRIP", key], "copy", key)]

    def loadchunk_bad(self):
        rng = self.rng
        key = rng.choice(["lc", "s1", "c1"])
        it = rng.choice(["0", "x", "1", "9", "-3"])
        data = rng.choice([b"", b"\x00" * 37, b"\x01" * 38, b"\x05"])
        return [Op(["CF.LOADCHUNK", key, it, data], "exact", key)]

    def delkey(self):
        return [Op(["DEL", self.rng.choice(CF_KEYS)], "exact")]

    def arity(self):
        """A wrong argument count for the command (total counts, command name included)."""
        wrong = {
            "CF.ADD": [1, 2, 4], "CF.EXISTS": [2, 4, 5], "CF.DEL": [1, 2, 4], "CF.INFO": [1, 3],
            "CF.DEBUG": [1, 3], "CF.COMPACT": [1, 3], "CF.SCANDUMP": [2, 4], "CF.LOADCHUNK": [3, 5],
            "CF.RESERVE": [2, 4, 6], "CF.INSERT": [2, 3],
        }
        cmd = self.rng.choice(sorted(wrong))
        n = self.rng.choice(wrong[cmd])
        return [Op([cmd] + ["c1", "4", "z", "z", "z"][: n - 1], "exact")]

    def next(self):
        ops = [
            (self.reserve, 10), (self.add, 22), (self.insert, 16), (self.read, 20),
            (self.delete, 14), (self.meta, 8), (self.scandump, 4), (self.loadchunk_bad, 1),
            (self.delkey, 2), (self.arity, 1), (self.flood, 4),
        ]
        f = self.rng.choices([o for o, _ in ops], weights=[w for _, w in ops])[0]
        return f()


def is_bit(v):
    return v in (("int", 0), ("int", 1), ("bool", True), ("bool", False))


def add_results_differ_by_fp(a, b):
    """Whether two add replies differ only where one said 0/false and the other 1/true."""
    if a[0] == "arr" and b[0] == "arr" and len(a[1]) == len(b[1]):
        return all(x == y or (is_bit(x) and is_bit(y)) for x, y in zip(a[1], b[1]))
    return is_bit(a) and is_bit(b)


class Run:
    def __init__(self, servers, protocol, rng):
        self.c = [Resp(s.port, protocol) for s in servers]
        self.protocol = protocol
        self.rng = rng
        self.sent = self.compared = self.implicit = self.trimmed = 0
        self.skipped = {}
        self.mismatches = []
        self.errors = {}
        self.present = set()  # keys holding a cuckoo filter (on both servers)

    def close(self):
        for c in self.c:
            c.close()

    def both(self, *args):
        return [c.call(*args) for c in self.c]

    def skip(self, rule):
        self.skipped[rule] = self.skipped.get(rule, 0) + 1

    def count_errors(self, reply):
        if reply[0] == "err":
            self.errors[reply[1]] = self.errors.get(reply[1], 0) + 1
        elif reply[0] == "arr":
            for v in reply[1]:
                self.count_errors(v)

    def mismatch(self, op, ra, rb, note=""):
        self.mismatches.append((repr(op), ra, rb, note))
        if op.key is not None and cf_like(op.key):
            self.both("DEL", op.key)
            self.present.discard(op.key)

    def setup(self):
        for c in self.c:
            c.call("FLUSHALL")
        self.both("SET", "s1", "v")
        self.both("BF.ADD", BLOOM_KEY, "x")

    def filters(self, key):
        r = self.c[1].call("CF.DEBUG", key)
        if r[0] != "bulk":
            return None
        return int(r[1].decode().split("filters:")[1].split()[0])

    def send(self, op):
        if op.kind == "copy":
            return self.copy(op)
        if op.kind == "insert" and op.key in self.present and "ITEMS" in [a.upper() for a in op.args if isinstance(a, str)]:
            self.trim(op)
        existed = op.key in self.present
        ra, rb = [c.call(*op.args) for c in self.c]
        self.sent += 1
        self.count_errors(rb)
        self.track(op, ra, rb, existed)
        self.compare(op, ra, rb, existed)

    def trim(self, op):
        """Rule (d): no more items than sub-filters left before the limit."""
        n = self.filters(op.key)
        if n is None or n >= MAX_EXPANSIONS:
            return
        upper = [a.upper() if isinstance(a, str) else "" for a in op.args]
        first = upper.index("ITEMS") + 1
        room = MAX_EXPANSIONS - n
        if len(op.args) - first > room:
            op.args = op.args[:first + room]
            self.trimmed += 1

    def track(self, op, ra, rb, existed):
        if op.args[0] == "CF.RESERVE" and ra == ("str", "OK"):
            self.present.add(op.key)
        elif op.args[0] == "DEL":
            self.present.discard(op.args[1])

    def compare(self, op, ra, rb, existed):
        key = op.key
        if op.kind == "memory" and ra != rb:
            self.skip("e: MEMORY USAGE counts the allocator's blocks")
            if not (ra[0] == rb[0] == "int" and rb[1] <= ra[1] <= rb[1] * 5 // 4 + 128):
                self.mismatch(op, ra, rb, "rule e")
            return
        if op.kind == "reserve_extra":
            self.skip("c: unknown CF.RESERVE option")
            if ra[0] != "err":
                self.mismatch(op, ra, rb, "rule c: rsbloom should refuse")
            if cf_like(key) and key not in self.present:
                self.both("DEL", key)  # RedisBloom created it, rsbloom did not
            return
        other_type = key in STRING_KEYS or key == BLOOM_KEY
        if other_type and ra[0] == "err" and ra[1].startswith("WRONGTYPE") and op.kind in ("read", "del", "compact"):
            self.skip("b: reader / DEL / COMPACT on another type")
            expected = {
                "read": None, "del": ("err", "Not found"), "compact": ("err", "Cuckoo filter was not found"),
            }[op.kind]
            ok = rb == expected if expected else (
                is_bit(rb) and rb[1] in (0, False) or rb[0] == "arr" and all(v in (("int", 0), ("bool", False)) for v in rb[1]))
            if not ok:
                self.mismatch(op, ra, rb, "rule b")
            return
        if op.kind in ("add", "insert") and op.creates and not existed and cf_like(key):
            # Rule (a): a random-seeded filter was created (or the command failed on both).
            self.implicit += 1
            if ra != rb and not add_results_differ_by_fp(ra, rb):
                self.mismatch(op, ra, rb, "implicit creation")
            else:
                self.compared += 1
            self.both("DEL", key)
            # A fresh seed-0 filter in its place, so keys stay mostly present.
            if key in CF_KEYS:
                shape = self.rng.choice([["8", "BUCKETSIZE", "1"], ["16"], ["64", "EXPANSION", "2"]])
                self.both("CF.RESERVE", key, *shape, "SEED", "0")
                self.present.add(key)
            return
        if ra == rb:
            self.compared += 1
        else:
            self.mismatch(op, ra, rb)

    def copy(self, op):
        """SCANDUMP of `key` on each server, compared across servers chunk by chunk, then
        LOADCHUNK into `cp` on the same server and CF.DEBUG + SCANDUMP of the copy compared."""
        key = op.key
        self.both("DEL", "cp")
        dumps = []
        for c in self.c:
            it, steps = 0, []
            while True:
                r = c.call("CF.SCANDUMP", key, it)
                steps.append(r)
                if r[0] != "arr" or r[1][0] == ("int", 0):
                    break
                it = r[1][0][1]
                if len(steps) > 1000:
                    break
            dumps.append(steps)
        self.sent += 1
        if dumps[0] != dumps[1]:
            return self.mismatch(op, dumps[0][-3:], dumps[1][-3:], "SCANDUMP stream")
        loaded = []
        for c, steps in zip(self.c, dumps):
            replies = []
            for r in steps:
                if r[0] == "arr" and r[1][0] != ("int", 0):
                    replies.append(c.call("CF.LOADCHUNK", "cp", r[1][0][1], r[1][1][1]))
            loaded.append((replies, c.call("CF.DEBUG", "cp"), c.call("CF.DEBUG", key)))
        (la, ca, sa), (lb, cb, sb) = loaded
        if la != lb or ca != cb:
            return self.mismatch(op, (la[:3], ca), (lb[:3], cb), "LOADCHUNK copy")
        if la and set(la) == {("str", "OK")} and ca != sa:
            return self.mismatch(op, ca, sa, "copy differs from its source")
        self.compared += 1

    def summary(self):
        return (
            f"RESP{self.protocol}: sent {self.sent} commands to each server, compared {self.compared} "
            f"(exact but rule a), implicit creations {self.implicit}, trimmed inserts {self.trimmed}, "
            f"skipped by rule {self.skipped}, mismatches {len(self.mismatches)}; "
            f"{len(self.errors)} distinct error replies"
        )


def run(servers, protocol, count, seed=2612):
    rng = random.Random(seed)
    gen = Gen(rng)
    run = Run(servers, protocol, rng)
    try:
        run.setup()
        n = 0
        while n < count:
            for op in gen.next():
                run.send(op)
                n += 1
        ka = sorted(run.c[0].call("KEYS", "*")[1])
        kb = sorted(run.c[1].call("KEYS", "*")[1])
        if ka != kb:
            run.mismatches.append(("KEYS *", ka, kb, "keyspaces differ"))
    finally:
        run.close()
    return run


@pytest.mark.parametrize("protocol,count", [(2, 10000), (3, 4000)], ids=["resp2", "resp3"])
def test_cf_differential(rsbloom_server, redisbloom_server, capsys, protocol, count):
    res = run([rsbloom_server, redisbloom_server], protocol, count)
    with capsys.disabled():
        print("\n" + res.summary())
        for text, n in sorted(res.errors.items(), key=lambda e: -e[1]):
            print(f"  {n:5d} x {text}")
    report = "\n".join(
        f"{cmd}\n  rsbloom:    {a}\n  RedisBloom: {b}  {note}" for cmd, a, b, note in res.mismatches[:30]
    )
    assert not res.mismatches, f"{len(res.mismatches)} mismatches:\n{report}"
    assert res.compared >= count * 0.85, res.summary()
    # The stream reaches the interesting paths: full filters, the sub-filter limit, growth.
    for text in ("Filter is full", "Maximum expansions reached", "Bad capacity",
                 "Capacity must be at least (BucketSize * 2)", "Not found", "Invalid position"):
        assert text in res.errors, f"{text!r} never replied: {res.summary()}"
