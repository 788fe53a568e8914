#!/usr/bin/env bash
# The test command (README's second command; .ci/run runs it too): fetches the models the
# end-to-end tests use, then runs every test of the workspace in release mode (the models are
# too slow unoptimised).
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --release -p shiori
target/release/shiori models fetch
cargo test --release --workspace
