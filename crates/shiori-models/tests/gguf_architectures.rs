//! A GGUF of an architecture the old candle path could not run (Qwen3: per-head query and key
//! norms) loads and generates. No such model ships in a package registry, so the test writes a
//! tiny one with random weights and a SentencePiece-style vocabulary, in GGUF's own layout.

mod common;

use common::chat_streamed;
use std::path::Path;

use shiori_core::{ChatMessage, ChatModel, ChatRequest};
use shiori_models::GgufChatModel;

const EMBED: u64 = 64;
const HEADS: u64 = 4;
const KV_HEADS: u64 = 2;
const HEAD_DIM: u64 = EMBED / HEADS;
const FEED_FORWARD: u64 = 128;
const LAYERS: u64 = 2;
/// `<unk>`, `<s>`, `</s>`, `<|im_start|>`, `<|im_end|>`: never sampled, so generation runs on.
const CONTROL: [&str; 5] = ["<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>"];
const WORDS: [&str; 12] = [
    "▁",
    "▁the",
    "▁a",
    "▁is",
    "▁of",
    "▁Plimp",
    "▁capital",
    "e",
    "t",
    "o",
    "n",
    "s",
];

/// GGUF metadata values by type code.
enum Value {
    U32(u32),
    F32(f32),
    Str(&'static str),
    Strings(Vec<String>),
    Floats(Vec<f32>),
    Ints(Vec<i32>),
}

struct Writer(Vec<u8>);

impl Writer {
    fn u32(&mut self, v: u32) {
        self.0.extend(v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend(v.to_le_bytes());
    }
    fn string(&mut self, s: &str) {
        self.u64(s.len() as u64);
        self.0.extend(s.as_bytes());
    }
    fn value(&mut self, value: &Value) {
        match value {
            Value::U32(v) => {
                self.u32(4);
                self.u32(*v);
            }
            Value::F32(v) => {
                self.u32(6);
                self.0.extend(v.to_le_bytes());
            }
            Value::Str(s) => {
                self.u32(8);
                self.string(s);
            }
            Value::Strings(items) => {
                self.u32(9);
                self.u32(8);
                self.u64(items.len() as u64);
                items.iter().for_each(|s| self.string(s));
            }
            Value::Floats(items) => {
                self.u32(9);
                self.u32(6);
                self.u64(items.len() as u64);
                items.iter().for_each(|v| self.0.extend(v.to_le_bytes()));
            }
            Value::Ints(items) => {
                self.u32(9);
                self.u32(5);
                self.u64(items.len() as u64);
                items.iter().for_each(|v| self.0.extend(v.to_le_bytes()));
            }
        }
    }
    fn pad(&mut self) {
        while !self.0.len().is_multiple_of(32) {
            self.0.push(0);
        }
    }
}

/// Deterministic weights in [-scale, scale).
struct Noise(u64);

impl Noise {
    fn next(&mut self, scale: f32) -> f32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0) * scale
    }
}

fn vocabulary() -> (Vec<String>, Vec<f32>, Vec<i32>) {
    let mut tokens: Vec<String> = CONTROL.iter().map(|s| s.to_string()).collect();
    let mut types = vec![2, 3, 3, 3, 3];
    for byte in 0..=255u8 {
        tokens.push(format!("<0x{byte:02X}>"));
        types.push(6);
    }
    for word in WORDS {
        tokens.push(word.to_string());
        types.push(1);
    }
    let scores = (0..tokens.len()).map(|i| -(i as f32)).collect();
    (tokens, scores, types)
}

fn write_qwen3(path: &Path) {
    let (tokens, scores, types) = vocabulary();
    let vocab = tokens.len() as u64;
    let metadata = vec![
        ("general.architecture", Value::Str("qwen3")),
        ("general.name", Value::Str("tiny-random-qwen3")),
        ("qwen3.context_length", Value::U32(512)),
        ("qwen3.embedding_length", Value::U32(EMBED as u32)),
        ("qwen3.block_count", Value::U32(LAYERS as u32)),
        ("qwen3.feed_forward_length", Value::U32(FEED_FORWARD as u32)),
        ("qwen3.attention.head_count", Value::U32(HEADS as u32)),
        ("qwen3.attention.head_count_kv", Value::U32(KV_HEADS as u32)),
        ("qwen3.attention.key_length", Value::U32(HEAD_DIM as u32)),
        ("qwen3.attention.value_length", Value::U32(HEAD_DIM as u32)),
        ("qwen3.attention.layer_norm_rms_epsilon", Value::F32(1e-6)),
        ("qwen3.rope.freq_base", Value::F32(10000.0)),
        ("tokenizer.ggml.model", Value::Str("llama")),
        ("tokenizer.ggml.tokens", Value::Strings(tokens)),
        ("tokenizer.ggml.scores", Value::Floats(scores)),
        ("tokenizer.ggml.token_type", Value::Ints(types)),
        ("tokenizer.ggml.unknown_token_id", Value::U32(0)),
        ("tokenizer.ggml.bos_token_id", Value::U32(1)),
        ("tokenizer.ggml.eos_token_id", Value::U32(2)),
        (
            "tokenizer.chat_template",
            Value::Str("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"),
        ),
    ];
    let mut tensors: Vec<(String, Vec<u64>)> = vec![
        ("token_embd.weight".into(), vec![EMBED, vocab]),
        ("output_norm.weight".into(), vec![EMBED]),
        ("output.weight".into(), vec![EMBED, vocab]),
    ];
    for layer in 0..LAYERS {
        let q = HEADS * HEAD_DIM;
        let kv = KV_HEADS * HEAD_DIM;
        for (name, shape) in [
            ("attn_norm", vec![EMBED]),
            ("attn_q", vec![EMBED, q]),
            ("attn_k", vec![EMBED, kv]),
            ("attn_v", vec![EMBED, kv]),
            ("attn_output", vec![q, EMBED]),
            ("attn_q_norm", vec![HEAD_DIM]),
            ("attn_k_norm", vec![HEAD_DIM]),
            ("ffn_norm", vec![EMBED]),
            ("ffn_gate", vec![EMBED, FEED_FORWARD]),
            ("ffn_up", vec![EMBED, FEED_FORWARD]),
            ("ffn_down", vec![FEED_FORWARD, EMBED]),
        ] {
            tensors.push((format!("blk.{layer}.{name}.weight"), shape));
        }
    }

    let mut out = Writer(b"GGUF".to_vec());
    out.u32(3);
    out.u64(tensors.len() as u64);
    out.u64(metadata.len() as u64);
    for (key, value) in &metadata {
        out.string(key);
        out.value(value);
    }
    let mut offset = 0u64;
    for (name, shape) in &tensors {
        out.string(name);
        out.u32(shape.len() as u32);
        shape.iter().for_each(|&d| out.u64(d));
        out.u32(0); // f32
        out.u64(offset);
        offset += (shape.iter().product::<u64>() * 4).next_multiple_of(32);
    }
    out.pad();
    let mut noise = Noise(0x5eed);
    for (name, shape) in &tensors {
        let count = shape.iter().product::<u64>();
        for index in 0..count {
            let value = if name.contains("norm") {
                1.0
            } else if name == "output.weight" && index / EMBED < CONTROL.len() as u64 {
                // Control tokens get zero logits, below the best of the random ones.
                0.0
            } else {
                noise.next(0.5)
            };
            out.0.extend(value.to_le_bytes());
        }
        out.pad();
    }
    std::fs::write(path, out.0).unwrap();
}

#[test]
fn a_tiny_random_qwen3_loads_and_generates() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tiny-qwen3.gguf");
    write_qwen3(&path);
    let model = GgufChatModel::load(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(model.model_id(), "local:tiny-qwen3");
    // Trained for 512 tokens: the context is capped there.
    assert_eq!(model.context_tokens(), Some(512));

    let request = ChatRequest {
        messages: vec![
            ChatMessage::system("Be brief."),
            ChatMessage::user("the capital of Plimp"),
        ],
        max_tokens: Some(8),
        ..ChatRequest::default()
    };
    assert_eq!(
        model.prompt_text(&request).unwrap(),
        "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nthe capital of Plimp<|im_end|>\n<|im_start|>assistant\n"
    );
    let ids = model.prompt_ids(&request).unwrap();
    // Three turns opened, two closed, each by its single control token.
    assert_eq!(ids.iter().filter(|&&id| id == 3).count(), 3);
    assert_eq!(ids.iter().filter(|&&id| id == 4).count(), 2);

    let (response, pieces) = chat_streamed(&model, &request);
    assert_eq!(response.usage.completion_tokens, 8);
    assert_eq!(response.usage.prompt_tokens, ids.len() as u64);
    assert!(!pieces.is_empty());
    assert_eq!(pieces.concat(), response.content);
}
