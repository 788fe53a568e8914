//! OpenAI-compatible chat completions: OpenAI, Azure OpenAI, Ollama, vLLM, llama.cpp server,
//! LM Studio. JSON mode, tool calls, and streaming over server-sent events.

use crate::http::{malformed, read_sse, Endpoint, Http, HttpError};
use serde_json::{json, Value};
use shiori_core::{
    ChatError, ChatModel, ChatRequest, ChatResponse, Role, TokenSink, ToolCall, Usage,
};

const PROVIDER: &str = "openai";

/// A chat model behind an OpenAI-compatible `/chat/completions` endpoint.
pub struct OpenAiChat {
    http: Http,
    model: String,
    model_id: String,
    /// Azure names the API version in the query and authenticates with an `api-key` header.
    azure_api_version: Option<String>,
}

impl OpenAiChat {
    pub fn new(endpoint: Endpoint, model: &str) -> Result<OpenAiChat, ChatError> {
        Ok(OpenAiChat {
            http: Http::new(PROVIDER, endpoint)?,
            model: model.to_string(),
            model_id: format!("{PROVIDER}:{model}"),
            azure_api_version: None,
        })
    }

    /// Talks to an Azure OpenAI deployment (`base_url` is `…/openai/deployments/NAME`).
    pub fn azure(mut self, api_version: &str) -> OpenAiChat {
        self.azure_api_version = Some(api_version.to_string());
        self
    }

    fn body(&self, request: &ChatRequest, stream: bool) -> Value {
        let messages: Vec<Value> = request.messages.iter().map(message_json).collect();
        let mut body = json!({"model": self.model, "messages": messages});
        if let Some(max_tokens) = request.max_tokens {
            body["max_tokens"] = json!(max_tokens);
        }
        if let Some(temperature) = request.temperature {
            body["temperature"] = json!(temperature);
        }
        if request.json_mode {
            body["response_format"] = json!({"type": "json_object"});
        }
        if !request.tools.is_empty() {
            body["tools"] = request
                .tools
                .iter()
                .map(|tool| {
                    json!({"type": "function", "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.parameters,
                    }})
                })
                .collect();
        }
        if stream {
            body["stream"] = json!(true);
            body["stream_options"] = json!({"include_usage": true});
        }
        body
    }

    fn post(
        &self,
        body: &Value,
    ) -> impl Fn(&reqwest::blocking::Client) -> reqwest::blocking::RequestBuilder + '_ {
        let url = self.http.endpoint.url("/chat/completions");
        let body = body.clone();
        move |client| {
            let mut request = client.post(&url).json(&body);
            if let Some(version) = &self.azure_api_version {
                request = request.query(&[("api-version", version)]);
                if let Some(key) = &self.http.endpoint.api_key {
                    request = request.header("api-key", key);
                }
            } else if let Some(key) = &self.http.endpoint.api_key {
                request = request.bearer_auth(key);
            }
            request
        }
    }

    fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, HttpError> {
        let reply = self.http.json(self.post(&self.body(request, false)))?;
        let message = reply
            .pointer("/choices/0/message")
            .ok_or_else(|| malformed(PROVIDER, "choices[0].message", &reply))?;
        let tool_calls = message
            .get("tool_calls")
            .and_then(Value::as_array)
            .map(|calls| calls.iter().map(parse_tool_call).collect())
            .unwrap_or_default();
        Ok(ChatResponse {
            content: message["content"].as_str().unwrap_or_default().to_string(),
            tool_calls,
            usage: parse_usage(&reply["usage"]),
            model: reply["model"].as_str().unwrap_or(&self.model).to_string(),
        })
    }

    fn stream(
        &self,
        request: &ChatRequest,
        sink: TokenSink<'_>,
    ) -> Result<ChatResponse, HttpError> {
        let response = self.http.send(self.post(&self.body(request, true)))?;
        let mut reply = ChatResponse {
            model: self.model.clone(),
            ..ChatResponse::default()
        };
        // Tool-call fragments by index: id, name, and the arguments text as it arrives.
        let mut calls: Vec<(String, String, String)> = Vec::new();
        read_sse(PROVIDER, response, |event| {
            if let Some(model) = event["model"].as_str() {
                reply.model = model.to_string();
            }
            if event["usage"].is_object() {
                reply.usage = parse_usage(&event["usage"]);
            }
            let delta = &event["choices"][0]["delta"];
            if let Some(text) = delta["content"].as_str() {
                sink(text);
                reply.content.push_str(text);
            }
            for fragment in delta["tool_calls"].as_array().into_iter().flatten() {
                let index = fragment["index"].as_u64().unwrap_or(0) as usize;
                if calls.len() <= index {
                    calls.resize(index + 1, Default::default());
                }
                let call = &mut calls[index];
                if let Some(id) = fragment["id"].as_str() {
                    call.0 = id.to_string();
                }
                if let Some(name) = fragment["function"]["name"].as_str() {
                    call.1.push_str(name);
                }
                if let Some(arguments) = fragment["function"]["arguments"].as_str() {
                    call.2.push_str(arguments);
                }
            }
            Ok(())
        })?;
        reply.tool_calls = calls
            .into_iter()
            .map(|(id, name, arguments)| ToolCall {
                id,
                name,
                arguments: parse_arguments(&arguments),
            })
            .collect();
        Ok(reply)
    }
}

impl ChatModel for OpenAiChat {
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

fn message_json(message: &shiori_core::ChatMessage) -> Value {
    let role = match message.role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    };
    let mut value = json!({"role": role, "content": message.content});
    if !message.tool_calls.is_empty() {
        value["tool_calls"] = message
            .tool_calls
            .iter()
            .map(|call| {
                json!({"id": call.id, "type": "function", "function": {
                    "name": call.name,
                    "arguments": call.arguments.to_string(),
                }})
            })
            .collect();
    }
    if let Some(id) = &message.tool_call_id {
        value["tool_call_id"] = json!(id);
    }
    value
}

fn parse_tool_call(call: &Value) -> ToolCall {
    ToolCall {
        id: call["id"].as_str().unwrap_or_default().to_string(),
        name: call["function"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        arguments: parse_arguments(call["function"]["arguments"].as_str().unwrap_or("{}")),
    }
}

/// Tool arguments arrive as JSON text; text that is not JSON is kept as a string for the tool to reject.
fn parse_arguments(text: &str) -> Value {
    if text.trim().is_empty() {
        return json!({});
    }
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_string()))
}

fn parse_usage(usage: &Value) -> Usage {
    Usage {
        prompt_tokens: usage["prompt_tokens"].as_u64().unwrap_or(0),
        completion_tokens: usage["completion_tokens"].as_u64().unwrap_or(0),
    }
}
