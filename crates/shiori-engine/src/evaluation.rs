use crate::{AskOptions, Engine, EngineError, IndexReport, Progress};
use shiori_core::{Access, Filters, Refusal, RetrievalConfig};
use shiori_eval::{
    evaluate, judge_answer, load_dataset, refusal_rates, Dataset, EvalReport, JudgeReport,
    JudgeTally, QueryOutcome, TargetRow,
};
use shiori_rag::{refuses, Listener};
use shiori_retrieve::decide;
use std::path::Path;
use std::time::Instant;

/// Chunks fetched per evaluation query: several chunks of one document collapse into one
/// ranked document, and ten documents must remain for the @10 metrics.
const EVAL_CHUNKS: usize = 30;

/// An evaluation: the report, plus what each query returned (for threshold sweeps and failures).
pub struct EvalRun {
    pub dataset: Dataset,
    pub index: IndexReport,
    pub outcomes: Vec<QueryOutcome>,
    pub report: EvalReport,
}

impl Engine {
    /// Indexes the dataset's corpus into this data directory (unchanged corpora are skipped),
    /// runs every query and scores the results.
    pub fn evaluate(
        &mut self,
        dataset_dir: &Path,
        retrieval: &RetrievalConfig,
        access: &Access,
        progress: &dyn Progress,
    ) -> Result<EvalRun, EngineError> {
        let dataset = load_dataset(dataset_dir)?;
        let index = self.index_corpus(&dataset.corpus, progress)?;
        let retrieval = RetrievalConfig {
            top_k: retrieval.top_k.max(EVAL_CHUNKS),
            ..retrieval.clone()
        };
        let filters = Filters {
            access: access.clone(),
            ..Filters::default()
        };
        progress.start("evaluating queries", dataset.queries.len() as u64);
        let mut outcomes = Vec::with_capacity(dataset.queries.len());
        for query in &dataset.queries {
            let started = Instant::now();
            let retrieved = self.search(&query.text, &retrieval, &filters)?;
            outcomes.push(QueryOutcome {
                refused: refuses(&retrieved.hits, &retrieved.verdict),
                ranked_doc_ids: retrieved
                    .hits
                    .iter()
                    .map(|h| h.chunk.doc_id.clone())
                    .collect(),
                ranked_scores: retrieved.hits.iter().map(|h| h.score).collect(),
                top_text: retrieved.hits.first().map(|h| h.chunk.text.clone()),
                best_dense: retrieved.best_dense(),
                signals: retrieved.signals,
                latency_ms: started.elapsed().as_secs_f64() * 1000.0,
            });
            progress.advance(1);
        }
        progress.finish();
        let report = evaluate(&dataset, &outcomes);
        Ok(EvalRun {
            dataset,
            index,
            outcomes,
            report,
        })
    }
}

impl Engine {
    /// The answer rate and no-answer accuracy `run` would have had under each of `targets`,
    /// decided again from the recorded relevance signals with this engine's embedder.
    pub fn sweep_refusals(&self, run: &EvalRun, targets: &[Refusal]) -> Vec<TargetRow> {
        let embedder = self.embedder.model_id();
        targets
            .iter()
            .map(|&refusal| {
                let (answer_rate, no_answer_accuracy) =
                    refusal_rates(&run.dataset, &run.outcomes, |o| {
                        o.ranked_doc_ids.is_empty()
                            || decide(o.signals.as_ref(), refusal, embedder).refused
                    });
                TargetRow {
                    refusal,
                    answer_rate,
                    no_answer_accuracy,
                }
            })
            .collect()
    }
}

impl Engine {
    /// Answers every answerable query of `dataset` with the pipeline `options` choose and has
    /// the `judge` model (a `[llm.models]` name) score each answer that was not refused; the
    /// answers read only what `access` may.
    pub fn judge(
        &self,
        dataset: &Dataset,
        retrieval: &RetrievalConfig,
        access: &Access,
        judge: &str,
        options: &AskOptions,
        progress: &dyn Progress,
    ) -> Result<JudgeReport, EngineError> {
        let generation = self.generation()?;
        let judge = generation.model(judge)?;
        let filters = Filters {
            access: access.clone(),
            ..Filters::default()
        };
        let queries: Vec<_> = dataset.queries.iter().filter(|q| q.answerable).collect();
        progress.start("judging answers", queries.len() as u64);
        let mut tally = JudgeTally::default();
        for query in queries {
            let answer = self.answer(
                &query.text,
                retrieval,
                &filters,
                options,
                &Listener::default(),
            )?;
            tally.add_answer(&answer);
            if !answer.refused {
                let (scores, usage) = judge_answer(judge, &query.text, &answer, &query.answers)?;
                tally.add_judgement(scores, usage);
            }
            progress.advance(1);
        }
        progress.finish();
        Ok(tally.report(judge, generation.prices()))
    }
}
