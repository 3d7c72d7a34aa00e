#!/usr/bin/env python3
"""A crawler that re-fetches pages once they are older than a window (rsbloom's WINDOW filters).

Usage: REDIS_URL=redis://127.0.0.1:6379 python examples/crawler_refetch.py [WINDOW_SECONDS] [N]

The question a crawler asks is "did I fetch this URL in the last 7 days?", not "did I ever
fetch it?". A window filter answers it in fixed memory with one BF.ADD per URL: 1 means "not
fetched within the window: fetch it now" (and the add records the fetch), 0 means "fetched
recently: skip it". Here the window is short (default 2 seconds) so the program shows the
three cases in a few seconds:

1. a first crawl of N URLs: every one is fetched;
2. the same N URLs again at once: every one is skipped (no false negative inside the window);
3. the same N URLs after the window plus its slack: fetched again, as pages due for a refresh.

In production: BF.RESERVE crawler:fetched 0.001 50000000 WINDOW 604800 (7 days), then the same
BF.ADD / BF.MADD calls; BF.INFO crawler:fetched WINDOW shows the window and its slack.
"""
import os
import sys
import time

import redis

KEY = "crawler:fetched"
BATCH = 500


def crawl(r, urls):
    """Asks the filter which URLs are due; returns (fetched, skipped)."""
    fetched = skipped = 0
    for start in range(0, len(urls), BATCH):
        batch = urls[start:start + BATCH]
        for due in r.execute_command("BF.MADD", KEY, *batch):
            if due:
                fetched += 1  # a real crawler fetches the page here
            else:
                skipped += 1
    return fetched, skipped


def window_info(r):
    info = r.execute_command("BF.INFO", KEY, "WINDOW")
    pairs = info.items() if isinstance(info, dict) else zip(info[::2], info[1::2])
    return {(k.decode() if isinstance(k, bytes) else k): v for k, v in pairs}


def main():
    window = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
    r = redis.Redis.from_url(os.environ.get("REDIS_URL", "redis://127.0.0.1:6379"))
    r.delete(KEY)
    r.execute_command("BF.RESERVE", KEY, 0.001, n, "WINDOW", window)
    info = window_info(r)
    slack = int(info["Slack"])
    urls = [f"https://example.com/site{i % 97}/page/{i}" for i in range(n)]

    first = crawl(r, urls)
    again = crawl(r, urls)
    time.sleep(window + slack + 0.5)
    later = crawl(r, urls)

    print(f"window_seconds: {window}")
    print(f"slack_seconds: {slack}")
    print(f"urls: {n}")
    print(f"first_fetched: {first[0]}")
    print(f"first_skipped: {first[1]}")
    print(f"again_fetched: {again[0]}")
    print(f"again_skipped: {again[1]}")
    print(f"later_fetched: {later[0]}")
    print(f"later_skipped: {later[1]}")
    print(f"items_in_window: {r.execute_command('BF.CARD', KEY)}")
    print(f"filter_memory: {r.memory_usage(KEY, samples=0)}")
    r.delete(KEY)


if __name__ == "__main__":
    main()
