//! ChatML, the chat format of SmolLM2 and Qwen2.5: `<|im_start|>role\n…<|im_end|>\n` per
//! message, then `<|im_start|>assistant\n`. Tools and tool results follow Qwen2.5's template
//! (a `<tools>` block in the system prompt, `<tool_call>` JSON in replies, `<tool_response>` in a
//! user turn).

use shiori_core::{ChatMessage, ChatRequest, Role, ToolCall, ToolSpec};

pub const IM_START: &str = "<|im_start|>";
pub const IM_END: &str = "<|im_end|>";

const JSON_INSTRUCTION: &str = "Reply with a single JSON object and nothing else.";

/// A prompt as the template lays it out: control tokens (by name) between spans of text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    Control(&'static str),
    Text(String),
}

/// The model's ChatML template and its default system prompt.
#[derive(Debug, Clone)]
pub struct ChatTemplate {
    default_system: Option<String>,
}

impl ChatTemplate {
    /// Reads `tokenizer.chat_template` (Jinja source): it must be ChatML; the system prompt the
    /// template inserts when a conversation has none is kept, so prompts match the model's training.
    pub fn from_jinja(source: &str) -> Result<Self, String> {
        if !(source.contains(IM_START) && source.contains(IM_END)) {
            return Err(
                "tokenizer.chat_template is not ChatML (no <|im_start|>/<|im_end|>)".into(),
            );
        }
        Ok(ChatTemplate {
            default_system: default_system_prompt(source),
        })
    }

    /// Lays out `request` as a prompt ending where the assistant's reply starts. In JSON mode
    /// the reply is begun with `{` (returned as the second value) so the model continues an object.
    pub fn render(&self, request: &ChatRequest) -> (Vec<Piece>, &'static str) {
        let mut pieces = Vec::new();
        let mut messages = request.messages.as_slice();
        let mut system = match messages.first() {
            Some(first) if first.role == Role::System => {
                messages = &messages[1..];
                Some(first.content.clone())
            }
            _ => self.default_system.clone(),
        };
        if !request.tools.is_empty() {
            let mut text = system.unwrap_or_default();
            text.push_str(
                "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n\
                 You are provided with function signatures within <tools></tools> XML tags:\n<tools>",
            );
            for tool in &request.tools {
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
            system = Some(text);
        }
        if request.json_mode {
            system = Some(match system {
                Some(text) if !text.is_empty() => format!("{text}\n\n{JSON_INSTRUCTION}"),
                _ => JSON_INSTRUCTION.to_string(),
            });
        }
        if let Some(system) = system {
            turn(&mut pieces, "system", &system);
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
                    turn(&mut pieces, "user", &run.join("\n"));
                    continue;
                }
                Role::Assistant if !message.tool_calls.is_empty() => {
                    turn(&mut pieces, "assistant", &with_tool_calls(message));
                }
                role => turn(&mut pieces, role_name(role), &message.content),
            }
            index += 1;
        }
        pieces.push(Piece::Control(IM_START));
        let prefill = if request.json_mode { "{" } else { "" };
        pieces.push(Piece::Text(format!("assistant\n{prefill}")));
        (pieces, prefill)
    }
}

fn turn(pieces: &mut Vec<Piece>, role: &str, content: &str) {
    pieces.push(Piece::Control(IM_START));
    pieces.push(Piece::Text(format!("{role}\n{content}")));
    pieces.push(Piece::Control(IM_END));
    pieces.push(Piece::Text("\n".to_string()));
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    }
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

/// The literal system prompt in `<|im_start|>system\n…<|im_end|>` of the Jinja source, if any
/// (skipping the places where the template splices in a variable).
fn default_system_prompt(source: &str) -> Option<String> {
    let marker = format!("{IM_START}system");
    source.match_indices(&marker).find_map(|(at, _)| {
        let rest = &source[at + marker.len()..];
        let rest = rest
            .strip_prefix("\\n")
            .or_else(|| rest.strip_prefix('\n'))?;
        let end = rest.find(IM_END)?;
        let text = &rest[..end];
        let literal = !text.is_empty() && !text.contains(['\'', '"', '+', '{', '}']);
        literal.then(|| text.to_string())
    })
}

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

    const SMOLLM_TEMPLATE: &str = "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";
    const QWEN_TEMPLATE_PART: &str = "{{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}\n{%- else %}\n{{- '<|im_start|>system\\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\\n' }}";

    fn flatten(pieces: &[Piece]) -> String {
        pieces
            .iter()
            .map(|p| match p {
                Piece::Control(c) => c.to_string(),
                Piece::Text(t) => t.clone(),
            })
            .collect()
    }

    #[test]
    fn reads_the_default_system_prompt_of_both_templates() {
        let smol = ChatTemplate::from_jinja(SMOLLM_TEMPLATE).unwrap();
        assert_eq!(
            smol.default_system.as_deref(),
            Some("You are a helpful AI assistant named SmolLM, trained by Hugging Face")
        );
        let qwen = ChatTemplate::from_jinja(QWEN_TEMPLATE_PART).unwrap();
        assert_eq!(
            qwen.default_system.as_deref(),
            Some("You are Qwen, created by Alibaba Cloud. You are a helpful assistant.")
        );
        let err = ChatTemplate::from_jinja("{{ bos_token }}[INST]").unwrap_err();
        assert!(err.contains("not ChatML"), "{err}");
    }

    #[test]
    fn renders_chatml_with_the_default_system_prompt() {
        let template = ChatTemplate::from_jinja(SMOLLM_TEMPLATE).unwrap();
        let request = ChatRequest {
            messages: vec![
                ChatMessage::user("Hi"),
                ChatMessage::assistant("Hello!"),
                ChatMessage::user("Bye"),
            ],
            ..ChatRequest::default()
        };
        let (pieces, prefill) = template.render(&request);
        assert_eq!(prefill, "");
        assert_eq!(
            flatten(&pieces),
            "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n\
             <|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello!<|im_end|>\n\
             <|im_start|>user\nBye<|im_end|>\n<|im_start|>assistant\n"
        );
    }

    #[test]
    fn json_mode_instructs_and_opens_the_object() {
        let template = ChatTemplate::from_jinja(SMOLLM_TEMPLATE).unwrap();
        let request = ChatRequest {
            messages: vec![ChatMessage::system("Be brief."), ChatMessage::user("Q")],
            json_mode: true,
            ..ChatRequest::default()
        };
        let (pieces, prefill) = template.render(&request);
        assert_eq!(prefill, "{");
        assert_eq!(
            flatten(&pieces),
            "<|im_start|>system\nBe brief.\n\nReply with a single JSON object and nothing else.<|im_end|>\n\
             <|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\n{"
        );
    }

    #[test]
    fn tools_go_in_the_system_prompt_and_results_in_a_user_turn() {
        let template = ChatTemplate::from_jinja(QWEN_TEMPLATE_PART).unwrap();
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
            ..ChatRequest::default()
        };
        let text = flatten(&template.render(&request).0);
        assert!(text.starts_with(
            "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.\n\n# Tools"
        ));
        assert!(text.contains(
            "<tools>\n{\"function\":{\"description\":\"Looks things up\",\"name\":\"lookup\",\"parameters\":{\"type\":\"object\"}},\"type\":\"function\"}\n</tools>"
        ), "{text}");
        assert!(text.ends_with(
            "<|im_start|>assistant\n<tool_call>\n{\"arguments\":{\"q\":\"x\"},\"name\":\"lookup\"}\n</tool_call><|im_end|>\n\
             <|im_start|>user\n<tool_response>\n42\n</tool_response><|im_end|>\n<|im_start|>assistant\n"
        ), "{text}");
    }

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
