#!/usr/bin/env bash
# Objects per second indexed from S3 on this machine: N passages of a BEIR corpus (default: the
# first 1,000 of jsquad-valid) put into a bucket of moto's S3 server as Markdown files, then
# `shiori index` of a project on the bucket, timed; then a second run with nothing changed, and
# a third after one object changed. Prints the sync and whole-run rates of each.
# With LISTING_ONLY=1, the N objects are small files of a format Shiori does not read, so a run
# lists and checks N objects and downloads none: the time and peak memory of a large listing.
# Usage: [LISTING_ONLY=1] scripts/bench-s3.sh [N] [CORPUS_DIR] [SHIORI_BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-1000}
corpus=${2:-../shared/data/jsquad-valid}
shiori=${3:-target/release/shiori}
work=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 -m moto.server -H 127.0.0.1 -p "$port" >"$work/moto.log" 2>&1 &
moto=$!
trap 'kill $moto 2>/dev/null; rm -rf "$work"' EXIT
until python3 -c "import socket; socket.create_connection(('127.0.0.1',$port))" 2>/dev/null; do sleep 0.2; done
export AWS_ENDPOINT_URL=http://127.0.0.1:$port AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench AWS_REGION=us-east-1

python3 - "$corpus/corpus.jsonl" "$count" "${LISTING_ONLY:-0}" <<'PY'
import boto3, json, sys
from concurrent.futures import ThreadPoolExecutor
s3 = boto3.client("s3")
s3.create_bucket(Bucket="bench")
def passages(path, count):
    with open(path, encoding="utf-8") as corpus:
        for line, _ in zip(corpus, range(count)):
            record = json.loads(line)
            yield record["_id"].replace("/", "_"), f"# {record.get('title', '')}\n\n{record['text']}\n"
count = int(sys.argv[2])
if sys.argv[3] == "1":
    docs = [(f"{i:06d}", "x") for i in range(count)]
else:
    docs = list(passages(sys.argv[1], count))
suffix = ".dat" if sys.argv[3] == "1" else ".md"
with ThreadPoolExecutor(8) as pool:
    list(pool.map(lambda d: s3.put_object(Bucket="bench", Key=f"docs/{d[0]}{suffix}", Body=d[1].encode()), docs))
print(f"put {len(docs)} objects", file=sys.stderr)
PY

data="$work/.shiori"
"$shiori" --data-dir "$data" init >/dev/null
printf '[projects.bench]\npaths = ["s3://bench/docs/"]\n' >>"$data/shiori.toml"
cat >"$work/report.py" <<'PY'
import json, sys
report = json.load(sys.stdin)
source = report["sources"][0]
listed = source["fetched"] + source["unchanged"]
sync_s = source["elapsed_ms"] / 1000
run_s = report["elapsed_ms"] / 1000
print(f"{sys.argv[1]}: {source['fetched']} fetched, {source['unchanged']} unchanged, "
      f"sync {sync_s:.2f} s ({listed / sync_s:.0f} objects/s); whole run {run_s:.2f} s, "
      f"{report['files_indexed']} indexed ({listed / run_s:.0f} objects/s); "
      f"chunks embedded {report['chunks_embedded']}, from the cache {report['chunks_cached']}")
PY
report() { python3 "$work/report.py" "$1"; }
if [ "${LISTING_ONLY:-0}" = 1 ]; then
    for run in first second; do
        /usr/bin/time -f "$run listing of $count objects: %e s, peak memory %M KB" \
            "$shiori" --data-dir "$data" --json index >/dev/null
    done
    exit 0
fi
"$shiori" --data-dir "$data" --json index | report "first index"
"$shiori" --data-dir "$data" --json index | report "nothing changed"
python3 -c 'import boto3; boto3.client("s3").put_object(Bucket="bench", Key="docs/changed.md", Body=b"# changed\n\nOne new object.")'
"$shiori" --data-dir "$data" --json index | report "one object added"
