//! Anthropic Messages API (`/v1/messages`): system prompt apart, tool use as content blocks,
//! streaming over server-sent events.

use crate::http::{malformed, read_sse, Endpoint, Http, HttpError};
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
                        sink(text);
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
        Ok(match on_token {
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
