//! Google Gemini `generateContent` (and `streamGenerateContent?alt=sse` for streaming).

use crate::http::{forward, malformed, read_sse, Endpoint, Http, HttpError};
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
            if let Some(schema) = &request.json_schema {
                config["responseJsonSchema"] = schema.clone();
            }
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
    fn absorb(
        &self,
        reply: &Value,
        response: &mut ChatResponse,
        sink: &mut Option<TokenSink<'_>>,
    ) -> Result<(), HttpError> {
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
                    forward(PROVIDER, *sink, text)?;
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
        Ok(())
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
                self.absorb(&event, &mut response, &mut sink)
            })?;
        } else {
            let reply = self.http.json(self.post("generateContent", false, body))?;
            if reply["candidates"].as_array().is_none_or(Vec::is_empty) {
                return Err(malformed(PROVIDER, "candidates", &reply));
            }
            self.absorb(&reply, &mut response, &mut None)?;
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
        Ok(self.run(request, on_token.filter(|sink| sink.wants_pieces()))?)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::endpoint;
    use shiori_core::ToolSpec;
    use shiori_mock::{sequence, MockServer, Reply};

    fn request() -> ChatRequest {
        ChatRequest {
            messages: vec![ChatMessage::system("be brief"), ChatMessage::user("2+2?")],
            max_tokens: Some(50),
            json_mode: true,
            tools: vec![ToolSpec {
                name: "calculate".into(),
                description: "arithmetic".into(),
                parameters: json!({"type": "object"}),
            }],
            ..ChatRequest::default()
        }
    }

    #[test]
    fn generates_content_with_function_calls() {
        let server = MockServer::start(sequence(vec![Reply::json(json!({
            "candidates": [{"content": {"role": "model", "parts": [
                {"text": "Calculating."},
                {"functionCall": {"name": "calculate", "args": {"expression": "2+2"}}}
            ]}, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 17, "candidatesTokenCount": 4, "totalTokenCount": 21},
            "modelVersion": "gemini-test-001"
        }))]));
        let model = GeminiChat::new(endpoint(server.url()), "gemini-test").unwrap();
        let reply = model.chat(&request(), None).unwrap();
        assert_eq!(reply.content, "Calculating.");
        assert_eq!(reply.tool_calls[0].name, "calculate");
        assert_eq!(reply.tool_calls[0].arguments, json!({"expression": "2+2"}));
        assert_eq!(
            reply.usage,
            Usage {
                prompt_tokens: 17,
                completion_tokens: 4
            }
        );
        assert_eq!(reply.model, "gemini-test-001");
        let sent = &server.requests()[0];
        assert_eq!(sent.path, "/v1beta/models/gemini-test:generateContent");
        assert_eq!(sent.header("x-goog-api-key"), Some("test-key"));
        let body = sent.json();
        assert_eq!(body["systemInstruction"]["parts"][0]["text"], "be brief");
        assert_eq!(body["contents"][0]["role"], "user");
        assert_eq!(
            body["generationConfig"]["responseMimeType"],
            "application/json"
        );
        assert_eq!(body["generationConfig"]["maxOutputTokens"], 50);
        assert_eq!(
            body["tools"][0]["functionDeclarations"][0]["name"],
            "calculate"
        );
    }

    #[test]
    fn answers_function_calls_by_name() {
        let server = MockServer::start(sequence(vec![Reply::json(json!({
            "candidates": [{"content": {"parts": [{"text": "4"}]}}],
            "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1}
        }))]));
        let model = GeminiChat::new(endpoint(server.url()), "gemini-test").unwrap();
        let mut request = request();
        request.messages.push(ChatMessage {
            role: Role::Assistant,
            content: String::new(),
            tool_calls: vec![ToolCall {
                id: "calculate-0".into(),
                name: "calculate".into(),
                arguments: json!({"expression": "2+2"}),
            }],
            tool_call_id: None,
        });
        request.messages.push(ChatMessage {
            role: Role::Tool,
            content: "4".into(),
            tool_calls: Vec::new(),
            tool_call_id: Some("calculate-0".into()),
        });
        assert_eq!(model.chat(&request, None).unwrap().content, "4");
        let body = server.requests()[0].json();
        assert_eq!(body["contents"][1]["role"], "model");
        assert_eq!(
            body["contents"][1]["parts"][0]["functionCall"]["name"],
            "calculate"
        );
        let response = &body["contents"][2]["parts"][0]["functionResponse"];
        assert_eq!(response["name"], "calculate");
        assert_eq!(response["response"]["content"], "4");
    }

    #[test]
    fn streams_over_server_sent_events() {
        let events = [
            json!({"candidates": [{"content": {"parts": [{"text": "Two plus "}]}}]}),
            json!({"candidates": [{"content": {"parts": [{"text": "two is four."}]}}],
                   "usageMetadata": {"promptTokenCount": 8, "candidatesTokenCount": 6}}),
        ]
        .map(|event| event.to_string());
        let server = MockServer::start(sequence(vec![Reply::sse(&events)]));
        let model = GeminiChat::new(endpoint(server.url()), "gemini-test").unwrap();
        let mut tokens = Vec::new();
        let mut sink = |token: &str| {
            tokens.push(token.to_string());
            std::ops::ControlFlow::Continue(())
        };
        let reply = model.chat(&request(), Some(&mut sink)).unwrap();
        assert_eq!(tokens, vec!["Two plus ", "two is four."]);
        assert_eq!(reply.content, "Two plus two is four.");
        assert_eq!(reply.usage.total(), 14);
        let sent = &server.requests()[0];
        assert_eq!(
            sent.path,
            "/v1beta/models/gemini-test:streamGenerateContent"
        );
        assert_eq!(sent.query, "alt=sse");
    }

    #[test]
    fn rejects_a_reply_without_candidates() {
        let server = MockServer::start(sequence(vec![Reply::json(json!({
            "promptFeedback": {"blockReason": "SAFETY"}
        }))]));
        let model = GeminiChat::new(endpoint(server.url()), "gemini-test").unwrap();
        let error = model.chat(&request(), None).unwrap_err();
        assert!(matches!(error, ChatError::Permanent { .. }), "{error}");
    }
}
