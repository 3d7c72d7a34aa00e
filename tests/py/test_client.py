"""redis-py's r.bf() and r.cf() APIs against rsbloom, in RESP2 and RESP3.

Every reply is checked exactly, including its Python type: RESP2 gives ints for add/exists
results, RESP3 gives bools. Filters that take exact "new item → 1" assertions are kept lightly
loaded or use small error rates, because rsbloom picks a random hash seed per filter and a
false positive would otherwise make a run flaky.
"""

import pytest
import redis
from redis.commands.bf.info import BFInfo, CFInfo

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"

MODES = [
    pytest.param({"protocol": 2}, id="resp2"),
    pytest.param({"protocol": 3}, id="resp3"),
    pytest.param({"protocol": 3, "legacy_responses": False}, id="resp3-unified"),
]


@pytest.fixture(params=MODES)
def r(request, rsbloom_server):
    client = rsbloom_server.client(**request.param)
    client.flushall()
    client.resp = request.param["protocol"]
    yield client
    client.flushall()
    client.close()


def b(r, v):
    """The expected add/exists result: an int in RESP2, a bool in RESP3."""
    return bool(v) if r.resp == 3 else int(v)


def same(actual, expected):
    """Equal values and equal types (so True is not accepted for 1, nor 1 for True)."""
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(actual) == len(expected)
            and all(same(a, e) for a, e in zip(actual, expected))
        )
    if isinstance(expected, Exception):
        return type(actual) is type(expected) and str(actual) == str(expected)
    return type(actual) is type(expected) and actual == expected


def check(actual, expected):
    assert same(actual, expected), f"got {actual!r}, expected {expected!r}"


def bits(r, *vs):
    return [b(r, v) for v in vs]


def info(r, key):
    """r.bf().info() as a BFInfo: RESP3 with legacy responses returns the raw map."""
    res = r.bf().info(key)
    if isinstance(res, BFInfo):
        return res
    assert isinstance(res, dict), res
    # The raw RESP3 map: keys are simple strings (bytes, not decoded).
    assert list(res) == [
        b"Capacity",
        b"Size",
        b"Number of filters",
        b"Number of items inserted",
        b"Expansion rate",
    ]
    return BFInfo({k.decode(): v for k, v in res.items()})


def raises(exact, fn, *args, **kwargs):
    with pytest.raises(redis.ResponseError) as ei:
        fn(*args, **kwargs)
    assert str(ei.value) == exact, f"error {str(ei.value)!r}, expected {exact!r}"


# --- create / reserve -------------------------------------------------------------------------


def test_create(r):
    bf = r.bf()
    assert bf.create("bloom", 0.01, 1000) is True
    assert bf.create("bloom_e", 0.01, 1000, expansion=1) is True
    assert bf.create("bloom_ns", 0.01, 1000, noScale=True) is True
    assert bf.reserve("bloom_r", "0.001", "100", expansion=4) is True
    assert r.type("bloom") == b"MBbloom--"
    i = info(r, "bloom_r")
    assert (i.capacity, i.filterNum, i.insertedNum, i.expansionRate) == (100, 1, 0, 4)
    assert info(r, "bloom_e").expansionRate == 1
    assert info(r, "bloom_ns").expansionRate is None
    # RedisBloom takes the first of two EXPANSIONs; rsbloom refuses an option given twice.
    raises("EXPANSION is given twice", r.execute_command, "BF.RESERVE", "bloom_x", 0.01, 100, "EXPANSION", 10, "EXPANSION")
    assert r.exists("bloom_x") == 0


def test_create_errors(r):
    bf = r.bf()
    raises("Nonscaling filters cannot expand", bf.create, "k", 0.01, 1000, expansion=4, noScale=True)
    # redis-py sends NONSCALING even for noScale=False.
    raises("Nonscaling filters cannot expand", bf.create, "k", 0.01, 1000, expansion=2, noScale=False)
    raises("bad error rate", bf.create, "k", "abc", 100)
    raises("bad error rate", bf.create, "k", "nan", 100)
    raises("(0 < error rate range < 1) ", bf.create, "k", 0, 100)
    raises("(0 < error rate range < 1) ", bf.create, "k", 1, 100)
    raises("(0 < error rate range < 1) ", bf.create, "k", -0.5, 100)
    raises("bad capacity", bf.create, "k", 0.01, "abc")
    raises("bad capacity", bf.create, "k", 0.01, 1.5)
    raises("(capacity should be larger than 0)", bf.create, "k", 0.01, 0)
    raises("(capacity should be larger than 0)", bf.create, "k", 0.01, -3)
    raises("bad expansion", bf.create, "k", 0.01, 100, expansion="x")
    raises("expansion should be greater or equal to 1", bf.create, "k", 0.01, 100, expansion=0)
    raises("no expansion", r.execute_command, "BF.RESERVE", "k", 0.01, 100, "EXPANSION")
    raises("wrong number of arguments for 'bf.reserve' command", r.execute_command, "BF.RESERVE", "k", 0.01)
    assert r.exists("k") == 0
    assert bf.create("k", 0.01, 100) is True
    raises("item exists", bf.create, "k", 0.01, 100)
    r.set("str", "v")
    raises(WRONGTYPE, bf.create, "str", 0.01, 100)


# --- add / madd / exists / mexists --------------------------------------------------------------


def test_add_exists(r):
    bf = r.bf()
    check(bf.add("bloom", "foo"), b(r, 1))
    check(bf.add("bloom", "foo"), b(r, 0))
    check(bf.add("bloom", ""), b(r, 1))
    check(bf.add("bloom", b"\x00\xffbin"), b(r, 1))
    check(bf.exists("bloom", "foo"), b(r, 1))
    check(bf.exists("bloom", ""), b(r, 1))
    check(bf.exists("bloom", b"\x00\xffbin"), b(r, 1))
    check(bf.exists("bloom", "noexist"), b(r, 0))
    check(bf.exists("missing", "foo"), b(r, 0))
    check(bf.card("bloom"), 3)
    # Implicit creation uses the defaults: 0.01, 100, expansion 2.
    i = info(r, "bloom")
    assert (i.capacity, i.filterNum, i.insertedNum, i.expansionRate) == (100, 1, 3, 2)
    assert isinstance(i.size, int) and i.size > 100


def test_madd_mexists(r):
    bf = r.bf()
    check(bf.madd("bloom", "foo", "bar", "baz"), bits(r, 1, 1, 1))
    check(bf.madd("bloom", "foo", "new"), bits(r, 0, 1))
    check(bf.mexists("bloom", "foo", "noexist", "bar", "new"), bits(r, 1, 0, 1, 1))
    check(bf.mexists("missing", "a", "b"), bits(r, 0, 0))
    check(bf.card("bloom"), 4)
    raises("wrong number of arguments for 'bf.madd' command", bf.madd, "bloom")
    raises("wrong number of arguments for 'bf.mexists' command", bf.mexists, "bloom")


def test_add_wrong_arity(r):
    raises("wrong number of arguments for 'bf.add' command", r.execute_command, "BF.ADD", "k")
    raises("wrong number of arguments for 'bf.exists' command", r.execute_command, "BF.EXISTS", "k", "a", "b")
    raises("wrong number of arguments for 'bf.card' command", r.execute_command, "BF.CARD")


def test_wrong_type(r):
    bf = r.bf()
    r.set("str", "v")
    raises(WRONGTYPE, bf.add, "str", "a")
    raises(WRONGTYPE, bf.madd, "str", "a", "b")
    raises(WRONGTYPE, bf.insert, "str", ["a"])
    raises(WRONGTYPE, bf.info, "str")
    raises(WRONGTYPE, bf.card, "str")
    raises(WRONGTYPE, bf.scandump, "str", 0)
    raises(WRONGTYPE, r.execute_command, "bf.debug", "str")
    # rsbloom: EXISTS/MEXISTS on another type reply WRONGTYPE (RedisBloom answers 0).
    raises(WRONGTYPE, bf.exists, "str", "a")
    raises(WRONGTYPE, bf.mexists, "str", "a", "b")
    assert r.get("str") == b"v"


def reserve_seeded(r, key, *args):
    """BF.RESERVE with rsbloom's SEED: which items are false positives of a tiny filter depends
    on its hash seed, and these tests count exactly which items fit (with a random seed, a
    false positive among the first few items of a 64-bit link made them fail in 2.5% of runs,
    measured over 2000)."""
    assert r.execute_command("BF.RESERVE", key, *args, "SEED", 1) in (True, b"OK", "OK")


def test_nonscaling_full(r):
    bf = r.bf()
    reserve_seeded(r, "ns", 1e-6, 3, "NONSCALING")
    check(bf.madd("ns", "1", "2", "3"), bits(r, 1, 1, 1))
    check(bf.madd("ns", "1", "5", "6"), [b(r, 0), redis.ResponseError("non scaling filter is full")])
    raises("non scaling filter is full", bf.add, "ns", "7")
    check(bf.add("ns", "2"), b(r, 0))
    check(
        bf.insert("ns", ["3", "8", "9"]),
        [b(r, 0), redis.ResponseError("non scaling filter is full")],
    )
    check(bf.card("ns"), 3)
    i = info(r, "ns")
    assert (i.capacity, i.filterNum, i.insertedNum, i.expansionRate) == (3, 1, 3, None)


def test_scaling(r):
    bf = r.bf()
    reserve_seeded(r, "sc", 1e-6, 2, "EXPANSION", 4)
    size1 = info(r, "sc").size
    check(bf.madd("sc", "a", "b", "c"), bits(r, 1, 1, 1))
    i = info(r, "sc")
    assert (i.capacity, i.filterNum, i.insertedNum, i.expansionRate) == (10, 2, 3, 4)
    assert i.size > size1
    check(bf.madd("sc", *[f"x{n}" for n in range(8)]), bits(r, *[1] * 8))
    i = info(r, "sc")
    assert (i.capacity, i.filterNum, i.insertedNum) == (42, 3, 11)
    dbg = r.execute_command("bf.debug", "sc")
    assert dbg[0] == b"size:11"
    assert len(dbg) == 4
    tails = [d.split(b" hashwidth:")[1] for d in dbg[1:]]
    assert tails == [
        b"64 capacity:2 size:2 ratio:5e-07",
        b"64 capacity:8 size:8 ratio:2.5e-07",
        b"64 capacity:32 size:1 ratio:1.25e-07",
    ]


# --- insert -------------------------------------------------------------------------------------


def test_insert(r):
    bf = r.bf()
    check(bf.insert("bloom", ["foo"]), bits(r, 1))
    check(bf.insert("bloom", ["foo", "bar"]), bits(r, 0, 1))
    check(bf.exists("bloom", "bar"), b(r, 1))
    i = info(r, "bloom")
    assert (i.capacity, i.filterNum, i.insertedNum, i.expansionRate) == (100, 1, 2, 2)

    check(bf.insert("captest", ["foo"], capacity=10), bits(r, 1))
    assert info(r, "captest").capacity == 10
    check(bf.insert("errtest", ["foo"], error=0.001), bits(r, 1))
    assert r.execute_command("bf.debug", "errtest")[1].endswith(b"ratio:0.0005")
    check(bf.insert("exptest", ["foo"], capacity=5, expansion=3), bits(r, 1))
    assert info(r, "exptest").expansionRate == 3
    check(bf.insert("nstest", ["foo"], capacity=1000, noScale=True), bits(r, 1))
    assert info(r, "nstest").expansionRate is None
    check(
        bf.insert("all", ["a", "b"], capacity=1000, error=0.0001, expansion=5),
        bits(r, 1, 1),
    )
    i = info(r, "all")
    assert (i.capacity, i.filterNum, i.insertedNum, i.expansionRate) == (1000, 1, 2, 5)

    # Options are ignored when the key exists.
    check(bf.insert("captest", ["bar"], capacity=77, noScale=True), bits(r, 1))
    i = info(r, "captest")
    assert (i.capacity, i.expansionRate) == (10, 2)

    # NOCREATE
    raises("not found", bf.insert, "nocreate", ["foo"], noCreate=True)
    assert r.exists("nocreate") == 0
    check(bf.insert("bloom", ["baz"], noCreate=True), bits(r, 1))
    check(bf.card("bloom"), 3)


def test_insert_errors(r):
    bf = r.bf()
    raises("Bad capacity", bf.insert, "k", ["a"], capacity="x")
    raises("Bad error rate", bf.insert, "k", ["a"], error="x")
    raises("Bad expansion", bf.insert, "k", ["a"], expansion="x")
    raises("Bad argument received", bf.insert, "k", ["a"], capacity=0)
    raises("Bad argument received", bf.insert, "k", ["a"], error=1)
    raises("Bad argument received", bf.insert, "k", ["a"], expansion=0)
    raises("Unknown argument received", r.execute_command, "BF.INSERT", "k", "FOO", "ITEMS", "a")
    raises("wrong number of arguments for 'bf.insert' command", r.execute_command, "BF.INSERT", "k", "ITEMS")
    raises("wrong number of arguments for 'bf.insert' command", r.execute_command, "BF.INSERT", "k", "CAPACITY", "10", "NOCREATE")
    raises("Unknown argument received", r.execute_command, "BF.INSERT", "k", "CAPACITY", "10", "a")
    raises("wrong number of arguments for 'bf.insert' command", bf.insert, "k", [])
    assert r.exists("k") == 0
    # Everything after ITEMS is an item.
    check(r.execute_command("BF.INSERT", "k", "ITEMS", "a", "ERROR", "0.5"), [1, 1, 1] if r.resp == 2 else [True] * 3)
    check(bf.card("k"), 3)


# --- info / card ------------------------------------------------------------------------------


def test_info(r):
    bf = r.bf()
    bf.create("bloom", 0.01, 1000)
    check(bf.madd("bloom", "a", "b"), bits(r, 1, 1))
    i = info(r, "bloom")
    assert i.capacity == 1000
    assert i.filterNum == 1
    assert i.insertedNum == 2
    assert i.expansionRate == 2
    assert isinstance(i.size, int) and i.size > 1000
    assert i["capacity"] == 1000 and i.get("filterNum") == 1
    for attr in ("capacity", "size", "filterNum", "insertedNum", "expansionRate"):
        assert type(getattr(i, attr)) is int

    bf.create("ns", 0.01, 1000, noScale=True)
    i = info(r, "ns")
    assert (i.capacity, i.filterNum, i.insertedNum, i.expansionRate) == (1000, 1, 0, None)
    bf.create("e4", 0.01, 1000, expansion=4)
    assert info(r, "e4").expansionRate == 4

    raises("not found", bf.info, "missing")


def test_info_fields_raw(r, rsbloom_server):
    # The one-field form, read through a client without the BF.INFO callback.
    raw = rsbloom_server.client(protocol=r.resp)
    try:
        raw.execute_command("BF.RESERVE", "bloom", 0.01, 1000)
        raw.execute_command("BF.RESERVE", "ns", 0.01, 1000, "NONSCALING")
        if r.resp == 2:
            assert raw.execute_command("BF.INFO", "bloom", "CAPACITY") == [1000]
            assert raw.execute_command("BF.INFO", "bloom", "filters") == [1]
            assert raw.execute_command("BF.INFO", "bloom", "ITEMS") == [0]
            assert raw.execute_command("BF.INFO", "bloom", "EXPANSION") == [2]
            assert raw.execute_command("BF.INFO", "ns", "EXPANSION") == [None]
        else:
            assert raw.execute_command("BF.INFO", "bloom", "CAPACITY") == {b"Capacity": 1000}
            assert raw.execute_command("BF.INFO", "bloom", "filters") == {b"Number of filters": 1}
            assert raw.execute_command("BF.INFO", "bloom", "ITEMS") == {b"Number of items inserted": 0}
            assert raw.execute_command("BF.INFO", "bloom", "EXPANSION") == {b"Expansion rate": 2}
            assert raw.execute_command("BF.INFO", "ns", "EXPANSION") == {b"Expansion rate": None}
        raises("Invalid information value", raw.execute_command, "BF.INFO", "bloom", "FOO")
        raises("wrong number of arguments for 'bf.info' command", raw.execute_command, "BF.INFO", "bloom", "SIZE", "ITEMS")
    finally:
        raw.close()


def test_card(r):
    bf = r.bf()
    check(bf.card("missing"), 0)
    check(bf.madd("bloom", "a", "b", "c"), bits(r, 1, 1, 1))
    check(bf.add("bloom", "a"), b(r, 0))
    check(bf.card("bloom"), 3)
    r.set("str", "v")
    raises(WRONGTYPE, bf.card, "str")


# --- scandump / loadchunk ---------------------------------------------------------------------


def dump(r, key):
    chunks = []
    it = 0
    while True:
        it, data = r.bf().scandump(key, it)
        assert type(it) is int and isinstance(data, bytes)
        if it == 0:
            assert data == b""
            return chunks
        chunks.append((it, data))


@pytest.mark.parametrize(
    "create",
    [
        pytest.param(lambda bf: bf.create("src", 0.001, 100), id="scaling"),
        pytest.param(lambda bf: bf.create("src", 0.01, 50, expansion=3), id="expansion3"),
        pytest.param(lambda bf: bf.create("src", 0.0001, 5000, noScale=True), id="nonscaling"),
    ],
)
def test_scandump_loadchunk(r, create):
    bf = r.bf()
    create(bf)
    n = 400 if info(r, "src").expansionRate is not None else 300
    for x in range(n):
        bf.add("src", x)
    before_src = r.execute_command("bf.debug", "src")
    chunks = dump(r, "src")
    assert len(chunks) >= 2  # a header and at least one data chunk
    for it, data in chunks:
        assert r.bf().loadchunk("dst", it, data) == b"OK"
    after = r.execute_command("bf.debug", "dst")
    assert after == before_src
    assert r.execute_command("bf.debug", "src") == before_src
    i_src, i_dst = info(r, "src"), info(r, "dst")
    for attr in ("capacity", "size", "filterNum", "insertedNum", "expansionRate"):
        assert getattr(i_src, attr) == getattr(i_dst, attr)
    # Every item is present in the copy, and the copy answers like the original for others.
    check(bf.mexists("dst", *range(n)), bits(r, *[1] * n))
    others = [f"other{x}" for x in range(500)]
    assert bf.mexists("dst", *others) == bf.mexists("src", *others)
    # The copy is a live filter.
    bf.add("dst", "after-load")
    check(bf.exists("dst", "after-load"), b(r, 1))
    # Dumping the copy again round-trips to the same filter.
    for it, data in dump(r, "dst"):
        assert bf.loadchunk("dst3", it, data) == b"OK"
    assert r.execute_command("bf.debug", "dst3") == r.execute_command("bf.debug", "dst")


def test_scandump_errors(r):
    bf = r.bf()
    raises("not found", bf.scandump, "missing", 0)
    bf.add("k", "a")
    raises("Second argument must be numeric", bf.scandump, "k", "abc")
    raises("Second argument must be numeric", r.execute_command, "BF.LOADCHUNK", "k2", "abc", "data")
    raises("received bad data", bf.loadchunk, "fresh", 1, b"garbage")
    raises("not found", bf.loadchunk, "fresh", 5, b"garbage")
    assert r.exists("fresh") == 0
    raises("wrong number of arguments for 'bf.scandump' command", r.execute_command, "BF.SCANDUMP", "k")
    raises("wrong number of arguments for 'bf.loadchunk' command", r.execute_command, "BF.LOADCHUNK", "k", 1)


def test_debug(r):
    bf = r.bf()
    # A fixed seed: with a random one, 497 distinct adds lost 8 to false positives in one run
    # of many, and the count below would need a bound that can fail.
    r.execute_command("BF.RESERVE", "d", 0.01, 100, "SEED", 7)
    for x in range(497):
        bf.add("d", f"item{x}")
    dbg = r.execute_command("bf.debug", "d")
    assert len(dbg) == 4
    size = int(dbg[0].split(b":")[1])
    # The adds that read present already, under seed 7: the same on every run and server.
    assert 490 <= size <= 497
    assert size == int(r.execute_command("bf.card", "d"))
    for line, cap, ratio in zip(dbg[1:], (b"100", b"200", b"400"), (b"0.005", b"0.0025", b"0.00125")):
        fields = dict(f.split(b":") for f in line.split(b" "))
        assert list(fields) == [b"bytes", b"bits", b"hashes", b"hashwidth", b"capacity", b"size", b"ratio"]
        assert fields[b"hashwidth"] == b"64"
        assert fields[b"capacity"] == cap
        assert fields[b"ratio"] == ratio
    raises("not found", r.execute_command, "bf.debug", "missing")


# --- window filters (rsbloom's SLIDING / WINDOW) ------------------------------------------------


@pytest.mark.parametrize("window", [["SLIDING"], ["WINDOW", 3600]], ids=["sliding", "window"])
def test_window_filters_through_the_bf_api(r, window):
    """Every r.bf() call works unchanged on a window filter; BF.INFO keeps its five fields."""
    bf = r.bf()
    assert r.execute_command("BF.RESERVE", "w", 0.001, 1000, *window) is True
    assert r.type("w") == b"MBbloom--"
    check(bf.add("w", "a"), b(r, 1))
    check(bf.add("w", "a"), b(r, 0))
    check(bf.madd("w", "b", "c"), bits(r, 1, 1))
    check(bf.exists("w", "b"), b(r, 1))
    check(bf.mexists("w", "a", "c", "never"), bits(r, 1, 1, 0))
    check(bf.insert("w", ["d", "e"]), bits(r, 1, 1))
    check(bf.card("w"), 5)
    i = info(r, "w")
    assert (i.capacity, i.insertedNum) == (1000, 5)
    assert i.filterNum >= 1
    assert i.expansionRate == (None if window == ["SLIDING"] else 2)
    # r.bf() installs redis-py's BF.INFO parser on `r`, which knows only the five fields: ask
    # through a client without it.
    plain = redis.Redis(connection_pool=r.connection_pool)
    raw = plain.execute_command("BF.INFO", "w", "WINDOW")
    pairs = dict(zip(raw[::2], raw[1::2])) if isinstance(raw, list) else raw
    pairs = {k.decode() if isinstance(k, bytes) else k: v for k, v in pairs.items()}
    unit = pairs["Unit"].decode() if isinstance(pairs["Unit"], bytes) else pairs["Unit"]
    assert (pairs["Window"], unit) == ((1000, "items") if window == ["SLIDING"] else (3600, "seconds"))
    assert pairs["Items in window"] == 5
    # A count window forgets: after 2 windows of other items, the first ones are gone (at
    # 0.001, a few false positives among 100 at most).
    if window == ["SLIDING"]:
        old = [f"old{j}" for j in range(100)]
        bf.madd("w", *old)
        for start in range(0, 2400, 400):
            bf.madd("w", *[f"x{j}" for j in range(start, start + 400)])
        assert sum(map(int, bf.mexists("w", *old))) <= 3
        check(bf.exists("w", "x2399"), b(r, 1))


# --- r.cf(): cuckoo filters --------------------------------------------------------------------

CF_INFO_NAMES = [
    "Size",
    "Number of buckets",
    "Number of filters",
    "Number of items inserted",
    "Number of items deleted",
    "Bucket size",
    "Expansion rate",
    "Max iterations",
]


def cf_info(r, key):
    """r.cf().info() as a CFInfo: RESP3 with legacy responses returns the raw map."""
    res = r.cf().info(key)
    if isinstance(res, CFInfo):
        return res
    assert isinstance(res, dict), res
    assert list(res) == [n.encode() for n in CF_INFO_NAMES]
    return CFInfo([x for k, v in res.items() for x in (k.decode(), v)])


def test_cf_redis_py_own_expectations(r):
    """What redis-py's tests/test_bloom.py asserts of CF (and its create options)."""
    cf = r.cf()
    assert cf.create("cuckoo", 1000)
    assert cf.create("cuckoo_e", 1000, expansion=1)
    assert cf.create("cuckoo_bs", 1000, bucket_size=4)
    assert cf.create("cuckoo_mi", 1000, max_iterations=10)
    assert cf.reserve("cuckoo_r", 1000)
    raises("item exists", cf.create, "cuckoo", 1000)  # redis-py strips "ERR "
    check(cf.insert("captest", ["foo"]), bits(r, 1))
    check(cf.insertnx("captest", ["foo"], nocreate="1"), [0])
    check(cf.insertnx("captest2", ["foo"], capacity=1000), [1])
    check(cf.insertnx("captest", ["foo", "bar", "baz"]), [0, 1, 1])
    check(cf.insert("captest", ["foo", "qux"]), bits(r, 1, 1))
    i = cf_info(r, "captest")
    assert (i.insertedNum, i.deletedNum, i.filterNum) == (5, 0, 1)
    assert (i.bucketNum, i.bucketSize, i.expansionRate, i.maxIteration) == (512, 2, 1, 20)
    assert i.size == 40 + 16 + 1024
    check(cf.add("cf", "item"), b(r, 1))
    check(cf.addnx("cf", "item"), b(r, 0))
    check(cf.exists("cf", "item"), b(r, 1))
    check(cf.mexists("cf", "item", "absent-item"), bits(r, 1, 0))
    check(cf.count("cf", "item"), 1)
    check(cf.delete("cf", "item"), b(r, 1))
    check(cf.count("cf", "item"), 0)
    check(cf.delete("cf", "item"), b(r, 0))
    raises("Not found", cf.delete, "missing", "item")
    # NOCREATE is sent whenever nocreate is not None, even False.
    raises("not found", cf.insert, "missing", ["x"], nocreate=False)


def test_cf_create_options_and_errors(r):
    cf = r.cf()
    assert cf.create("k", 1000, expansion=3, bucket_size=4, max_iterations=500)
    i = cf_info(r, "k")
    assert (i.bucketNum, i.bucketSize, i.expansionRate, i.maxIteration) == (256, 4, 4, 500)
    raises("Capacity must be at least (BucketSize * 2)", cf.create, "k2", 7, bucket_size=4)
    raises(
        "BUCKETSIZE: value must be an integer between 1 and 255, inclusive.",
        cf.create, "k2", 1000, bucket_size=256,
    )
    raises(
        "MAXITERATIONS: value must be an integer between 1 and 65535, inclusive.",
        cf.create, "k2", 1000, max_iterations=0,
    )
    r.set("str", "v")
    raises(WRONGTYPE, cf.add, "str", "x")
    raises(WRONGTYPE, cf.exists, "str", "x")


def test_cf_full_filter_in_arrays(r):
    cf = r.cf()
    r.execute_command("CF.RESERVE", "full", 4, "BUCKETSIZE", 1, "EXPANSION", 0, "SEED", 0)
    # Under seed 0, "x" has two distinct buckets of the 4: two copies fit, not three.
    check(cf.insert("full", ["x", "x", "x"]), [True, True, False] if r.resp == 3 else [1, 1, -1])
    # INSERTNX answers integers in every protocol: present 0, full -1.
    check(cf.insertnx("full", ["x"]), [0])
    raises("Filter is full", cf.add, "full", "x")


def cf_dump(r, key):
    chunks = []
    it = 0
    while True:
        it, data = r.cf().scandump(key, it)
        assert type(it) is int
        if it == 0:
            assert data is None
            return chunks
        assert isinstance(data, bytes)
        chunks.append((it, data))


def test_cf_scandump_loadchunk(r):
    cf = r.cf()
    assert cf.create("src", 100, bucket_size=2, expansion=2)
    for x in range(500):
        cf.add("src", f"item{x}")
    for x in range(0, 500, 5):
        cf.delete("src", f"item{x}")
    chunks = cf_dump(r, "src")
    assert len(chunks) >= 3  # the header and several sub-filters
    for it, data in chunks:
        assert cf.loadchunk("dst", it, data) == b"OK"
    assert r.execute_command("CF.DEBUG", "dst") == r.execute_command("CF.DEBUG", "src")
    assert cf_dump(r, "dst") == chunks
    kept = [f"item{x}" for x in range(500) if x % 5]
    check(cf.mexists("dst", *kept), bits(r, *[1] * len(kept)))
    # An empty filter dumps nothing at all (RedisBloom's rule).
    assert cf.create("empty", 100)
    assert cf.scandump("empty", 0) == [0, None]
