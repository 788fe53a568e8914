#!/usr/bin/env bash
# Load test of `shiori serve`, loopback only and bounded in count: CLIENTS (200) concurrent
# clients send QUERIES (2,000) extractive /api/query requests over samples/faq, once alone and
# once while the upload of a RECORDS-record (3,000) JSONL is indexed. Prints errors, 503s shed
# with Retry-After, p50/p95/p99 latency, answered queries/s and the reindex time, as JSON.
# Usage: bash scripts/bench-serve.sh [CLIENTS] [QUERIES] [RECORDS]
set -euo pipefail
cd "$(dirname "$0")/.."
port=${SHIORI_BENCH_PORT:-18431}

cargo build --release -p shiori
shiori=$PWD/target/release/shiori
"$shiori" models fetch >/dev/null

work=$(mktemp -d)
server_pid=
cleanup() {
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/docs" "$work/.shiori"
cp samples/faq/documents.jsonl "$work/docs/"
printf '[ingest]\nsources = ["docs"]\n' >"$work/.shiori/shiori.toml"

"$shiori" --data-dir "$work/.shiori" serve --addr "127.0.0.1:$port" 2>"$work/server.log" &
server_pid=$!
base="http://127.0.0.1:$port"
for _ in $(seq 1 100); do
    curl -fs "$base/healthz" >/dev/null && break
    sleep 0.2
done
curl -fs -X POST -H "Content-Type: application/json" "$base/api/reindex" >/dev/null
echo "load before: $(cat /proc/loadavg)" >&2
python3 scripts/bench_serve_load.py "$base" "$@"
