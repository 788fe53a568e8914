//! Evaluation: reads datasets (BEIR layout or `documents.jsonl` + `qa.jsonl`), scores what the
//! engine returned per query (nDCG, recall, precision, MRR, hit rates, refusals, latency) and
//! sweeps the refusal threshold.

mod dataset;
mod metrics;
mod report;

pub use dataset::{json_lines, load_dataset, Dataset, EvalError, EvalQuery};
pub use metrics::{score_ranking, RankingScores};
pub use report::{evaluate, sweep_grid, sweep_thresholds, EvalReport, QueryOutcome, SweepRow};
