//! Corrective RAG: grade what retrieval found, and when it falls short, search the web and keep
//! only the relevant strips of the documents.

use super::multi_query::generated_queries;
use super::sources;
use crate::corpus::RagError;
use crate::pipeline::{summary, Run};
use crate::prompts::{self, Grade};
use shiori_core::{Answer, Source};
use std::time::Instant;

/// retrieve → grade each → all relevant: answer; otherwise rewrite → web search → refine the
/// documents into relevant strips → answer from them and the web results.
pub(crate) fn crag(run: &mut Run, question: &str) -> Result<Answer, RagError> {
    let retrieval = run.retrieve(question, run.params().top_k)?;
    let graded = grade_all(run, question, sources(&retrieval.hits))?;
    if all_relevant(&graded) {
        let kept = graded.into_iter().map(|(source, _)| source).collect();
        return run.generate(question, kept);
    }
    let model = run.query_model()?;
    let rewritten = run.chat(
        "rewrite_web_query",
        model,
        &prompts::web_query(question),
        question,
    )?;
    let query = first_line_or(&rewritten.content, question);
    let web = web_search(run, &query);
    let mut context = Vec::new();
    for (source, grade) in graded {
        if grade != Grade::Irrelevant {
            context.extend(refine(run, question, source)?);
        }
    }
    context.extend(web);
    run.generate(question, context)
}

/// Seed 001's graph: generate queries → retrieve → fuse → integrate the queries into one →
/// grade → web search if needed → answer.
pub(crate) fn fusion_crag(run: &mut Run, question: &str) -> Result<Answer, RagError> {
    let queries = generated_queries(run, question)?;
    let hits = run.retrieve_fused(question, &queries)?;
    let model = run.query_model()?;
    let integrated = run.chat(
        "integrate_queries",
        model,
        &prompts::integrate_queries(question, &queries),
        queries.join(" | "),
    )?;
    let integrated = first_line_or(&integrated.content, question);
    let graded = grade_all(run, &integrated, sources(&hits))?;
    let needs_web = !all_relevant(&graded);
    let mut context: Vec<Source> = graded
        .into_iter()
        .filter(|(_, grade)| *grade != Grade::Irrelevant)
        .map(|(source, _)| source)
        .collect();
    if needs_web {
        context.extend(web_search(run, &integrated));
    }
    run.generate(question, context)
}

/// Nothing retrieved counts as not all relevant: the web may still know.
fn all_relevant(graded: &[(Source, Grade)]) -> bool {
    !graded.is_empty() && graded.iter().all(|(_, grade)| *grade == Grade::Relevant)
}

fn first_line_or(reply: &str, fallback: &str) -> String {
    prompts::lines(reply, 1)
        .pop()
        .unwrap_or_else(|| fallback.to_string())
}

/// Grades every source against `question` with the grade model, in parallel.
fn grade_all(
    run: &mut Run,
    question: &str,
    sources: Vec<Source>,
) -> Result<Vec<(Source, Grade)>, RagError> {
    let model = run.grade_model()?;
    let requests = sources
        .iter()
        .map(|source| (prompts::grade(question, source), source.chunk_id.clone()))
        .collect();
    let replies = run.chat_many("grade", model, requests)?;
    Ok(sources
        .into_iter()
        .zip(replies)
        .map(|(source, reply)| (source, prompts::parse_grade(&reply.content)))
        .collect())
}

/// Web results as sources; a missing or failing provider leaves a note and no results.
pub(crate) fn web_search(run: &mut Run, query: &str) -> Vec<Source> {
    let Some(web) = run.p.web else {
        run.trace.note(
            "web_search",
            summary(query),
            "no web search configured: skipped",
            0.0,
        );
        return Vec::new();
    };
    let started = Instant::now();
    let ms = || started.elapsed().as_secs_f64() * 1000.0;
    match web.search(query, run.params().web_results) {
        Ok(results) => {
            let urls: Vec<&str> = results.iter().map(|r| r.url.as_str()).collect();
            let output = summary(&format!("{} results: {}", results.len(), urls.join(", ")));
            run.trace.note(
                "web_search",
                format!("{}: {}", web.name(), summary(query)),
                output,
                ms(),
            );
            results
                .into_iter()
                .map(|result| Source {
                    doc_id: result.url.clone(),
                    chunk_id: result.url.clone(),
                    title: result.title,
                    source: result.url,
                    score: 0.0,
                    text: result.content,
                })
                .collect()
        }
        Err(error) => {
            run.trace.note(
                "web_search",
                format!("{}: {}", web.name(), summary(query)),
                format!("failed, answering without the web: {error}"),
                ms(),
            );
            Vec::new()
        }
    }
}

/// Knowledge refinement: splits a document into strips and keeps those the grade model calls
/// relevant; nothing kept drops the document.
fn refine(run: &mut Run, question: &str, source: Source) -> Result<Option<Source>, RagError> {
    let strips = strips(&source.text);
    if strips.len() < 2 {
        return Ok(Some(source));
    }
    let model = run.grade_model()?;
    let reply = run.chat(
        "refine",
        model,
        &prompts::relevant_strips(question, &strips),
        format!("{} in {} strips", source.chunk_id, strips.len()),
    )?;
    let keep: Vec<usize> = prompts::json_object(&reply.content)
        .and_then(|value| {
            value["relevant"].as_array().map(|numbers| {
                numbers
                    .iter()
                    .filter_map(|n| n.as_u64().map(|n| n as usize))
                    .collect()
            })
        })
        .unwrap_or_default();
    let kept: Vec<&str> = strips
        .iter()
        .enumerate()
        .filter(|(index, _)| keep.contains(&(index + 1)))
        .map(|(_, strip)| *strip)
        .collect();
    if kept.is_empty() {
        return Ok(None);
    }
    Ok(Some(Source {
        text: kept.join(" "),
        ..source
    }))
}

/// Sentences: ends at `.`/`!`/`?` before whitespace, at `。！？`, and at line breaks.
fn strips(text: &str) -> Vec<&str> {
    let mut strips = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((index, c)) = chars.next() {
        let next_is_space = chars.peek().is_none_or(|(_, next)| next.is_whitespace());
        let ends = matches!(c, '。' | '！' | '？' | '\n')
            || (matches!(c, '.' | '!' | '?') && next_is_space);
        if ends {
            let end = index + c.len_utf8();
            let strip = text[start..end].trim();
            if !strip.is_empty() {
                strips.push(strip);
            }
            start = end;
        }
    }
    let rest = text[start..].trim();
    if !rest.is_empty() {
        strips.push(rest);
    }
    strips
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_english_and_japanese_sentences() {
        assert_eq!(
            strips("Storage is 100 GB. Version 1.5 is out! Why?\nNext line"),
            vec![
                "Storage is 100 GB.",
                "Version 1.5 is out!",
                "Why?",
                "Next line"
            ]
        );
        assert_eq!(
            strips("リンクが届きます。有効期限は24時間です。"),
            vec!["リンクが届きます。", "有効期限は24時間です。"]
        );
    }
}
