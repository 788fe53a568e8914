#!/usr/bin/env python3
"""Validate questions.jsonl against docs/.

Checks: every line parses; ids unique; required fields and kinds; gold files exist;
every answer span appears in its gold file's visible text (markup stripped roughly);
two_page questions have both parts found in their gold files; unanswerable
questions' key phrases (UNANSWERABLE_KEYS below) appear nowhere in docs/.

Usage: python3 check.py [--dump DIR]   (--dump writes the extracted text of every doc)
"""
import html
import json
import os
import re
import subprocess
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
KINDS = {"amount", "date", "count", "name", "yes_no", "procedure", "policy", "fact",
         "two_page", "unanswerable"}

# For unanswerable questions: phrases whose presence anywhere in docs/ would mean
# the corpus may in fact answer the question (case-insensitive).
UNANSWERABLE_KEYS = json.load(open(os.path.join(HERE, "unanswerable_keys.json"))) \
    if os.path.exists(os.path.join(HERE, "unanswerable_keys.json")) else {}


def extract_pdf(p):
    return subprocess.run(["pdftotext", "-enc", "UTF-8", p, "-"], capture_output=True,
                          check=True).stdout.decode("utf-8", "replace")


def extract_docx(p):
    with zipfile.ZipFile(p) as z:
        xml = z.read("word/document.xml").decode("utf-8")
    xml = re.sub(r"</w:p>", "\n", xml)
    xml = re.sub(r"<w:tab/>", " ", xml)
    return html.unescape(re.sub(r"<[^>]+>", "", xml))


def extract_xlsx(p):
    import openpyxl
    wb = openpyxl.load_workbook(p, read_only=True)
    out = []
    for ws in wb.worksheets:
        out.append(ws.title)
        for row in ws.iter_rows(values_only=True):
            out.append(" | ".join("" if v is None else str(v) for v in row))
    return "\n".join(out)


def strip_markup(t):
    t = re.sub(r"<!--.*?-->", " ", t, flags=re.S)
    t = re.sub(r"<script.*?</script>|<style.*?</style>", " ", t, flags=re.S | re.I)
    t = re.sub(r"<[^>]+>", " ", t)
    t = html.unescape(t)
    t = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", t)      # [text](url)
    t = re.sub(r"\[([^\]]*)\]\[[^\]]*\]", r"\1", t)        # [text][ref]
    t = re.sub(r"\{%.*?%\}", " ", t, flags=re.S)           # shortcodes
    t = t.replace("**", "").replace("__", "").replace("`", "")
    t = re.sub(r"(?<![\w*])[*_]([^*_\n]+)[*_](?![\w*])", r"\1", t)
    t = re.sub(r"\\([\\`*_{}\[\]()#+\-.!&])", r"\1", t)
    t = re.sub(r"^\s*#+\s*", "", t, flags=re.M)
    t = t.replace("|", " ")
    return t


def extract(p):
    ext = os.path.splitext(p)[1].lower()
    if ext == ".pdf":
        t = extract_pdf(p)
    elif ext == ".docx":
        t = extract_docx(p)
    elif ext == ".xlsx":
        t = extract_xlsx(p)
    else:
        t = open(p, encoding="utf-8", errors="replace").read()
    return strip_markup(t)


def norm(s):
    s = s.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    s = s.replace("\u2013", "-").replace("\u2014", "-").replace("\u00a0", " ").replace("\u00ad", "")
    s = re.sub(r"\s+", " ", s)
    return s.strip().lower()


_cache = {}


def text_of(rel):
    if rel not in _cache:
        _cache[rel] = norm(extract(os.path.join(HERE, rel)))
    return _cache[rel]


def all_docs():
    out = []
    for root, _, files in os.walk(os.path.join(HERE, "docs")):
        for f in files:
            out.append(os.path.relpath(os.path.join(root, f), HERE))
    return sorted(out)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--dump":
        for rel in all_docs():
            d = os.path.join(sys.argv[2], rel + ".txt")
            os.makedirs(os.path.dirname(d), exist_ok=True)
            open(d, "w").write(text_of(rel))
        return
    errors = []
    ids = set()
    stats = {}
    convs = {}
    qs = []
    for n, line in enumerate(open(os.path.join(HERE, "questions.jsonl")), 1):
        if not line.strip():
            continue
        try:
            q = json.loads(line)
        except Exception as e:
            errors.append("line %d: bad json: %s" % (n, e))
            continue
        qs.append(q)
        qid = q.get("id")
        if not qid or qid in ids:
            errors.append("line %d: missing or duplicate id %r" % (n, qid))
        ids.add(qid)
        for k in ("question", "kind", "answers", "gold_files", "answerable"):
            if k not in q:
                errors.append("%s: missing field %s" % (qid, k))
        kind = q.get("kind")
        if kind not in KINDS:
            errors.append("%s: bad kind %r" % (qid, kind))
        key = ("conv-" if "conversation" in q else "") + str(kind)
        stats[key] = stats.get(key, 0) + 1
        if "conversation" in q:
            convs.setdefault(q["conversation"], []).append(q.get("turn"))
        for g in q.get("gold_files", []):
            if not g.startswith("docs/") or not os.path.exists(os.path.join(HERE, g)):
                errors.append("%s: gold file missing: %s" % (qid, g))
        if not q.get("answerable", True):
            if q.get("answers") or q.get("gold_files"):
                errors.append("%s: unanswerable but has answers/gold_files" % qid)
            keys = UNANSWERABLE_KEYS.get(qid)
            if not keys:
                errors.append("%s: no key phrases listed for unanswerable question" % qid)
            else:
                for rel in all_docs():
                    t = text_of(rel)
                    for k in keys:
                        if norm(k) in t:
                            errors.append("%s: key phrase %r found in %s" % (qid, k, rel))
            continue
        golds = [g for g in q.get("gold_files", []) if os.path.exists(os.path.join(HERE, g))]
        if not golds:
            errors.append("%s: answerable without gold files" % qid)
            continue
        if kind == "two_page" or "answers_all" in q:
            parts = q.get("answers_all") or []
            if len(parts) < 2 or len(set(q["gold_files"])) < 2:
                errors.append("%s: two_page needs 2 parts and 2 gold files" % qid)
            for i, alts in enumerate(parts):
                if not any(norm(a) in text_of(g) for a in alts for g in golds):
                    errors.append("%s: part %d %r not found in gold files" % (qid, i + 1, alts))
        for a in q.get("answers", []):
            if any(m in a for m in ("**", "](", "|", "#")):
                errors.append("%s: markup in answer %r" % (qid, a))
            if not any(norm(a) in text_of(g) for g in golds):
                errors.append("%s: answer %r not found in %s" % (qid, a, golds))
        if kind != "two_page" and not q.get("answers"):
            errors.append("%s: no answers" % qid)
    for c, turns in convs.items():
        if sorted(turns) != list(range(1, len(turns) + 1)) or len(turns) < 2:
            errors.append("conversation %s: bad turns %r" % (c, turns))
    fmt = {}
    for q in qs:
        for g in q.get("gold_files", []):
            e = os.path.splitext(g)[1]
            fmt[e] = fmt.get(e, 0) + 1
    print("questions:", len(qs), "conversations:", len(convs))
    print("by kind:", json.dumps(dict(sorted(stats.items()))))
    print("gold-file formats:", fmt)
    print("distinct gold files:", len({g for q in qs for g in q.get("gold_files", [])}))
    for e in errors:
        print("ERROR", e)
    print("OK" if not errors else "%d errors" % len(errors))
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
