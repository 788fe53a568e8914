#!/usr/bin/env bash
# Rewrites crates/shiori/link-order.txt: every function `shiori` runs to answer with a local GGUF
# model (start-up, loading, tokenizing, the prompt pass, generation), recorded with valgrind's
# callgrind on a short `bench generate`. The shiori crate's build script hands the list to the
# linker, which places those functions side by side at the start of the code. The kernel maps
# code 64 KiB around each page a process touches, so scattered functions pull in their
# neighbours; packed together, SmolLM2's `bench generate` peaks 5 MB lower (README).
#
#   bash scripts/link-order.sh     # about 5 minutes; needs valgrind and the SmolLM2 model
#
# C and C++ names (llama.cpp, ggml, the vector kernels) hold from build to build. Rust names end
# in a hash of the compiler version and Cargo.lock: after either changes, only the C and C++
# part still applies until the list is made again.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v valgrind >/dev/null || { echo "link-order.sh needs valgrind" >&2; exit 1; }
cargo build --release -p shiori
profile=$(mktemp)
trap 'rm -f "$profile"' EXIT
# Threads that wait passively: under valgrind, OpenMP's spinning workers take most of the time.
OMP_WAIT_POLICY=passive valgrind --tool=callgrind --demangle=no --dump-instr=no \
    --callgrind-out-file="$profile" \
    target/release/shiori --json bench generate samples/faq/documents.jsonl \
    --runs 1 --prompt-tokens 64 --max-tokens 4 >/dev/null

# The named functions callgrind saw run inside the shiori binary, sorted so the list diffs well.
python3 - "$profile" > crates/shiori/link-order.txt <<'PY'
import re, sys

objects, functions, current, ran = {}, {}, None, set()
for line in open(sys.argv[1], errors="replace"):
    line = line.rstrip("\n")
    if m := re.match(r"^(c?ob)=\((\d+)\)(?: (.*))?$", line):
        kind, number, name = m.groups()
        objects.setdefault(number, name)
        if kind == "ob":
            current = objects[number]
    elif m := re.match(r"^(c?fn)=\((\d+)\)(?: (.*))?$", line):
        kind, number, name = m.groups()
        functions.setdefault(number, name)
        if kind == "fn" and current and current.endswith("/shiori"):
            ran.add(functions[number])
# callgrind tells apart two local functions of one name as NAME'2; the linker places both.
named = sorted({re.sub(r"'\d+$", "", f) for f in ran if f and not f.startswith(("0x", "("))})
sys.stdout.write("".join(f + "\n" for f in named))
PY
wc -l crates/shiori/link-order.txt
