//! Tool calls a model printed as text, for servers and local models that do not return them as
//! structured calls: the Hermes/Qwen `<tool_call>{"name": …, "arguments": …}</tool_call>` form
//! and the bare JSON object small models often reply with instead.

use crate::{ToolCall, ToolSpec};

/// Splits a reply into its text and the `<tool_call>{"name": …, "arguments": …}</tool_call>`
/// blocks it holds. A block that is not such JSON stays in the text. Small models often drop the
/// tags: a reply that is nothing but such JSON naming one of `tools` is a call too.
pub fn parse_tool_calls(reply: &str, tools: &[ToolSpec]) -> (String, Vec<ToolCall>) {
    if let Some(call) = parse_call(reply, 0) {
        if tools.iter().any(|tool| tool.name == call.name) {
            return (String::new(), vec![call]);
        }
    }
    const OPEN: &str = "<tool_call>";
    const CLOSE: &str = "</tool_call>";
    let mut text = String::new();
    let mut calls = Vec::new();
    let mut rest = reply;
    while let Some(start) = rest.find(OPEN) {
        let after = &rest[start + OPEN.len()..];
        let (body, next) = match after.find(CLOSE) {
            Some(end) => (&after[..end], &after[end + CLOSE.len()..]),
            None => (after, ""),
        };
        match parse_call(body, calls.len()) {
            Some(call) => {
                text.push_str(&rest[..start]);
                calls.push(call);
            }
            None => text.push_str(&rest[..rest.len() - next.len()]),
        }
        rest = next;
    }
    text.push_str(rest);
    (text.trim().to_string(), calls)
}

fn parse_call(body: &str, index: usize) -> Option<ToolCall> {
    let value: serde_json::Value = serde_json::from_str(body.trim()).ok()?;
    let name = value.get("name")?.as_str()?.to_string();
    let arguments = value
        .get("arguments")
        .cloned()
        .unwrap_or_else(|| serde_json::json!({}));
    Some(ToolCall {
        id: format!("call_{index}"),
        name,
        arguments,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_tool_calls_out_of_a_reply() {
        let reply = "Let me check.\n<tool_call>\n{\"name\": \"lookup\", \"arguments\": {\"q\": \"x\"}}\n</tool_call>\n<tool_call>not json</tool_call>";
        let (text, calls) = parse_tool_calls(reply, &[]);
        assert_eq!(text, "Let me check.\n\n<tool_call>not json</tool_call>");
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].id, "call_0");
        assert_eq!(calls[0].name, "lookup");
        assert_eq!(calls[0].arguments, serde_json::json!({"q": "x"}));
        assert_eq!(
            parse_tool_calls("plain", &[]),
            ("plain".to_string(), vec![])
        );

        let untagged = " {\"name\": \"lookup\", \"arguments\": {\"q\": \"y\"}}\n";
        let lookup = ToolSpec {
            name: "lookup".into(),
            description: String::new(),
            parameters: serde_json::json!({}),
        };
        let (text, calls) = parse_tool_calls(untagged, std::slice::from_ref(&lookup));
        assert_eq!(text, "");
        assert_eq!(calls[0].arguments, serde_json::json!({"q": "y"}));
        // JSON naming no offered tool is just a JSON reply.
        assert_eq!(parse_tool_calls(untagged, &[]).1, vec![]);
    }
}
