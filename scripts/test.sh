#!/usr/bin/env bash
# The test command (README's second command; .ci/run runs it too): installs what the tests need
# (scripts/test-deps.sh), says what this machine offers them, fetches the models the end-to-end
# tests use, then runs every test of the workspace in release mode (the models are too slow
# unoptimised), and closes with the totals over all test binaries.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/test-deps.sh
bash scripts/test-environment.sh

cargo build --release -p shiori
target/release/shiori models fetch
# The tool-call tests need a model that makes tool calls; SmolLM2-135M does not.
target/release/shiori models fetch qwen2.5-coder-0.5b
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
cargo test --release --workspace --no-fail-fast 2>&1 | tee "$log" || status=$?
awk '/^test result:/ { passed += $4; failed += $6 } END { printf "tests: %d passed, %d failed\n", passed, failed }' "$log"
exit "$status"
