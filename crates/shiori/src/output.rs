//! Text renderings of results; `--json` prints the serialised values instead.

use anyhow::Result;
use serde::Serialize;
use shiori_core::{Answer, Hit, RetrievalConfig};
use shiori_engine::{AnswerEvent, ChatModelsDropped, EvalRun, EvalSweeps, IndexReport};
use shiori_eval::{AnswerReport, EvalReport, JudgeReport, SweepRow, TargetRow};
use shiori_models::assets::AssetStatus;
use shiori_store::StoreStats;
use std::fmt::Write;
use std::io::Write as _;

/// Prints `value` as JSON, or the text `render` makes.
pub fn print<T: Serialize>(json: bool, value: &T, render: impl FnOnce() -> String) -> Result<()> {
    if json {
        line(serde_json::to_string_pretty(value)?)?;
    } else {
        line(render())?;
    }
    Ok(())
}

/// Writes `text` and a newline to stdout. Unlike `println!`, which panics, a reader that has
/// closed the pipe (`shiori search … | head -1`) comes back as an error that `main` ends on quietly.
pub fn line(text: impl std::fmt::Display) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}")?;
    out.flush()
}

/// Whether `error` is stdout's reader having gone away, which ends the command without a message.
pub fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Where log lines go: stderr, or nowhere once stderr's reader is gone. tracing-subscriber
/// reports a failed write with `eprintln!`, which panics on a closed stderr, so a server whose
/// log pipe closed would drop the connection of every request that logs.
pub struct LogWriter;

impl std::io::Write for LogWriter {
    fn write(&mut self, line: &[u8]) -> std::io::Result<usize> {
        // A line that cannot be written is lost either way; the request it describes is not.
        let _ = std::io::stderr().write_all(line);
        Ok(line.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let _ = std::io::stderr().flush();
        Ok(())
    }
}

/// One vector a line, as a JSON array.
pub fn vectors(vectors: &[Vec<f32>]) -> String {
    vectors
        .iter()
        .map(|vector| serde_json::Value::from(vector.as_slice()).to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

fn snippet(text: &str, max_chars: usize) -> String {
    let mut snippet: String = text.chars().take(max_chars).collect();
    if text.chars().count() > max_chars {
        snippet.push('…');
    }
    snippet.replace('\n', " ")
}

/// Where an indexing run's time went: `stages: load 1.2 s · embed 40.1 s (25.3 chunks/s) · …`.
pub fn stage_times(report: &IndexReport) -> String {
    let stages = &report.stages;
    let seconds = |ms: f64| format!("{:.1} s", ms / 1000.0);
    // Chunks the embedder ran on: those found in the cache took no embedding.
    let embedded = report.chunks_embedded as f64;
    let rate = match stages.embed_ms > 0.0 && embedded > 0.0 {
        true => format!(" ({:.1} chunks/s)", embedded / (stages.embed_ms / 1000.0)),
        false => String::new(),
    };
    format!(
        "stages: load {} · embed {}{rate} · tables {} · BM25 {} · HNSW {} · commit {}",
        seconds(stages.load_ms),
        seconds(stages.embed_ms),
        seconds(stages.tables_ms),
        seconds(stages.keywords_ms),
        seconds(stages.vectors_ms),
        seconds(stages.commit_ms)
    )
}

pub fn index_report(report: &IndexReport) -> String {
    let mut text = format!(
        "indexed {} file(s), {} unchanged, {} removed; {} document(s), +{} / -{} chunks; \
         embedded {} (cache {}) in {:.1} s",
        report.files_indexed,
        report.files_unchanged,
        report.files_removed,
        report.documents,
        report.chunks_added,
        report.chunks_removed,
        report.chunks_embedded,
        report.chunks_cached,
        report.elapsed_ms / 1000.0
    );
    if report.files_indexed > 0 {
        let _ = write!(text, "\n{}", stage_times(report));
    }
    for source in &report.sources {
        let _ = write!(
            text,
            "\nsynced {}: {} fetched ({} bytes), {} unchanged, {} deleted, {} failed in {:.1} s",
            source.source,
            source.fetched,
            source.bytes,
            source.unchanged,
            source.deleted,
            source.failed,
            source.elapsed_ms / 1000.0
        );
    }
    for failure in &report.failures {
        let _ = write!(text, "\nskipped {}: {}", failure.path, failure.reason);
    }
    for warning in &report.warnings {
        let _ = write!(text, "\nwarning {}: {}", warning.path, warning.reason);
    }
    text
}

/// What `init --no-chat-model` did, as the end of its line.
pub fn dropped_chat_models(dropped: &ChatModelsDropped) -> String {
    let mut text = match &dropped.removed {
        Some(model) => format!("; removed the local chat model {model} init had adopted"),
        None => String::new(),
    };
    if dropped.kept.is_empty() {
        text.push_str("; answers are extractive");
    } else {
        let _ = write!(
            text,
            "; kept the chat model(s) configured by hand ([llm.models.{}]): remove them from \
             shiori.toml for extractive answers",
            dropped.kept.join("], [llm.models.")
        );
    }
    text
}

pub fn hits(hits: &[Hit]) -> String {
    if hits.is_empty() {
        return "no results".to_string();
    }
    let mut text = String::new();
    for (rank, hit) in hits.iter().enumerate() {
        let _ = writeln!(
            text,
            "{:>2}. {:.4}  {}  {} — {}\n    {}",
            rank + 1,
            hit.score,
            hit.chunk.chunk_id,
            hit.chunk.title,
            hit.chunk.source,
            snippet(&hit.chunk.text, 160)
        );
    }
    text.trim_end().to_string()
}

pub fn answer(answer: &Answer) -> String {
    let verdict = if answer.refused { "Refused" } else { "Answer" };
    format!("{verdict}: {}\n{}", answer.answer, answer_details(answer))
}

/// Prints a piece of the answer as it arrives (`ask` on a terminal).
pub fn print_token(event: AnswerEvent) {
    if let AnswerEvent::Token(text) = event {
        // A closed stdout is reported by the answer's last line, which ends the command.
        let mut out = std::io::stdout().lock();
        let _ = write!(out, "{text}").and_then(|()| out.flush());
    }
}

/// Everything of an answer but its text: sources, trace, tokens and time.
pub fn answer_details(answer: &Answer) -> String {
    let mut text = String::new();
    if !answer.sources.is_empty() {
        text.push_str("\nSources:");
        for (number, source) in answer.sources.iter().enumerate() {
            let cited = answer.citations.iter().any(|c| c.number == number + 1);
            let _ = write!(
                text,
                "\n {}[{}] {} — {} (score {:.4})",
                if cited { "*" } else { " " },
                number + 1,
                if source.title.is_empty() {
                    &source.doc_id
                } else {
                    &source.title
                },
                source.source,
                source.score
            );
        }
    }
    if !answer.trace.steps.is_empty() {
        let _ = write!(text, "\n\nTrace ({}):", answer.trace.pipeline);
        for step in &answer.trace.steps {
            let _ = write!(text, "\n  {:<18} {:>8.1} ms", step.step, step.ms);
            if let Some(model) = &step.model {
                let _ = write!(
                    text,
                    "  {model} ({} in / {} out)",
                    step.usage.prompt_tokens, step.usage.completion_tokens
                );
            }
            let _ = write!(text, "  → {}", snippet(&step.output, 100));
        }
    }
    if answer.usage.total() > 0 {
        let _ = write!(
            text,
            "\nTokens: {} in, {} out; cost ${:.6}",
            answer.usage.prompt_tokens, answer.usage.completion_tokens, answer.cost_usd
        );
    }
    let timings = &answer.timings_ms;
    match timings.first_token_ms {
        Some(first) => write!(
            text,
            "\n({:.1} ms, first token after {first:.1} ms)",
            timings.total_ms
        ),
        None => write!(text, "\n({:.1} ms)", timings.total_ms),
    }
    .unwrap_or_default();
    text
}

/// The refusal trade-off `--sweep-threshold` adds: over cosine cuts, then over targets.
pub type Sweeps = Option<EvalSweeps>;

/// `shiori eval --json`: the retrieval report with the sweeps, the answers and the judge's
/// scores beside its keys.
pub fn eval_json(run: &EvalRun, sweeps: &Sweeps) -> Result<serde_json::Value> {
    let mut value = serde_json::to_value(&run.report)?;
    if let Some(object) = value.as_object_mut() {
        if let Some(sweeps) = sweeps {
            object.insert(
                "threshold_sweep".into(),
                serde_json::to_value(&sweeps.thresholds)?,
            );
            object.insert(
                "refusal_sweep".into(),
                serde_json::to_value(&sweeps.targets)?,
            );
        }
        if let Some(answers) = &run.answers {
            object.insert("answers".into(), serde_json::to_value(&answers.report)?);
            if let Some(judged) = &answers.judge {
                object.insert("judge".into(), serde_json::to_value(judged)?);
            }
        }
    }
    Ok(value)
}

/// `shiori eval` on a terminal: the retrieval report, then the sweeps, answers and judge.
pub fn eval_text(run: &EvalRun, config: &RetrievalConfig, sweeps: &Sweeps) -> String {
    let mut blocks = vec![eval_report(&run.report, config)];
    if let Some(sweeps) = sweeps {
        blocks.push(sweep(&sweeps.thresholds));
        blocks.push(target_sweep(&sweeps.targets));
    }
    if let Some(answers) = &run.answers {
        blocks.push(answer_report(&answers.report));
        blocks.extend(answers.judge.as_ref().map(judge_report));
    }
    blocks.join("\n")
}

pub fn answer_report(report: &AnswerReport) -> String {
    let mut text = format!(
        "answers ({}): {} queries answered or refused, {} from a fallback\n",
        report.pipeline, report.queries, report.degraded
    );
    for (name, value) in [
        ("accuracy", report.accuracy),
        ("f1", report.f1),
        ("answer_rate", report.answer_rate),
        ("no_answer_refusal", report.no_answer_refusal),
        ("citation_precision", report.citation_precision),
    ] {
        if let Some(value) = value {
            let _ = writeln!(text, "  {name:<20} {value:.4}");
        }
    }
    if let (Some(median), Some(p95)) = (report.length_chars_median, report.length_chars_p95) {
        let _ = writeln!(
            text,
            "  {:<20} median {median:.0}, p95 {p95:.0} chars",
            "length"
        );
    }
    let _ = write!(
        text,
        "  {:<20} p50 {:.2} ms, p95 {:.2} ms",
        "latency", report.latency_p50_ms, report.latency_p95_ms
    );
    if let Some(first) = report.first_token_p50_ms {
        let _ = write!(text, "; first token p50 {first:.2} ms");
    }
    for (title, groups) in [("kind", &report.by_kind), ("turn", &report.by_turn)] {
        for (name, group) in groups {
            let _ = write!(
                text,
                "\n  {title} {:<15} {:>4} queries",
                name, group.queries
            );
            for (label, value) in [
                ("accuracy", group.accuracy),
                ("answer_rate", group.answer_rate),
                ("refused", group.no_answer_refusal),
            ] {
                if let Some(value) = value {
                    let _ = write!(text, ", {label} {value:.3}");
                }
            }
        }
    }
    text
}

pub fn eval_report(report: &EvalReport, config: &RetrievalConfig) -> String {
    let mut text = format!(
        "{}: {} queries ({} scored), mode {:?}, fusion {:?}\n",
        report.dataset, report.queries, report.scored_queries, config.mode, config.fusion
    );
    let rows = [
        ("ndcg@10", Some(report.ndcg_at_10)),
        ("recall@10", Some(report.recall_at_10)),
        ("precision@10", Some(report.precision_at_10)),
        ("mrr@10", Some(report.mrr_at_10)),
        ("hit@1", Some(report.hit_at_1)),
        ("hit@5", Some(report.hit_at_5)),
        ("hit@10", Some(report.hit_at_10)),
        ("no_answer_accuracy", report.no_answer_accuracy),
        ("answer_rate", report.answer_rate),
        ("answer_in_top1", report.answer_in_top1),
    ];
    for (name, value) in rows {
        if let Some(value) = value {
            let _ = writeln!(text, "  {name:<20} {value:.4}");
        }
    }
    let _ = write!(
        text,
        "  {:<20} p50 {:.2} ms, p95 {:.2} ms (refusal {})",
        "latency", report.latency_p50_ms, report.latency_p95_ms, config.refusal
    );
    text
}

pub fn target_sweep(rows: &[TargetRow]) -> String {
    let mut text = "refusal            answer_rate  no_answer_accuracy".to_string();
    for row in rows {
        let _ = write!(
            text,
            "\n{:<17}  {:>11.4}  {:>18.4}",
            row.refusal.to_string(),
            row.answer_rate,
            row.no_answer_accuracy
        );
    }
    text
}

pub fn sweep(rows: &[SweepRow]) -> String {
    let mut text = "threshold  answer_rate  no_answer_accuracy".to_string();
    for row in rows {
        let _ = write!(
            text,
            "\n{:>9.2}  {:>11.4}  {:>18.4}",
            row.threshold, row.answer_rate, row.no_answer_accuracy
        );
    }
    text
}

pub fn stats(stats: &StoreStats) -> String {
    format!(
        "files {}\ndocuments {}\nchunks {}\nembedder {} ({} dimensions)\njapanese analyzer {}\nvector index {}\nkeyword index {}",
        stats.files,
        stats.documents,
        stats.chunks,
        stats.embedder,
        stats.dimension,
        stats.japanese_analyzer,
        stats.vector_index,
        stats.keyword_index
    )
}

pub fn assets(assets: &[AssetStatus]) -> String {
    assets
        .iter()
        .map(|a| {
            format!(
                "{:<24} {:<8} {}  ({})",
                a.name,
                if a.present { "present" } else { "missing" },
                a.path.display(),
                a.package
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn judge_report(report: &JudgeReport) -> String {
    let mut text = format!(
        "judged by {}: {} answer(s), {} refused\n",
        report.judge, report.judged, report.refused
    );
    for (name, value) in [
        ("faithfulness", report.faithfulness),
        ("answer_relevance", report.answer_relevance),
        ("context_relevance", report.context_relevance),
        ("answer_correctness", report.answer_correctness),
    ] {
        if let Some(value) = value {
            let _ = writeln!(text, "  {name:<20} {value:.4}");
        }
    }
    let _ = write!(
        text,
        "  tokens: answers {} in / {} out, judge {} in / {} out; cost ${:.6}",
        report.answer_usage.prompt_tokens,
        report.answer_usage.completion_tokens,
        report.judge_usage.prompt_tokens,
        report.judge_usage.completion_tokens,
        report.cost_usd
    );
    text
}

/// `shiori doctor`'s checks, one line each, with the fix under any that did not pass.
pub fn diagnosis(diagnosis: &shiori_engine::Diagnosis) -> String {
    let mut lines = Vec::new();
    for check in &diagnosis.checks {
        let mark = match check.status {
            shiori_engine::Status::Ok => "ok  ",
            shiori_engine::Status::Warn => "warn",
            shiori_engine::Status::Fail => "FAIL",
        };
        lines.push(format!("{mark} {}: {}", check.name, check.detail));
        if let Some(fix) = &check.fix {
            lines.push(format!("     fix: {fix}"));
        }
    }
    lines.push(match diagnosis.ok {
        true => "ready".to_string(),
        false => "not ready".to_string(),
    });
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use shiori_engine::IndexStages;

    #[test]
    fn an_index_report_says_where_the_time_went_and_the_embedding_rate() {
        let report = IndexReport {
            files_indexed: 2,
            chunks_embedded: 90,
            chunks_cached: 10,
            elapsed_ms: 6_000.0,
            stages: IndexStages {
                load_ms: 500.0,
                embed_ms: 4_000.0,
                tables_ms: 200.0,
                keywords_ms: 300.0,
                vectors_ms: 900.0,
                commit_ms: 100.0,
            },
            ..IndexReport::default()
        };
        let text = index_report(&report);
        let stages = text.lines().nth(1).unwrap_or_default();
        assert_eq!(
            stages,
            "stages: load 0.5 s · embed 4.0 s (22.5 chunks/s) · tables 0.2 s · BM25 0.3 s · \
             HNSW 0.9 s · commit 0.1 s"
        );
        let nothing_indexed = IndexReport {
            files_unchanged: 3,
            ..IndexReport::default()
        };
        assert_eq!(index_report(&nothing_indexed).lines().count(), 1);
    }
}
