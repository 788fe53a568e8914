#!/usr/bin/env bash
# Embedding throughput of shiori's embedders in every precision this CPU runs (f32, bf16, int8,
# taking turns) and of the tools a user would otherwise pick on the same MiniLM passages and
# threads: ONNX Runtime's dynamically quantised int8 model and sentence-transformers on PyTorch,
# back to back in one run. Installs sentence-transformers with its ONNX extra (PyPI's torch,
# optimum, onnxruntime) into a virtualenv under target/ on first use.
#   bash scripts/bench-embed.sh [CORPUS.jsonl] [LIMIT]
set -euo pipefail
cd "$(dirname "$0")/.."
corpus=${1:-../shared/data/msmarco-5k/corpus.jsonl}
limit=${2:-}
threads=$(nproc)

cargo build --release -p shiori
target/release/shiori models fetch >/dev/null
model_dir="${SHIORI_HOME:-$HOME/.cache/shiori}/models/all-MiniLM-L6-v2"
venv=target/st-venv
"$venv/bin/python" -c 'import optimum.onnxruntime, sentence_transformers' 2>/dev/null \
    || { python3 -m venv "$venv" && "$venv/bin/pip" install -q "sentence-transformers[onnx]"; }

echo "cpu: $(grep -o -w -E 'avx2|fma|avx512f|avx512bw|avx512_bf16|avx512_vnni|avx_vnni' /proc/cpuinfo | sort -u | tr '\n' ' ')"
echo "load: $(cat /proc/loadavg)"
RAYON_NUM_THREADS=$threads target/release/shiori bench embed "$corpus" ${limit:+--limit "$limit"}
echo "load: $(cat /proc/loadavg)"
"$venv/bin/python" scripts/bench_embed_onnx.py "$model_dir" "$corpus" $limit --threads "$threads"
echo "load: $(cat /proc/loadavg)"
OMP_NUM_THREADS=$threads "$venv/bin/python" scripts/bench_embed_st.py "$model_dir" "$corpus" $limit
echo "load: $(cat /proc/loadavg)"
