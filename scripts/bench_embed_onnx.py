"""ONNX Runtime int8 throughput on the same passages `shiori bench embed` uses (issue 50's baseline).

Usage: python3 scripts/bench_embed_onnx.py MODEL_DIR CORPUS.jsonl [LIMIT] [--threads N] [--agreement]
MODEL_DIR is the all-MiniLM-L6-v2 folder `shiori models fetch` installed
($SHIORI_HOME/models/all-MiniLM-L6-v2). It is copied once to $SHIORI_ONNX_CACHE (default
~/.cache/shiori-bench-onnx/<name>), where sentence-transformers exports it to ONNX and quantises it
dynamically to int8 for this CPU; later runs reuse the quantised file. --threads (default: every
core) pins ONNX Runtime's intra-op pool, and the tokenizer's and torch's pools, to N threads.
--agreement also embeds with sentence-transformers' torch f32 model and prints the mean and least
cosine between the two. Needs `pip install "sentence-transformers[onnx]"`.
"""
import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

parser = argparse.ArgumentParser()
parser.add_argument("model_dir", type=Path)
parser.add_argument("corpus")
parser.add_argument("limit", type=int, nargs="?")
parser.add_argument("--threads", type=int, default=os.cpu_count())
parser.add_argument("--agreement", action="store_true")
args = parser.parse_args()

# Set before the imports: the Rust tokenizer sizes its rayon pool, and torch its OpenMP pool, on load.
os.environ["RAYON_NUM_THREADS"] = str(args.threads)
os.environ["OMP_NUM_THREADS"] = str(args.threads)
os.environ.setdefault("HF_HUB_OFFLINE", "1")

try:
    import onnxruntime as ort
    import optimum.onnxruntime  # noqa: F401  (the ONNX backend and the quantiser live here)
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.backend import export_dynamic_quantized_onnx_model
except ImportError as e:
    sys.exit(f'bench_embed_onnx: {e}; install with: pip install "sentence-transformers[onnx]"')

torch.set_num_threads(args.threads)

flags = next((line.split() for line in open("/proc/cpuinfo") if line.startswith("flags")), [])
config = "avx512_vnni" if "avx512_vnni" in flags else "avx2"
file_name = f"onnx/model_qint8_{config}.onnx"

# Never write into shiori's model folder: export into a copy of it.
cache = Path(os.environ.get("SHIORI_ONNX_CACHE", Path.home() / ".cache/shiori-bench-onnx"))
work_dir = cache / args.model_dir.resolve().name
if not (work_dir / file_name).exists():
    if not work_dir.exists():
        shutil.copytree(args.model_dir, work_dir)
    f32 = SentenceTransformer(str(work_dir), backend="onnx", device="cpu")
    export_dynamic_quantized_onnx_model(f32, quantization_config=config, model_name_or_path=str(work_dir))
    del f32
    if not (work_dir / file_name).exists():
        sys.exit(f"bench_embed_onnx: quantisation did not write {work_dir / file_name}")

options = ort.SessionOptions()
options.intra_op_num_threads = args.threads
options.inter_op_num_threads = 1
model = SentenceTransformer(
    str(work_dir),
    backend="onnx",
    device="cpu",
    model_kwargs={"file_name": file_name, "provider": "CPUExecutionProvider", "session_options": options},
)

records = (json.loads(line) for line in open(args.corpus, encoding="utf-8") if line.strip())
texts = [r["text"] for r in records if isinstance(r.get("text"), str)][: args.limit]
model.encode(texts[:32], batch_size=32)  # warm-up, as shiori bench embed does
started = time.perf_counter()
vectors = model.encode(texts, batch_size=32, normalize_embeddings=True)
seconds = time.perf_counter() - started
print(
    f"onnxruntime int8 ({config}, {args.threads} threads): "
    f"{len(texts)} passages in {seconds:.2f} s = {len(texts) / seconds:.1f} passages/s"
)

if args.agreement:
    reference = SentenceTransformer(str(args.model_dir), device="cpu").encode(
        texts, batch_size=32, normalize_embeddings=True
    )
    cosines = (vectors * reference).sum(axis=1)
    print(f"cosine to torch f32: mean {cosines.mean():.4f}, least {cosines.min():.4f}")
