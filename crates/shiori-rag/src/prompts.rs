//! The prompts of every LLM step, and lenient readers of what models reply.

use serde_json::Value;
use shiori_core::{ChatMessage, ChatRequest, Source};
use std::fmt::Write;

/// What the answer model replies when the sources lack the answer.
pub const CANNOT_ANSWER: &str = "CANNOT_ANSWER";
/// What the iterative answer model replies, followed by a query, when it needs more context.
pub const NEED_MORE: &str = "NEED_MORE:";

/// The sources as the model sees them: `[n] title (source)` and the text.
pub fn numbered_sources(sources: &[Source]) -> String {
    let mut text = String::new();
    for (index, source) in sources.iter().enumerate() {
        let _ = write!(
            text,
            "[{}] {} ({})\n{}\n\n",
            index + 1,
            source.title,
            source.source,
            source.text
        );
    }
    text
}

fn request(system: &str, user: String, json_mode: bool, max_tokens: Option<u32>) -> ChatRequest {
    ChatRequest {
        messages: vec![ChatMessage::system(system), ChatMessage::user(user)],
        max_tokens,
        temperature: Some(0.0),
        json_mode,
        tools: Vec::new(),
    }
}

const ANSWER_RULES: &str = "Answer the question using only the numbered sources. Cite the \
    sources of every claim with their numbers in square brackets, like [1] or [2, 3]. Answer in \
    the language of the question. If the sources do not contain the answer, reply exactly \
    CANNOT_ANSWER and nothing else.";

pub fn answer(question: &str, sources: &[Source], max_tokens: Option<u32>) -> ChatRequest {
    let user = format!(
        "Sources:\n\n{}Question: {question}",
        numbered_sources(sources)
    );
    request(ANSWER_RULES, user, false, max_tokens)
}

pub fn iterative_answer(
    question: &str,
    sources: &[Source],
    max_tokens: Option<u32>,
) -> ChatRequest {
    let system = format!(
        "{ANSWER_RULES} If the sources are not enough but a further search could find the \
         answer, reply instead with {NEED_MORE} followed by that search query, on one line."
    );
    let user = format!(
        "Sources:\n\n{}Question: {question}",
        numbered_sources(sources)
    );
    request(&system, user, false, max_tokens)
}

pub fn grade(question: &str, source: &Source) -> ChatRequest {
    let system = "You grade whether a document helps answer a question. Reply with JSON \
        {\"grade\": \"relevant\"} if it contains the answer, {\"grade\": \"ambiguous\"} if it is \
        related but may not answer it, {\"grade\": \"irrelevant\"} otherwise.";
    let user = format!(
        "Question: {question}\n\nDocument: {}\n{}",
        source.title, source.text
    );
    request(system, user, true, Some(20))
}

pub fn relevant_strips(question: &str, strips: &[&str]) -> ChatRequest {
    let system = "You keep the parts of a document that help answer a question. Reply with JSON \
        {\"relevant\": [numbers of the helpful strips]}.";
    let mut user = format!("Question: {question}\n\nStrips:\n");
    for (index, strip) in strips.iter().enumerate() {
        let _ = writeln!(user, "{}. {strip}", index + 1);
    }
    request(system, user, true, Some(60))
}

pub fn search_queries(question: &str, count: usize) -> ChatRequest {
    let system = format!(
        "Write {count} different search queries that would find documents answering the \
         question, from different angles. One query per line, nothing else."
    );
    request(&system, format!("Question: {question}"), false, Some(200))
}

pub fn sub_questions(question: &str, count: usize) -> ChatRequest {
    let system = format!(
        "Break the question into at most {count} simpler sub-questions that together answer it. \
         One sub-question per line, nothing else."
    );
    request(&system, format!("Question: {question}"), false, Some(200))
}

pub fn hypothetical_answer(question: &str) -> ChatRequest {
    let system = "Write a short passage, as a reference document would, that answers the \
        question. Invent plausible details; it is used only to search.";
    request(system, format!("Question: {question}"), false, Some(200))
}

pub fn web_query(question: &str) -> ChatRequest {
    let system = "Rewrite the question as a concise web search query. Reply with the query only.";
    request(system, format!("Question: {question}"), false, Some(60))
}

pub fn integrate_queries(question: &str, queries: &[String]) -> ChatRequest {
    let system = "Combine the question and its search queries into one precise question that \
        covers them. Reply with that question only.";
    let user = format!("Question: {question}\n\nQueries:\n{}", queries.join("\n"));
    request(system, user, false, Some(100))
}

pub fn critique(question: &str, draft: &str, sources: &[Source]) -> ChatRequest {
    let system = "You review a draft answer against its sources. Reply with JSON \
        {\"complete\": true} if the draft fully and correctly answers the question from the \
        sources, otherwise {\"complete\": false, \"missing\": \"what is missing or wrong\", \
        \"query\": \"a search query that would find it\"}.";
    let user = format!(
        "Sources:\n\n{}Question: {question}\n\nDraft answer: {draft}",
        numbered_sources(sources)
    );
    request(system, user, true, Some(200))
}

/// One item per non-empty line, without list numbering, bullets or quotes.
pub fn lines(reply: &str, limit: usize) -> Vec<String> {
    reply
        .lines()
        .map(|line| {
            line.trim()
                .trim_start_matches(|c: char| {
                    c.is_ascii_digit() || matches!(c, '.' | ')' | '-' | '*' | '•')
                })
                .trim()
                .trim_matches('"')
                .trim()
                .to_string()
        })
        .filter(|line| !line.is_empty())
        .take(limit)
        .collect()
}

/// The first JSON object in a reply (models sometimes wrap it in prose or code fences).
pub fn json_object(reply: &str) -> Option<Value> {
    let start = reply.find('{')?;
    let end = reply.rfind('}')?;
    serde_json::from_str(reply.get(start..=end)?).ok()
}

/// A document grade, as CRAG's evaluator gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grade {
    Relevant,
    Ambiguous,
    Irrelevant,
}

/// Reads a grade from JSON or plain words; anything unclear is ambiguous.
pub fn parse_grade(reply: &str) -> Grade {
    let word = json_object(reply)
        .and_then(|value| value["grade"].as_str().map(str::to_lowercase))
        .unwrap_or_else(|| reply.to_lowercase());
    if word.contains("irrelevant") || word.contains("not relevant") {
        Grade::Irrelevant
    } else if word.contains("ambiguous") {
        Grade::Ambiguous
    } else if word.contains("relevant") {
        Grade::Relevant
    } else {
        Grade::Ambiguous
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_lists_and_grades_leniently() {
        assert_eq!(
            lines("1. first query\n\n- \"second\"\n3) third\nfourth", 3),
            vec!["first query", "second", "third"]
        );
        assert_eq!(parse_grade(r#"{"grade": "Relevant"}"#), Grade::Relevant);
        assert_eq!(
            parse_grade("```json\n{\"grade\":\"irrelevant\"}\n```"),
            Grade::Irrelevant
        );
        assert_eq!(parse_grade("This is not relevant."), Grade::Irrelevant);
        assert_eq!(parse_grade("maybe"), Grade::Ambiguous);
    }
}
