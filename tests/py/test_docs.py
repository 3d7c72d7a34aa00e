"""The docs cannot drift: every redis-cli session and every Python example in README.md and
docs/*.md runs against a fresh rsbloom server of its own, and fails when a reply differs from
what the page shows.

A session is a fenced block whose first line is a `127.0.0.1:6379> ` prompt: each command runs
through `redis-cli --no-raw` (its interactive output format), and its output must be the lines
under it, where `...` stands for any text (a figure that depends on the allocator). A session
that starts with `MODULE LOAD` gets a server without the module, and the built module's path.
A Python example is a ```python block: it runs with `redis.Redis()` (or the cluster page's
`RedisCluster(...)`, whose commands route the same to one server) pointed at the server, and
its `assert`s are what the page shows."""

import glob
import os
import re
import shlex
import subprocess

import pytest

from redis_server import Server

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
RSBLOOM_SO = os.path.join(REPO, "target", "release", "librsbloom.so")
PROMPT = "127.0.0.1:6379> "
PAGES = [os.path.join(REPO, "README.md")] + sorted(glob.glob(os.path.join(REPO, "docs", "*.md")))


def fenced_blocks(path):
    """(first line number, language, lines) of every fenced block of a page."""
    blocks, current = [], None
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if line.startswith("```"):
                if current is None:
                    current = (number + 1, line[3:].strip(), [])
                else:
                    blocks.append(current)
                    current = None
            elif current is not None:
                current[2].append(line)
    return blocks


def examples(kind):
    found = []
    for page in PAGES:
        name = os.path.relpath(page, REPO)
        for first, language, lines in fenced_blocks(page):
            is_session = bool(lines) and lines[0].startswith(PROMPT)
            if (kind == "session" and is_session) or (kind == "python" and language == "python"):
                found.append(pytest.param(lines, id=f"{name}:{first}"))
    return found


def commands(lines):
    """The session's (command, expected output lines)."""
    steps = []
    for line in lines:
        if line.startswith(PROMPT):
            steps.append((line[len(PROMPT):], []))
        else:
            steps[-1][1].append(line)
    return steps


def matches(expected, got):
    if len(expected) != len(got):
        return False
    for want, line in zip(expected, got):
        pattern = ".*".join(re.escape(part) for part in want.split("..."))
        if not re.fullmatch(pattern, line):
            return False
    return True


@pytest.fixture
def fresh_server(request):
    servers = []

    def start(module):
        # A page that loads the module itself needs the MODULE command (Redis 7's default
        # refuses it), as its text says.
        extra = [] if module else ["--enable-module-command", "local"]
        srv = Server("docs", module, extra)
        srv.start()
        servers.append(srv)
        return srv

    yield start
    for srv in servers:
        srv.cleanup()


def test_the_pages_have_examples():
    # A parser that stopped finding them would make every other test here pass vacuously.
    assert len(examples("session")) >= 8
    assert len(examples("python")) >= 3


@pytest.mark.parametrize("lines", examples("session"))
def test_redis_cli_session(lines, fresh_server):
    steps = commands(lines)
    loads_module = steps[0][0].upper().startswith("MODULE LOAD")
    srv = fresh_server(None if loads_module else RSBLOOM_SO)
    for command, expected in steps:
        words = shlex.split(command)
        if words[:2] == ["MODULE", "LOAD"]:
            words[2] = RSBLOOM_SO
        out = subprocess.run(
            ["redis-cli", "--no-raw", "-p", str(srv.port), *words],
            capture_output=True, text=True, timeout=60,
        ).stdout
        got = out.rstrip("\n").split("\n") if out else []
        assert matches(expected, got), f"{command}\nthe page shows:\n" + "\n".join(
            expected) + "\nthe server answered:\n" + "\n".join(got)


@pytest.mark.parametrize("lines", examples("python"))
def test_python_example(lines, fresh_server):
    srv = fresh_server(RSBLOOM_SO)
    code = "\n".join(lines).replace("redis.Redis()", f"redis.Redis(port={srv.port})")
    code = re.sub(r"RedisCluster\([^)]*\)", f"__import__('redis').Redis(port={srv.port})", code)
    exec(compile(code, "<page example>", "exec"), {})


def test_a_reply_that_differs_from_the_page_fails():
    assert matches(["(integer) 1"], ["(integer) 1"])
    assert not matches(["(integer) 1"], ["(integer) 0"])
    assert not matches(["1) (integer) 1"], ["1) (integer) 1", "2) (integer) 0"])
    assert matches(["(integer) 10486..."], ["(integer) 1048672"])
    assert not matches(["(integer) 10486..."], ["(integer) 2048672"])
