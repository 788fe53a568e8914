#!/usr/bin/env python3
"""Builds the English QA dev sets `en-qa-dev` and `en-onetopic-dev` (BEIR layout) from SQuAD
v1.0 train as the SQuAD explorer renders it: one HTML page per Wikipedia article, each
paragraph followed by its crowd-written questions and their answer spans (CC BY-SA 4.0).

The pages are in the public GitHub repository rajpurkar/SQuAD-explorer, commit
13f82e35b9a1fb9173f863b35f5675030646571e, folder explore/1.0/train/ (443 articles). Fetch the
repository, then

    git -C REPO archive 13f82e35b9a1fb9173f863b35f5675030646571e explore/1.0/train | tar -x -C SRC
    python3 scripts/build-squad-devsets.py SRC/explore/1.0/train datasets

Standard library only; the choice of articles, paragraphs and questions is seeded, so the same
pages give the same sets. Unanswerable questions are questions about whole articles left out of
the corpus (as in jsquad-valid), never SQuAD 2.0's adversarial ones; SQuAD's dev articles (and
so SQuAD 2.0 dev) are not touched.
"""

import argparse
import json
import os
import random
from html.parser import HTMLParser

SEED = 30
QA_DEV_ARTICLES = 30
QA_DEV_PARAGRAPHS_PER_ARTICLE = 15
QA_DEV_QUESTIONS_PER_PARAGRAPH = 3
QA_DEV_LEFT_OUT_ARTICLES = 6
QA_DEV_QUESTIONS_PER_LEFT_OUT_ARTICLE = 25
ONETOPIC_PARAGRAPHS = (30, 60)
ONETOPIC_LEFT_OUT_ARTICLES = 10
ONETOPIC_QUESTIONS_PER_LEFT_OUT_ARTICLE = 6


class ExplorerPage(HTMLParser):
    """Collects the title, and each paragraph with its questions and answers, of one page."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.title = ""
        self.paragraphs = []
        self._capture = None
        self._text = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        classes = (attributes.get("class") or "").split()
        if tag == "h1" and attributes.get("id") == "title":
            self._start("title")
        elif tag == "pre":
            self._start("context")
        elif tag == "strong" and "question" in classes:
            self._start("question")
        elif tag == "span" and "answer" in classes:
            self._start("answer")

    def handle_endtag(self, tag):
        if self._capture and tag == {"title": "h1", "context": "pre", "question": "strong",
                                     "answer": "span"}[self._capture]:
            text = "".join(self._text)
            if self._capture == "title":
                self.title = text.strip()
            elif self._capture == "context":
                self.paragraphs.append({"context": text, "qas": []})
            elif self._capture == "question":
                self.paragraphs[-1]["qas"].append({"question": text.strip(), "answers": []})
            else:
                self.paragraphs[-1]["qas"][-1]["answers"].append(text.strip())
            self._capture = None

    def handle_data(self, data):
        if self._capture:
            self._text.append(data)

    def _start(self, kind):
        self._capture = kind
        self._text = []


def read_article(path):
    page = ExplorerPage()
    with open(path, encoding="utf-8") as source:
        page.feed(source.read())
    paragraphs = []
    for paragraph in page.paragraphs:
        context = " ".join(paragraph["context"].split())
        questions = []
        for qa in paragraph["qas"]:
            answers = unique(a for a in qa["answers"] if a and a in context)
            if qa["question"] and answers:
                questions.append({"question": qa["question"], "answers": answers})
        paragraphs.append({"context": context, "questions": questions})
    return {"title": page.title.replace("_", " "), "paragraphs": paragraphs}


def unique(items):
    seen = []
    for item in items:
        if item not in seen:
            seen.append(item)
    return seen


def read_articles(folder):
    names = sorted(name for name in os.listdir(folder) if name.endswith(".html"))
    if not names:
        raise SystemExit(f"{folder}: no .html pages (expected explore/1.0/train of SQuAD-explorer)")
    articles = [read_article(os.path.join(folder, name)) for name in names]
    return [a for a in articles if a["title"] and a["paragraphs"]]


def write_beir(out_dir, documents, queries, readme):
    os.makedirs(os.path.join(out_dir, "qrels"), exist_ok=True)
    with open(os.path.join(out_dir, "corpus.jsonl"), "w", encoding="utf-8") as corpus:
        for doc_id, title, text in documents:
            record = {"_id": doc_id, "title": title, "text": text, "metadata": {}}
            corpus.write(json.dumps(record, ensure_ascii=False) + "\n")
    with open(os.path.join(out_dir, "queries.jsonl"), "w", encoding="utf-8") as out, open(
        os.path.join(out_dir, "qrels", "test.tsv"), "w", encoding="utf-8"
    ) as qrels:
        qrels.write("query-id\tcorpus-id\tscore\n")
        for query_id, text, doc_id, answers in queries:
            metadata = {"answerable": doc_id is not None}
            if doc_id is not None:
                metadata["answers"] = answers
                qrels.write(f"{query_id}\t{doc_id}\t1\n")
            record = {"_id": query_id, "text": text, "metadata": metadata}
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
    with open(os.path.join(out_dir, "README.md"), "w", encoding="utf-8") as out:
        out.write(readme)


def questions_of(article_index, article, paragraph_indexes, per_paragraph, rng):
    """(query id, question, paragraph index, answers) for up to `per_paragraph` questions of
    each paragraph; ids `s<article>p<paragraph>q<n>` group by article for fit-refusal.py."""
    chosen = []
    for p in paragraph_indexes:
        questions = article["paragraphs"][p]["questions"]
        picked = sorted(rng.sample(range(len(questions)), min(per_paragraph, len(questions))))
        for q in picked:
            query_id = f"s{article_index:03d}p{p}q{q}"
            chosen.append((query_id, questions[q]["question"], p, questions[q]["answers"]))
    return chosen


def unanswerable_from(article_indexes, articles, per_article, rng):
    queries = []
    for index in article_indexes:
        article = articles[index]
        pool = questions_of(index, article, range(len(article["paragraphs"])), 99, rng)
        for query_id, text, _, _ in sorted(rng.sample(pool, min(per_article, len(pool)))):
            queries.append((query_id, text, None, []))
    return queries


def doc_id(article, paragraph):
    return f"{article['title']}#{paragraph}"


def build_qa_dev(articles, order, rng):
    kept, left_out = order[:QA_DEV_ARTICLES], order[QA_DEV_ARTICLES:][:QA_DEV_LEFT_OUT_ARTICLES]
    documents, queries = [], []
    for index in sorted(kept):
        article = articles[index]
        paragraphs = range(min(QA_DEV_PARAGRAPHS_PER_ARTICLE, len(article["paragraphs"])))
        for p in paragraphs:
            documents.append((doc_id(article, p), article["title"],
                              article["paragraphs"][p]["context"]))
        for query_id, text, p, answers in questions_of(
            index, article, paragraphs, QA_DEV_QUESTIONS_PER_PARAGRAPH, rng
        ):
            queries.append((query_id, text, doc_id(article, p), answers))
    queries += unanswerable_from(
        sorted(left_out), articles, QA_DEV_QUESTIONS_PER_LEFT_OUT_ARTICLE, rng
    )
    return documents, queries, [articles[i]["title"] for i in sorted(kept)], [
        articles[i]["title"] for i in sorted(left_out)
    ]


def build_onetopic(articles, order, rng):
    low, high = ONETOPIC_PARAGRAPHS
    topic = next(i for i in order if low <= len(articles[i]["paragraphs"]) <= high)
    article = articles[topic]
    paragraphs = range(len(article["paragraphs"]))
    documents = [(doc_id(article, p), article["title"], article["paragraphs"][p]["context"])
                 for p in paragraphs]
    queries = [(query_id, text, doc_id(article, p), answers)
               for query_id, text, p, answers in questions_of(topic, article, paragraphs, 99, rng)]
    others = [i for i in order if i != topic][:ONETOPIC_LEFT_OUT_ARTICLES]
    queries += unanswerable_from(sorted(others), articles, ONETOPIC_QUESTIONS_PER_LEFT_OUT_ARTICLE,
                                 rng)
    return documents, queries, article["title"], [articles[i]["title"] for i in sorted(others)]


SOURCE = (
    "Source: SQuAD v1.0 train (Rajpurkar et al., 2016; CC BY-SA 4.0), as rendered by the SQuAD\n"
    "explorer: the public GitHub repository rajpurkar/SQuAD-explorer, commit\n"
    "13f82e35b9a1fb9173f863b35f5675030646571e, explore/1.0/train/ (one page per article).\n"
    "Built by `scripts/build-squad-devsets.py` (its docstring has the commands); the same pages\n"
    "give the same files. Paragraph text has its whitespace collapsed; an answer is kept only\n"
    "where it occurs verbatim in its paragraph, and a question without one is dropped.\n"
    "Licence: CC BY-SA 4.0, as SQuAD; this derived set is shared under the same licence.\n"
    "SQuAD's dev articles (and so SQuAD 2.0 dev) are not used.\n"
)


def summary(documents, queries):
    unanswerable = sum(1 for q in queries if q[2] is None)
    return len(documents), len(queries), unanswerable


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pages", help="explore/1.0/train of SQuAD-explorer (one .html per article)")
    parser.add_argument("out", help="the folder that receives en-qa-dev/ and en-onetopic-dev/")
    args = parser.parse_args()
    articles = read_articles(args.pages)
    order = list(range(len(articles)))
    random.Random(SEED).shuffle(order)
    rng = random.Random(SEED)

    documents, queries, kept, left_out = build_qa_dev(articles, order, rng)
    n_docs, n_queries, n_unanswerable = summary(documents, queries)
    readme = (
        "English multi-topic QA dev set in BEIR layout. Each question's own paragraph is its one\n"
        f"relevant document. {n_docs} paragraphs (the first {QA_DEV_PARAGRAPHS_PER_ARTICLE} of "
        f"each of {len(kept)} articles), {n_queries} questions (up to\n"
        f"{QA_DEV_QUESTIONS_PER_PARAGRAPH} per paragraph, drawn at random), of which "
        f"{n_unanswerable} have no answer in the corpus: {QA_DEV_QUESTIONS_PER_LEFT_OUT_ARTICLE}"
        f" questions about each of\n{len(left_out)} whole articles left out of corpus.jsonl "
        "carry metadata.answerable=false and have no\nqrels row. Answerable questions carry "
        "metadata.answers, the answer spans from SQuAD.\n\n"
        + SOURCE
        + f"\nArticles in the corpus: {', '.join(kept)}.\n"
        + f"Articles left out (unanswerable questions): {', '.join(left_out)}.\n"
    )
    write_beir(os.path.join(args.out, "en-qa-dev"), documents, queries, readme)
    print(f"en-qa-dev: {n_docs} paragraphs, {n_queries} questions, {n_unanswerable} unanswerable")

    used = set(order[: QA_DEV_ARTICLES + QA_DEV_LEFT_OUT_ARTICLES])
    rest = [i for i in order if i not in used]
    documents, queries, topic, others = build_onetopic(articles, rest, rng)
    n_docs, n_queries, n_unanswerable = summary(documents, queries)
    readme = (
        "English one-topic QA dev set in BEIR layout: every paragraph of ONE Wikipedia article,\n"
        f"\"{topic}\" ({n_docs} paragraphs), with all of its SQuAD questions as answerable (each\n"
        f"question's own paragraph is its one relevant document), and {n_unanswerable} of the "
        f"{n_queries} questions\nabout {len(others)} other articles, none of which is in the "
        f"corpus ({ONETOPIC_QUESTIONS_PER_LEFT_OUT_ARTICLE} each, drawn at random),\n"
        "as unanswerable (metadata.answerable=false, no qrels row). Answerable questions carry\n"
        "metadata.answers, the answer spans from SQuAD. None of these articles is in en-qa-dev.\n\n"
        + SOURCE
        + f"\nArticles of the unanswerable questions: {', '.join(others)}.\n"
    )
    write_beir(os.path.join(args.out, "en-onetopic-dev"), documents, queries, readme)
    print(f"en-onetopic-dev ({topic}): {n_docs} paragraphs, {n_queries} questions, "
          f"{n_unanswerable} unanswerable")


if __name__ == "__main__":
    main()
