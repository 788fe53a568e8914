#!/usr/bin/env python3
"""Rebuild docs/ of the handbook-ja-dev set from fetched git snapshots.

Usage: MIRROR=/work/.mirror python3 build.py
Each source is a bare git dir  $MIRROR/<owner>+<name>/repo  at the commit in SOURCES.
Needs: git, pandoc, chromium (headless, for PDF), fonts-ipafont-*, python openpyxl.
"""
import os, re, subprocess, shutil, sys, tempfile, html
from pathlib import Path

HERE = Path(__file__).resolve().parent
DOCS = HERE / "docs"
MIRROR = Path(os.environ.get("MIRROR", "/work/.mirror"))

# (prefix under docs/, owner+name, commit, include-regex, exclude-regex)
SOURCES = [
    ("tuqulore-employee-handbook", "tuqulore+employee-handbook", "4938ad49bba48cc33ff9ef5406b9f1e5ee181c55", r"\.md$", r"^\.github/"),
    ("denkiyagi-employee-handbook", "DenkiYagi+EmployeeHandbook", "f9b897822b43575fad169c8c769784acc2166347", r"\.md$", None),
    ("pagerduty-incident-response-ja", "PagerDuty+incident-response-docs-ja", "6294f696626eb261428366ac3a4c396233b71bae", r"\.md$", None),
    ("future-arch-guidelines", "future-architect+arch-guidelines", "372c7cb0a8196b8783aadcb5b33a59605752ce31", r"\.md$", r"^\.claude/"),
    ("future-coding-standards", "future-architect+coding-standards", "ae837d57a73eae8d90d6cb1e34b72e429fb9dec0", r"\.md$", None),
    ("owasp-devsecops-guideline-ja", "coky-t+owasp-devsecops-guideline-ja", "9667c09f1803eb475718b16ed9e38740d838484f", r"\.md$", None),
    ("owasp-llm-top10-ja", "coky-t+owasp-top-10-for-large-language-model-applications-ja", "ac3998bb28e34f3335bc2dcdf7f7209b3e7baeec", r"\.md$", None),
    ("owasp-proactive-controls-ja", "coky-t+owasp-proactive-controls-ja", "b25c15119dced31a62b628340d34f1f92f0a0df0", r"\.md$", None),
]

# docs-relative md path -> target format. The converted file replaces the .md.
CONVERT = {}
def conv(fmt, *paths):
    for p in paths:
        CONVERT[p] = fmt
exec((HERE / "convert_list.py").read_text(encoding="utf-8"))

def git(gitdir, *args):
    return subprocess.run(["git", f"--git-dir={gitdir}", "-c", "core.quotepath=off", *args],
                          check=True, capture_output=True).stdout

def title_of(md):
    m = re.search(r"^title:\s*(.+)$", md, re.M)
    if m:
        return m.group(1).strip().strip('"\'')
    m = re.search(r"^#\s+(.+)$", md, re.M)
    return m.group(1).strip() if m else "document"

CSS = """body{font-family:'IPAGothic','IPAPGothic',sans-serif;max-width:48em;margin:2em auto;line-height:1.7}
table{border-collapse:collapse}td,th{border:1px solid #888;padding:2px 6px}"""

def md_to_html(src: Path, dst: Path, md: str):
    css = Path(tempfile.mkdtemp()) / "style.html"
    css.write_text("<style>" + CSS + "</style>", encoding="utf-8")
    subprocess.run(["pandoc", str(src), "-f", "markdown", "-t", "html5", "-s",
                    "-H", str(css), "--metadata", f"title={title_of(md)}", "--metadata", "lang=ja",
                    "-o", str(dst)], check=True)

def md_to_pdf(src: Path, dst: Path, md: str):
    tmp = Path(tempfile.mkdtemp()) / "page.html"
    md_to_html(src, tmp, md)
    subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-pdf-header-footer",
                    f"--print-to-pdf={dst}", tmp.as_uri()], check=True, capture_output=True, timeout=120)

def md_to_docx(src: Path, dst: Path, md: str):
    subprocess.run(["pandoc", str(src), "-f", "markdown", "-t", "docx",
                    "--metadata", f"title={title_of(md)}", "-o", str(dst)], check=True)

def strip_inline(s):
    s = re.sub(r"\*\*(.+?)\*\*", r"\1", s)
    s = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", s)
    s = s.replace("<br>", "\n").replace("<br/>", "\n").replace("<br />", "\n")
    return s.strip()

def md_to_xlsx(src: Path, dst: Path, md: str):
    """Tables of the page become sheets (one per table), as a spreadsheet kept by HR would be."""
    from openpyxl import Workbook
    wb = Workbook(); wb.remove(wb.active)
    heading = title_of(md)
    lines = md.splitlines(); i = 0; n = 0
    while i < len(lines):
        ln = lines[i]
        h = re.match(r"^#+\s+(.+)$", ln)
        if h:
            heading = h.group(1).strip()
        if ln.lstrip().startswith("|") and i + 1 < len(lines) and re.match(r"^\s*\|?\s*:?-{2,}", lines[i + 1]):
            rows = []
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                if not re.match(r"^\s*\|?\s*:?-{2,}", lines[i]):
                    cells = [strip_inline(c) for c in lines[i].strip().strip("|").split("|")]
                    rows.append(cells)
                i += 1
            n += 1
            name = re.sub(r"[\\/*?:\[\]]", "", heading)[:28] or f"表{n}"
            base, k = name, 2
            while name in wb.sheetnames:
                name = f"{base[:25]}_{k}"; k += 1
            ws = wb.create_sheet(name)
            ws.append([heading])
            for r in rows:
                ws.append(r)
            continue
        i += 1
    if not wb.sheetnames:
        raise SystemExit(f"no table in {src}")
    wb.save(dst)

CONVERTERS = {"html": md_to_html, "pdf": md_to_pdf, "docx": md_to_docx, "xlsx": md_to_xlsx}

def main():
    if DOCS.exists():
        shutil.rmtree(DOCS)
    for prefix, repo, commit, inc, exc in SOURCES:
        gitdir = MIRROR / repo / "repo"
        names = git(gitdir, "ls-tree", "-r", "--name-only", commit).decode().splitlines()
        for name in names:
            if not re.search(inc, name) or (exc and re.search(exc, name)):
                continue
            data = git(gitdir, "show", f"{commit}:{name}")
            rel = f"{prefix}/{name}"
            out = DOCS / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            fmt = CONVERT.get(rel)
            if fmt is None:
                out.write_bytes(data)
                continue
            tmp = Path(tempfile.mkdtemp()) / Path(name).name
            tmp.write_bytes(data)
            dst = out.with_suffix("." + fmt)
            CONVERTERS[fmt](tmp, dst, data.decode("utf-8"))
            print("converted", rel, "->", fmt, file=sys.stderr)
    missing = [p for p in CONVERT if not (DOCS / p).with_suffix("." + CONVERT[p]).exists()]
    if missing:
        raise SystemExit(f"conversion targets not found: {missing}")

if __name__ == "__main__":
    main()
