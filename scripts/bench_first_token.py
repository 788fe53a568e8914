"""Time to first token and total time of one question, streamed through `/api/query` and through
`/v1/chat/completions` (the official openai client), side by side on one running `shiori serve`.

Usage: python3 scripts/bench_first_token.py BASE_URL [RUNS] [QUESTION]
Prints the median and p95 of both, in milliseconds, and their ratio.
"""

import json
import statistics
import sys
import time
import urllib.request

from openai import OpenAI

base_url = sys.argv[1].rstrip("/")
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 30
question = sys.argv[3] if len(sys.argv) > 3 else "What are the API rate limits on the Business plan?"


def api_query():
    request = urllib.request.Request(
        f"{base_url}/api/query",
        data=json.dumps({"question": question}).encode(),
        headers={"Content-Type": "application/json", "Accept": "text/event-stream"},
    )
    started = time.perf_counter()
    first = None
    with urllib.request.urlopen(request) as response:
        for line in response:
            if first is None and line.startswith(b"event: token"):
                first = time.perf_counter()
    return first - started, time.perf_counter() - started


client = OpenAI(base_url=f"{base_url}/v1", api_key="unused", max_retries=0)


def chat_completions():
    started = time.perf_counter()
    first = None
    stream = client.chat.completions.create(
        model="shiori", stream=True, messages=[{"role": "user", "content": question}]
    )
    for chunk in stream:
        if first is None and chunk.choices and chunk.choices[0].delta.content:
            first = time.perf_counter()
    return first - started, time.perf_counter() - started


def measure(run):
    run()  # warm up
    samples = [run() for _ in range(runs)]
    first = sorted(s[0] * 1000 for s in samples)
    total = sorted(s[1] * 1000 for s in samples)
    p95 = lambda xs: xs[min(len(xs) - 1, int(0.95 * len(xs)))]
    return statistics.median(first), p95(first), statistics.median(total), p95(total)


results = {}
for name, run in [("/api/query", api_query), ("/v1/chat/completions", chat_completions)]:
    results[name] = measure(run)
    print("%-22s first token p50 %7.1f ms  p95 %7.1f ms   total p50 %7.1f ms  p95 %7.1f ms" % ((name,) + results[name]))
ratio = results["/v1/chat/completions"][0] / results["/api/query"][0]
print("first-token median ratio /v1 : /api = %.2f" % ratio)
