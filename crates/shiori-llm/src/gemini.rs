//! Google Gemini `generateContent` (and `streamGenerateContent?alt=sse` for streaming).

use crate::http::{malformed, read_sse, Endpoint, Http, HttpError};
use serde_json::{json, Value};
use shiori_core::{
    ChatError, ChatMessage, ChatModel, ChatRequest, ChatResponse, Role, TokenSink, ToolCall, Usage,
};

const PROVIDER: &str = "gemini";

pub struct GeminiChat {
    http: Http,
    model: String,
    model_id: String,
}

impl GeminiChat {
    /// `endpoint.base_url` is e.g. `https://generativelanguage.googleapis.com`.
    pub fn new(endpoint: Endpoint, model: &str) -> Result<GeminiChat, ChatError> {
        Ok(GeminiChat {
            http: Http::new(PROVIDER, endpoint)?,
            model: model.to_string(),
            model_id: format!("{PROVIDER}:{model}"),
        })
    }

    fn body(&self, request: &ChatRequest) -> Value {
        let system: Vec<Value> = request
            .messages
            .iter()
            .filter(|m| m.role == Role::System)
            .map(|m| json!({"text": m.content}))
            .collect();
        let contents: Vec<Value> = request
            .messages
            .iter()
            .filter(|m| m.role != Role::System)
            .map(|m| content_json(m, &request.messages))
            .collect();
        let mut config = json!({});
        if let Some(max_tokens) = request.max_tokens {
            config["maxOutputTokens"] = json!(max_tokens);
        }
        if let Some(temperature) = request.temperature {
            config["temperature"] = json!(temperature);
        }
        if request.json_mode {
            config["responseMimeType"] = json!("application/json");
        }
        let mut body = json!({"contents": contents, "generationConfig": config});
        if !system.is_empty() {
            body["systemInstruction"] = json!({"parts": system});
        }
        if !request.tools.is_empty() {
            let declarations: Vec<Value> = request
                .tools
                .iter()
                .map(|tool| {
                    json!({"name": tool.name, "description": tool.description,
                           "parameters": tool.parameters})
                })
                .collect();
            body["tools"] = json!([{"functionDeclarations": declarations}]);
        }
        body
    }

    fn post(
        &self,
        method: &str,
        stream: bool,
        body: Value,
    ) -> impl Fn(&reqwest::blocking::Client) -> reqwest::blocking::RequestBuilder + '_ {
        let url = self
            .http
            .endpoint
            .url(&format!("/v1beta/models/{}:{method}", self.model));
        move |client| {
            let mut request = client.post(&url).json(&body);
            if stream {
                request = request.query(&[("alt", "sse")]);
            }
            if let Some(key) = &self.http.endpoint.api_key {
                request = request.header("x-goog-api-key", key);
            }
            request
        }
    }

    /// Adds one (possibly partial) `GenerateContentResponse` to `response`.
    fn absorb(&self, reply: &Value, response: &mut ChatResponse, sink: &mut Option<TokenSink<'_>>) {
        if let Some(version) = reply["modelVersion"].as_str() {
            response.model = version.to_string();
        }
        if reply["usageMetadata"].is_object() {
            response.usage = Usage {
                prompt_tokens: reply["usageMetadata"]["promptTokenCount"]
                    .as_u64()
                    .unwrap_or(0),
                completion_tokens: reply["usageMetadata"]["candidatesTokenCount"]
                    .as_u64()
                    .unwrap_or(0),
            };
        }
        let parts = reply["candidates"][0]["content"]["parts"].as_array();
        for part in parts.into_iter().flatten() {
            if let Some(text) = part["text"].as_str() {
                if let Some(sink) = sink.as_mut() {
                    sink(text);
                }
                response.content.push_str(text);
            }
            if let Some(call) = part.get("functionCall") {
                let name = call["name"].as_str().unwrap_or_default().to_string();
                response.tool_calls.push(ToolCall {
                    // Gemini has no call ids; a tool's answer is matched back by name.
                    id: format!("{name}-{}", response.tool_calls.len()),
                    name,
                    arguments: call["args"].clone(),
                });
            }
        }
    }

    fn run(
        &self,
        request: &ChatRequest,
        mut sink: Option<TokenSink<'_>>,
    ) -> Result<ChatResponse, HttpError> {
        let mut response = ChatResponse {
            model: self.model.clone(),
            ..ChatResponse::default()
        };
        let body = self.body(request);
        if sink.is_some() {
            let stream = self
                .http
                .send(self.post("streamGenerateContent", true, body))?;
            read_sse(PROVIDER, stream, |event| {
                self.absorb(&event, &mut response, &mut sink);
                Ok(())
            })?;
        } else {
            let reply = self.http.json(self.post("generateContent", false, body))?;
            if reply["candidates"].as_array().is_none_or(Vec::is_empty) {
                return Err(malformed(PROVIDER, "candidates", &reply));
            }
            self.absorb(&reply, &mut response, &mut None);
        }
        Ok(response)
    }
}

impl ChatModel for GeminiChat {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn chat(
        &self,
        request: &ChatRequest,
        on_token: Option<TokenSink<'_>>,
    ) -> Result<ChatResponse, ChatError> {
        Ok(self.run(request, on_token)?)
    }
}

fn content_json(message: &ChatMessage, all: &[ChatMessage]) -> Value {
    match message.role {
        Role::Tool => {
            let id = message.tool_call_id.as_deref().unwrap_or_default();
            let name = all
                .iter()
                .flat_map(|m| &m.tool_calls)
                .find(|call| call.id == id)
                .map_or(id, |call| call.name.as_str());
            json!({"role": "user", "parts": [{"functionResponse": {
                "name": name, "response": {"content": message.content}
            }}]})
        }
        Role::Assistant => {
            let mut parts = Vec::new();
            if !message.content.is_empty() {
                parts.push(json!({"text": message.content}));
            }
            for call in &message.tool_calls {
                parts.push(json!({"functionCall": {"name": call.name, "args": call.arguments}}));
            }
            json!({"role": "model", "parts": parts})
        }
        Role::User | Role::System => json!({"role": "user", "parts": [{"text": message.content}]}),
    }
}
