//! Evaluation: reads datasets (BEIR layout, `documents.jsonl` + `qa.jsonl`, or a folder of
//! files with `questions.jsonl`), scores what the engine returned per query (nDCG, recall,
//! precision, MRR, hit rates, refusals, latency) and sweeps the refusal threshold; LLM judges
//! score generated answers (faithfulness, answer and context relevance, correctness against
//! gold answers); answer metrics score the answers themselves against gold spans (accuracy, token F1, refusals, citations, length, latency),
//! overall, per question kind and per conversation turn.

mod answers;
mod dataset;
mod files_layout;
mod judge;
mod metrics;
mod report;
mod run_file;

pub use answers::{
    comparable, evaluate_answers, sample_queries, score_answer, token_f1, without_citation_markers,
    AnswerGroup, AnswerOutcome, AnswerReport, AnswerScore,
};
pub use dataset::{json_lines, load_dataset, ConversationTurn, Dataset, EvalError, EvalQuery};
pub use judge::{judge_answer, JudgeReport, JudgeScores, JudgeTally};
pub use metrics::{score_ranking, RankingScores};
pub use report::{
    evaluate, refusal_rates, sweep_grid, sweep_thresholds, target_grid, EvalReport, QueryOutcome,
    SweepRow, TargetRow,
};
pub use run_file::{write_per_query, write_trec_run, PerQuery, PerQueryAnswer};
