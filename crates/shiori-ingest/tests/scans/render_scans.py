"""Renders the OCR tests' scans: Japanese and English paragraphs set in real fonts at 200-300 dpi,
saved as PNG, JPEG, WebP, multi-page TIFF and image-only PDFs (JPEG and CCITT G4 images), one
turned 90 degrees, one in vertical Japanese, one grey, speckled and skewed, plus broken and
oversized images. Writes the files and manifest.json (each file's source text and the character
accuracy it must reach) into the folder given as the only argument.

Needs Pillow (with Raqm for vertical text) and the IPA Gothic and Mincho and DejaVu fonts."""

import json
import random
import sys
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont, features

GOTHIC = "/usr/share/fonts/opentype/ipafont-gothic/ipag.ttf"
MINCHO = "/usr/share/fonts/opentype/ipafont-mincho/ipam.ttf"
SERIF = "/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf"
SANS = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"

JA_RAIN = (
    "梅雨は、北海道と小笠原諸島を除く日本、朝鮮半島南部、中国の長江流域などでみられる気象現象で、"
    "五月から七月にかけて曇りや雨の多い期間が続く。梅雨の始まりを梅雨入り、終わりを梅雨明けといい、"
    "気象庁は毎年その時期を発表している。"
)
JA_OFFICE = (
    "東京本社の第3四半期の売上高は前年同期比で12%増加し、大阪支社は横ばいでした。"
    "新しい在庫管理システムは来年4月に全社へ導入される予定です。"
    "導入後は発注から納品までの日数を平均で二日短縮できる見込みです。"
)
JA_TEMPLE = (
    "法隆寺は奈良県生駒郡斑鳩町にある寺院で、現存する世界最古の木造建築群として知られている。"
    "西院伽藍の金堂と五重塔は飛鳥時代の様式を伝え、一九九三年に世界文化遺産に登録された。"
)
# Vertical text is set with kanji numerals, as vertical Japanese is; Latin letters and digits in
# a column are turned sideways, which Tesseract's vertical model reads poorly.
JA_VERTICAL = (
    "東京本社の第三四半期の売上高は前年同期比で一割増加し、大阪支社は横ばいでした。"
    "新しい在庫管理システムは来年四月に全社へ導入される予定です。"
    "導入後は発注から納品までの日数を平均で二日短縮できる見込みです。"
)
EN_REPORT = (
    "The quarterly report shows that revenue grew by twelve percent in the third quarter, "
    "driven by strong demand for the new storage product line. Operating costs stayed flat, "
    "and the board approved a dividend of forty cents per share."
)
EN_POLICY = (
    "Employees may work from home up to three days a week. Requests for more remote days "
    "must be approved by a manager in writing, and equipment for the home office is "
    "reimbursed up to 500 dollars per year."
)

CLEAN = 0.97
HARD = 0.90


def page(text, dpi, font_path, vertical=False, points=11):
    """An A4 page at `dpi` with `text` wrapped into lines (or columns) within 2 cm margins."""
    width, height = int(8.27 * dpi), int(11.69 * dpi)
    image = Image.new("L", (width, height), 255)
    draw = ImageDraw.Draw(image)
    size = int(points * dpi / 72)
    font = ImageFont.truetype(font_path, size)
    margin = int(dpi * 0.8)
    if vertical:
        per_column = (height - 2 * margin) // size
        x = width - margin - size
        for start in range(0, len(text), per_column):
            column = text[start : start + per_column]
            draw.text((x, margin), column, font=font, fill=0, direction="ttb", features=["vert"])
            x -= int(size * 1.7)
        return image
    y = margin
    for line in wrap(text, draw, font, width - 2 * margin):
        draw.text((margin, y), line, font=font, fill=0)
        y += int(size * 1.6)
    return image


def wrap(text, draw, font, width):
    """Lines that fit `width`: Japanese breaks between any two characters, English at spaces."""
    japanese = " " not in text
    pieces = list(text) if japanese else text.split(" ")
    lines, current = [], ""
    for piece in pieces:
        candidate = current + piece if japanese or not current else current + " " + piece
        if current and draw.textlength(candidate, font=font) > width:
            lines.append(current)
            current = piece
        else:
            current = candidate
    lines.append(current)
    return lines


def degraded(image, seed):
    """A grey, low-contrast, speckled copy turned 1.5 degrees: a poor photocopy."""
    random.seed(seed)
    skewed = image.rotate(1.5, fillcolor=255, resample=Image.BICUBIC)
    faded = skewed.point(lambda v: 90 + v * 0.45)
    noise = Image.effect_noise(image.size, 40)
    return Image.blend(faded, noise, 0.25)


def main(out):
    if not features.check("raqm"):
        sys.exit("Pillow has no Raqm support, needed to set vertical Japanese")
    out.mkdir(parents=True, exist_ok=True)
    manifest = []

    def add(name, pages, threshold, kind):
        manifest.append({"file": name, "pages": pages, "threshold": threshold, "kind": kind})

    ja_300 = page(JA_RAIN, 300, GOTHIC)
    ja_300.save(out / "ja-300.png", dpi=(300, 300))
    add("ja-300.png", [JA_RAIN], CLEAN, "clean")

    en_200 = page(EN_REPORT, 200, SERIF)
    en_200.save(out / "en-200.png", dpi=(200, 200))
    add("en-200.png", [EN_REPORT], CLEAN, "clean")

    # Image-only PDFs: grey pages become JPEG (DCTDecode), bilevel ones CCITT G4 streams.
    ja_200 = page(JA_OFFICE, 200, MINCHO)
    en_300_bilevel = page(EN_POLICY, 300, SANS).convert("1")
    ja_200.save(out / "scan.pdf", save_all=True, append_images=[en_300_bilevel], resolution=200)
    add("scan.pdf", [JA_OFFICE, EN_POLICY], CLEAN, "clean")

    page(EN_POLICY, 300, SERIF).convert("RGB").save(out / "photo.jpg", dpi=(300, 300), quality=90)
    add("photo.jpg", [EN_POLICY], CLEAN, "clean")

    page(JA_TEMPLE, 250, GOTHIC).save(out / "temple.webp", lossless=True)
    add("temple.webp", [JA_TEMPLE], CLEAN, "clean")

    tiff_pages = [page(JA_TEMPLE, 300, MINCHO), page(EN_REPORT, 300, SANS)]
    tiff_pages[0].save(
        out / "pages.tif", save_all=True, append_images=tiff_pages[1:], compression="tiff_lzw", dpi=(300, 300)
    )
    add("pages.tif", [JA_TEMPLE, EN_REPORT], CLEAN, "clean")

    # Pillow turns counter-clockwise: the scan lies on its side.
    ja_300.rotate(90, expand=True).save(out / "ja-rotated.png", dpi=(300, 300))
    add("ja-rotated.png", [JA_RAIN], HARD, "rotated")

    en_rotated = page(EN_REPORT, 300, SERIF).rotate(270, expand=True)
    en_rotated.save(out / "en-rotated.pdf", resolution=300)
    add("en-rotated.pdf", [EN_REPORT], HARD, "rotated")

    page(JA_VERTICAL, 300, MINCHO, vertical=True).save(out / "ja-vertical.png", dpi=(300, 300))
    add("ja-vertical.png", [JA_VERTICAL], CLEAN, "vertical")

    degraded(ja_300, 1).save(out / "ja-noisy.png", dpi=(300, 300))
    add("ja-noisy.png", [JA_RAIN], HARD, "noisy")

    degraded(page(EN_REPORT, 300, SERIF), 2).save(out / "en-noisy.pdf", resolution=300)
    add("en-noisy.pdf", [EN_REPORT], HARD, "noisy")

    # Broken and oversized input.
    whole = (out / "ja-300.png").read_bytes()
    (out / "truncated.png").write_bytes(whole[: len(whole) // 3])
    Image.new("1", (20000, 20000), 1).save(out / "huge.png")

    (out / "manifest.json").write_text(json.dumps(manifest, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: render_scans.py OUT_DIR")
    main(Path(sys.argv[1]))
