//! The local GGUF chat model on the real SmolLM2-135M-Instruct (and Qwen2.5-Coder-0.5B when
//! asked for), as `shiori models fetch` installs them under `SHIORI_HOME`.

use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use shiori_core::{ChatError, ChatMessage, ChatModel, ChatRequest, ToolSpec};
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
fn tokenizer_round_trips_and_splits_like_the_model() {
    let tokenizer = smollm2().tokenizer();
    for text in [
        "Hello, world! It's 2024.",
        "東京は日本の首都です。関西国際空港まで 3 時間。",
        "mixed 日本語 and English\n\ttabs  and  spaces",
    ] {
        let ids = tokenizer.encode(text).unwrap();
        assert_eq!(tokenizer.decode(&ids).unwrap(), text);
    }
    let id = |token: &str| tokenizer.token_id(token).unwrap();
    assert_eq!(
        tokenizer.encode("Hello world").unwrap(),
        vec![id("Hello"), id("Ġworld")]
    );
    // SmolLM2 splits numbers into single digits.
    assert_eq!(
        tokenizer.encode("2024").unwrap(),
        vec![id("2"), id("0"), id("2"), id("4")]
    );
    assert_eq!(tokenizer.token_id("<|im_start|>"), Some(1));
    assert_eq!(tokenizer.token_id("<|im_end|>"), Some(2));
}

#[test]
fn prompt_uses_single_control_tokens_and_keeps_typed_ones_as_text() {
    let model = smollm2();
    let request = ChatRequest {
        messages: vec![ChatMessage::user("Say <|im_end|> please")],
        ..ChatRequest::default()
    };
    let ids = model.prompt_ids(&request).unwrap();
    // system, user, assistant: three starts; the two closed turns end with one <|im_end|> each,
    // and the one the user typed is plain text.
    assert_eq!(ids.iter().filter(|&&id| id == 1).count(), 3);
    assert_eq!(ids.iter().filter(|&&id| id == 2).count(), 2);
    assert_eq!(
        model.tokenizer().decode_with_control(&ids).unwrap(),
        "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n\
         <|im_start|>user\nSay <|im_end|> please<|im_end|>\n<|im_start|>assistant\n"
    );
}

#[test]
fn answers_from_the_context_and_streams_the_same_text() {
    let model = smollm2();
    let request = zorbania(24);
    let mut pieces = Vec::new();
    let response = model
        .chat(
            &request,
            Some(&mut |piece: &str| {
                pieces.push(piece.to_string());
                ControlFlow::Continue(())
            }),
        )
        .unwrap();
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

    // Each call starts from an empty KV cache: the same request gives the same reply.
    let again = model.chat(&request, None).unwrap();
    assert_eq!(again.content, response.content);
}

#[test]
fn finds_the_answer_in_a_prompt_longer_than_one_prefill_chunk() {
    let model = smollm2();
    let filler = [
        "The weather in the northern valleys is mild in spring.",
        "Farmers there grow barley, turnips and a kind of blue pepper.",
        "The national sport is a ball game played on frozen lakes.",
        "Most houses are built from grey stone and painted doors.",
    ];
    let mut context = String::new();
    for round in 0..6 {
        for sentence in filler {
            context.push_str(sentence);
            context.push(' ');
        }
        if round == 3 {
            context.push_str("The capital of Zorbania is Plimp. ");
        }
    }
    let request = ChatRequest {
        messages: vec![
            ChatMessage::system("Answer the question using only the context."),
            ChatMessage::user(format!(
                "Context: {context}\n\nQuestion: What is the capital of Zorbania?"
            )),
        ],
        max_tokens: Some(24),
        ..ChatRequest::default()
    };
    assert!(model.prompt_ids(&request).unwrap().len() > 300);
    let response = model.chat(&request, None).unwrap();
    assert!(response.content.contains("Plimp"), "{:?}", response.content);
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
    let request = ChatRequest {
        json_mode: true,
        ..zorbania(64)
    };
    let mut streamed = String::new();
    let response = smollm2()
        .chat(
            &request,
            Some(&mut |piece: &str| {
                streamed.push_str(piece);
                ControlFlow::Continue(())
            }),
        )
        .unwrap();
    let object: serde_json::Value = serde_json::from_str(&response.content)
        .unwrap_or_else(|e| panic!("{e}: {:?}", response.content));
    assert!(object.is_object());
    assert!(response.usage.completion_tokens < 64);
    assert_eq!(streamed, response.content);
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
        err.contains("garbled.gguf") && err.contains("not a readable GGUF"),
        "{err}"
    );
}

#[test]
#[ignore = "needs Qwen2.5-Coder-0.5B (491 MB): `shiori models fetch qwen2.5-coder-0.5b`"]
fn qwen_answers_a_japanese_question_from_the_context() {
    let model = load(ShioriHome::qwen_gguf, " qwen2.5-coder-0.5b");
    let tokenizer = model.tokenizer();
    let text = "東京は日本の首都です。";
    assert_eq!(
        tokenizer.decode(&tokenizer.encode(text).unwrap()).unwrap(),
        text
    );
    assert_eq!(tokenizer.token_id("<|im_start|>"), Some(151644));
    assert_eq!(tokenizer.token_id("<|im_end|>"), Some(151645));
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
    let mut streamed = String::new();
    let response = model
        .chat(
            &request,
            Some(&mut |piece: &str| {
                streamed.push_str(piece);
                ControlFlow::Continue(())
            }),
        )
        .unwrap();
    assert!(
        response.content.contains("プリンプ"),
        "{:?}",
        response.content
    );
    assert_eq!(streamed, response.content);

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
    let response = model.chat(&request, None).unwrap();
    assert_eq!(response.tool_calls.len(), 1, "{response:?}");
    assert_eq!(response.tool_calls[0].name, "get_weather");
    assert_eq!(
        response.tool_calls[0].arguments,
        serde_json::json!({"city": "Tokyo"})
    );
}
