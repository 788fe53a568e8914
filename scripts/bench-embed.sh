#!/usr/bin/env bash
# Embedding throughput of shiori's embedders (in the CPU's fastest precision, then in f32) and of
# sentence-transformers' MiniLM on the same passages, back to back in one run. Installs sentence-transformers (with PyPI's torch) into a
# virtualenv under target/ on first use.
set -euo pipefail
cd "$(dirname "$0")/.."
corpus=${1:-../shared/data/msmarco-5k/corpus.jsonl}
limit=${2:-}

cargo build --release -p shiori
target/release/shiori models fetch >/dev/null
model_dir="${SHIORI_HOME:-$HOME/.cache/shiori}/models/all-MiniLM-L6-v2"
venv=target/st-venv
[ -x "$venv/bin/python" ] || { python3 -m venv "$venv" && "$venv/bin/pip" install -q sentence-transformers; }

echo "load: $(cat /proc/loadavg)"
target/release/shiori bench embed "$corpus" ${limit:+--limit "$limit"}
echo "load: $(cat /proc/loadavg)"
target/release/shiori bench embed "$corpus" ${limit:+--limit "$limit"} --precision f32
echo "load: $(cat /proc/loadavg)"
"$venv/bin/python" scripts/bench_embed_st.py "$model_dir" "$corpus" $limit
echo "load: $(cat /proc/loadavg)"
