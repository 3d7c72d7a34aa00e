#!/usr/bin/env python3
"""A crawler that re-fetches pages once they are older than a window (rsbloom's WINDOW filters,
in the NOREFRESH mode).

Usage: REDIS_URL=redis://127.0.0.1:6379 python examples/crawler_refetch.py [WINDOW_SECONDS] [N]

The question a crawler asks is "did I fetch this URL in the last 7 days?", not "did I ever
fetch it?" nor "did I see it lately?". A window filter in the NOREFRESH mode answers it with one
BF.MADD per batch: 1 means "not fetched within the window: fetch it now" (the add records the
fetch), 0 means "fetched recently: skip it", and meeting the URL again does not push its next
fetch back. Here the window is short (default 2 seconds) and the crawler's frontier meets the
same N URLs every eighth of a window (a "day" of a 7-day window, roughly), for three windows:

1. the first round fetches every URL but a rare false positive;
2. the next rounds, inside the window, fetch none (no false negative inside the window);
3. each URL fetched falls due again one window to one window plus the slack after its fetch,
   and is fetched again then, once, however often it was met in between;
4. the same crawl on a refreshing window (without NOREFRESH) never fetches a URL again.

A false positive is a 0 for a URL never fetched. It comes from the other URLs in the window, so
it recurs while the same URLs are in the window: here, where the same URLs come round in the
same order, a URL held back at its first sight was held back in every later round too (about
one run in seven of 500 URLs at 0.001 has one). The figures of points 2 and 3 are over the URLs
fetched in the first round.

In production: BF.RESERVE crawler:fetched 0.001 50000000 WINDOW 604800 NOREFRESH (7 days),
then the same BF.MADD calls; BF.INFO crawler:fetched WINDOW shows the window, its slack and
the mode.
"""
import os
import sys
import time

import redis

KEY = "crawler:fetched"
BATCH = 500


def due(r, key, urls):
    """The URLs the filter says are due, each added (its fetch recorded)."""
    out = []
    for start in range(0, len(urls), BATCH):
        batch = urls[start:start + BATCH]
        out += [url for url, d in zip(batch, r.execute_command("BF.MADD", key, *batch)) if d]
    return out


def window_info(r, key):
    info = r.execute_command("BF.INFO", key, "WINDOW")
    pairs = info.items() if isinstance(info, dict) else zip(info[::2], info[1::2])
    decode = lambda v: v.decode() if isinstance(v, bytes) else v
    return {decode(k): decode(v) for k, v in pairs}


def crawl(r, key, urls, window, rounds):
    """Meets every URL once a round (a round an eighth of a window apart); returns the
    fetch times of each URL, in seconds from the start."""
    fetches = {url: [] for url in urls}
    start = time.monotonic()
    for n in range(rounds):
        time.sleep(max(0.0, start + n * window / 8 - time.monotonic()))
        now = time.monotonic() - start
        for url in due(r, key, urls):
            fetches[url].append(now)
    return fetches


def main():
    window = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 500
    r = redis.Redis.from_url(os.environ.get("REDIS_URL", "redis://127.0.0.1:6379"))
    refreshing = KEY + ":refreshing"
    r.delete(KEY, refreshing)
    r.execute_command("BF.RESERVE", KEY, 0.001, n, "WINDOW", window, "NOREFRESH")
    r.execute_command("BF.RESERVE", refreshing, 0.001, n, "WINDOW", window)
    info = window_info(r, KEY)
    urls = [f"https://example.com/site{i % 97}/page/{i}" for i in range(n)]
    rounds = 3 * 8 + 1
    fetches = crawl(r, KEY, urls, window, rounds)
    fetched_first = {url: t for url, t in fetches.items() if t and t[0] < window / 8}
    gaps = [b - a for times in fetched_first.values() for a, b in zip(times, times[1:])]
    counts = [len(times) for times in fetched_first.values()]
    kept = crawl(r, refreshing, urls, window, rounds)

    print(f"window_seconds: {window}")
    print(f"slack_seconds: {info['Slack']}")
    print(f"adds: {info['Adds']}")
    print(f"urls: {n}")
    print(f"rounds: {rounds}")
    print(f"first_round_fetched: {len(fetched_first)}")
    print(f"never_fetched: {sum(1 for t in fetches.values() if not t)}")
    print(f"fetches_min: {min(counts)}")
    print(f"fetches_max: {max(counts)}")
    print(f"refetch_gap_min: {min(gaps):.3f}")
    print(f"refetch_gap_max: {max(gaps):.3f}")
    print(f"refreshing_refetched: {sum(1 for t in kept.values() if len(t) > 1)}")
    print(f"filter_memory: {r.memory_usage(KEY, samples=0)}")
    r.delete(KEY, refreshing)


if __name__ == "__main__":
    main()
