use crate::{
    AskOptions, Config, Engine, EngineError, IndexReport, IngestConfig, Progress, Question,
    StoreKind,
};
use serde_json::{json, Value};
use shiori_core::{Access, Answer, ChatModel, Filters, Refusal, RetrievalConfig, Turn};
use shiori_eval::{
    evaluate, evaluate_answers, judge_answer, load_dataset, refusal_rates, sample_queries,
    sweep_grid, sweep_thresholds, target_grid, AnswerOutcome, AnswerReport, Dataset, EvalQuery,
    EvalReport, JudgeReport, JudgeTally, QueryOutcome, SweepRow, TargetRow,
};
use shiori_rag::{follow_up_searched, refuses, Listener, PipelineKind};
use shiori_retrieve::decide;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::Instant;

/// The folder of a data directory that holds the evaluations' own indexes.
const EVAL_DIR: &str = "evaluations";

/// Chunks fetched per evaluation query: several chunks of one document collapse into one
/// ranked document, and ten documents must remain for the @10 metrics.
const EVAL_CHUNKS: usize = 30;

/// An evaluation: the report, plus what each query returned (for threshold sweeps and failures).
pub struct EvalRun {
    pub dataset: Dataset,
    pub index: IndexReport,
    pub outcomes: Vec<QueryOutcome>,
    pub report: EvalReport,
    /// The answer pass, when one was asked for.
    pub answers: Option<AnswerRun>,
}

/// How an evaluation answers its queries: through [`Engine::answer`] with this pipeline (the
/// configured default otherwise), on every query or an evenly spread sample of them, the
/// answerable ones judged by a `[llm.models]` model when `judge` names one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AnswerPass {
    pub pipeline: Option<PipelineKind>,
    pub rerank: bool,
    /// Answer only this many queries (see [`sample_queries`]).
    pub sample: Option<usize>,
    pub judge: Option<String>,
}

/// What the answer pass produced.
pub struct AnswerRun {
    /// One entry per dataset query; `None` for a query left out of the sample.
    pub outcomes: Vec<Option<AnswerOutcome>>,
    pub report: AnswerReport,
    pub judge: Option<JudgeReport>,
}

/// Documents a failure shows of what came back, best first.
const FAILURE_DOCS: usize = 3;

impl EvalRun {
    /// Queries the engine got wrong: an answerable one refused or with a wrong first document, an
    /// unanswerable one answered.
    pub fn failures(&self) -> Vec<Value> {
        self.dataset
            .queries
            .iter()
            .zip(&self.outcomes)
            .filter_map(|(query, outcome)| {
                let top_is_relevant = outcome
                    .ranked_doc_ids
                    .first()
                    .is_some_and(|id| query.relevant.get(id).is_some_and(|grade| *grade > 0));
                let reason = match (query.answerable, outcome.refused) {
                    (true, true) => "refused an answerable question",
                    (true, false) if !query.relevant.is_empty() && !top_is_relevant => {
                        "the first document is not relevant"
                    }
                    (false, false) => "answered an unanswerable question",
                    _ => return None,
                };
                let mut gold: Vec<&String> = query.relevant.keys().collect();
                gold.sort();
                let mut got: Vec<&String> = Vec::new();
                for id in &outcome.ranked_doc_ids {
                    if !got.contains(&id) {
                        got.push(id);
                    }
                    if got.len() == FAILURE_DOCS {
                        break;
                    }
                }
                Some(json!({
                    "id": query.id,
                    "question": query.text,
                    "reason": reason,
                    "gold": {
                        "answerable": query.answerable,
                        "doc_ids": gold,
                        "answers": query.answers,
                    },
                    "got": {
                        "refused": outcome.refused,
                        "doc_ids": got,
                        "best_dense": outcome.best_dense,
                        "top_text": outcome.top_text,
                    },
                }))
            })
            .collect()
    }
}

/// What a run's refusals would have been under other settings: each cosine cut of
/// [`sweep_grid`], and each target of [`target_grid`] on the calibrated refusal model.
#[derive(Debug, Clone, serde::Serialize)]
pub struct EvalSweeps {
    pub thresholds: Vec<SweepRow>,
    pub targets: Vec<TargetRow>,
}

impl Engine {
    /// The sweeps every surface shows of `run`.
    pub fn sweeps(&self, run: &EvalRun) -> EvalSweeps {
        EvalSweeps {
            thresholds: sweep_thresholds(&run.dataset, &run.outcomes, &sweep_grid()),
            targets: self.sweep_refusals(run, &target_grid()),
        }
    }
}

impl Engine {
    /// Indexes the dataset's corpus into an index of its own (see
    /// [`evaluation_engine`](Self::evaluation_engine); unchanged corpora are skipped), runs
    /// every query and scores the results; with an answer pass, also answers the queries and
    /// scores the answers. Everything that can be checked (the dataset, the answer pass's
    /// models and questions) is checked before anything is indexed.
    pub fn evaluate(
        &mut self,
        dataset_dir: &Path,
        retrieval: &RetrievalConfig,
        access: &Access,
        answering: Option<&AnswerPass>,
        progress: &dyn Progress,
    ) -> Result<EvalRun, EngineError> {
        let dataset = load_dataset(dataset_dir)?;
        if let Some(pass) = answering {
            self.check_answer_pass(&dataset, pass)?;
        }
        let mut own = self.evaluation_engine(dataset_dir, &dataset)?;
        let engine = own.as_mut().unwrap_or(self);
        if let Some(files) = &dataset.files {
            // Its files are shown as its questions name them: `docs/…`.
            engine.shown_paths.show_folder(files);
        }
        let index = engine.index_corpus(&dataset.corpus, progress)?;
        let (outcomes, report) = engine.retrieve_queries(&dataset, retrieval, access, progress)?;
        let answers = answering
            .map(|pass| engine.answer_queries(&dataset, retrieval, access, pass, progress))
            .transpose()?;
        Ok(EvalRun {
            dataset,
            index,
            outcomes,
            report,
            answers,
        })
    }

    /// Where an evaluation indexes its corpus, so that it never writes into the index a user
    /// answers from: an embedded store of its own under `<data dir>/evaluations/`, kept between runs
    /// (an unchanged corpus is not indexed again) and configured as this engine is. A
    /// PostgreSQL store cannot make itself a database, so there the evaluation indexes into
    /// the configured one (`None`), and only when that holds nothing but the dataset's corpus.
    fn evaluation_engine(
        &self,
        dataset_dir: &Path,
        dataset: &Dataset,
    ) -> Result<Option<Engine>, EngineError> {
        if self.config.store.kind == StoreKind::Postgres {
            self.check_holds_only(&dataset.corpus)?;
            return Ok(None);
        }
        let folder = std::path::absolute(dataset_dir).map_err(|source| EngineError::Io {
            path: dataset_dir.display().to_string(),
            source,
        })?;
        let name = folder
            .file_name()
            .map_or("dataset".into(), |name| name.to_string_lossy());
        let tag = shiori_ingest::content_hash(folder.as_os_str().as_encoded_bytes());
        let dir = self
            .data_dir
            .join(EVAL_DIR)
            .join(format!("{name}-{}", &tag[..12]));
        let config = Config {
            ingest: IngestConfig {
                sources: Vec::new(),
                // Paths are shown as this data directory shows them.
                source_root: Some(self.config.source_root(&self.data_dir)),
                ..self.config.ingest.clone()
            },
            projects: Default::default(),
            ..self.config.clone()
        };
        self.sibling(&dir, config).map(Some)
    }

    /// Fails unless every file this store holds lies in `corpus`.
    fn check_holds_only(&self, corpus: &Path) -> Result<(), EngineError> {
        let corpus = std::path::absolute(corpus).unwrap_or_else(|_| corpus.to_path_buf());
        let corpus = corpus.canonicalize().unwrap_or(corpus);
        let foreign = self
            .store
            .file_paths(&Filters::default())?
            .into_iter()
            .filter(|path| !Path::new(path).starts_with(&corpus))
            .count();
        if foreign == 0 {
            return Ok(());
        }
        Err(EngineError::Invalid(format!(
            "the database holds {foreign} files besides the evaluation set, and an evaluation \
             indexes its set into the store it runs on: evaluate with a data directory whose \
             [store] names an empty database"
        )))
    }

    /// Runs every query through retrieval alone and scores the rankings and refusals.
    fn retrieve_queries(
        &self,
        dataset: &Dataset,
        retrieval: &RetrievalConfig,
        access: &Access,
        progress: &dyn Progress,
    ) -> Result<(Vec<QueryOutcome>, EvalReport), EngineError> {
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
        let mut asked = Conversations::default();
        for query in &dataset.queries {
            let started = Instant::now();
            let searched = searched_as(query, &mut asked);
            let retrieved = self.search_text(&searched, &retrieval, &filters)?;
            outcomes.push(QueryOutcome {
                refused: refuses(&retrieved.hits, &retrieved.verdict),
                ranked_doc_ids: retrieved
                    .hits
                    .iter()
                    .map(|h| dataset.doc_key(&h.chunk.doc_id))
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
        let report = evaluate(dataset, &outcomes);
        Ok((outcomes, report))
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
    /// Fails before an evaluation changes anything when its answer pass could not run: an
    /// empty sample, chat models that cannot be built, an unknown judge, `--rerank` without a
    /// model, or a question [`Engine::answer`] would reject.
    fn check_answer_pass(&self, dataset: &Dataset, pass: &AnswerPass) -> Result<(), EngineError> {
        if pass.sample == Some(0) {
            return Err(EngineError::Invalid(
                "the answer sample must hold at least 1 query".into(),
            ));
        }
        let generation = self.generation()?;
        if let Some(judge) = &pass.judge {
            generation.model(judge)?;
        }
        if pass.rerank {
            generation.reranker()?;
        }
        for index in sample_queries(dataset, pass.sample) {
            let query = &dataset.queries[index];
            Question::new(query.text.as_str())
                .map_err(|error| EngineError::Invalid(format!("query {:?}: {error}", query.id)))?;
        }
        Ok(())
    }

    /// Answers the queries `pass` samples through [`Engine::answer`], the path every surface
    /// takes, and scores the answers; a judge scores the answerable ones from the same answers.
    fn answer_queries(
        &self,
        dataset: &Dataset,
        retrieval: &RetrievalConfig,
        access: &Access,
        pass: &AnswerPass,
        progress: &dyn Progress,
    ) -> Result<AnswerRun, EngineError> {
        let generation = self.generation()?;
        let judge = pass
            .judge
            .as_deref()
            .map(|name| generation.model(name))
            .transpose()?;
        let filters = Filters {
            access: access.clone(),
            ..Filters::default()
        };
        let options = AskOptions {
            pipeline: pass.pipeline,
            rerank: pass.rerank,
            ..AskOptions::default()
        };
        let chosen = sample_queries(dataset, pass.sample);
        let mut outcomes = vec![None; dataset.queries.len()];
        let mut tally = JudgeTally::default();
        let mut conversations = Conversations::default();
        progress.start("answering queries", chosen.len() as u64);
        for index in chosen {
            let query = &dataset.queries[index];
            let options = AskOptions {
                history: conversations.history(query),
                ..options.clone()
            };
            let started = Instant::now();
            let answer = self.answer(
                &Question::new(query.text.as_str())?,
                retrieval,
                &filters,
                &options,
                &Listener::default(),
            )?;
            let latency_ms = started.elapsed().as_secs_f64() * 1000.0;
            if let Some(judge) = judge.filter(|_| query.answerable) {
                judge_into(&mut tally, judge, query, &answer)?;
            }
            let mut outcome = AnswerOutcome::new(&answer, latency_ms);
            let mut seen = HashSet::new();
            outcome.cited_doc_ids = (outcome.cited_doc_ids.iter())
                .map(|doc_id| dataset.doc_key(doc_id))
                .filter(|key| seen.insert(key.clone()))
                .collect();
            outcomes[index] = Some(outcome);
            conversations.record(query, &answer);
            progress.advance(1);
        }
        progress.finish();
        let pipeline = pass.pipeline.unwrap_or(self.config.pipeline.default);
        Ok(AnswerRun {
            report: evaluate_answers(pipeline.name(), dataset, &outcomes),
            judge: judge.map(|judge| tally.report(judge, generation.prices())),
            outcomes,
        })
    }
}

/// What retrieval searches for `query`: a turn of a scripted conversation as a conversation
/// whose follow-ups no model rewrites searches it ([`follow_up_searched`]: alone, or when it
/// leans on the turns before it, with their questions), any other query as it is; the turn is
/// then recorded in `asked` (its question only: the retrieval pass answers nothing). Searched
/// alone, a follow-up ("do they get a break?") ranks pages it is never searched against.
fn searched_as(query: &EvalQuery, asked: &mut Conversations) -> String {
    let searched = follow_up_searched(&query.text, &asked.history(query));
    asked.record(query, &Answer::default());
    searched
}

/// The turns of a dataset's scripted conversations answered so far, so each later turn is
/// asked with the engine's own earlier answers as its history, as a person's chat would be.
#[derive(Default)]
struct Conversations(HashMap<String, Vec<Turn>>);

impl Conversations {
    /// The earlier turns of `query`'s conversation; none for a question asked alone.
    fn history(&self, query: &EvalQuery) -> Vec<Turn> {
        query
            .turn
            .as_ref()
            .and_then(|turn| self.0.get(&turn.conversation))
            .cloned()
            .unwrap_or_default()
    }

    fn record(&mut self, query: &EvalQuery, answer: &Answer) {
        if let Some(turn) = &query.turn {
            self.0
                .entry(turn.conversation.clone())
                .or_default()
                .push(Turn::new(&query.text, answer, 0));
        }
    }
}

/// Counts `answer` in the judge's tally and, unless it is a refusal, has `judge` score it.
fn judge_into(
    tally: &mut JudgeTally,
    judge: &dyn ChatModel,
    query: &EvalQuery,
    answer: &Answer,
) -> Result<(), EngineError> {
    tally.add_answer(answer);
    if !answer.refused {
        let (scores, usage) = judge_answer(judge, &query.text, answer, &query.answers)?;
        tally.add_judgement(scores, usage);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use shiori_eval::ConversationTurn;

    fn query(text: &str, conversation: Option<&str>) -> EvalQuery {
        EvalQuery {
            text: text.to_string(),
            turn: conversation.map(|conversation| ConversationTurn {
                conversation: conversation.to_string(),
                turn: 1,
            }),
            ..EvalQuery::default()
        }
    }

    #[test]
    fn a_follow_up_is_searched_as_its_conversation_searches_it() {
        let queries = [
            query("How long is the interview day?", Some("c1")),
            query("What is the dress code?", Some("c2")),
            query("Do they get a break?", Some("c1")),
            query("How do I book a flight?", Some("c1")),
            query("And for contractors?", None),
        ];
        let mut asked = Conversations::default();
        let searched: Vec<String> = queries
            .iter()
            .map(|query| searched_as(query, &mut asked))
            .collect();
        assert_eq!(
            searched,
            [
                "How long is the interview day?",
                "What is the dress code?",
                "Do they get a break?\nHow long is the interview day?",
                "How do I book a flight?",
                "And for contractors?",
            ],
            "an elliptical turn with the question it leans on, of its own conversation; a \
             question that stands alone, or is asked alone, as it is"
        );
    }
}
