"""Fixtures: private redis-server processes with rsbloom, or with RedisBloom 2.8.2 for comparison.

Each server listens on a free 127.0.0.1 port, runs in its own temporary directory with
persistence off, and is stopped by pid (terminate, then wait) when the session ends.
"""

import os
import subprocess

import pytest

from redis_server import Server

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
RSBLOOM_SO = os.path.join(REPO, "target", "release", "librsbloom.so")
REDISBLOOM_TOOL = os.path.join(REPO, "scripts", "redisbloom-so")
# DEBUG DIGEST-VALUE and friends, from the test's (non-local-looking) connections too.
DEBUG_ARGS = ["--enable-debug-command", "yes"]


@pytest.fixture(scope="session")
def rsbloom_server():
    # $RSBLOOM_TEST_MODULE (as for the Rust tests) swaps in another module, only to check the
    # expectations themselves against RedisBloom.
    path = os.environ.get("RSBLOOM_TEST_MODULE") or RSBLOOM_SO
    if not os.path.isfile(path):
        pytest.fail(f"{path} is missing: run `cargo build --release` first")
    srv = Server("rsbloom", path, DEBUG_ARGS)
    srv.start()
    yield srv
    srv.cleanup()


def _redisbloom_path():
    out = subprocess.run(
        [REDISBLOOM_TOOL], check=True, capture_output=True, text=True
    ).stdout.strip()
    return out.splitlines()[-1]


@pytest.fixture(scope="session")
def redisbloom_server():
    path = _redisbloom_path()
    if not os.path.isfile(path):
        pytest.fail(f"RedisBloom module not found at {path!r}")
    srv = Server("redisbloom", path, DEBUG_ARGS)
    srv.start()
    yield srv
    srv.cleanup()
