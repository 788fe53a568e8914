#!/usr/bin/env bash
# Load benchmark of `shiori serve`, loopback only and bounded in time: 200 concurrent extractive
# /api/query requests (wrk, keep-alive connections) over samples/faq for DURATION seconds, while
# a reindex of a changed source runs. Prints p50/p95/p99 latency, requests/s, the error count
# and how the reindex went. Usage: bash scripts/bench-serve.sh [DURATION_SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-20}
connections=200
port=${SHIORI_BENCH_PORT:-18431}

command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }
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

mkdir -p "$work/docs"
cp samples/faq/documents.jsonl "$work/docs/"
mkdir -p "$work/.shiori"
printf '[ingest]\nsources = ["docs"]\n' >"$work/.shiori/shiori.toml"

"$shiori" --data-dir "$work/.shiori" serve --addr "127.0.0.1:$port" 2>"$work/server.log" &
server_pid=$!
base="http://127.0.0.1:$port"
for _ in $(seq 1 100); do
    curl -fs "$base/healthz" >/dev/null && break
    sleep 0.2
done
curl -fs -X POST -H "Content-Type: application/json" "$base/api/reindex" >/dev/null
echo "indexed samples/faq: $(curl -fs "$base/api/stats" | python3 -c 'import json,sys; s=json.load(sys.stdin); print(s["documents"], "documents,", s["chunks"], "chunks")')"

# A changed source, fresh text so the embedding cache cannot skip it: the reindex really works.
python3 - "$work/docs/handbook.md" <<'PY'
import sys, time
nonce = time.time_ns()
with open(sys.argv[1], "w") as f:
    f.write("# Handbook\n\n")
    for i in range(1500):
        f.write(f"Rule {i} of handbook {nonce}: team {i % 37} books room {i * 7 % 101} "
                f"on weekday {i % 5} to review backlog item {i * 13}.\n\n")
PY

echo "load before: $(cat /proc/loadavg)"
wrk -t2 -c"$connections" -d"${duration}s" --timeout 30s -s scripts/bench-serve.lua "$base" \
    >"$work/wrk.out" &
wrk_pid=$!
sleep 2
reindex_started=$EPOCHREALTIME
reindex_status=$(curl -s -o "$work/reindex.json" -w '%{http_code}' -X POST -H "Content-Type: application/json" "$base/api/reindex")
reindex_ended=$EPOCHREALTIME
wait "$wrk_pid"
echo "load after: $(cat /proc/loadavg)"

echo "== $connections concurrent extractive /api/query for ${duration} s, reindex running from t=2 s"
grep -E '^(requests|latency|errors):' "$work/wrk.out"
python3 - "$work/reindex.json" "$reindex_status" "$reindex_started" "$reindex_ended" <<'PY'
import json, sys
body, status = json.load(open(sys.argv[1])), sys.argv[2]
seconds = float(sys.argv[4]) - float(sys.argv[3])
report = body.get("report", {})
print(f"reindex: HTTP {status} in {seconds:.1f} s, {report.get('files_indexed')} file(s) indexed, "
      f"{report.get('chunks_embedded')} chunk(s) embedded" if status == "200" else f"reindex: HTTP {status}: {body}")
PY
if grep -q 'errors: 0 ' "$work/wrk.out" && [ "$reindex_status" = 200 ]; then
    echo "zero errors"
else
    echo "FAILED: errors during the run" >&2
    exit 1
fi
