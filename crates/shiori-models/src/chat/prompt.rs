//! A request as the model's own chat template lays it out. Tools follow the Hermes/Qwen
//! convention, which works as plain text under any template: a `<tools>` block in the system
//! prompt, `<tool_call>` JSON in replies, `<tool_response>` blocks in a user turn.
//!
//! The template is applied to placeholders, then each message's text is tokenized as plain
//! text: control tokens a document or a user types stay text and cannot end a turn.

#[cfg(test)]
use shiori_core::ToolCall;
use shiori_core::{ChatMessage, ChatRequest, Role, ToolSpec};

pub const TOOL_CALL_OPEN: &str = "<tool_call>";
pub const TOOL_CALL_CLOSE: &str = "</tool_call>";
/// How a call printed without its tags starts ([`tool_call_schema`] puts the name first).
pub const BARE_TOOL_CALL_OPEN: &str = "{\"name\"";

const JSON_INSTRUCTION: &str = "Reply with a single JSON object and nothing else.";

/// Marks where message `n` goes in the rendered template: private-use characters no template
/// produces or trims.
fn placeholder(index: usize) -> String {
    format!("\u{E000}{index}\u{E001}")
}

/// A prompt as the template lays it out: the template's own text (with its control tokens)
/// between spans of message text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    Template(String),
    Message(String),
}

/// The (role, content) turns of `request`, with tools, tool calls and JSON mode spelled out.
pub fn turns(request: &ChatRequest) -> Vec<(&'static str, String)> {
    let mut turns = Vec::new();
    let mut messages = request.messages.as_slice();
    let mut system = match messages.first() {
        Some(first) if first.role == Role::System => {
            messages = &messages[1..];
            Some(first.content.clone())
        }
        _ => None,
    };
    if !request.tools.is_empty() {
        system = Some(with_tools(system.unwrap_or_default(), &request.tools));
    }
    if request.json_mode {
        system = Some(match system {
            Some(text) if !text.is_empty() => format!("{text}\n\n{JSON_INSTRUCTION}"),
            _ => JSON_INSTRUCTION.to_string(),
        });
    }
    if let Some(system) = system {
        turns.push(("system", system));
    }
    let mut index = 0;
    while index < messages.len() {
        let message = &messages[index];
        match message.role {
            Role::Tool => {
                // Consecutive tool results share one user turn, as in Qwen's template.
                let run = messages[index..]
                    .iter()
                    .take_while(|m| m.role == Role::Tool)
                    .map(|m| format!("<tool_response>\n{}\n</tool_response>", m.content))
                    .collect::<Vec<_>>();
                index += run.len();
                turns.push(("user", run.join("\n")));
                continue;
            }
            Role::Assistant if !message.tool_calls.is_empty() => {
                turns.push(("assistant", with_tool_calls(message)));
            }
            Role::System => turns.push(("system", message.content.clone())),
            Role::User => turns.push(("user", message.content.clone())),
            Role::Assistant => turns.push(("assistant", message.content.clone())),
        }
        index += 1;
    }
    turns
}

/// A chat template that left out a message (numbered from 1).
#[derive(Debug, thiserror::Error)]
#[error("the chat template dropped message {0}")]
pub struct DroppedMessage(usize);

/// Splits `rendered` (the template applied to [`placeholder`]s) back into the template's text
/// and the messages' contents.
pub fn split(rendered: &str, contents: &[String]) -> Result<Vec<Piece>, DroppedMessage> {
    let mut pieces = Vec::new();
    let mut rest = rendered;
    for (index, content) in contents.iter().enumerate() {
        let marker = placeholder(index);
        let at = rest.find(&marker).ok_or(DroppedMessage(index + 1))?;
        if at > 0 {
            pieces.push(Piece::Template(rest[..at].to_string()));
        }
        if !content.is_empty() {
            pieces.push(Piece::Message(content.clone()));
        }
        rest = &rest[at + marker.len()..];
    }
    if !rest.is_empty() {
        pieces.push(Piece::Template(rest.to_string()));
    }
    Ok(pieces)
}

/// The placeholders standing in for `count` messages.
pub fn placeholders(count: usize) -> Vec<String> {
    (0..count).map(placeholder).collect()
}

/// The JSON Schema of one call, `{"name": …, "arguments": …}` naming one of `tools` (written out
/// by hand: `serde_json` would sort `arguments` before `name`, and the grammar keeps the order).
pub fn tool_call_schema(tools: &[ToolSpec]) -> String {
    let calls: Vec<String> = tools
        .iter()
        .map(|tool| {
            format!(
                r#"{{"type":"object","properties":{{"name":{{"const":{}}},"arguments":{}}},"required":["name","arguments"]}}"#,
                serde_json::Value::from(tool.name.as_str()),
                tool.parameters
            )
        })
        .collect();
    format!(r#"{{"anyOf":[{}]}}"#, calls.join(","))
}

fn with_tools(mut text: String, tools: &[ToolSpec]) -> String {
    text.push_str(
        "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n\
         You are provided with function signatures within <tools></tools> XML tags:\n<tools>",
    );
    for tool in tools {
        let signature = serde_json::json!({
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.parameters,
            }
        });
        text.push('\n');
        text.push_str(&signature.to_string());
    }
    text.push_str(
        "\n</tools>\n\nFor each function call, return a json object with function name and \
         arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n\
         {\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call>",
    );
    text
}

fn with_tool_calls(message: &ChatMessage) -> String {
    let mut text = message.content.clone();
    for call in &message.tool_calls {
        let body = serde_json::json!({"name": call.name, "arguments": call.arguments});
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&format!("<tool_call>\n{body}\n</tool_call>"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tools_go_in_the_system_prompt_and_results_in_a_user_turn() {
        let call = ToolCall {
            id: "call_0".into(),
            name: "lookup".into(),
            arguments: serde_json::json!({"q": "x"}),
        };
        let mut asked = ChatMessage::assistant("");
        asked.tool_calls = vec![call];
        let mut answer = ChatMessage::new(Role::Tool, "42");
        answer.tool_call_id = Some("call_0".into());
        let request = ChatRequest {
            messages: vec![ChatMessage::user("Find x"), asked, answer],
            tools: vec![ToolSpec {
                name: "lookup".into(),
                description: "Looks things up".into(),
                parameters: serde_json::json!({"type": "object"}),
            }],
            json_mode: true,
            ..ChatRequest::default()
        };
        let turns = turns(&request);
        let roles: Vec<_> = turns.iter().map(|(role, _)| *role).collect();
        assert_eq!(roles, ["system", "user", "assistant", "user"]);
        let system = &turns[0].1;
        assert!(system.starts_with("\n\n# Tools"), "{system}");
        assert!(system.contains(
            "<tools>\n{\"function\":{\"description\":\"Looks things up\",\"name\":\"lookup\",\"parameters\":{\"type\":\"object\"}},\"type\":\"function\"}\n</tools>"
        ), "{system}");
        assert!(system.ends_with(JSON_INSTRUCTION));
        assert_eq!(
            turns[2].1,
            "<tool_call>\n{\"arguments\":{\"q\":\"x\"},\"name\":\"lookup\"}\n</tool_call>"
        );
        assert_eq!(turns[3].1, "<tool_response>\n42\n</tool_response>");
    }

    #[test]
    fn a_tool_call_schema_names_before_its_arguments() {
        let tools = [ToolSpec {
            name: "lookup".into(),
            description: String::new(),
            parameters: serde_json::json!({"type": "object"}),
        }];
        assert_eq!(
            tool_call_schema(&tools),
            r#"{"anyOf":[{"type":"object","properties":{"name":{"const":"lookup"},"arguments":{"type":"object"}},"required":["name","arguments"]}]}"#
        );
    }

    #[test]
    fn splits_the_rendered_template_around_the_messages() {
        let marks = placeholders(2);
        let rendered = format!("<s>[sys]{}[/sys][u]{}[/u][a]", marks[0], marks[1]);
        let contents = ["Be brief.".to_string(), "Say </s>".to_string()];
        assert_eq!(
            split(&rendered, &contents).unwrap(),
            vec![
                Piece::Template("<s>[sys]".into()),
                Piece::Message("Be brief.".into()),
                Piece::Template("[/sys][u]".into()),
                Piece::Message("Say </s>".into()),
                Piece::Template("[/u][a]".into()),
            ]
        );
        let dropped = split("<s>[u]x[/u]", &contents).unwrap_err().to_string();
        assert!(dropped.contains("message 1"), "{dropped}");
    }
}
