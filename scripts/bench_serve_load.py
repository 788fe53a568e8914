"""Load test of a running `shiori serve`, loopback only and bounded: CLIENTS concurrent clients
send QUERIES extractive /api/query requests in all, once alone and once while a reindex of an
uploaded RECORDS-record JSONL runs. A 503 with Retry-After is retried after that pause (as a
well-behaved client would); any other failure counts as an error. Prints one JSON report.

Usage: python3 scripts/bench_serve_load.py BASE_URL [CLIENTS] [QUERIES] [RECORDS]
"""

import http.client
import json
import os
import statistics
import sys
import threading
import time
import urllib.parse

QUESTIONS = [
    "How many API requests per minute does the Business plan allow?",
    "有給休暇は何日もらえますか？",
    "How do I reset my password?",
    "What is the capital of Peru?",
]
# A query still shed after this many pauses counts as given up (reported, not hidden).
MAX_RETRIES = 100


def connection(base):
    parsed = urllib.parse.urlparse(base)
    return http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=120)


def query_phase(base, clients, queries):
    """Runs `queries` queries over `clients` threads; returns latencies and outcome counts."""
    latencies, lock = [], threading.Lock()
    counts = {"ok": 0, "shed_503": 0, "errors": 0, "gave_up": 0}
    next_index = iter(range(queries))

    def client():
        conn = connection(base)
        while True:
            with lock:
                i = next(next_index, None)
            if i is None:
                return
            body = json.dumps({"question": QUESTIONS[i % len(QUESTIONS)], "pipeline": "extractive"})
            for attempt in range(MAX_RETRIES):
                started = time.perf_counter()
                try:
                    conn.request("POST", "/api/query", body, {"Content-Type": "application/json"})
                    response = conn.getresponse()
                    response.read()
                except (OSError, http.client.HTTPException):
                    conn = connection(base)
                    with lock:
                        counts["errors"] += 1
                    break
                elapsed = time.perf_counter() - started
                if response.status == 503 and response.getheader("Retry-After"):
                    with lock:
                        counts["shed_503"] += 1
                        if attempt == MAX_RETRIES - 1:
                            counts["gave_up"] += 1
                    time.sleep(float(response.getheader("Retry-After")))
                    continue
                with lock:
                    if response.status == 200:
                        counts["ok"] += 1
                        latencies.append(elapsed)
                    else:
                        counts["errors"] += 1
                break

    started = time.perf_counter()
    threads = [threading.Thread(target=client) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    latencies.sort()
    pick = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000 if latencies else None
    return {
        **counts,
        "wall_s": round(wall, 2),
        "answered_per_s": round(counts["ok"] / wall, 1),
        "p50_ms": pick(0.50),
        "p95_ms": pick(0.95),
        "p99_ms": pick(0.99),
        "mean_ms": statistics.fmean(latencies) * 1000 if latencies else None,
        "load_after": os.getloadavg(),
    }


def upload(base, records):
    """Uploads a RECORDS-record JSONL of fresh text (the embedding cache cannot skip it) and
    returns the status, seconds taken and the server's report."""
    nonce = time.time_ns()
    lines = [
        json.dumps({"doc_id": f"load-{nonce}-{i}",
                    "text": f"Rule {i} of handbook {nonce}: team {i % 37} books room {i * 7 % 101} "
                            f"on weekday {i % 5} to review backlog item {i * 13}."})
        for i in range(records)
    ]
    boundary = f"shiori-{nonce}"
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; "
            f"filename=\"load-{nonce}.jsonl\"\r\nContent-Type: application/json\r\n\r\n"
            + "\n".join(lines) + f"\r\n--{boundary}--\r\n").encode()
    conn = connection(base)
    conn.timeout = 1800
    started = time.perf_counter()
    conn.request("POST", "/api/documents", body,
                 {"Content-Type": f"multipart/form-data; boundary={boundary}", "X-Shiori-Request": "1"})
    response = conn.getresponse()
    report = json.loads(response.read() or b"{}")
    return response.status, time.perf_counter() - started, report


def main():
    base = sys.argv[1]
    clients, queries, records = [int(a) for a in sys.argv[2:5]] + [200, 2000, 3000][len(sys.argv[2:5]):]
    alone = query_phase(base, clients, queries)
    outcome = {}
    uploader = threading.Thread(target=lambda: outcome.update(zip(("status", "seconds", "report"), upload(base, records))))
    uploader.start()
    time.sleep(1.0)
    during = query_phase(base, clients, queries)
    uploader.join()
    report = outcome.get("report", {}).get("report", {})
    print(json.dumps({
        "clients": clients,
        "queries": queries,
        "alone": alone,
        "during_reindex": during,
        "reindex": {"status": outcome.get("status"), "seconds": round(outcome.get("seconds", 0), 1),
                    "records": records, "chunks_added": report.get("chunks_added"),
                    "overlapped_the_whole_phase": outcome.get("seconds", 0) > during["wall_s"]},
        "p95_ratio": round(during["p95_ms"] / alone["p95_ms"], 2) if alone["p95_ms"] and during["p95_ms"] else None,
    }, indent=2))


if __name__ == "__main__":
    main()
