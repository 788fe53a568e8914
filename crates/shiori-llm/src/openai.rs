//! OpenAI-compatible chat completions: OpenAI, Azure OpenAI, Ollama, vLLM, llama.cpp server,
//! LM Studio. JSON mode, tool calls, and streaming over server-sent events.

use crate::http::{forward, malformed, read_sse, Endpoint, Http, HttpError};
use serde_json::{json, Value};
use shiori_core::{
    parse_tool_calls, ChatError, ChatModel, ChatRequest, ChatResponse, Role, TokenSink, ToolCall,
    ToolSpec, Usage,
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
            body["response_format"] = match &request.json_schema {
                Some(schema) => json!({"type": "json_schema", "json_schema": {
                    "name": "reply",
                    "schema": schema,
                }}),
                None => json!({"type": "json_object"}),
            };
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
                forward(PROVIDER, sink, text)?;
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
        let reply = match on_token.filter(|sink| sink.wants_pieces()) {
            Some(sink) => self.stream(request, sink)?,
            None => self.complete(request)?,
        };
        Ok(with_text_tool_calls(reply, &request.tools))
    }
}

/// Servers that do not parse tool calls (llama.cpp's and others without a tool-call parser for
/// the model) hand them over as text: read them out of the reply.
fn with_text_tool_calls(mut reply: ChatResponse, tools: &[ToolSpec]) -> ChatResponse {
    if tools.is_empty() || !reply.tool_calls.is_empty() {
        return reply;
    }
    let (content, calls) = parse_tool_calls(&reply.content, tools);
    if !calls.is_empty() {
        reply.content = content;
        reply.tool_calls = calls;
    }
    reply
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::endpoint;
    use shiori_core::ChatMessage;
    use shiori_mock::{sequence, MockServer, Reply};
    use std::time::Duration;

    fn completion(content: &str) -> Reply {
        Reply::json(json!({
            "id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-test-0613",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 42, "completion_tokens": 7, "total_tokens": 49}
        }))
    }

    fn question() -> ChatRequest {
        ChatRequest {
            messages: vec![ChatMessage::system("be brief"), ChatMessage::user("hello?")],
            max_tokens: Some(64),
            temperature: Some(0.0),
            ..ChatRequest::default()
        }
    }

    #[test]
    fn completes_with_usage_and_json_mode() {
        let server = MockServer::start(sequence(vec![completion("{\"ok\": true}")]));
        let model = OpenAiChat::new(endpoint(server.url()), "gpt-test").unwrap();
        let request = ChatRequest {
            json_mode: true,
            ..question()
        };
        let reply = model.chat(&request, None).unwrap();
        assert_eq!(reply.content, "{\"ok\": true}");
        assert_eq!(reply.model, "gpt-test-0613");
        assert_eq!(
            reply.usage,
            Usage {
                prompt_tokens: 42,
                completion_tokens: 7
            }
        );
        assert_eq!(model.model_id(), "openai:gpt-test");
        let sent = &server.requests_to("/chat/completions")[0];
        assert_eq!(sent.header("authorization"), Some("Bearer test-key"));
        let body = sent.json();
        assert_eq!(body["model"], "gpt-test");
        assert_eq!(body["messages"][0]["role"], "system");
        assert_eq!(body["messages"][1]["content"], "hello?");
        assert_eq!(body["max_tokens"], 64);
        assert_eq!(body["response_format"]["type"], "json_object");
        assert!(body.get("stream").is_none());
    }

    #[test]
    fn sends_the_json_schema_as_the_response_format() {
        let server = MockServer::start(sequence(vec![completion("{\"grade\": \"relevant\"}")]));
        let model = OpenAiChat::new(endpoint(server.url()), "gpt-test").unwrap();
        let schema = json!({"type": "object", "properties": {"grade": {"enum": ["relevant"]}}});
        let request = ChatRequest {
            json_mode: true,
            json_schema: Some(schema.clone()),
            ..question()
        };
        model.chat(&request, None).unwrap();
        let body = server.requests()[0].json();
        assert_eq!(body["response_format"]["type"], "json_schema");
        assert_eq!(body["response_format"]["json_schema"]["name"], "reply");
        assert_eq!(body["response_format"]["json_schema"]["schema"], schema);
    }

    #[test]
    fn reads_tool_calls_a_server_left_in_the_text() {
        let calculate = ToolSpec {
            name: "calculate".into(),
            description: "arithmetic".into(),
            parameters: json!({"type": "object"}),
        };
        let replies = [
            "<tool_call>\n{\"name\": \"calculate\", \"arguments\": {\"expression\": \"2+2\"}}\n</tool_call>",
            "{\"name\": \"calculate\", \"arguments\": {\"expression\": \"2+2\"}}",
        ];
        for text in replies {
            let server = MockServer::start(sequence(vec![completion(text)]));
            let model = OpenAiChat::new(endpoint(server.url()), "qwen").unwrap();
            let request = ChatRequest {
                tools: vec![calculate.clone()],
                ..question()
            };
            let reply = model.chat(&request, None).unwrap();
            assert_eq!(reply.content, "", "{text}");
            assert_eq!(reply.tool_calls.len(), 1, "{text}");
            assert_eq!(reply.tool_calls[0].name, "calculate");
            assert_eq!(reply.tool_calls[0].arguments, json!({"expression": "2+2"}));
        }
        // Without tools on offer, JSON that looks like a call is just the answer.
        let server = MockServer::start(sequence(vec![completion(replies[1])]));
        let model = OpenAiChat::new(endpoint(server.url()), "qwen").unwrap();
        let reply = model.chat(&question(), None).unwrap();
        assert_eq!(reply.content, replies[1]);
        assert!(reply.tool_calls.is_empty());
    }

    #[test]
    fn sends_tools_and_reads_tool_calls() {
        let server = MockServer::start(sequence(vec![Reply::json(json!({
            "model": "gpt-test",
            "choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "search", "arguments": "{\"query\":\"vpn\"}"}}]}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5}
        }))]));
        let model = OpenAiChat::new(endpoint(server.url()), "gpt-test").unwrap();
        let mut request = question();
        request.tools = vec![ToolSpec {
            name: "search".into(),
            description: "search docs".into(),
            parameters: json!({"type": "object", "properties": {"query": {"type": "string"}}}),
        }];
        let earlier_call = ToolCall {
            id: "call_0".into(),
            name: "search".into(),
            arguments: json!({"query": "storage"}),
        };
        request.messages.push(ChatMessage {
            role: Role::Assistant,
            content: String::new(),
            tool_calls: vec![earlier_call],
            tool_call_id: None,
        });
        request.messages.push(ChatMessage {
            role: Role::Tool,
            content: "[1] 100 GB".into(),
            tool_calls: Vec::new(),
            tool_call_id: Some("call_0".into()),
        });
        let reply = model.chat(&request, None).unwrap();
        assert_eq!(reply.content, "");
        assert_eq!(reply.tool_calls.len(), 1);
        assert_eq!(reply.tool_calls[0].id, "call_1");
        assert_eq!(reply.tool_calls[0].arguments, json!({"query": "vpn"}));
        let body = server.requests()[0].json();
        assert_eq!(body["tools"][0]["type"], "function");
        assert_eq!(body["tools"][0]["function"]["name"], "search");
        let assistant = &body["messages"][2];
        assert_eq!(
            assistant["tool_calls"][0]["function"]["arguments"],
            "{\"query\":\"storage\"}"
        );
        assert_eq!(body["messages"][3]["role"], "tool");
        assert_eq!(body["messages"][3]["tool_call_id"], "call_0");
    }

    /// A caller that reads the reply whole and only listens for a stop.
    struct ListensForAStop;

    impl shiori_core::TokenReceiver for ListensForAStop {
        fn token(&mut self, _: &str) -> std::ops::ControlFlow<()> {
            std::ops::ControlFlow::Continue(())
        }

        fn wants_pieces(&self) -> bool {
            false
        }
    }

    #[test]
    fn a_receiver_that_wants_no_pieces_gets_the_reply_unstreamed() {
        let server = MockServer::start(sequence(vec![completion("whole")]));
        let model = OpenAiChat::new(endpoint(server.url()), "gpt-test").unwrap();
        let reply = model.chat(&question(), Some(&mut ListensForAStop)).unwrap();
        assert_eq!(reply.content, "whole");
        assert_eq!(reply.usage.total(), 49);
        assert_eq!(server.requests()[0].json().get("stream"), None);
    }

    #[test]
    fn streams_tokens_tool_call_fragments_and_usage() {
        let events = [
            json!({"model": "gpt-test", "choices": [{"delta": {"role": "assistant", "content": ""}}]}).to_string(),
            json!({"choices": [{"delta": {"content": "Hel"}}]}).to_string(),
            json!({"choices": [{"delta": {"content": "lo [1]"}}]}).to_string(),
            json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "call_9",
                "function": {"name": "calculate", "arguments": "{\"expr"}}]}}]}).to_string(),
            json!({"choices": [{"delta": {"tool_calls": [{"index": 0,
                "function": {"arguments": "ession\":\"1+1\"}"}}]}}]}).to_string(),
            json!({"choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 3}}).to_string(),
            "[DONE]".to_string(),
        ];
        let server = MockServer::start(sequence(vec![Reply::sse(&events)]));
        let model = OpenAiChat::new(endpoint(server.url()), "gpt-test").unwrap();
        let mut streamed = Vec::new();
        let mut sink = |token: &str| {
            streamed.push(token.to_string());
            std::ops::ControlFlow::Continue(())
        };
        let reply = model.chat(&question(), Some(&mut sink)).unwrap();
        assert_eq!(streamed, vec!["", "Hel", "lo [1]"]);
        assert_eq!(reply.content, "Hello [1]");
        assert_eq!(reply.usage.total(), 15);
        assert_eq!(reply.tool_calls[0].name, "calculate");
        assert_eq!(reply.tool_calls[0].arguments, json!({"expression": "1+1"}));
        let body = server.requests()[0].json();
        assert_eq!(body["stream"], true);
        assert_eq!(body["stream_options"]["include_usage"], true);
    }

    #[test]
    fn succeeds_after_two_rate_limits_with_backoff() {
        let server = MockServer::start(sequence(vec![
            Reply::status(429, r#"{"error":{"message":"Rate limit reached"}}"#),
            Reply::status(429, r#"{"error":{"message":"Rate limit reached"}}"#),
            completion("finally"),
        ]));
        let model = OpenAiChat::new(endpoint(server.url()), "gpt-test").unwrap();
        let reply = model.chat(&question(), None).unwrap();
        assert_eq!(reply.content, "finally");
        let requests = server.requests();
        assert_eq!(requests.len(), 3, "two backoffs, then success");
        // Backoff 1 waits 5..10 ms and backoff 2 waits 10..20 ms (10 ms base, doubling, jittered).
        assert!(requests[1].at - requests[0].at >= Duration::from_millis(5));
        assert!(requests[2].at - requests[1].at >= Duration::from_millis(10));
    }

    #[test]
    fn honours_retry_after() {
        let server = MockServer::start(sequence(vec![
            Reply::status(503, "overloaded").header("retry-after", "1"),
            completion("ok"),
        ]));
        let model = OpenAiChat::new(endpoint(server.url()), "gpt-test").unwrap();
        assert_eq!(model.chat(&question(), None).unwrap().content, "ok");
        let requests = server.requests();
        assert_eq!(requests.len(), 2);
        assert!(requests[1].at - requests[0].at >= Duration::from_secs(1));
    }

    #[test]
    fn retries_timeouts() {
        let calls = std::sync::atomic::AtomicUsize::new(0);
        let server = MockServer::start(move |_| {
            if calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
                std::thread::sleep(Duration::from_millis(600));
            }
            completion("after a timeout")
        });
        let model = OpenAiChat::new(
            endpoint(server.url()).with_timeout(Duration::from_millis(250)),
            "gpt-test",
        )
        .unwrap();
        assert_eq!(
            model.chat(&question(), None).unwrap().content,
            "after a timeout"
        );
        assert_eq!(server.requests().len(), 2);
    }

    #[test]
    fn a_refused_key_is_not_retried_and_names_its_variable() {
        let server = MockServer::start(sequence(vec![Reply::status(
            401,
            r#"{"error":{"message":"Incorrect API key provided"}}"#,
        )]));
        let keyed = endpoint(server.url()).with_api_key_env("SHIORI_TEST_REFUSED_KEY");
        let model = OpenAiChat::new(keyed, "gpt-test").unwrap();
        let error = model.chat(&question(), None).unwrap_err().to_string();
        assert!(
            error.contains("Incorrect API key provided")
                && error.contains("the key in SHIORI_TEST_REFUSED_KEY was sent"),
            "{error}"
        );
        assert_eq!(server.requests().len(), 1, "a refused key is not retried");

        let server = MockServer::start(sequence(vec![Reply::status(403, "forbidden")]));
        let keyless = endpoint(server.url())
            .with_api_key(None)
            .with_api_key_env("SHIORI_TEST_UNSET_KEY");
        let model = OpenAiChat::new(keyless, "gpt-test").unwrap();
        let error = model.chat(&question(), None).unwrap_err();
        assert!(matches!(error, ChatError::Permanent { .. }), "{error}");
        assert!(
            error
                .to_string()
                .contains("no API key was sent: SHIORI_TEST_UNSET_KEY is not set"),
            "{error}"
        );
        assert_eq!(server.requests().len(), 1);
        assert_eq!(server.requests()[0].header("authorization"), None);
    }

    /// A base URL on a port nobody listens on: connecting to it is refused. The path keeps its
    /// breaker apart from any other test's server that later gets the same port.
    fn closed_endpoint(test: &str) -> (String, u16) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        (format!("http://127.0.0.1:{port}/{test}"), port)
    }

    #[test]
    fn a_server_that_is_down_fails_at_once_without_retries() {
        let (base, _) = closed_endpoint("fails-at-once");
        // Four retries of this policy would wait at least 0.2 + 0.4 + 0.8 + 1.6 s.
        let patient = crate::RetryPolicy {
            max_retries: 4,
            base_delay: Duration::from_millis(400),
            max_delay: Duration::from_secs(5),
        };
        let model = OpenAiChat::new(endpoint(&base).with_retry(patient), "gpt-test").unwrap();
        let started = std::time::Instant::now();
        let error = model.chat(&question(), None).unwrap_err();
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "took {:?}",
            started.elapsed()
        );
        let message = error.to_string();
        assert!(
            message.contains(&format!("{base} is unreachable (connection refused"))
                && message.ends_with("not tried again for 30 s"),
            "{message}"
        );
        assert!(matches!(error, ChatError::Transient { .. }), "{error}");
    }

    #[test]
    fn an_unreachable_endpoint_is_not_tried_again_within_the_window() {
        let (base, port) = closed_endpoint("not-tried-again");
        let model = OpenAiChat::new(endpoint(&base), "gpt-test").unwrap();
        assert!(model.chat(&question(), None).is_err());

        // The server comes up, but within the window no call connects to it: not this model's,
        // nor one of another model on the same endpoint.
        let listener = std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
        listener.set_nonblocking(true).unwrap();
        let other = OpenAiChat::new(endpoint(&base), "gpt-other").unwrap();
        for model in [&model, &other] {
            let error = model.chat(&question(), None).unwrap_err().to_string();
            assert!(error.contains("not tried again for"), "{error}");
        }
        let accepted = listener.accept();
        assert!(
            matches!(&accepted, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
            "a call connected: {accepted:?}"
        );
    }

    #[test]
    fn sorts_failures_into_permanent_context_and_exhausted_transient() {
        let server = MockServer::start(sequence(vec![Reply::status(
            401,
            r#"{"error":{"message":"Incorrect API key provided"}}"#,
        )]));
        let model = OpenAiChat::new(endpoint(server.url()), "gpt-test").unwrap();
        let error = model.chat(&question(), None).unwrap_err();
        assert!(
            matches!(&error, ChatError::Permanent { message, .. } if message.contains("Incorrect API key")),
            "{error}"
        );
        assert_eq!(
            server.requests().len(),
            1,
            "permanent errors are not retried"
        );

        let server = MockServer::start(sequence(vec![Reply::status(
            400,
            r#"{"error":{"code":"context_length_exceeded","message":"This model's maximum context length is 4096 tokens."}}"#,
        )]));
        let model = OpenAiChat::new(endpoint(server.url()), "gpt-test").unwrap();
        let error = model.chat(&question(), None).unwrap_err();
        assert!(matches!(error, ChatError::ContextTooLong { .. }), "{error}");

        let server = MockServer::start(sequence(vec![Reply::status(502, "bad gateway")]));
        let model = OpenAiChat::new(endpoint(server.url()), "gpt-test").unwrap();
        let error = model.chat(&question(), None).unwrap_err();
        assert!(matches!(error, ChatError::Transient { .. }), "{error}");
        assert_eq!(
            server.requests().len(),
            4,
            "the first try and three retries"
        );
    }

    #[test]
    fn speaks_azure_authentication() {
        let server = MockServer::start(sequence(vec![completion("azure")]));
        let base = format!("{}/openai/deployments/gpt4o", server.url());
        let model = OpenAiChat::new(endpoint(&base), "gpt4o")
            .unwrap()
            .azure("2024-10-21");
        assert_eq!(model.chat(&question(), None).unwrap().content, "azure");
        let sent = &server.requests()[0];
        assert_eq!(sent.path, "/openai/deployments/gpt4o/chat/completions");
        assert_eq!(sent.query, "api-version=2024-10-21");
        assert_eq!(sent.header("api-key"), Some("test-key"));
        assert_eq!(sent.header("authorization"), None);
    }
}
