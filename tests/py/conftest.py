"""Fixtures: private redis-server processes with rsbloom, or with RedisBloom 2.8.2 for comparison.

Each server listens on a free 127.0.0.1 port, runs in its own temporary directory with
persistence off, and is stopped by pid (terminate, then wait) when the session ends.
"""

import os
import shutil
import socket
import subprocess
import tempfile
import time

import pytest
import redis

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
RSBLOOM_SO = os.path.join(REPO, "target", "release", "librsbloom.so")
REDISBLOOM_TOOL = os.path.join(REPO, "scripts", "redisbloom-so")
REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, module_path, name):
        self.module_path = module_path
        self.name = name
        self.dir = tempfile.mkdtemp(prefix=f"rsbloom-py-{name}-")
        self.port = None
        self.proc = None
        self.log = os.path.join(self.dir, "redis.log")

    def start(self):
        for _attempt in range(5):
            self.port = _free_port()
            self.proc = subprocess.Popen(
                [
                    REDIS_SERVER,
                    "--port", str(self.port),
                    "--bind", "127.0.0.1",
                    "--dir", self.dir,
                    "--save", "",
                    "--appendonly", "no",
                    "--enable-debug-command", "yes",
                    "--logfile", self.log,
                    "--loadmodule", self.module_path,
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            if self._wait_ping():
                return self
            self.stop()
        raise RuntimeError(f"{self.name}: redis-server did not start; log:\n{self._log_tail()}")

    def _wait_ping(self, timeout=10.0):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                c = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=1)
                if c.ping():
                    c.close()
                    return True
            except redis.exceptions.ConnectionError:
                pass
            time.sleep(0.05)
        return False

    def _log_tail(self):
        try:
            with open(self.log) as f:
                return "".join(f.readlines()[-20:])
        except OSError:
            return "(no log)"

    def client(self, protocol=2, **kw):
        return redis.Redis(host="127.0.0.1", port=self.port, protocol=protocol, **kw)

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def cleanup(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="session")
def rsbloom_server():
    # $RSBLOOM_TEST_MODULE (as for the Rust tests) swaps in another module, only to check the
    # expectations themselves against RedisBloom.
    path = os.environ.get("RSBLOOM_TEST_MODULE") or RSBLOOM_SO
    if not os.path.isfile(path):
        pytest.fail(f"{path} is missing: run `cargo build --release` first")
    srv = Server(path, "rsbloom").start()
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
    srv = Server(path, "redisbloom").start()
    yield srv
    srv.cleanup()
