#!/usr/bin/env bash
# Retrieval on OCR'd text against the same text typed: the first N (200) paragraphs of a BEIR
# corpus (default ../shared/data/jsquad-valid) and their questions are set as 200-dpi scans
# (Pillow, IPA Gothic), read back by Shiori's image loader, and both copies are evaluated with
# `shiori eval` (MODE: bm25, dense or hybrid). Prints both nDCG@10 and their difference.
# Usage: scripts/ocr-retrieval-check.sh [DATASET] [N] [MODE]
set -euo pipefail
cd "$(dirname "$0")/.."
dataset=${1:-../shared/data/jsquad-valid}
count=${2:-200}
mode=${3:-bm25}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 - "$dataset" "$count" "$work" <<'PY'
import json, sys
from pathlib import Path
from PIL import Image, ImageDraw, ImageFont

dataset, count, work = Path(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
records = [json.loads(line) for line in open(dataset / "corpus.jsonl", encoding="utf-8")][:count]
ids = {record["_id"] for record in records}
for copy in ("text", "ocr"):
    (work / copy / "qrels").mkdir(parents=True)
qrels = [line for line in open(dataset / "qrels" / "test.tsv", encoding="utf-8")]
kept = [row for row in qrels[1:] if row.split("\t")[1] in ids]
questions = {row.split("\t")[0] for row in kept}
queries = [line for line in open(dataset / "queries.jsonl", encoding="utf-8")
           if json.loads(line)["_id"] in questions]
for copy in ("text", "ocr"):
    (work / copy / "qrels" / "test.tsv").write_text(qrels[0] + "".join(kept), encoding="utf-8")
    (work / copy / "queries.jsonl").write_text("".join(queries), encoding="utf-8")
(work / "text" / "corpus.jsonl").write_text(
    "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")

dpi, margin = 200, 160
font = ImageFont.truetype("/usr/share/fonts/opentype/ipafont-gothic/ipag.ttf", int(11 * dpi / 72))
(work / "scans").mkdir()
for n, record in enumerate(records):
    width = int(8.27 * dpi)
    probe = ImageDraw.Draw(Image.new("L", (1, 1)))
    lines, current = [], ""
    for ch in record["text"]:
        if current and probe.textlength(current + ch, font=font) > width - 2 * margin:
            lines.append(current)
            current = ch
        else:
            current += ch
    lines.append(current)
    step = int(font.size * 1.6)
    image = Image.new("L", (width, max(int(11.69 * dpi), 2 * margin + step * len(lines))), 255)
    draw = ImageDraw.Draw(image)
    for i, line in enumerate(lines):
        draw.text((margin, margin + i * step), line, font=font, fill=0)
    image.save(work / "scans" / f"{n}.png", dpi=(dpi, dpi))
print(f"{len(records)} paragraphs, {len(queries)} questions rendered", file=sys.stderr)
PY

started=$(date +%s.%N)
cargo run -q --release -p shiori-ingest --example ocr_corpus -- \
    "$work/text/corpus.jsonl" "$work/scans" "$work/ocr/corpus.jsonl"
awk -v s="$started" -v e="$(date +%s.%N)" -v n="$count" \
    'BEGIN { printf "OCR: %d scans in %.1f s (%.2f pages/s)\n", n, e - s, n / (e - s) }'

shiori=target/release/shiori
ndcg() {
    "$shiori" --data-dir "$work/$1/.shiori" init >/dev/null
    "$shiori" --data-dir "$work/$1/.shiori" --json eval "$work/$1" --mode "$mode" \
        | python3 -c '
import json, sys
def ndcg(node):
    if isinstance(node, dict):
        if "ndcg@10" in node:
            return node["ndcg@10"]
        return next((v for v in map(ndcg, node.values()) if v is not None), None)
    return None
print(ndcg(json.load(sys.stdin)))'
}
text=$(ndcg text)
ocr=$(ndcg ocr)
python3 -c "t, o = $text, $ocr; print(f'nDCG@10 ($mode): text {t:.4f}, OCR {o:.4f}, difference {t - o:+.4f}')"
