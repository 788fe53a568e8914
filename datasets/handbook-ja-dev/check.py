#!/usr/bin/env python3
"""Validate questions.jsonl against docs/ (run from anywhere)."""
import json, re, subprocess, sys, html
from html.parser import HTMLParser
from pathlib import Path
from collections import Counter

HERE = Path(__file__).resolve().parent
KINDS = {"amount", "date", "count", "name", "yes_no", "procedure", "policy", "fact",
         "two_page", "cross_language", "unanswerable"}
_cache = {}

class _Text(HTMLParser):
    def __init__(self):
        super().__init__(); self.out = []; self.skip = 0
    def handle_starttag(self, tag, a):
        if tag in ("script", "style"): self.skip += 1
    def handle_endtag(self, tag):
        if tag in ("script", "style") and self.skip: self.skip -= 1
    def handle_data(self, d):
        if not self.skip: self.out.append(d)

def html_text(s):
    p = _Text(); p.feed(s); return " ".join(p.out)

def md_text(s):
    s = re.sub(r"<!--.*?-->", " ", s, flags=re.S)          # comments are invisible
    s = re.sub(r"\]\([^)]*\)", "]", s)                      # link targets
    s = html.unescape(re.sub(r"<[^>]+>", " ", s))           # inline HTML tags
    s = re.sub(r"\*\*|__|`", "", s)
    s = re.sub(r"^\s*#+\s*", "", s, flags=re.M)
    s = s.replace("|", " ").replace("[", "").replace("]", "")
    return s

def text_of(rel):
    if rel in _cache: return _cache[rel]
    p = HERE / rel; suf = p.suffix.lower()
    if suf == ".pdf":
        t = subprocess.run(["pdftotext", "-layout", str(p), "-"], capture_output=True, text=True, check=True).stdout
    elif suf == ".docx":
        import docx
        d = docx.Document(str(p))
        parts = [x.text for x in d.paragraphs]
        for tb in d.tables:
            for row in tb.rows:
                parts += [c.text for c in row.cells]
        t = "\n".join(parts)
    elif suf == ".xlsx":
        import openpyxl
        wb = openpyxl.load_workbook(str(p), read_only=True)
        t = "\n".join(str(v) for ws in wb.worksheets for r in ws.iter_rows(values_only=True) for v in r if v is not None)
    elif suf in (".html", ".htm"):
        t = html_text(p.read_text(encoding="utf-8"))
    else:
        t = md_text(p.read_text(encoding="utf-8"))
    t = re.sub(r"\s+", "", t)
    _cache[rel] = t
    return t

def norm(s): return re.sub(r"\s+", "", s)

def main():
    errors = []; rows = []
    lines = (HERE / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    for i, ln in enumerate(lines, 1):
        try: rows.append(json.loads(ln))
        except Exception as e: errors.append(f"line {i}: bad json {e}")
    ids = Counter(r.get("id") for r in rows)
    errors += [f"duplicate id {k}" for k, v in ids.items() if v > 1]
    all_docs = [str(p.relative_to(HERE)) for p in (HERE / "docs").rglob("*") if p.is_file()]
    for r in rows:
        rid = r.get("id")
        for k in ("id", "question", "kind", "answers", "gold_files", "answerable"):
            if k not in r: errors.append(f"{rid}: missing {k}")
        if r.get("kind") not in KINDS: errors.append(f"{rid}: bad kind {r.get('kind')}")
        if "conversation" in r and not isinstance(r.get("turn"), int): errors.append(f"{rid}: turn missing")
        if not r.get("answerable", True):
            if r["answers"] or r["gold_files"]: errors.append(f"{rid}: unanswerable with answers/gold")
            for key in r.get("absent_keys", []):
                hits = [d for d in all_docs if norm(key) in text_of(d)]
                if hits: errors.append(f"{rid}: key phrase {key!r} found in {hits[:3]}")
            if not r.get("absent_keys"): errors.append(f"{rid}: no absent_keys to verify")
            continue
        gold = r["gold_files"]
        if not gold: errors.append(f"{rid}: no gold files")
        for g in gold:
            if not g.startswith("docs/") or not (HERE / g).is_file(): errors.append(f"{rid}: gold missing {g}")
        gold = [g for g in gold if (HERE / g).is_file()]
        groups = r.get("answers_all") if r["kind"] == "two_page" else [r["answers"]]
        if r["kind"] == "two_page":
            if len(set(gold)) < 2: errors.append(f"{rid}: two_page needs 2 gold files")
            if not groups or len(groups) < 2: errors.append(f"{rid}: two_page needs answers_all with 2 parts")
        if not groups or not all(groups): errors.append(f"{rid}: no answers"); continue
        for grp in groups:
            for a in grp:
                if not (1 <= len(a) <= 20): errors.append(f"{rid}: span length {len(a)} {a!r}")
                if any(x in a for x in ("**", "[", "](", "|", "#")): errors.append(f"{rid}: markup in span {a!r}")
                if not any(norm(a) in text_of(g) for g in gold):
                    errors.append(f"{rid}: span {a!r} not found in {gold}")
    kinds = Counter(r["kind"] for r in rows if "conversation" not in r)
    convs = Counter(r["conversation"] for r in rows if "conversation" in r)
    print("standalone by kind:", dict(kinds))
    print("conversations:", len(convs), "turns:", sum(convs.values()))
    print("errors:", len(errors))
    for e in errors: print("  ", e)
    sys.exit(1 if errors else 0)

if __name__ == "__main__":
    main()
