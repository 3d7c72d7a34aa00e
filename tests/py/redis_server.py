"""One private redis-server process with a module loaded, for the Python tests (conftest.py)
and the benchmark (bench/bench.py).

It listens on a free 127.0.0.1 port, runs in its own temporary directory with persistence off
(a dump.rdb placed there is loaded at start), and is stopped by pid: terminate, then wait.
"""

import os
import shutil
import socket
import subprocess
import tempfile
import time

import redis

# The server binary: $RSBLOOM_TEST_SERVER, as for the Rust tests (scripts/servers prints the
# ones rsbloom is tested on), by default Debian's redis-server.
REDIS_SERVER = (
    os.environ.get("RSBLOOM_TEST_SERVER")
    or shutil.which("redis-server")
    or "/usr/bin/redis-server"
)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    # `module` None: a server without a module (a page that loads it with MODULE LOAD);
    # `binary`: another server than REDIS_SERVER.
    def __init__(self, name, module, extra_args=(), binary=None):
        self.name = name
        self.binary = binary or REDIS_SERVER
        self.module = module
        self.extra_args = list(extra_args)
        self.dir = tempfile.mkdtemp(prefix=f"rsbloom-{name.lower()}-")
        self.port = free_port()
        self.proc = None
        self.starts = 0

    @property
    def log_path(self):
        return os.path.join(self.dir, f"redis-{self.starts}.log")

    def start(self, timeout=600.0):
        """Starts redis-server (loading dump.rdb if there is one); returns the seconds until it
        answered PING. A port taken meanwhile by another process is retried on a new one."""
        for _attempt in range(3):
            self.starts += 1
            began = time.monotonic()
            self.proc = subprocess.Popen(
                [
                    self.binary,
                    "--bind", "127.0.0.1",
                    "--port", str(self.port),
                    "--dir", self.dir,
                    "--dbfilename", "dump.rdb",
                    "--save", "",
                    "--appendonly", "no",
                    "--logfile", self.log_path,
                    *self.extra_args,
                    *(["--loadmodule", self.module] if self.module else []),
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                # Ctrl-C reaches only the Python process, which then stops the server by pid.
                start_new_session=True,
            )
            if self._wait_ready(timeout):
                return time.monotonic() - began
            log_text = self.log_text()
            self.stop()
            if "Address already in use" not in log_text:
                raise RuntimeError(f"{self.name}: redis-server did not start:\n{log_text[-3000:]}")
            self.port = free_port()
        raise RuntimeError(f"{self.name}: no free port")

    def _wait_ready(self, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                with redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=2) as c:
                    if c.ping():
                        return True
            except (redis.exceptions.ConnectionError, redis.exceptions.BusyLoadingError,
                    redis.exceptions.TimeoutError):
                pass
            time.sleep(0.01)
        return False

    def log_text(self):
        try:
            with open(self.log_path) as f:
                return f.read()
        except OSError:
            return ""

    def client(self, protocol=2, **kw):
        kw.setdefault("socket_timeout", 600)
        return redis.Redis(host="127.0.0.1", port=self.port, protocol=protocol, **kw)

    def stop(self):
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.terminate()  # with --save '' nothing is written on the way out
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def cleanup(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)
