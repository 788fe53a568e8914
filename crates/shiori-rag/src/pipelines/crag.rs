//! Corrective RAG: grade what retrieval found, and when it falls short, search the web and keep
//! only the relevant strips of the documents.

use super::multi_query::generated_queries;
use super::sources;
use crate::corpus::RagError;
use crate::prompts::{self, Grade};
use crate::run::{summary, Run};
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
    let hits = run.retrieve_fused(&queries)?;
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

#[cfg(test)]
mod grading_tests {
    use crate::test_support::*;
    use crate::{Models, PipelineKind, PipelineParams, Pipelines};
    use serde_json::json;
    use shiori_core::{Answer, ChatModel, Price, PriceTable, WebSearch};
    use shiori_llm::{Endpoint, WebSearchClient, WebSearchProvider};
    use shiori_mock::{MockServer, Reply};
    use std::collections::BTreeMap;

    const QUESTION: &str = "How much storage does every workspace include?";
    const WEB_URL: &str = "https://example.org/storage-plans";

    fn corpus() -> FixedCorpus {
        FixedCorpus::new(&[
            (
                "storage",
                "Every workspace includes 100 GB of storage. It is shared by all members.",
            ),
            (
                "billing",
                "Extra storage is sold in blocks of 50 GB. Invoices are monthly.",
            ),
            (
                "vpn",
                "Connect to the VPN before you open the storage console.",
            ),
        ])
    }

    /// A grader that calls documents mentioning `irrelevant` irrelevant, and keeps strip 1.
    fn grader(irrelevant: Option<&'static str>) -> MockServer {
        llm_server(move |system, user, _| {
            if system.starts_with("You grade") {
                let grade = match irrelevant {
                    Some(word) if user.contains(word) => "irrelevant",
                    _ => "relevant",
                };
                completion(&json!({"grade": grade}).to_string())
            } else if system.starts_with("You keep") {
                completion(r#"{"relevant": [1]}"#)
            } else {
                Reply::status(400, format!("unexpected grader prompt: {system}"))
            }
        })
    }

    /// Writes queries and the answer; the answer cites the web result when it sees one.
    fn answerer() -> MockServer {
        llm_server(|system, user, _| {
            if system.starts_with("Rewrite the question") {
                completion("workspace storage quota")
            } else if system.starts_with("Write 2 different search queries") {
                completion("1. workspace storage size\n2. storage plans")
            } else if system.starts_with("Combine the question") {
                completion("How large is the storage quota of a workspace?")
            } else if system.starts_with("Answer the question") {
                match source_number(user, WEB_URL) {
                    Some(web) => {
                        completion(&format!("100 GB per workspace [1], plans online [{web}]."))
                    }
                    None => completion("100 GB per workspace [1]."),
                }
            } else {
                Reply::status(400, format!("unexpected answerer prompt: {system}"))
            }
        })
    }

    fn tavily() -> MockServer {
        MockServer::start(|_| {
            Reply::json(json!({"results": [
                {"title": "Storage plans", "url": WEB_URL, "content": "Plans start at 100 GB."}
            ]}))
        })
    }

    fn prices() -> PriceTable {
        PriceTable(BTreeMap::from([
            (
                "openai:cheap".to_string(),
                Price {
                    input_per_million: 0.1,
                    output_per_million: 0.4,
                },
            ),
            (
                "openai:strong".to_string(),
                Price {
                    input_per_million: 2.0,
                    output_per_million: 8.0,
                },
            ),
        ]))
    }

    fn ask(
        kind: PipelineKind,
        irrelevant: Option<&'static str>,
    ) -> (Answer, MockServer, MockServer, MockServer) {
        let params = PipelineParams {
            queries: 2,
            ..test_params()
        };
        ask_with(kind, irrelevant, params, None)
    }

    fn ask_with(
        kind: PipelineKind,
        irrelevant: Option<&'static str>,
        params: PipelineParams,
        cosine_cut: Option<f32>,
    ) -> (Answer, MockServer, MockServer, MockServer) {
        let (grade_server, answer_server, web_server) = (grader(irrelevant), answerer(), tavily());
        let cheap = model(&grade_server, "cheap");
        let strong = model(&answer_server, "strong");
        let web = WebSearchClient::new(WebSearchProvider::Tavily, Endpoint::new(web_server.url()))
            .unwrap();
        let mut corpus = corpus();
        if let Some(cut) = cosine_cut {
            corpus.cosine_cut = cut;
        }
        let prices = prices();
        let pipelines = Pipelines {
            corpus: &corpus,
            embedder: None,
            models: Models {
                answer: Some(&strong as &dyn ChatModel),
                grade: Some(&cheap as &dyn ChatModel),
                query: None,
            },
            web: Some(&web as &dyn WebSearch),
            prices: &prices,
            params,
        };
        let answer = pipelines.run(QUESTION, kind).unwrap();
        (answer, grade_server, answer_server, web_server)
    }

    fn steps(answer: &Answer) -> Vec<&str> {
        answer.trace.steps.iter().map(|s| s.step.as_str()).collect()
    }

    #[test]
    fn crag_below_the_gate_searches_the_web_instead_of_refusing() {
        let params = PipelineParams {
            queries: 2,
            refuse_irrelevant: true,
            ..test_params()
        };
        let (answer, _, _, web_server) =
            ask_with(PipelineKind::Crag, Some("VPN"), params, Some(0.95));
        assert_eq!(steps(&answer)[0], "gate");
        assert!(
            answer.trace.steps[0].output.contains("search the web"),
            "{:?}",
            answer.trace.steps[0]
        );
        assert_eq!(web_server.requests().len(), 1);
        assert!(!answer.refused);
    }

    #[test]
    fn crag_with_all_relevant_grades_never_searches_the_web() {
        let (answer, grade_server, _, web_server) = ask(PipelineKind::Crag, None);
        assert!(web_server.requests().is_empty());
        assert_eq!(grade_server.requests().len(), 3);
        assert_eq!(
            steps(&answer),
            vec![
                "retrieve",
                "grade",
                "grade",
                "grade",
                "answer",
                "check_citations"
            ]
        );
        assert_eq!(answer.sources.len(), 3);
        assert_eq!(answer.citations[0].doc_id, "storage");
    }

    #[test]
    fn crag_with_an_irrelevant_grade_searches_the_web_and_cites_it() {
        let (answer, grade_server, _, web_server) = ask(PipelineKind::Crag, Some("VPN"));
        let searches = web_server.requests();
        assert_eq!(searches.len(), 1);
        assert_eq!(searches[0].json()["query"], "workspace storage quota");
        assert_eq!(
            steps(&answer),
            vec![
                "retrieve",
                "grade",
                "grade",
                "grade",
                "rewrite_web_query",
                "web_search",
                "refine",
                "refine",
                "answer",
                "check_citations"
            ]
        );
        // The VPN document was dropped; the two others were refined to their first strip.
        let ids: Vec<&str> = answer.sources.iter().map(|s| s.doc_id.as_str()).collect();
        assert_eq!(ids, vec!["storage", "billing", WEB_URL]);
        assert_eq!(
            answer.sources[0].text,
            "Every workspace includes 100 GB of storage."
        );
        let web = answer
            .citations
            .iter()
            .find(|c| c.source == WEB_URL)
            .unwrap();
        assert_eq!(web.number, 3);
        assert!(answer.answer.contains("[3]"), "{}", answer.answer);
        assert_eq!(
            grade_server.requests().len(),
            5,
            "3 grades and 2 refinements"
        );

        // 5 cheap calls and 2 strong ones (rewrite, answer), 100 tokens in and 10 out each.
        let cheap = 5.0 * (100.0 * 0.1 + 10.0 * 0.4) / 1e6;
        let strong = 2.0 * (100.0 * 2.0 + 10.0 * 8.0) / 1e6;
        assert!(
            (answer.cost_usd - (cheap + strong)).abs() < 1e-12,
            "{}",
            answer.cost_usd
        );
        assert_eq!(answer.usage.prompt_tokens, 700);
        assert_eq!(answer.usage.completion_tokens, 70);
    }

    #[test]
    fn fusion_crag_grades_against_the_integrated_query() {
        let (answer, grade_server, answer_server, web_server) =
            ask(PipelineKind::FusionCrag, Some("VPN"));
        assert_eq!(
            steps(&answer),
            vec![
                "generate_queries",
                "retrieve_fuse",
                "integrate_queries",
                "grade",
                "grade",
                "grade",
                "web_search",
                "answer",
                "check_citations"
            ]
        );
        let grade_prompt = prompt_of(&grade_server.requests()[0]).1;
        assert!(
            grade_prompt.contains("How large is the storage quota"),
            "{grade_prompt}"
        );
        assert_eq!(
            web_server.requests()[0].json()["query"],
            "How large is the storage quota of a workspace?"
        );
        assert_eq!(answer_server.requests().len(), 3);
        assert!(answer.citations.iter().any(|c| c.source == WEB_URL));
        assert!(answer.sources.iter().all(|s| s.doc_id != "vpn"));

        let (answer, _, _, web_server) = ask(PipelineKind::FusionCrag, None);
        assert!(web_server.requests().is_empty());
        assert!(!steps(&answer).contains(&"web_search"));
    }
}
