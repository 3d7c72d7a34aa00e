"""Differential test: the same seeded stream of BF.* commands, valid and invalid, is sent to
rsbloom and to RedisBloom 2.8.2, and every reply is compared.

Replies are read with a small RESP2/RESP3 reader of our own, so the comparison sees the wire
types (simple vs bulk strings, integers vs booleans, maps vs arrays, null) and the exact error
lines. Only the documented differences (README "Differences from RedisBloom") are normalised
or skipped:

  (a) sizes: BF.INFO Size, BF.DEBUG bytes:/bits:/hashes:, SCANDUMP data and iterators past the
      header, MEMORY USAGE (rsbloom sizes links differently and hashes differently). LOADCHUNK
      is only sent with data a server dumped itself (copy round trips), or where both must
      refuse it before looking at the data.
  (b) BF.EXISTS/BF.MEXISTS on a key of another type: rsbloom WRONGTYPE, RedisBloom 0.
  (c) unknown trailing arguments to BF.RESERVE: rsbloom refuses them, RedisBloom ignores them.
  (d) a BF.INSERT word RedisBloom reads by its first letters (NOXYZ as NONSCALING, C as
      CAPACITY): rsbloom refuses it by name.
  (e) an option given twice: rsbloom refuses it, RedisBloom takes the first or the last.
  (d) the memory limit and error-rate underflow chains: never reached (capacities <= 1e6,
      error rates >= 1e-6).
  (e) option names in the key or value positions of BF.RESERVE: never generated.
  (f) false positives: hashing differs, so an add or exists of an item can answer 1 on one
      side and 0 on the other. Such a reply (it differs only by 1<->0 in add/exists results) is
      counted as an FP difference; after a write the key's counts have drifted, so the key is
      deleted on both servers to resync. Filters are kept lightly loaded so that these are rare.
"""

import random
import re
import socket

import pytest

STRING_KEYS = ["s1", "s2"]
BLOOM_KEYS = ["a", "b", "c", "d", "e", "f", "ns1", "ns2", "sc", "m1", "{t}x", "k:ü"]
KEYS = BLOOM_KEYS + STRING_KEYS + ["s3"]  # s3 toggles between a string and anything else

FULL_ERR = ("err", "ERR non scaling filter is full")


# --- a minimal RESP client ----------------------------------------------------------------------


class Resp:
    def __init__(self, port, protocol):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.f = self.sock.makefile("rb")
        self.protocol = protocol
        if protocol == 3:
            hello = self.call("HELLO", "3")
            assert hello[0] == "map", hello

    def close(self):
        self.f.close()
        self.sock.close()

    def call(self, *args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            if isinstance(a, str):
                a = a.encode()
            elif not isinstance(a, bytes):
                a = str(a).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        self.sock.sendall(b"".join(out))
        return self._read()

    def _line(self):
        line = self.f.readline()
        if not line.endswith(b"\r\n"):
            raise ConnectionError(f"connection closed (read {line!r})")
        return line[:-2]

    def _read(self):
        line = self._line()
        t, rest = line[:1], line[1:]
        if t == b"+":
            return ("str", rest.decode("utf-8", "replace"))
        if t == b"-":
            return ("err", rest.decode("utf-8", "replace"))
        if t == b":":
            return ("int", int(rest))
        if t == b"$":
            n = int(rest)
            if n < 0:
                return ("nil",)
            data = self.f.read(n + 2)
            return ("bulk", data[:-2])
        if t == b"*":
            n = int(rest)
            if n < 0:
                return ("nil",)
            return ("arr", tuple(self._read() for _ in range(n)))
        if t == b"%":
            n = int(rest)
            return ("map", tuple((self._read(), self._read()) for _ in range(n)))
        if t == b"~":
            return ("set", tuple(self._read() for _ in range(int(rest))))
        if t == b"_":
            return ("nil",)
        if t == b"#":
            return ("bool", rest == b"t")
        if t == b",":
            return ("dbl", rest.decode())
        if t == b"(":
            return ("big", rest.decode())
        if t == b"=":
            data = self.f.read(int(rest) + 2)
            return ("verb", data[:-2])
        if t == b">":
            return ("push", tuple(self._read() for _ in range(int(rest))))
        raise ValueError(f"unknown RESP type {line!r}")


# --- the command generator --------------------------------------------------------------------


class Op:
    """One generated command. `args` is the same for both servers unless `per_side` is set, a
    function of the server index. `kind` selects how replies are compared."""

    def __init__(self, args, kind="exact", key=None, per_side=None):
        self.args = [a if isinstance(a, (bytes, str)) else str(a) for a in args]
        self.kind = kind
        self.key = key
        self.per_side = per_side

    def __repr__(self):
        return " ".join(repr(a) if isinstance(a, bytes) else a for a in self.args)


class Gen:
    def __init__(self, rng):
        self.rng = rng

    def choose(self, items, weights=None):
        return self.rng.choices(items, weights=weights)[0] if weights else self.rng.choice(items)

    def key(self):
        return self.choose(KEYS, [6, 6, 6, 6, 5, 5, 4, 4, 4, 3, 2, 2, 1, 1, 1])

    def bloom_key(self):
        return self.choose(BLOOM_KEYS)

    def item(self):
        r = self.rng.random()
        if r < 0.6:
            return f"it{self.rng.randrange(400)}"
        if r < 0.8:
            return str(self.rng.randrange(-50, 5000))
        if r < 0.95:
            return bytes(self.rng.randrange(256) for _ in range(self.rng.randrange(0, 10)))
        return self.choose(["", "ITEMS", "NONSCALING", "ERROR", "0.5", "\x00", "ü" * 3])

    def items(self, lo=1, hi=6):
        return [self.item() for _ in range(self.rng.randint(lo, hi))]

    def case(self, word):
        r = self.rng.random()
        if r < 0.7:
            return word
        if r < 0.85:
            return word.lower()
        return "".join(c.upper() if self.rng.random() < 0.5 else c.lower() for c in word)

    # values ---------------------------------------------------------------------------------

    def error_rate(self, bad=0.15):
        if self.rng.random() < bad:
            return self.choose(["abc", "0", "1", "-0.1", "1.5", "inf", "-inf", "nan", "",
                                "0.01x", " 0.01", "1e400", "7.7", "-1"])
        return self.choose(["0.01", "0.001", "0.0001", "1e-5", "1e-6", "0.005", ".001",
                            "1E-3", "0.0010", "+0.001"])

    def capacity(self, bad=0.15, small=False):
        if self.rng.random() < bad:
            return self.choose(["abc", "0", "-5", "1.5", "", "18446744073709551616",
                                "9223372036854775808", "-9223372036854775809", " 10", "10 ",
                                "1e3", "0x10", "+", "-0"])
        if small:
            return self.choose(["1", "2", "3", "5", "10"])
        return self.choose(["1", "2", "5", "10", "50", "100", "1000", "5000", "100000",
                            "1000000", "+100", "007"])

    def expansion(self, bad=0.2):
        if self.rng.random() < bad:
            return self.choose(["x", "0", "-1", "1.5", "", "-0", "99999999999999999999"])
        return self.choose(["1", "2", "2", "3", "4", "10"])

    # commands ---------------------------------------------------------------------------------

    def reserve(self):
        k = self.bloom_key() if self.rng.random() < 0.9 else self.key()
        if self.rng.random() < 0.03:
            return Op(["BF.RESERVE", k] + self.items(0, 2), key=k)  # arity
        err = self.error_rate()
        small = k in ("ns1", "ns2", "sc")
        cap = self.capacity(small=small)
        groups = []
        if k in ("ns1", "ns2") and self.rng.random() < 0.8:
            groups.append([self.case("NONSCALING")])
        elif self.rng.random() < 0.2:
            groups.append([self.case("NONSCALING")])
        if self.rng.random() < 0.35:
            groups.append([self.case("EXPANSION"), self.expansion()])
        if self.rng.random() < 0.3:
            self.rng.shuffle(groups)
        opts = [a for g in groups for a in g]
        if self.rng.random() < 0.03:
            opts.append(self.case("EXPANSION"))  # EXPANSION as the last argument
        kind = "exact"
        if self.rng.random() < 0.04:
            # (c): unknown trailing argument; with more than 7 arguments, both give arity errors.
            opts.append(self.choose(["FOO", "NONSCALNG", "1", "EXP"]))
            kind = "reserve_extra"
        if self.rng.random() < 0.02:
            opts += ["NONSCALING", "NONSCALING", "EXPANSION", "2"]  # > 7 arguments
        args = ["BF.RESERVE", k, err, cap] + opts
        if len(args) > 7:
            kind = "exact"
        return Op(args, kind=kind, key=k)

    def add(self):
        k = self.key()
        if self.rng.random() < 0.02:
            return Op(["BF.ADD", k] + self.items(0, 0) + (["x", "y"] if self.rng.random() < 0.5 else []), key=k)
        return Op(["BF.ADD", k, self.item()], kind="add", key=k)

    def madd(self):
        k = self.key()
        if self.rng.random() < 0.02:
            return Op(["BF.MADD", k], key=k)
        return Op(["BF.MADD", k] + self.items(), kind="add", key=k)

    def exists(self):
        k = self.key()
        if self.rng.random() < 0.02:
            return Op(["BF.EXISTS", k], key=k)
        return Op(["BF.EXISTS", k, self.item()], kind="exists", key=k)

    def mexists(self):
        k = self.key()
        if self.rng.random() < 0.02:
            return Op(["BF.MEXISTS", k], key=k)
        return Op(["BF.MEXISTS", k] + self.items(1, 8), kind="exists", key=k)

    def word(self, option, abbreviations):
        """A BF.INSERT option word: mostly whole (in a random case), now and then one that
        RedisBloom reads by its first letters and rsbloom refuses (rule d)."""
        if self.rng.random() < 0.1:
            return self.choose(abbreviations)
        return self.case(option)

    def insert(self):
        k = self.key()
        parts = []
        if self.rng.random() < 0.3:
            parts.append([self.word("CAPACITY", ["CAP", "C", "CXYZ"]),
                          self.capacity(small=k in ("ns1", "ns2", "sc"))])
        if self.rng.random() < 0.3:
            parts.append([self.word("ERROR", ["ERR", "er"]), self.error_rate()])
        if self.rng.random() < 0.2:
            parts.append([self.word("EXPANSION", ["EXP", "E", "eta"]),
                          self.expansion()])
        if self.rng.random() < 0.1:
            parts.append([self.word("NOCREATE", ["NOC", "NOCX"])])
        if self.rng.random() < 0.15 or (k in ("ns1", "ns2") and self.rng.random() < 0.5):
            parts.append([self.word("NONSCALING", ["NONS", "NO", "NX", "NOSCALING"])])
        if self.rng.random() < 0.05:
            parts.append([self.choose(["FOO", "", "123", "XITEMS", "-1", "*"])])
        if self.rng.random() < 0.3:
            self.rng.shuffle(parts)
        args = ["BF.INSERT", k] + [a for p in parts for a in p]
        r = self.rng.random()
        if r < 0.03:
            pass  # no ITEMS at all
        elif r < 0.06:
            args.append("ITEMS")  # ITEMS with nothing after it
        elif r < 0.08 and parts:
            args.pop()  # an option whose value is missing (or ITEMS-less flags)
        else:
            args.append(self.word("ITEMS", ["I", "Ifoo"]))
            args += self.items()
        return Op(args, kind="add", key=k)

    def info(self):
        k = self.key()
        r = self.rng.random()
        if r < 0.5:
            return Op(["BF.INFO", k], kind="info", key=k)
        if r < 0.95:
            f = self.choose(["CAPACITY", "SIZE", "FILTERS", "ITEMS", "EXPANSION", "capacity",
                             "size", "Items", "expansion", "FOO", "CAP", "capacityx", ""])
            return Op(["BF.INFO", k, f], kind="info", key=k)
        return Op(["BF.INFO"] + ([k, "CAPACITY", "SIZE"] if self.rng.random() < 0.7 else []),
                  kind="info", key=k)

    def card(self):
        k = self.key()
        if self.rng.random() < 0.05:
            return Op(["BF.CARD"] + ([k, "x"] if self.rng.random() < 0.5 else []), key=k)
        return Op(["BF.CARD", k], key=k)

    def debug(self):
        k = self.key()
        if self.rng.random() < 0.05:
            return Op(["BF.DEBUG"] + ([k, "x"] if self.rng.random() < 0.5 else []), kind="debug", key=k)
        return Op(["BF.DEBUG", k], kind="debug", key=k)

    def scandump(self):
        k = self.key()
        r = self.rng.random()
        if r < 0.4:
            return Op(["BF.SCANDUMP", k, "0"], kind="scandump", key=k)
        if r < 0.7:
            # continue from the iterator this server last returned for this key
            return Op(["BF.SCANDUMP", k, "<iter>"], kind="scandump", key=k, per_side="iter")
        if r < 0.95:
            it = self.choose(["1", "2", "-1", "100000", "abc", "1.5", "", "99999999999999999999"])
            return Op(["BF.SCANDUMP", k, it], kind="scandump", key=k)
        return Op(["BF.SCANDUMP", k] + (["0", "1"] if self.rng.random() < 0.5 else []), key=k)

    def loadchunk(self):
        # Only forms that both must refuse without looking at the data, or copies made of a
        # server's own dump (see `copy`).
        r = self.rng.random()
        data = bytes(self.rng.randrange(256) for _ in range(self.rng.randrange(0, 40)))
        if r < 0.3:
            k = self.key()
            return Op(["BF.LOADCHUNK", k, self.choose(["abc", "1.5", "", "x1"]), data], key=k)
        if r < 0.5:
            k = self.choose(STRING_KEYS)
            return Op(["BF.LOADCHUNK", k, self.choose(["1", "5", "0"]), data], key=k)
        if r < 0.9:
            # a key that is fresh on both servers
            return Op(["BF.LOADCHUNK", "fresh", self.choose(["1", "1", "0", "2", "-3"]), data],
                      kind="loadchunk_fresh", key="fresh")
        k = self.key()
        return Op(["BF.LOADCHUNK", k] + (["1"] if self.rng.random() < 0.5 else ["1", "x", "y"]), key=k)

    def delete(self):
        k = self.choose(BLOOM_KEYS + ["s3"])
        return Op(["DEL", k], key=k)

    def set_string(self):
        return Op(["SET", "s3", "v"], key="s3")

    def copy(self):
        return Op(["<copy>", self.bloom_key()], kind="copy")

    def memory(self):
        k = self.key()
        return Op(["MEMORY", "USAGE", k], kind="memory", key=k)

    def highfp(self):
        # Reserve/insert with error rates above 0.01 only on key "h", then read it and drop it:
        # such filters are not fed items that would make false positives common.
        err = self.choose(["0.1", "0.25", "0.5", "0.9", "0.99", "0.3"])
        if self.rng.random() < 0.5:
            first = Op(["BF.RESERVE", "h", err, self.capacity(bad=0)]
                       + (["NONSCALING"] if self.rng.random() < 0.3 else []), key="h")
        else:
            first = Op(["BF.INSERT", "h", "ERROR", err, "CAPACITY", "1000", "ITEMS", self.item()],
                       kind="add", key="h")
        return [first, Op(["BF.INFO", "h"], kind="info", key="h"),
                Op(["BF.DEBUG", "h"], kind="debug", key="h"), Op(["DEL", "h"], key="h")]

    def next(self):
        table = [
            (self.add, 20), (self.madd, 12), (self.exists, 14), (self.mexists, 10),
            (self.insert, 13), (self.reserve, 9), (self.info, 8), (self.card, 5),
            (self.debug, 4), (self.scandump, 4), (self.loadchunk, 2), (self.delete, 3),
            (self.set_string, 0.3), (self.copy, 0.7), (self.memory, 1), (self.highfp, 0.5),
        ]
        fn = self.choose([f for f, _ in table], [w for _, w in table])
        ops = fn()
        return ops if isinstance(ops, list) else [ops]


# --- comparison ---------------------------------------------------------------------------------

DEBUG_FIGURES = re.compile(rb"\b(bytes|bits|hashes):\d+")


def norm_debug(reply):
    if reply[0] != "arr":
        return reply
    return ("arr", tuple(("bulk", DEBUG_FIGURES.sub(rb"\1:*", e[1])) if e[0] == "bulk" else e
                         for e in reply[1]))


def norm_info(reply, args):
    """Blank the Size value (a): in the full reply (RESP2 pairs or RESP3 map), and the single
    SIZE field."""
    if reply[0] == "arr" and len(args) == 2 and len(reply[1]) == 10:
        vals = list(reply[1])
        if vals[2] == ("str", "Size"):
            vals[3] = ("size",)
        return ("arr", tuple(vals))
    if reply[0] == "map":
        return ("map", tuple((k, ("size",) if k == ("str", "Size") else v) for k, v in reply[1]))
    if reply[0] == "arr" and len(args) == 3 and str(args[2]).upper() == "SIZE" and len(reply[1]) == 1:
        return ("arr", (("size",),))
    return reply


def norm_scandump(reply, args):
    """SCANDUMP data differ (a): keep the shape and whether the iterator is 0. For iterator 0
    (the header) the next iterator is compared exactly... no: it is 1 + the header's length,
    which differs too. Only 'zero or not' is kept."""
    if reply[0] != "arr" or len(reply[1]) != 2:
        return reply
    it, data = reply[1]
    if it[0] == "int" and data[0] == "bulk":
        return ("arr", (("int", "zero" if it[1] == 0 else "nonzero"),
                        ("bulk", "empty" if data[1] == b"" else "data")))
    return reply


def is_bit(v):
    return (v[0] == "int" and v[1] in (0, 1)) or v[0] == "bool"


def bit_of(v):
    return int(v[1])


def insert_misread(args):
    """The first word of a BF.INSERT's options that RedisBloom reads by its first letters (N...
    as NONSCALING, C... as CAPACITY) but that is no whole option, which rsbloom refuses by name;
    None when every option word is whole (or RedisBloom refuses the word too)."""
    i = 2
    while i < len(args):
        word = args[i] if isinstance(args[i], str) else args[i].decode("latin-1")
        upper = word.upper()
        if upper == "ITEMS":
            return None
        if upper in ("CAPACITY", "ERROR", "EXPANSION"):
            i += 2
            continue
        if upper in ("NOCREATE", "NONSCALING"):
            i += 1
            continue
        return word if word[:1].lower() in ("i", "e", "c", "n") else None
    return None


def fp_difference(a, b):
    """Whether two add/exists replies differ only in the way false positives make them differ:
    a 1<->0 at the first difference; after that (counts may have drifted inside the same
    command) only 0/1 results or the non-scaling-full error."""
    if is_bit(a) and is_bit(b):
        return a[0] == b[0] and bit_of(a) != bit_of(b)
    if {a, b} in ({FULL_ERR, ("int", 0)}, {FULL_ERR, ("bool", False)}):
        return True  # see below
    if a[0] != "arr" or b[0] != "arr":
        return False
    xs, ys = a[1], b[1]
    for i, (x, y) in enumerate(zip(xs, ys)):
        if x == y:
            continue
        # A false positive on a full non-scaling filter: one side answers 0 (it "has" the
        # item), the other refuses the new item.
        fp_full = {x, y} in ({FULL_ERR, ("int", 0)}, {FULL_ERR, ("bool", False)})
        if not (fp_full or (is_bit(x) and is_bit(y) and x[0] == y[0])):
            return False
        rest = xs[i + 1:] + ys[i + 1:]
        return all(is_bit(v) or v == FULL_ERR for v in rest)
    return False  # equal prefix, different lengths: not a false positive


class Run:
    def __init__(self, servers, protocol):
        self.c = [Resp(s.port, protocol) for s in servers]
        self.protocol = protocol
        self.sent = 0
        self.compared = 0
        self.skipped = {}
        self.fp = 0
        self.fp_cmds = []
        self.resyncs = 0
        self.mismatches = []
        self.errors = {}  # RedisBloom's error replies seen, by text (coverage)
        self.iters = [{}, {}]  # per server: key -> next SCANDUMP iterator

    def close(self):
        for c in self.c:
            c.close()

    def count_errors(self, reply):
        if reply[0] == "err":
            self.errors[reply[1]] = self.errors.get(reply[1], 0) + 1
        elif reply[0] == "arr":
            for v in reply[1]:
                self.count_errors(v)

    def skip(self, rule):
        self.skipped[rule] = self.skipped.get(rule, 0) + 1

    def both(self, *args):
        return [c.call(*args) for c in self.c]

    def resync(self, key):
        self.both("DEL", key)
        self.resyncs += 1
        for it in self.iters:
            it.pop(key, None)

    def mismatch(self, op, ra, rb, note=""):
        self.mismatches.append((repr(op), ra, rb, note))
        if op.key is not None:
            self.resync(op.key)

    def setup(self):
        for k in STRING_KEYS:
            self.both("SET", k, "v")
        self.both("SET", "s3", "v")

    def send(self, op):
        if op.kind == "copy":
            return self.copy(op)
        if op.per_side == "iter":
            replies = [c.call("BF.SCANDUMP", op.key, self.iters[i].get(op.key, 0))
                       for i, c in enumerate(self.c)]
        else:
            replies = [c.call(*op.args) for c in self.c]
        self.sent += 1
        ra, rb = replies
        self.count_errors(rb)
        if op.kind == "scandump":
            for i, r in enumerate(replies):
                if r[0] == "arr" and len(r[1]) == 2 and r[1][0][0] == "int":
                    self.iters[i][op.key] = r[1][0][1]
        self.compare(op, ra, rb)

    def compare(self, op, ra, rb):
        kind = op.kind
        if kind == "memory":
            self.skip("a: MEMORY USAGE value")
            if ra[0] != rb[0] or ra[0] not in ("int", "nil"):
                self.mismatch(op, ra, rb, "MEMORY USAGE reply types")
            return
        if kind == "exists" and ra[0] == "err" and ra[1].startswith("WRONGTYPE") and op.key in STRING_KEYS + ["s3"]:
            # (b) rsbloom WRONGTYPE, RedisBloom 0 for every item.
            self.skip("b: EXISTS/MEXISTS on another type")
            zeros = [rb == ("int", 0) or rb == ("bool", False),
                     rb[0] == "arr" and all(v in (("int", 0), ("bool", False)) for v in rb[1])]
            if not any(zeros):
                self.mismatch(op, ra, rb, "rule b: RedisBloom should answer 0")
            return
        if kind == "reserve_extra" and ra != rb:
            self.skip("c: unknown BF.RESERVE argument")
            if ra[0] != "err" or not ra[1].startswith("ERR unknown argument '"):
                self.mismatch(op, ra, rb, "rule c: rsbloom should refuse")
            if rb[0] != "err":
                self.resync(op.key)  # RedisBloom created the key, rsbloom did not
            return
        if ra != rb and ra[0] == "err" and ra[1].endswith(" is given twice"):
            # (e) an option given twice: rsbloom refuses it, RedisBloom keeps one of the two.
            self.skip("e: option given twice")
            if rb[0] != "err":
                self.resync(op.key)
            return
        misread = insert_misread(op.args) if op.args[0] == "BF.INSERT" else None
        if misread is not None and ra != rb:
            # (d) a word RedisBloom reads by its first letters: rsbloom refuses it by name.
            self.skip("d: BF.INSERT word RedisBloom reads by its first letters")
            if ra != ("err", f"ERR unknown argument '{misread}' for BF.INSERT"):
                self.mismatch(op, ra, rb, "rule d: rsbloom should refuse the word by name")
            self.resync(op.key)
            return
        if kind == "info":
            ra, rb = norm_info(ra, op.args), norm_info(rb, op.args)
            if ra != rb:
                self.mismatch(op, ra, rb)
            else:
                self.compared += 1
            return
        if kind == "debug":
            ra, rb = norm_debug(ra), norm_debug(rb)
        elif kind == "scandump":
            ra, rb = norm_scandump(ra, op.args), norm_scandump(rb, op.args)
        if ra == rb:
            self.compared += 1
            return
        if kind in ("add", "exists") and fp_difference(ra, rb):
            self.fp += 1
            self.fp_cmds.append((repr(op), ra, rb))
            if kind == "add":
                self.resync(op.key)
            return
        self.mismatch(op, ra, rb)

    def copy(self, op):
        """A same-server SCANDUMP/LOADCHUNK round trip of `src` into key `cp`, then BF.DEBUG of
        the copy compared with the source on each server and across the servers."""
        src = op.args[1]
        self.both("DEL", "cp")
        debugs = []
        for c in self.c:
            chunks, it, replies = [], 0, []
            while True:
                r = c.call("BF.SCANDUMP", src, it)
                self.sent += 0.5
                if r[0] != "arr":
                    replies.append(r)
                    break
                it, data = r[1][0][1], r[1][1][1]
                if it == 0:
                    break
                chunks.append((it, data))
            for it, data in chunks:
                replies.append(c.call("BF.LOADCHUNK", "cp", it, data))
                self.sent += 0.5
            debugs.append((c.call("BF.DEBUG", src), c.call("BF.DEBUG", "cp"), replies))
            self.sent += 1
        (sa, ca, la), (sb, cb, lb) = debugs
        if sa[0] == "err" or sb[0] == "err":
            # src is missing or not a filter: both must fail the same way
            if (sa, la[:1]) != (sb, lb[:1]):
                self.mismatch(op, (sa, la), (sb, lb), "copy of a non-filter")
            else:
                self.compared += 1
            return
        ok = {("str", "OK")}
        if set(la) != ok or set(lb) != ok or ca != sa or cb != sb:
            self.mismatch(op, (sa, ca, la), (sb, cb, lb), "copy round trip")
        elif norm_debug(ca) != norm_debug(cb):
            self.mismatch(op, ca, cb, "copy differs across servers")
        else:
            self.compared += 1

    def summary(self):
        return (
            f"RESP{self.protocol}: sent {int(self.sent)} commands to each server, compared "
            f"{self.compared}, skipped by rule {sum(self.skipped.values())} {self.skipped}, "
            f"FP differences {self.fp} (resyncs {self.resyncs}), mismatches {len(self.mismatches)}; "
            f"{len(self.errors)} distinct error replies"
        )


def run(servers, protocol, count, seed=2026):
    rng = random.Random(seed)
    gen = Gen(rng)
    run = Run(servers, protocol)
    try:
        for c in run.c:
            c.call("FLUSHALL")
        run.setup()
        n = 0
        while n < count:
            for op in gen.next():
                run.send(op)
                n += 1
        # Both servers must still be up and agree on the keyspace.
        ka = sorted(run.c[0].call("KEYS", "*")[1])
        kb = sorted(run.c[1].call("KEYS", "*")[1])
        if ka != kb:
            run.mismatches.append(("KEYS *", ka, kb, "keyspaces differ"))
    finally:
        run.close()
    return run


@pytest.mark.parametrize("protocol,count", [(2, 12000), (3, 4000)], ids=["resp2", "resp3"])
def test_differential(rsbloom_server, redisbloom_server, capsys, protocol, count):
    res = run([rsbloom_server, redisbloom_server], protocol, count)
    with capsys.disabled():
        print("\n" + res.summary())
        for text, n in sorted(res.errors.items(), key=lambda e: -e[1]):
            print(f"  {n:5d} x {text}")
        for cmd, a, b in res.fp_cmds[:5]:
            print(f"  FP: {cmd}\n      rsbloom:    {a}\n      RedisBloom: {b}")
    report = "\n".join(
        f"{cmd}\n  rsbloom:    {a}\n  RedisBloom: {b}  {note}" for cmd, a, b, note in res.mismatches[:30]
    )
    assert not res.mismatches, f"{len(res.mismatches)} mismatches:\n{report}"
    # False positives must be rare: well under 1% of the commands.
    assert res.fp <= res.sent * 0.005, res.summary()
    assert res.compared >= count * 0.8, res.summary()
