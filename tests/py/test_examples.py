"""Run the programs in examples/ as subprocesses against the rsbloom fixture server."""

import os
import re
import subprocess
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def _run(server, script, *args):
    env = dict(os.environ, REDIS_URL=f"redis://127.0.0.1:{server.port}")
    proc = subprocess.run(
        [sys.executable, os.path.join(REPO, "examples", script), *map(str, args)],
        env=env, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    figures = dict(re.findall(r"^\s*([\w ]+?):\s*(\S+)\s*$", proc.stdout, re.M))
    return proc.stdout, figures


def test_crawler_dedup(rsbloom_server):
    out, f = _run(rsbloom_server, "crawler_dedup.py", 5000)
    urls, distinct = int(f["urls"]), int(f["distinct"])
    fetched, skipped, fp = int(f["fetched"]), int(f["skipped"]), int(f["fp_skips"])
    assert urls == 5000
    assert 0.6 * urls < distinct < 0.8 * urls  # ~30% repeats
    assert fetched == distinct - fp
    assert fetched + skipped == urls
    assert fp <= max(5, 0.005 * distinct)  # error rate 0.001
    assert int(f["Capacity"]) == 5000
    assert int(f["Number of items inserted"]) == fetched
    filter_mem, set_mem = int(f["filter_memory"]), int(f["set_memory"])
    assert 0 < filter_mem < set_mem
    assert float(f["ratio"]) > 1
    c = rsbloom_server.client()
    assert c.exists("crawler:set") == 0
    assert c.exists("crawler:seen") == 1
    c.delete("crawler:seen")


def test_cache_guard(rsbloom_server):
    out, f = _run(rsbloom_server, "cache_guard.py", 2000, 1000)
    requests, missing = int(f["requests"]), int(f["missing"])
    lookups, avoided, fp = int(f["lookups"]), int(f["lookups_avoided"]), int(f["false_positives"])
    assert requests == 1000
    assert 0.4 * requests < missing < 0.6 * requests
    assert f["found_with_guard"] == f["found_without_guard"]  # no false negatives
    assert int(f["found_with_guard"]) == requests - missing
    assert lookups + avoided == requests
    assert avoided == missing - fp
    assert fp <= 0.05 * missing  # error rate 0.01
    assert float(f["time_with_guard"]) < float(f["time_without_guard"])


def test_crawler_refetch(rsbloom_server):
    out, f = _run(rsbloom_server, "crawler_refetch.py", 2, 5000)
    n = int(f["urls"])
    assert n == 5000
    # First crawl: all fetched but the rare false positive (error rate 0.001).
    assert int(f["first_fetched"]) >= n - 20
    assert int(f["first_fetched"]) + int(f["first_skipped"]) == n
    # Again at once: inside the window, never a false negative.
    assert int(f["again_fetched"]) == 0
    assert int(f["again_skipped"]) == n
    # After the window and its slack: due again, every one (but false positives).
    assert int(f["later_fetched"]) >= n - 20
    assert int(f["slack_seconds"]) <= 1
    assert n - 20 <= int(f["items_in_window"]) <= n
