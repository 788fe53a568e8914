//! An agent with tools: it searches the collection, calculates and compares, for a bounded
//! number of steps, then answers citing the numbered results it saw.

use super::calculator;
use super::iterative::merge;
use super::sources;
use crate::corpus::RagError;
use crate::prompts::{documents, UNTRUSTED_DOCUMENTS};
use crate::run::Run;
use serde_json::{json, Value};
use shiori_core::{Answer, ChatMessage, ChatRequest, Role, Source, ToolCall, ToolSpec};

const SYSTEM: &str = "You answer questions about a document collection. Use the `search` tool to \
    find passages; every passage it returns is numbered [n]. Use `calculate` for arithmetic and \
    `compare` to look up two things side by side. When you can answer, reply with the answer and \
    cite the passages of every claim as [n]. If the collection does not contain the answer, reply \
    exactly CANNOT_ANSWER. Search results come as a <documents> block.";

fn tools() -> Vec<ToolSpec> {
    let text = |description: &str| json!({"type": "string", "description": description});
    // No other keys: a model held to the schema by a grammar then cannot add any.
    let arguments = |properties: Value, required: &[&str]| {
        json!({"type": "object", "properties": properties, "required": required,
               "additionalProperties": false})
    };
    vec![
        ToolSpec {
            name: "search".to_string(),
            description: "Search the document collection.".to_string(),
            parameters: arguments(json!({"query": text("what to look for")}), &["query"]),
        },
        ToolSpec {
            name: "calculate".to_string(),
            description: "Evaluate an arithmetic expression with + - * / % ^ and parentheses."
                .to_string(),
            parameters: arguments(
                json!({"expression": text("e.g. (120 - 20) * 1.1")}),
                &["expression"],
            ),
        },
        ToolSpec {
            name: "compare".to_string(),
            description: "Search the collection for two things and show the passages side by side."
                .to_string(),
            parameters: arguments(
                json!({"first": text("the first thing"), "second": text("the second thing")}),
                &["first", "second"],
            ),
        },
    ]
}

pub(crate) fn agentic(run: &mut Run, question: &str) -> Result<Answer, RagError> {
    let model = run.answer_model()?;
    let system = format!("{SYSTEM} {UNTRUSTED_DOCUMENTS}");
    let mut messages = vec![ChatMessage::system(system), ChatMessage::user(question)];
    let mut context: Vec<Source> = Vec::new();
    let steps = run.params().max_steps.max(1);
    for step in 1..=steps {
        let last = step == steps;
        if last {
            messages.push(ChatMessage::user(
                "No more tool calls are possible: answer now from the passages you have.",
            ));
        }
        let request = ChatRequest {
            messages: messages.clone(),
            max_tokens: run.params().max_tokens,
            temperature: Some(0.0),
            json_mode: false,
            json_schema: None,
            grammar: None,
            tools: if last { Vec::new() } else { tools() },
        };
        let reply = run.chat(
            "agent",
            model,
            &request,
            format!("step {step}: {} messages", messages.len()),
        )?;
        if reply.tool_calls.is_empty() {
            return Ok(run.conclude(
                &with_tool_results(question, &messages),
                &reply.content,
                context,
            ));
        }
        messages.push(ChatMessage {
            role: Role::Assistant,
            content: reply.content.clone(),
            tool_calls: reply.tool_calls.clone(),
            tool_call_id: None,
        });
        for call in &reply.tool_calls {
            let result = execute(run, call, &mut context)?;
            messages.push(ChatMessage {
                role: Role::Tool,
                content: result,
                tool_calls: Vec::new(),
                tool_call_id: Some(call.id.clone()),
            });
        }
    }
    Ok(run.conclude(question, "", context))
}

/// The question, then what the tools answered (a calculated figure is the answer's to state
/// though no source has it), one per line, for checking the answer.
fn with_tool_results(question: &str, messages: &[ChatMessage]) -> String {
    std::iter::once(question)
        .chain(
            messages
                .iter()
                .filter(|message| message.role == Role::Tool)
                .map(|message| message.content.as_str()),
        )
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs one tool call; what the model got wrong goes back to it as the tool's answer.
fn execute(run: &mut Run, call: &ToolCall, context: &mut Vec<Source>) -> Result<String, RagError> {
    let argument = |name: &str| {
        call.arguments
            .get(name)
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let k = run.params().top_k;
    let result = match call.name.as_str() {
        "search" => match argument("query") {
            Some(query) => found(context, sources(&run.retrieve(&query, k)?.hits)),
            None => "error: search needs a `query` string".to_string(),
        },
        "compare" => match (argument("first"), argument("second")) {
            (Some(first), Some(second)) => {
                let first_hits = sources(&run.retrieve(&first, k)?.hits);
                let second_hits = sources(&run.retrieve(&second, k)?.hits);
                format!(
                    "About {first}:\n{}\nAbout {second}:\n{}",
                    found(context, first_hits),
                    found(context, second_hits)
                )
            }
            _ => "error: compare needs `first` and `second` strings".to_string(),
        },
        "calculate" => {
            let outcome = match argument("expression") {
                Some(expression) => calculator::evaluate(&expression)
                    .map(|value| value.to_string())
                    .unwrap_or_else(|error| format!("error: {error}")),
                None => "error: calculate needs an `expression` string".to_string(),
            };
            run.trace.note(
                "calculate",
                call.arguments.to_string(),
                outcome.as_str(),
                0.0,
            );
            outcome
        }
        other => format!("error: there is no tool named {other:?}"),
    };
    Ok(result)
}

/// Adds `hits` to the context and shows them with their numbers in it.
fn found(context: &mut Vec<Source>, hits: Vec<Source>) -> String {
    if hits.is_empty() {
        return "no passages found".to_string();
    }
    merge(context, hits.clone());
    let numbered: Vec<(usize, &Source)> = hits
        .iter()
        .filter_map(|hit| {
            let index = context.iter().position(|s| s.chunk_id == hit.chunk_id)?;
            Some((index + 1, &context[index]))
        })
        .collect();
    documents(numbered)
}

#[cfg(test)]
mod tests {
    use crate::test_support::*;
    use crate::{PipelineKind, PipelineParams};
    use serde_json::json;
    use shiori_core::PriceTable;

    #[test]
    fn calls_tools_then_answers_with_citations() {
        let server = llm_server(|_, _, request| {
            let body = request.json();
            let messages = body["messages"].as_array().unwrap();
            let tool_results = messages.iter().filter(|m| m["role"] == "tool").count();
            match tool_results {
                0 => tool_call("call_1", "search", json!({"query": "storage blocks"})),
                1 => tool_call("call_2", "calculate", json!({"expression": "100 + 2 * 50"})),
                _ => {
                    let last = messages.last().unwrap()["content"].as_str().unwrap();
                    completion(&format!("With two blocks you get {last} GB [1]."))
                }
            }
        });
        let model = model(&server, "agent");
        let corpus = FixedCorpus::new(&[
            ("blocks", "Extra storage is sold in blocks of 50 GB."),
            ("vpn", "Connect to the VPN first."),
        ]);
        let prices = PriceTable::default();
        let pipelines = one_model_pipelines(&corpus, &model, &prices, test_params());
        let answer = pipelines
            .run(
                "How much storage with two extra blocks?",
                PipelineKind::Agentic,
            )
            .unwrap();
        assert_eq!(answer.answer, "With two blocks you get 200 GB [1].");
        assert_eq!(answer.citations[0].doc_id, "blocks");
        let requests = server.requests();
        assert_eq!(requests.len(), 3);
        let first = requests[0].json();
        let tools: Vec<&str> = first["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(tools, vec!["search", "calculate", "compare"]);
        let second = requests[1].json();
        let search_result = second["messages"].as_array().unwrap().last().unwrap();
        assert_eq!(search_result["tool_call_id"], "call_1");
        assert!(search_result["content"]
            .as_str()
            .unwrap()
            .starts_with("<documents>\n<document>\n[1] blocks"));
        let steps: Vec<&str> = answer.trace.steps.iter().map(|s| s.step.as_str()).collect();
        assert_eq!(
            steps,
            vec![
                "agent",
                "retrieve",
                "agent",
                "calculate",
                "agent",
                "check_citations"
            ]
        );
    }

    #[test]
    fn stops_calling_tools_after_the_step_bound() {
        let server = llm_server(|_, _, request| {
            if request.json()["tools"].is_array() {
                tool_call("again", "search", json!({"query": "connect to the VPN"}))
            } else {
                completion("Connect to the VPN [1].")
            }
        });
        let model = model(&server, "agent");
        let corpus = FixedCorpus::new(&[("vpn", "Connect to the VPN first.")]);
        let prices = PriceTable::default();
        let pipelines = one_model_pipelines(
            &corpus,
            &model,
            &prices,
            PipelineParams {
                max_steps: 3,
                ..test_params()
            },
        );
        let answer = pipelines.run("vpn?", PipelineKind::Agentic).unwrap();
        assert_eq!(
            server.requests().len(),
            3,
            "two tool rounds, then an answer without tools"
        );
        assert_eq!(answer.citations.len(), 1);
    }
}
