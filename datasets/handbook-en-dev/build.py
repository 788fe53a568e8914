#!/usr/bin/env python3
"""Rebuild docs/ of the handbook-en-dev evaluation set from the source repositories.

Usage:
    python3 build.py TTS_HANDBOOK_DIR GUIDES_DIR

TTS_HANDBOOK_DIR: a checkout of https://github.com/GSA-TTS/handbook
                  at commit 3582076f065e698bd34c49149622297d017f1e61
GUIDES_DIR:       a checkout of https://github.com/18F/guides
                  at commit debc24b34f23686194d9fe42e391859d569bd39a

Needs: pandoc, chromium (headless, for PDF), python openpyxl.
Both sources are US-government works in the public domain (CC0 worldwide).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

from openpyxl import Workbook
from openpyxl.styles import Font

HERE = os.path.dirname(os.path.abspath(__file__))
DOCS = os.path.join(HERE, "docs")

# (prefix under docs/, source subfolder, list of included top-level folders or None = all)
TTS_PREFIX = "tts-handbook/pages"
GUIDES_PREFIX = "18f-guides/content"
GUIDE_SECTIONS = ["eng-hiring", "engineering", "content-guide", "product", "agile", "brand"]

T = TTS_PREFIX + "/"
G = GUIDES_PREFIX + "/"

TO_PDF = [
    T + "getting-started/classes/benefits.md",
    T + "travel-and-leave/paid-parental-leave.md",
    T + "travel-and-leave/fmla.md",
    T + "18f/how-18f-works/one-on-ones.md",
    T + "travel-and-leave/voluntary-leave-transfer-program.md",
    T + "getting-started/equipment.md",
    T + "travel-and-leave/travel-and-leave-policies/moving.md",
    T + "hiring-staying-or-changing-jobs/leaving-tts.md",
    T + "hiring-staying-or-changing-jobs/promotions.md",
    T + "general-information-and-resources/tech-policies/password-requirements.md",
    T + "general-information-and-resources/tech-policies/security-incidents.md",
    T + "training-and-development/conferences-events-training.md",
    T + "general-information-and-resources/employee-resources-policies/transit-benefit.md",
    G + "eng-hiring/interviews.md",
    G + "engineering/our-approach/code-review.md",
]
TO_DOCX = [
    T + "travel-and-leave/advanced-sick-leave.md",
    T + "hiring-staying-or-changing-jobs/term-extensions.md",
    T + "general-information-and-resources/employee-resources-policies/employment-verification.md",
    T + "general-information-and-resources/employee-resources-policies/hosting-non-government-speakers.md",
    T + "general-information-and-resources/purchase-requests.md",
    T + "training-and-development/olu.md",
    T + "training-and-development/details-professional-development.md",
    T + "travel-and-leave/travel-and-leave-policies/unofficial-foreign-travel.md",
    T + "18f/how-18f-works/changing-your-name.md",
    G + "content-guide/our-style/numbers-and-percentages.md",
]
TO_HTML = [
    T + "getting-started/piv.md",
    T + "getting-started/welcome-letter.md",
    T + "general-information-and-resources/tech-policies/bug-bounty.md",
    T + "general-information-and-resources/chicago.md",
    T + "general-information-and-resources/new-york-city.md",
    T + "general-information-and-resources/san-francisco.md",
    T + "general-information-and-resources/washington-dc.md",
    T + "travel-and-leave/going-out-of-office.md",
    T + "travel-and-leave/travel-and-leave-policies/working-while-traveling.md",
    T + "travel-and-leave/travel-and-leave-policies/first-time-travel-travel-card.md",
    T + "travel-and-leave/travel-and-leave-policies/travel-guide-4-reimbursement.md",
    T + "tools/zoom.md",
    T + "tools/google-meet.md",
    T + "tools/slack/guidelines.md",
    T + "general-information-and-resources/software.md",
    T + "about-us/code-of-conduct.md",
    G + "eng-hiring/phone-screens.md",
    G + "eng-hiring/debrief.md",
    G + "engineering/our-approach/on-call.md",
    G + "brand/color-palette.md",
]
TO_XLSX = [
    T + "general-information-and-resources/general-contacts.md",
    T + "general-information-and-resources/employee-resources-policies/work-schedules.md",
    T + "performance-management/dates.md",
    T + "general-information-and-resources/employee-resources-policies/benefits-links.md",
    T + "training-and-development/idp.md",
]

TEXT_EXT = (".md", ".html")


def copy_sources(tts_dir, guides_dir):
    if os.path.exists(DOCS):
        shutil.rmtree(DOCS)
    pairs = []
    src = os.path.join(tts_dir, "pages")
    for root, _, files in os.walk(src):
        for f in files:
            if f.endswith(TEXT_EXT):
                rel = os.path.relpath(os.path.join(root, f), src)
                pairs.append((os.path.join(root, f), os.path.join(TTS_PREFIX, rel)))
    for sec in GUIDE_SECTIONS:
        src = os.path.join(guides_dir, "content", sec)
        for root, _, files in os.walk(src):
            for f in files:
                if f.endswith(TEXT_EXT):
                    rel = os.path.relpath(os.path.join(root, f), os.path.join(guides_dir, "content"))
                    pairs.append((os.path.join(root, f), os.path.join(GUIDES_PREFIX, rel)))
    for s, rel in sorted(pairs, key=lambda p: p[1]):
        d = os.path.join(DOCS, rel)
        if os.path.getsize(s) == 0:
            continue  # empty placeholder pages carry nothing
        os.makedirs(os.path.dirname(d), exist_ok=True)
        shutil.copyfile(s, d)


FM_RE = re.compile(r"\A---\n(.*?)\n---\n", re.S)


def title_of(text, fallback):
    m = FM_RE.match(text)
    if m:
        t = re.search(r"^title:\s*(.+)$", m.group(1), re.M)
        if t:
            return t.group(1).strip().strip("'\"")
    return fallback


def pandoc(src, dst, fmt, title):
    args = ["pandoc", "-f", "markdown-yaml_metadata_block", "-s", "--metadata", "title=" + title,
            "-o", dst, src]
    if fmt == "html":
        args[1:1] = ["-t", "html5"]
    subprocess.run(args, check=True)


def split_front_matter(text):
    m = FM_RE.match(text)
    if not m:
        return "", text
    return m.group(1), text[m.end():]


def md_for_convert(path):
    """Markdown handed to pandoc: the front matter becomes a small metadata block
    at the top of the page (as a document management system would show it);
    the body, with its Liquid/Nunjucks shortcodes, is kept as is."""
    text = open(path, encoding="utf-8").read()
    fm, body = split_front_matter(text)
    title = title_of(text, os.path.splitext(os.path.basename(path))[0])
    head = "# " + title + "\n\n"
    if fm:
        head += "```\n" + fm + "\n```\n\n"
    return title, head + body


def to_html(rel):
    src = os.path.join(DOCS, rel)
    title, md = md_for_convert(src)
    with tempfile.NamedTemporaryFile("w", suffix=".md", delete=False) as t:
        t.write(md)
    dst = src[:-3] + ".html"
    pandoc(t.name, dst, "html", title)
    os.unlink(t.name)
    os.unlink(src)
    return dst


def to_docx(rel):
    src = os.path.join(DOCS, rel)
    title, md = md_for_convert(src)
    with tempfile.NamedTemporaryFile("w", suffix=".md", delete=False) as t:
        t.write(md)
    dst = src[:-3] + ".docx"
    pandoc(t.name, dst, "docx", title)
    os.unlink(t.name)
    os.unlink(src)
    return dst


CSS = "<style>body{font-family:sans-serif;max-width:48em;margin:2em auto;font-size:11pt} pre{white-space:pre-wrap} table{border-collapse:collapse} td,th{border:1px solid #999;padding:3px}</style>"


def to_pdf(rel):
    src = os.path.join(DOCS, rel)
    title, md = md_for_convert(src)
    tmpd = tempfile.mkdtemp()
    mdp = os.path.join(tmpd, "p.md")
    htmlp = os.path.join(tmpd, "p.html")
    open(mdp, "w").write(md)
    subprocess.run(["pandoc", "-f", "markdown-yaml_metadata_block", "-t", "html5", "-s",
                    "--metadata", "title=" + title, "-H", "/dev/stdin", "-o", htmlp, mdp],
                   input=CSS.encode(), check=True)
    dst = src[:-3] + ".pdf"
    subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu",
                    "--no-pdf-header-footer", "--print-to-pdf=" + dst, "file://" + htmlp],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    shutil.rmtree(tmpd)
    os.unlink(src)
    return dst


LINK_RE = re.compile(r"\[([^\]]*)\]\([^)]*\)")


def plain(cell):
    cell = LINK_RE.sub(r"\1", cell)
    cell = re.sub(r"<(https?://[^>]+)>", r"\1", cell)
    cell = cell.replace("**", "").replace("`", "")
    cell = re.sub(r"(?<!\w)_([^_]+)_(?!\w)", r"\1", cell)
    return cell.strip()


def to_xlsx(rel):
    """Each Markdown table becomes its own sheet; the text around the tables goes
    to a 'Page' sheet, one line per row (like a tracker/overview spreadsheet)."""
    src = os.path.join(DOCS, rel)
    text = open(src, encoding="utf-8").read()
    fm, body = split_front_matter(text)
    title = title_of(text, "Sheet")
    wb = Workbook()
    page = wb.active
    page.title = "Page"
    page.append([title])
    page["A1"].font = Font(bold=True, size=14)
    tables = []
    cur = None
    para = []

    def flush(buf):
        if buf:
            page.append([plain(" ".join(buf))])
            buf.clear()
    heading = title
    for line in body.split("\n"):
        s = line.strip()
        if s.startswith("|"):
            flush(para)
            cells = [c for c in s.strip("|").split("|")]
            if all(re.fullmatch(r"\s*:?-{2,}:?\s*", c) for c in cells if c.strip()) and cur is not None:
                continue  # separator row
            if cur is None:
                cur = {"name": heading, "rows": []}
                tables.append(cur)
            cur["rows"].append([plain(c) for c in cells])
            continue
        cur = None
        if not s:
            flush(para)
            continue
        if s.startswith("#"):
            flush(para)
            heading = s.lstrip("#").strip()
            page.append([plain(heading)])
            page.cell(row=page.max_row, column=1).font = Font(bold=True)
            continue
        if re.match(r"([-*+]|\d+\.)\s", s):
            flush(para)
        para.append(s)
    flush(para)
    used = set()
    for i, t in enumerate(tables):
        name = re.sub(r"[\[\]\*\?/\\:]", "", t["name"])[:28] or "Table"
        base = name
        n = 2
        while name in used:
            name = base[:25] + " " + str(n)
            n += 1
        used.add(name)
        ws = wb.create_sheet(name)
        for j, row in enumerate(t["rows"]):
            ws.append(row)
            if j == 0:
                for c in ws[1]:
                    c.font = Font(bold=True)
        for col in ws.columns:
            ws.column_dimensions[col[0].column_letter].width = min(60, max(10, max(len(str(c.value or "")) for c in col)))
        page.append(["(see sheet '%s')" % name])
    page.column_dimensions["A"].width = 120
    dst = src[:-3] + ".xlsx"
    wb.save(dst)
    os.unlink(src)
    return dst


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        sys.exit(2)
    copy_sources(sys.argv[1], sys.argv[2])
    for rel in TO_HTML:
        to_html(rel)
    for rel in TO_DOCX:
        to_docx(rel)
    for rel in TO_XLSX:
        to_xlsx(rel)
    for rel in TO_PDF:
        to_pdf(rel)
    counts = {}
    for root, _, files in os.walk(DOCS):
        for f in files:
            ext = os.path.splitext(f)[1]
            counts[ext] = counts.get(ext, 0) + 1
    print(counts)


if __name__ == "__main__":
    main()
