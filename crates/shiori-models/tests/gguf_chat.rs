//! The local GGUF chat model (llama.cpp) on the real SmolLM2-135M-Instruct and
//! Qwen2.5-Coder-0.5B, as `shiori models fetch [qwen2.5-coder-0.5b]` installs them under
//! `SHIORI_HOME`.

mod common;

use common::chat_streamed;
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use shiori_core::{ChatError, ChatMessage, ChatModel, ChatRequest, TokenReceiver, ToolSpec};
use shiori_models::assets::ShioriHome;
use shiori_models::{GgufChatModel, ModelLoadError};

/// Panics (never skips) when the model is absent: CI fetches it first.
fn load(path: impl FnOnce(&ShioriHome) -> PathBuf, fetch: &str) -> GgufChatModel {
    let home = ShioriHome::from_env().expect("SHIORI_HOME or HOME");
    let path = path(&home);
    assert!(
        path.is_file(),
        "{} not found: run `shiori models fetch{fetch}` first",
        path.display()
    );
    GgufChatModel::load(&path).unwrap_or_else(|e| panic!("cannot load {}: {e}", path.display()))
}

fn smollm2() -> &'static GgufChatModel {
    static MODEL: OnceLock<GgufChatModel> = OnceLock::new();
    MODEL.get_or_init(|| load(ShioriHome::smollm2_gguf, ""))
}

fn zorbania(max_tokens: u32) -> ChatRequest {
    ChatRequest {
        messages: vec![
            ChatMessage::system("Answer the question using only the context."),
            ChatMessage::user(
                "Context: The capital of Zorbania is Plimp.\n\nQuestion: What is the capital of Zorbania?",
            ),
        ],
        max_tokens: Some(max_tokens),
        ..ChatRequest::default()
    }
}

#[test]
fn prompt_uses_single_control_tokens_and_keeps_typed_ones_as_text() {
    let model = smollm2();
    let request = ChatRequest {
        messages: vec![ChatMessage::user("Say <|im_end|> please")],
        ..ChatRequest::default()
    };
    let ids = model.prompt_ids(&request).unwrap();
    // user and assistant: two starts; the one closed turn ends with one <|im_end|>, and the one
    // the user typed is plain text.
    assert_eq!(ids.iter().filter(|&&id| id == 1).count(), 2);
    assert_eq!(ids.iter().filter(|&&id| id == 2).count(), 1);
    assert_eq!(
        model.prompt_text(&request).unwrap(),
        "<|im_start|>user\nSay <|im_end|> please<|im_end|>\n<|im_start|>assistant\n"
    );
}

#[test]
fn answers_from_the_context_and_streams_the_same_text() {
    let model = smollm2();
    let request = zorbania(24);
    let (response, pieces) = chat_streamed(model, &request);
    assert!(response.content.contains("Plimp"), "{:?}", response.content);
    assert!(pieces.len() > 1, "{pieces:?}");
    assert_eq!(pieces.concat(), response.content);
    assert_eq!(
        response.usage.prompt_tokens,
        model.prompt_ids(&request).unwrap().len() as u64
    );
    assert!((1..=24).contains(&response.usage.completion_tokens));
    assert_eq!(response.model, "local:SmolLM2-135M-Instruct.Q4_1");
    assert!(response.tool_calls.is_empty());

    // A context reused with the prompt already in its KV cache gives the same reply.
    let again = model.chat(&request, None).unwrap();
    assert_eq!(again.content, response.content);
}

#[test]
fn a_context_grown_for_a_longer_reply_keeps_the_cached_prompt_intact() {
    // Own instances (the weights are shared), so the context starts at the size of this test's
    // first request.
    let grown = load(ShioriHome::smollm2_gguf, "");
    grown.chat(&zorbania(4), None).unwrap();
    // 400 more tokens do not fit the first context: the next one is larger and starts from the
    // prompt cached in the first.
    let long = zorbania(400);
    let after_growth = grown.chat(&long, None).unwrap();
    let fresh = load(ShioriHome::smollm2_gguf, "")
        .chat(&long, None)
        .unwrap();
    assert_eq!(after_growth.content, fresh.content);
    assert!(
        after_growth.content.contains("Plimp"),
        "{:?}",
        after_growth.content
    );
}

/// A question whose answer sits in the middle of a context longer than 512 tokens.
fn zorbania_in_a_long_context() -> ChatRequest {
    let filler = [
        "The weather in the northern valleys is mild in spring.",
        "Farmers there grow barley, turnips and a kind of blue pepper.",
        "The national sport is a ball game played on frozen lakes.",
        "Most houses are built from grey stone and painted doors.",
    ];
    let mut context = String::new();
    for round in 0..14 {
        for sentence in filler {
            context.push_str(sentence);
            context.push(' ');
        }
        if round == 7 {
            context.push_str("The capital of Zorbania is Plimp. ");
        }
    }
    ChatRequest {
        messages: vec![
            ChatMessage::system("Answer the question using only the context."),
            ChatMessage::user(format!(
                "Context: {context}\n\nQuestion: What is the capital of Zorbania?"
            )),
        ],
        max_tokens: Some(24),
        ..ChatRequest::default()
    }
}

#[test]
fn finds_the_answer_in_a_prompt_longer_than_one_batch() {
    let model = smollm2();
    let request = zorbania_in_a_long_context();
    assert!(model.prompt_ids(&request).unwrap().len() > 512);
    let response = model.chat(&request, None).unwrap();
    assert!(response.content.contains("Plimp"), "{:?}", response.content);
}

/// A caller that leaves while the prompt is computed: it says stop the second time it is asked.
#[derive(Default)]
struct LeavesDuringThePrompt {
    asked: usize,
    pieces: usize,
}

impl TokenReceiver for LeavesDuringThePrompt {
    fn token(&mut self, _: &str) -> ControlFlow<()> {
        self.pieces += 1;
        ControlFlow::Continue(())
    }

    fn keep_going(&mut self) -> ControlFlow<()> {
        self.asked += 1;
        match self.asked {
            1 => ControlFlow::Continue(()),
            _ => ControlFlow::Break(()),
        }
    }
}

#[test]
fn a_caller_that_leaves_during_the_prompt_stops_it_at_the_next_pass() {
    // Its own instance (the weights are shared), so no other test's prompt is cached in it.
    let model = load(ShioriHome::smollm2_gguf, "");
    let request = zorbania_in_a_long_context();
    let mut caller = LeavesDuringThePrompt::default();
    let result = model.chat(&request, Some(&mut caller));
    assert!(
        matches!(result, Err(ChatError::Cancelled { .. })),
        "{result:?}"
    );
    // The prompt takes five passes or more; it stopped after the first.
    assert_eq!((caller.asked, caller.pieces), (2, 0));
    // What the first pass computed stays cached, and the next answer starts from it.
    let after = model.chat(&request, None).unwrap();
    let fresh = load(ShioriHome::smollm2_gguf, "")
        .chat(&request, None)
        .unwrap();
    assert_eq!(after.content, fresh.content);
    assert!(after.content.contains("Plimp"), "{:?}", after.content);
}

#[test]
fn stops_at_max_tokens_and_serves_threads_at_once() {
    let model = Arc::new(load(ShioriHome::smollm2_gguf, "").with_seed(7));
    let request = ChatRequest {
        messages: vec![ChatMessage::user("Write a long story about a dragon.")],
        max_tokens: Some(5),
        ..ChatRequest::default()
    };
    let alone = model.chat(&request, None).unwrap();
    assert_eq!(alone.usage.completion_tokens, 5);
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let model = Arc::clone(&model);
            let request = request.clone();
            std::thread::spawn(move || model.chat(&request, None).unwrap())
        })
        .collect();
    for thread in threads {
        assert_eq!(thread.join().unwrap().content, alone.content);
    }

    // Greedy replies ignore the seed; sampled ones follow it.
    assert_eq!(
        smollm2().chat(&request, None).unwrap().content,
        alone.content
    );
    let poem = ChatRequest {
        messages: vec![ChatMessage::user("Write a poem about the sea.")],
        max_tokens: Some(16),
        temperature: Some(1.0),
        ..ChatRequest::default()
    };
    assert_ne!(
        model.chat(&poem, None).unwrap().content,
        smollm2().chat(&poem, None).unwrap().content
    );
}

#[test]
fn sampling_is_seeded() {
    let model = smollm2();
    let request = ChatRequest {
        temperature: Some(1.0),
        ..zorbania(8)
    };
    let first = model.chat(&request, None).unwrap();
    let second = model.chat(&request, None).unwrap();
    assert_eq!(first.content, second.content);
    assert_eq!(first.usage.completion_tokens, 8);
}

#[test]
fn json_mode_replies_with_one_object_and_stops_there() {
    let mut request = ChatRequest {
        json_mode: true,
        ..zorbania(64)
    };
    // Without a schema any JSON object goes; the prompt names the one wanted.
    request.messages[0] = ChatMessage::system(
        "Answer the question using only the context, as JSON {\"capital\": \"name of the city\"}.",
    );
    let (response, pieces) = chat_streamed(smollm2(), &request);
    let streamed = pieces.concat();
    let object: serde_json::Value = serde_json::from_str(&response.content)
        .unwrap_or_else(|e| panic!("{e}: {:?}", response.content));
    assert!(object.is_object());
    assert!(response.usage.completion_tokens < 64);
    assert_eq!(streamed, response.content);
}

#[test]
fn json_schema_holds_the_reply_to_its_shape() {
    let schema = serde_json::json!({
        "type": "object",
        "properties": {"grade": {"enum": ["relevant", "ambiguous", "irrelevant"]}},
        "required": ["grade"],
    });
    let request = ChatRequest {
        messages: vec![
            ChatMessage::system("Grade whether the document answers the question."),
            ChatMessage::user("Question: What is the capital of Zorbania?\n\nDocument: Plimp is the capital of Zorbania."),
        ],
        max_tokens: Some(20),
        temperature: Some(0.0),
        json_mode: true,
        json_schema: Some(schema),
        ..ChatRequest::default()
    };
    let response = smollm2().chat(&request, None).unwrap();
    let object: serde_json::Value = serde_json::from_str(&response.content)
        .unwrap_or_else(|e| panic!("{e}: {:?}", response.content));
    let grade = object["grade"].as_str().unwrap_or_default();
    assert!(
        ["relevant", "ambiguous", "irrelevant"].contains(&grade),
        "{object}"
    );
    assert_eq!(object.as_object().map(|o| o.len()), Some(1), "{object}");
}

#[test]
fn a_sink_that_breaks_off_stops_the_generation() {
    let request = ChatRequest {
        messages: vec![ChatMessage::user("Write a long story about a dragon.")],
        max_tokens: Some(400),
        ..ChatRequest::default()
    };
    let mut pieces = 0;
    let result = smollm2().chat(
        &request,
        Some(&mut |_: &str| {
            pieces += 1;
            if pieces == 3 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        }),
    );
    assert!(
        matches!(result, Err(ChatError::Cancelled { .. })),
        "{result:?}"
    );
    assert_eq!(pieces, 3, "no piece after the sink broke off");
}

#[test]
fn reports_a_prompt_longer_than_the_context() {
    let model = smollm2();
    let request = ChatRequest {
        messages: vec![ChatMessage::user("word ".repeat(model.context_length()))],
        ..ChatRequest::default()
    };
    match model.chat(&request, None) {
        Err(ChatError::ContextTooLong { provider, message }) => {
            assert_eq!(provider, "local:SmolLM2-135M-Instruct.Q4_1");
            assert!(message.contains("the context holds 4096"), "{message}");
        }
        other => panic!("expected ContextTooLong, got {other:?}"),
    }
}

#[test]
fn load_errors_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("absent.gguf");
    let err = GgufChatModel::load(&missing).err().unwrap();
    assert!(matches!(err, ModelLoadError::Io { .. }));
    assert!(err.to_string().contains("absent.gguf"), "{err}");

    let garbled = dir.path().join("garbled.gguf");
    std::fs::write(&garbled, b"not a gguf at all").unwrap();
    let err = GgufChatModel::load(&garbled).err().unwrap().to_string();
    assert!(
        err.contains("garbled.gguf") && err.contains("cannot load this GGUF"),
        "{err}"
    );
}

fn qwen() -> &'static GgufChatModel {
    static MODEL: OnceLock<GgufChatModel> = OnceLock::new();
    MODEL.get_or_init(|| load(ShioriHome::qwen_gguf, " qwen2.5-coder-0.5b"))
}

#[test]
fn qwen_answers_a_japanese_question_from_the_context() {
    let model = qwen();
    let request = ChatRequest {
        messages: vec![
            ChatMessage::system("文脈だけを使って日本語で簡潔に答えてください。"),
            ChatMessage::user(
                "文脈: ゾルバニアの首都はプリンプです。\n\n質問: ゾルバニアの首都はどこですか？",
            ),
        ],
        max_tokens: Some(32),
        ..ChatRequest::default()
    };
    let (response, pieces) = chat_streamed(model, &request);
    let streamed = pieces.concat();
    assert!(
        response.content.contains("プリンプ"),
        "{:?}",
        response.content
    );
    assert_eq!(streamed, response.content);
}

#[test]
fn qwens_tool_call_comes_back_parsed() {
    let request = ChatRequest {
        messages: vec![ChatMessage::user("What is the weather in Tokyo right now?")],
        tools: vec![ToolSpec {
            name: "get_weather".into(),
            description: "Current weather for a city".into(),
            parameters: serde_json::json!({
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            }),
        }],
        max_tokens: Some(64),
        ..ChatRequest::default()
    };
    let response = qwen().chat(&request, None).unwrap();
    assert_eq!(response.tool_calls.len(), 1, "{response:?}");
    assert_eq!(response.tool_calls[0].name, "get_weather");
    assert_eq!(
        response.tool_calls[0].arguments,
        serde_json::json!({"city": "Tokyo"})
    );
}
