#!/usr/bin/env bash
# Shiori's local generation against llama.cpp's own Python binding on the same GGUF files, outside
# CI: alternating runs, a fresh process each (so load time and peak RSS are per run), then the
# median of each figure. Both get the same prompt: `shiori bench generate` fills it with passages
# of samples/faq until it holds about 512 tokens and says how many it took (its one run's prompt
# opens with "Run 1."); 64 greedy tokens; one thread per physical core. llama.cpp gets a
# 4096-token context; Shiori sizes its context to the request, up to its 4096 tokens. Both are
# built for this CPU (GGML_NATIVE; see .cargo/config.toml), and the table ends with the ggml
# kernels each ran, as llama.cpp's system info names them.
#
#   bash scripts/bench-llama-cpp.sh [ROUNDS] [MODEL...]   # default: 3 rounds of smollm2 and
#                                                        # qwen2.5-coder-0.5b (names or .gguf paths)
#   GGML_HOST_CPU=OFF CARGO_TARGET_DIR=target/portable bash scripts/bench-llama-cpp.sh
#       # both built for any x86-64-v3 CPU instead (AVX2/FMA kernels, also on an AVX-512 CPU)
#
# llama-cpp-python is built from source into $LLAMA_VENV (default /tmp/llama-cpp-venv, or
# /tmp/llama-cpp-venv-x86-64-v3) on the first run (several minutes on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${1:-3}
shift || true
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(smollm2 qwen2.5-coder-0.5b)
corpus=samples/faq/documents.jsonl
if [ "${GGML_HOST_CPU:-ON}" = OFF ]; then
    venv=${LLAMA_VENV:-/tmp/llama-cpp-venv-x86-64-v3}
    kernels="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
else
    venv=${LLAMA_VENV:-/tmp/llama-cpp-venv}
    kernels="-DGGML_NATIVE=ON"
fi

if ! "$venv/bin/python" -c "import llama_cpp" 2>/dev/null; then
    python3 -m venv "$venv"
    CMAKE_ARGS="$kernels" "$venv/bin/pip" install -q --no-cache-dir llama-cpp-python==0.3.36
fi
cargo build --release -p shiori
shiori=${CARGO_TARGET_DIR:-target}/release/shiori

# One llama-cpp-python run on the GGUF at $1 with the first $2 passages; prints the same JSON
# fields as `shiori bench generate`.
llama_cpp_run() {
    "$venv/bin/python" - "$1" "$2" "$corpus" <<'PY'
import json, os, resource, sys, time
import llama_cpp
from llama_cpp import Llama

path, passages, corpus = sys.argv[1], int(sys.argv[2]), sys.argv[3]
cores = {line for line in open("/proc/cpuinfo") if line.startswith("core id")}
started = time.perf_counter()
llm = Llama(model_path=path, n_ctx=4096, n_batch=512, n_threads=len(cores) or os.cpu_count(),
            verbose=False)
load = time.perf_counter() - started
texts = [json.loads(line)["text"] for line in open(corpus)][:passages]
context = "".join(f"- {text}\n" for text in texts)
messages = [
    {"role": "system", "content": "Run 1. Answer the question from the passages."},
    {"role": "user",
     "content": f"Passages:\n{context}\nQuestion: What does each passage say? One sentence each, in order."},
]
start = time.perf_counter()
first, pieces = None, 0
for chunk in llm.create_chat_completion(messages=messages, max_tokens=64, temperature=0.0,
                                        stream=True):
    if chunk["choices"][0]["delta"].get("content"):
        first = first or time.perf_counter() - start
        pieces += 1
total = time.perf_counter() - start
# The binding streams one chunk per generated token; the context then holds the prompt and them.
usage = {"prompt_tokens": llm.n_tokens - pieces, "completion_tokens": pieces}
print(json.dumps({
    "load_seconds": load,
    "prompt_tokens": usage["prompt_tokens"],
    "completion_tokens": usage["completion_tokens"],
    "prompt_tokens_per_second": usage["prompt_tokens"] / first,
    "generation_tokens_per_second": (usage["completion_tokens"] - 1) / (total - first),
    "first_token_seconds": first,
    "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e6,
    "kernels": " ".join(item.split("=")[0].split(":")[-1].strip()
                        for item in llama_cpp.llama_print_system_info().decode().split("|")
                        if item.strip().endswith("= 1")),
}))
PY
}

results=$(mktemp)
for model in "${models[@]}"; do
    for round in $(seq "$rounds"); do
        echo "$model: round $round of $rounds" >&2
        # One line per run in the results file: `--json` prints indented JSON.
        shiori_result=$("$shiori" --json bench generate "$corpus" --model "$model" --runs 1 \
            | python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)))')
        echo "{\"engine\": \"shiori\", \"model\": \"$model\", \"result\": $shiori_result}" >>"$results"
        read -r path passages < <(python3 -c 'import json, sys; r = json.loads(sys.argv[1]); print(r["path"], r["passages"])' "$shiori_result")
        echo "{\"engine\": \"llama.cpp\", \"model\": \"$model\", \"result\": $(llama_cpp_run "$path" "$passages")}" >>"$results"
    done
done
python3 - "$results" <<'PY'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
fields = ["prompt_tokens", "completion_tokens", "prompt_tokens_per_second",
          "generation_tokens_per_second", "first_token_seconds", "load_seconds", "peak_rss_mb"]
print("| model | engine | prompt tokens | completion tokens | prompt tok/s | generation tok/s "
      "| first token s | load s | peak RSS MB | runs |")
print("|---|---|---|---|---|---|---|---|---|---|")
for model in dict.fromkeys(row["model"] for row in rows):
    for engine in ("shiori", "llama.cpp"):
        runs = [row["result"] for row in rows if row["model"] == model and row["engine"] == engine]
        medians = [statistics.median(run[field] for run in runs) for field in fields]
        print(f"| {model} | {engine} | " + " | ".join(f"{m:.2f}" for m in medians)
              + f" | {len(runs)} |")
print()
for engine in ("shiori", "llama.cpp"):
    kernels = {row["result"]["kernels"] for row in rows if row["engine"] == engine}
    print(f"{engine}'s ggml kernels: {'; '.join(sorted(kernels))}")
PY
