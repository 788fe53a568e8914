"""Writes an image-only PDF of N scanned pages (200 dpi, bilevel CCITT G4, as office scanners
write them) for `shiori bench ingest`: each page sets a few paragraphs of a BEIR corpus
(default: ../shared/data/jsquad-valid beside the repository) in IPA Gothic. Usage: render-scanned-pdf.py N OUT.pdf [CORPUS.jsonl]"""

import itertools
import json
import os
import sys

from PIL import Image, ImageDraw, ImageFont

DPI = 200


def pages(count, paragraphs):
    font = ImageFont.truetype("/usr/share/fonts/opentype/ipafont-gothic/ipag.ttf", int(10.5 * DPI / 72))
    width, height, margin = int(8.27 * DPI), int(11.69 * DPI), int(0.8 * DPI)
    step = int(font.size * 1.6)
    source = itertools.cycle(paragraphs)
    for _ in range(count):
        image = Image.new("L", (width, height), 255)
        draw = ImageDraw.Draw(image)
        y = margin
        while y + 6 * step < height - margin:
            line = ""
            for ch in next(source):
                if line and draw.textlength(line + ch, font=font) > width - 2 * margin:
                    draw.text((margin, y), line, font=font, fill=0)
                    y += step
                    line = ch
                else:
                    line += ch
            draw.text((margin, y), line, font=font, fill=0)
            y += 2 * step
        yield image.convert("1")


def main():
    count, out = int(sys.argv[1]), sys.argv[2]
    beside_repo = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared")
    default = os.path.join(beside_repo, "data", "jsquad-valid", "corpus.jsonl")
    corpus = sys.argv[3] if len(sys.argv) > 3 else default
    paragraphs = [json.loads(line)["text"] for line in open(corpus, encoding="utf-8")]
    images = pages(count, paragraphs)
    first = next(images)
    first.save(out, save_all=True, append_images=images, resolution=DPI)


if __name__ == "__main__":
    main()
