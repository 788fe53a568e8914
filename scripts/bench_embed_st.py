"""sentence-transformers throughput on the same passages `shiori bench embed` uses.

Usage: python3 scripts/bench_embed_st.py MODEL_DIR CORPUS.jsonl [LIMIT]
MODEL_DIR is the all-MiniLM-L6-v2 folder `shiori models fetch` installed
($SHIORI_HOME/models/all-MiniLM-L6-v2). Needs `pip install sentence-transformers`.
"""
import json
import sys
import time

from sentence_transformers import SentenceTransformer

model_dir, corpus = sys.argv[1], sys.argv[2]
limit = int(sys.argv[3]) if len(sys.argv) > 3 else None
texts = [json.loads(line)["text"] for line in open(corpus, encoding="utf-8") if line.strip()][:limit]
model = SentenceTransformer(model_dir, device="cpu")
model.encode(texts[:32], batch_size=32)  # warm-up, as shiori bench embed does
started = time.perf_counter()
model.encode(texts, batch_size=32)
seconds = time.perf_counter() - started
print(f"sentence-transformers: {len(texts)} passages in {seconds:.2f} s = {len(texts) / seconds:.1f} passages/s")
