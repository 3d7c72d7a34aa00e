"""BF.* commands inside MULTI/EXEC, under WATCH, and from Lua scripts (RESP2 and RESP3)."""

import pytest
import redis

PROTOCOLS = [pytest.param(2, id="resp2"), pytest.param(3, id="resp3")]


def _ok(v):
    return v in (True, b"OK", "OK")


@pytest.fixture(params=PROTOCOLS)
def conn(request, rsbloom_server):
    c = rsbloom_server.client(protocol=request.param)
    c.flushall()
    yield c
    c.flushall()
    c.close()


def test_multi_exec_pipeline(conn):
    p = conn.pipeline(transaction=True)
    p.execute_command("BF.RESERVE", "tx:f", 0.01, 1000)
    p.execute_command("BF.ADD", "tx:f", "a")
    p.execute_command("BF.ADD", "tx:f", "a")
    p.execute_command("BF.MADD", "tx:f", "a", "b", "c")
    p.execute_command("BF.EXISTS", "tx:f", "b")
    p.execute_command("BF.EXISTS", "tx:f", "zzz-not-there")
    p.execute_command("BF.MEXISTS", "tx:f", "a", "c", "nope")
    res = p.execute()
    assert _ok(res[0])
    assert res[1:] == [1, 0, [0, 1, 1], 1, 0, [1, 1, 0]]


def test_multi_exec_raw(rsbloom_server, conn):
    c = rsbloom_server.client(protocol=conn.get_connection_kwargs().get("protocol", 2),
                              single_connection_client=True)
    try:
        assert _ok(c.execute_command("MULTI"))
        assert c.execute_command("BF.ADD", "tx:raw", "x") in (b"QUEUED", "QUEUED")
        assert c.execute_command("BF.EXISTS", "tx:raw", "x") in (b"QUEUED", "QUEUED")
        assert c.execute_command("EXEC") == [1, 1]
    finally:
        c.close()


def test_multi_exec_error_inside_transaction(conn):
    conn.set("tx:str", "v")
    p = conn.pipeline(transaction=True)
    p.execute_command("BF.ADD", "tx:str", "x")  # WRONGTYPE at EXEC time
    p.execute_command("BF.ADD", "tx:ok", "x")
    res = p.execute(raise_on_error=False)
    assert isinstance(res[0], redis.ResponseError)
    assert res[1] == 1
    assert conn.execute_command("BF.EXISTS", "tx:ok", "x") == 1


def test_watch_invalidated_by_bf_add(rsbloom_server, conn):
    conn.execute_command("BF.RESERVE", "tx:w", 0.01, 100)
    other = rsbloom_server.client(protocol=2)
    # redis-py pipeline: WatchError
    with conn.pipeline(transaction=True) as p:
        p.watch("tx:w")
        assert other.execute_command("BF.ADD", "tx:w", "from-other") == 1
        p.multi()
        p.execute_command("BF.ADD", "tx:w", "mine")
        with pytest.raises(redis.WatchError):
            p.execute()
    assert conn.execute_command("BF.EXISTS", "tx:w", "mine") == 0

    # raw: EXEC returns a null reply
    c = rsbloom_server.client(protocol=conn.get_connection_kwargs().get("protocol", 2),
                              single_connection_client=True)
    try:
        assert _ok(c.execute_command("WATCH", "tx:w"))
        assert other.execute_command("BF.MADD", "tx:w", "o1", "o2") == [1, 1]
        assert _ok(c.execute_command("MULTI"))
        c.execute_command("BF.ADD", "tx:w", "mine")
        assert c.execute_command("EXEC") is None
        assert c.execute_command("BF.EXISTS", "tx:w", "mine") == 0

        # untouched watched key: EXEC runs; reads from another connection don't invalidate
        assert _ok(c.execute_command("WATCH", "tx:w"))
        assert other.execute_command("BF.EXISTS", "tx:w", "o1") == 1
        assert _ok(c.execute_command("MULTI"))
        c.execute_command("BF.ADD", "tx:w", "mine")
        assert c.execute_command("EXEC") == [1]
    finally:
        c.close()
        other.close()


def test_watch_missing_key_created_by_bf_add(rsbloom_server, conn):
    other = rsbloom_server.client(protocol=2)
    try:
        with conn.pipeline(transaction=True) as p:
            p.watch("tx:new")
            assert other.execute_command("BF.ADD", "tx:new", "x") == 1
            p.multi()
            p.execute_command("BF.ADD", "tx:new", "y")
            with pytest.raises(redis.WatchError):
                p.execute()
    finally:
        other.close()


def test_lua_bf_add(conn):
    script = "return redis.call('BF.ADD', KEYS[1], ARGV[1])"
    assert conn.eval(script, 1, "lua:k", "x") == 1
    assert conn.eval(script, 1, "lua:k", "x") == 0
    sha = conn.script_load(script)
    assert conn.evalsha(sha, 1, "lua:k", "y") == 1


def test_lua_bf_exists_and_madd(conn):
    conn.execute_command("BF.ADD", "lua:e", "present")
    exists = "return redis.call('BF.EXISTS', KEYS[1], ARGV[1])"
    assert conn.eval(exists, 1, "lua:e", "present") == 1
    assert conn.eval(exists, 1, "lua:e", "absent") == 0
    assert conn.eval(exists, 1, "lua:missing-key", "x") == 0
    madd = "return redis.call('BF.MADD', KEYS[1], unpack(ARGV))"
    assert conn.eval(madd, 1, "lua:e", "present", "n1", "n2") == [0, 1, 1]
    # add-if-absent logic in one script
    guard = """
        if redis.call('BF.EXISTS', KEYS[1], ARGV[1]) == 1 then return 'seen' end
        redis.call('BF.ADD', KEYS[1], ARGV[1])
        return 'new'
    """
    assert conn.eval(guard, 1, "lua:e", "fresh") in (b"new", "new")
    assert conn.eval(guard, 1, "lua:e", "fresh") in (b"seen", "seen")


def test_lua_error_propagates(conn):
    conn.set("lua:str", "v")
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        conn.eval("return redis.call('BF.ADD', KEYS[1], 'x')", 1, "lua:str")
    r = conn.eval(
        "local r = redis.pcall('BF.ADD', KEYS[1], 'x'); "
        "if type(r) == 'table' and r.err then return 'caught' end; return r",
        1, "lua:str",
    )
    assert r in (b"caught", "caught")
