//! Anthropic Messages API (`/v1/messages`): system prompt apart, tool use as content blocks,
//! streaming over server-sent events.

use crate::http::{forward, malformed, read_sse, Endpoint, Http, HttpError};
use serde_json::{json, Value};
use shiori_core::{
    ChatError, ChatMessage, ChatModel, ChatRequest, ChatResponse, Role, TokenSink, ToolCall, Usage,
};

const PROVIDER: &str = "anthropic";
const API_VERSION: &str = "2023-06-01";
/// The API requires `max_tokens`; this is used when the request leaves it open.
const DEFAULT_MAX_TOKENS: u32 = 1024;
/// Anthropic has no JSON mode; the system prompt asks for it instead.
const JSON_INSTRUCTION: &str = "Reply with one JSON object and nothing else.";

pub struct AnthropicChat {
    http: Http,
    model: String,
    model_id: String,
}

impl AnthropicChat {
    pub fn new(endpoint: Endpoint, model: &str) -> Result<AnthropicChat, ChatError> {
        Ok(AnthropicChat {
            http: Http::new(PROVIDER, endpoint)?,
            model: model.to_string(),
            model_id: format!("{PROVIDER}:{model}"),
        })
    }

    fn body(&self, request: &ChatRequest, stream: bool) -> Value {
        let mut system: Vec<&str> = request
            .messages
            .iter()
            .filter(|m| m.role == Role::System)
            .map(|m| m.content.as_str())
            .collect();
        if request.json_mode {
            system.push(JSON_INSTRUCTION);
        }
        let messages: Vec<Value> = request
            .messages
            .iter()
            .filter(|m| m.role != Role::System)
            .map(message_json)
            .collect();
        let mut body = json!({
            "model": self.model,
            "max_tokens": request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            "messages": messages,
        });
        if !system.is_empty() {
            body["system"] = json!(system.join("\n\n"));
        }
        if let Some(temperature) = request.temperature {
            body["temperature"] = json!(temperature);
        }
        if !request.tools.is_empty() {
            body["tools"] = request
                .tools
                .iter()
                .map(|tool| {
                    json!({"name": tool.name, "description": tool.description,
                           "input_schema": tool.parameters})
                })
                .collect();
        }
        if stream {
            body["stream"] = json!(true);
        }
        body
    }

    fn post(
        &self,
        body: Value,
    ) -> impl Fn(&reqwest::blocking::Client) -> reqwest::blocking::RequestBuilder + '_ {
        let url = self.http.endpoint.url("/v1/messages");
        move |client| {
            let mut request = client
                .post(&url)
                .header("anthropic-version", API_VERSION)
                .json(&body);
            if let Some(key) = &self.http.endpoint.api_key {
                request = request.header("x-api-key", key);
            }
            request
        }
    }

    fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, HttpError> {
        let reply = self.http.json(self.post(self.body(request, false)))?;
        let blocks = reply["content"]
            .as_array()
            .ok_or_else(|| malformed(PROVIDER, "content", &reply))?;
        let mut response = ChatResponse {
            model: reply["model"].as_str().unwrap_or(&self.model).to_string(),
            usage: Usage {
                prompt_tokens: reply["usage"]["input_tokens"].as_u64().unwrap_or(0),
                completion_tokens: reply["usage"]["output_tokens"].as_u64().unwrap_or(0),
            },
            ..ChatResponse::default()
        };
        for block in blocks {
            match block["type"].as_str() {
                Some("text") => response
                    .content
                    .push_str(block["text"].as_str().unwrap_or_default()),
                Some("tool_use") => response.tool_calls.push(ToolCall {
                    id: block["id"].as_str().unwrap_or_default().to_string(),
                    name: block["name"].as_str().unwrap_or_default().to_string(),
                    arguments: block["input"].clone(),
                }),
                _ => {}
            }
        }
        Ok(response)
    }

    fn stream(
        &self,
        request: &ChatRequest,
        sink: TokenSink<'_>,
    ) -> Result<ChatResponse, HttpError> {
        let response = self.http.send(self.post(self.body(request, true)))?;
        let mut reply = ChatResponse {
            model: self.model.clone(),
            ..ChatResponse::default()
        };
        // Tool-use blocks by content index: id, name, and the input JSON text as it arrives.
        let mut tools: Vec<(usize, String, String, String)> = Vec::new();
        read_sse(PROVIDER, response, |event| {
            match event["type"].as_str() {
                Some("message_start") => {
                    let message = &event["message"];
                    if let Some(model) = message["model"].as_str() {
                        reply.model = model.to_string();
                    }
                    reply.usage.prompt_tokens =
                        message["usage"]["input_tokens"].as_u64().unwrap_or(0);
                }
                Some("content_block_start") if event["content_block"]["type"] == "tool_use" => {
                    let block = &event["content_block"];
                    tools.push((
                        event["index"].as_u64().unwrap_or(0) as usize,
                        block["id"].as_str().unwrap_or_default().to_string(),
                        block["name"].as_str().unwrap_or_default().to_string(),
                        String::new(),
                    ));
                }
                Some("content_block_delta") => {
                    let delta = &event["delta"];
                    if let Some(text) = delta["text"].as_str() {
                        forward(PROVIDER, sink, text)?;
                        reply.content.push_str(text);
                    }
                    if let Some(partial) = delta["partial_json"].as_str() {
                        let index = event["index"].as_u64().unwrap_or(0) as usize;
                        if let Some(tool) = tools.iter_mut().find(|t| t.0 == index) {
                            tool.3.push_str(partial);
                        }
                    }
                }
                Some("message_delta") => {
                    if let Some(output) = event["usage"]["output_tokens"].as_u64() {
                        reply.usage.completion_tokens = output;
                    }
                }
                Some("error") => {
                    let message = event["error"]["message"].as_str().unwrap_or("stream error");
                    return Err(HttpError {
                        provider: PROVIDER,
                        kind: crate::http::FailureKind::Transient { retry_after: None },
                        message: message.to_string(),
                    });
                }
                _ => {}
            }
            Ok(())
        })?;
        reply.tool_calls = tools
            .into_iter()
            .map(|(_, id, name, input)| ToolCall {
                id,
                name,
                arguments: serde_json::from_str(&input).unwrap_or_else(|_| json!({})),
            })
            .collect();
        Ok(reply)
    }
}

impl ChatModel for AnthropicChat {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn chat(
        &self,
        request: &ChatRequest,
        on_token: Option<TokenSink<'_>>,
    ) -> Result<ChatResponse, ChatError> {
        Ok(match on_token.filter(|sink| sink.wants_pieces()) {
            Some(sink) => self.stream(request, sink)?,
            None => self.complete(request)?,
        })
    }
}

fn message_json(message: &ChatMessage) -> Value {
    match message.role {
        Role::Tool => json!({"role": "user", "content": [{
            "type": "tool_result",
            "tool_use_id": message.tool_call_id.clone().unwrap_or_default(),
            "content": message.content,
        }]}),
        Role::Assistant if !message.tool_calls.is_empty() => {
            let mut blocks = Vec::new();
            if !message.content.is_empty() {
                blocks.push(json!({"type": "text", "text": message.content}));
            }
            for call in &message.tool_calls {
                blocks.push(json!({"type": "tool_use", "id": call.id, "name": call.name,
                                   "input": call.arguments}));
            }
            json!({"role": "assistant", "content": blocks})
        }
        Role::Assistant => json!({"role": "assistant", "content": message.content}),
        Role::User | Role::System => json!({"role": "user", "content": message.content}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::endpoint;
    use shiori_core::ToolSpec;
    use shiori_mock::{sequence, MockServer, Reply};

    fn request() -> ChatRequest {
        ChatRequest {
            messages: vec![
                ChatMessage::system("cite sources"),
                ChatMessage::user("what is the quota?"),
            ],
            json_mode: true,
            tools: vec![ToolSpec {
                name: "search".into(),
                description: "search docs".into(),
                parameters: json!({"type": "object"}),
            }],
            ..ChatRequest::default()
        }
    }

    #[test]
    fn sends_messages_and_reads_text_and_tool_use() {
        let server = MockServer::start(sequence(vec![
            Reply::status(
                529,
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
            ),
            Reply::json(json!({
                "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test-1",
                "content": [
                    {"type": "text", "text": "Let me search."},
                    {"type": "tool_use", "id": "toolu_1", "name": "search", "input": {"query": "quota"}}
                ],
                "stop_reason": "tool_use",
                "usage": {"input_tokens": 30, "output_tokens": 12}
            })),
        ]));
        let model = AnthropicChat::new(endpoint(server.url()), "claude-test").unwrap();
        let reply = model.chat(&request(), None).unwrap();
        assert_eq!(reply.content, "Let me search.");
        assert_eq!(reply.tool_calls[0].id, "toolu_1");
        assert_eq!(reply.tool_calls[0].arguments, json!({"query": "quota"}));
        assert_eq!(
            reply.usage,
            Usage {
                prompt_tokens: 30,
                completion_tokens: 12
            }
        );
        assert_eq!(reply.model, "claude-test-1");
        let requests = server.requests_to("/v1/messages");
        assert_eq!(requests.len(), 2, "529 overloaded is retried");
        let sent = &requests[1];
        assert_eq!(sent.header("x-api-key"), Some("test-key"));
        assert_eq!(sent.header("anthropic-version"), Some(API_VERSION));
        let body = sent.json();
        assert_eq!(body["max_tokens"], DEFAULT_MAX_TOKENS);
        assert!(body["system"].as_str().unwrap().contains("cite sources"));
        assert!(body["system"].as_str().unwrap().contains("JSON"));
        assert_eq!(body["messages"].as_array().unwrap().len(), 1);
        assert_eq!(body["messages"][0]["role"], "user");
        assert_eq!(body["tools"][0]["input_schema"], json!({"type": "object"}));
    }

    #[test]
    fn sends_tool_results_as_user_blocks() {
        let server = MockServer::start(sequence(vec![Reply::json(json!({
            "model": "claude-test", "content": [{"type": "text", "text": "100 GB [1]"}],
            "usage": {"input_tokens": 1, "output_tokens": 1}
        }))]));
        let model = AnthropicChat::new(endpoint(server.url()), "claude-test").unwrap();
        let mut request = request();
        request.messages.push(ChatMessage {
            role: Role::Assistant,
            content: String::new(),
            tool_calls: vec![ToolCall {
                id: "toolu_1".into(),
                name: "search".into(),
                arguments: json!({"query": "quota"}),
            }],
            tool_call_id: None,
        });
        request.messages.push(ChatMessage {
            role: Role::Tool,
            content: "[1] 100 GB".into(),
            tool_calls: Vec::new(),
            tool_call_id: Some("toolu_1".into()),
        });
        model.chat(&request, None).unwrap();
        let body = server.requests()[0].json();
        assert_eq!(body["messages"][1]["content"][0]["type"], "tool_use");
        assert_eq!(body["messages"][2]["role"], "user");
        assert_eq!(body["messages"][2]["content"][0]["type"], "tool_result");
        assert_eq!(body["messages"][2]["content"][0]["tool_use_id"], "toolu_1");
    }

    #[test]
    fn streams_text_tool_input_and_usage() {
        let events = [
            json!({"type": "message_start", "message": {"model": "claude-test-1",
                   "usage": {"input_tokens": 25, "output_tokens": 1}}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "100 "}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "GB"}}),
            json!({"type": "content_block_start", "index": 1,
                   "content_block": {"type": "tool_use", "id": "toolu_2", "name": "search", "input": {}}}),
            json!({"type": "content_block_delta", "index": 1,
                   "delta": {"type": "input_json_delta", "partial_json": "{\"query\": "}}),
            json!({"type": "content_block_delta", "index": 1,
                   "delta": {"type": "input_json_delta", "partial_json": "\"vpn\"}"}}),
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 9}}),
            json!({"type": "message_stop"}),
        ]
        .map(|event| event.to_string());
        let server = MockServer::start(sequence(vec![Reply::sse(&events)]));
        let model = AnthropicChat::new(endpoint(server.url()), "claude-test").unwrap();
        let mut streamed = String::new();
        let mut sink = |token: &str| {
            streamed.push_str(token);
            std::ops::ControlFlow::Continue(())
        };
        let reply = model.chat(&request(), Some(&mut sink)).unwrap();
        assert_eq!(streamed, "100 GB");
        assert_eq!(reply.content, "100 GB");
        assert_eq!(
            reply.usage,
            Usage {
                prompt_tokens: 25,
                completion_tokens: 9
            }
        );
        assert_eq!(reply.tool_calls[0].arguments, json!({"query": "vpn"}));
        assert_eq!(server.requests()[0].json()["stream"], true);
    }

    #[test]
    fn reports_a_too_long_prompt() {
        let server = MockServer::start(sequence(vec![Reply::status(
            400,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 250000 tokens > 200000 maximum"}}"#,
        )]));
        let model = AnthropicChat::new(endpoint(server.url()), "claude-test").unwrap();
        let error = model.chat(&request(), None).unwrap_err();
        assert!(matches!(error, ChatError::ContextTooLong { .. }), "{error}");
    }
}
