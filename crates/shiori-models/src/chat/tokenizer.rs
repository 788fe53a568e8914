//! The byte-level BPE tokenizer a GGUF carries in its metadata (`tokenizer.ggml.*`), rebuilt
//! with the `tokenizers` crate the way the model's own `tokenizer.json` defines it.

use std::collections::HashMap;

use candle_core::quantized::gguf_file::Value;
use tokenizers::decoders::byte_level::ByteLevel;
use tokenizers::models::bpe::{Vocab, BPE};
use tokenizers::normalizers::unicode::NFC;
use tokenizers::pre_tokenizers::digits::Digits;
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::pre_tokenizers::split::{Split, SplitPattern};
use tokenizers::{AddedToken, PreTokenizerWrapper, SplitDelimiterBehavior, Tokenizer};

/// GGUF token types (llama.cpp's `llama_token_type`).
const TOKEN_TYPE_CONTROL: i32 = 3;
const TOKEN_TYPE_USER_DEFINED: i32 = 4;

/// Qwen2's split regex (its tokenizer.json `Split` pre-tokenizer; llama.cpp `qwen2`).
const QWEN2_PATTERN: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
/// Llama 3's split regex (llama.cpp `llama-bpe`): like Qwen2's but digits in runs of up to 3.
const LLAMA3_PATTERN: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// A GGUF model's tokenizer. Text is always encoded as text: a `<|im_end|>` typed by a user is
/// spelled out in ordinary tokens, never turned into the control token (control tokens enter a
/// prompt only by id, through [`GgufTokenizer::token_id`]).
pub struct GgufTokenizer {
    inner: Tokenizer,
    eos_id: u32,
}

impl GgufTokenizer {
    /// Builds the tokenizer from a GGUF's metadata; `Err` says which key is missing or wrong.
    pub fn from_metadata(metadata: &HashMap<String, Value>) -> Result<Self, String> {
        let model = string(metadata, "tokenizer.ggml.model")?;
        if model != "gpt2" {
            return Err(format!(
                "tokenizer.ggml.model is {model:?}; only byte-level BPE (\"gpt2\") is supported"
            ));
        }
        let tokens = array(metadata, "tokenizer.ggml.tokens")?
            .iter()
            .map(|v| v.to_string().cloned())
            .collect::<Result<Vec<String>, _>>()
            .map_err(|e| format!("tokenizer.ggml.tokens: {e}"))?;
        let types = array(metadata, "tokenizer.ggml.token_type")?
            .iter()
            .map(Value::to_i32)
            .collect::<Result<Vec<i32>, _>>()
            .map_err(|e| format!("tokenizer.ggml.token_type: {e}"))?;
        let merges = array(metadata, "tokenizer.ggml.merges")?
            .iter()
            .map(|v| {
                let merge = v
                    .to_string()
                    .map_err(|e| format!("tokenizer.ggml.merges: {e}"))?;
                merge
                    .split_once(' ')
                    .map(|(a, b)| (a.to_string(), b.to_string()))
                    .ok_or_else(|| format!("tokenizer.ggml.merges: {merge:?} is not a pair"))
            })
            .collect::<Result<Vec<_>, String>>()?;
        let eos_id = metadata
            .get("tokenizer.ggml.eos_token_id")
            .ok_or("tokenizer.ggml.eos_token_id is missing")?
            .to_u32()
            .map_err(|e| format!("tokenizer.ggml.eos_token_id: {e}"))?;
        let pre = metadata
            .get("tokenizer.ggml.pre")
            .and_then(|v| v.to_string().ok())
            .map_or("default", String::as_str);

        let vocab: Vocab = tokens
            .iter()
            .enumerate()
            .map(|(id, token)| (token.clone(), id as u32))
            .collect();
        let bpe = BPE::builder()
            .vocab_and_merges(vocab, merges)
            .ignore_merges(pre == "llama-bpe")
            .build()
            .map_err(|e| format!("tokenizer.ggml.merges: {e}"))?;
        let mut inner = Tokenizer::new(bpe);
        match pre {
            "qwen2" => {
                inner
                    .with_normalizer(Some(NFC))
                    .map_err(|e| e.to_string())?;
                inner.with_pre_tokenizer(Some(split_then_bytes(QWEN2_PATTERN)?));
            }
            "llama-bpe" => {
                inner.with_pre_tokenizer(Some(split_then_bytes(LLAMA3_PATTERN)?));
            }
            // SmolLM and StarCoder: single digits, then GPT-2's byte-level split.
            "smollm" | "starcoder" => {
                inner.with_pre_tokenizer(Some(Sequence::new(vec![
                    Digits::new(true).into(),
                    ByteLevel::new(false, true, true).into(),
                ])));
            }
            "default" | "gpt2" => {
                inner.with_pre_tokenizer(Some(ByteLevel::new(false, true, true)));
            }
            other => return Err(format!("tokenizer.ggml.pre {other:?} is not supported")),
        }
        inner.with_decoder(Some(ByteLevel::default()));

        let added: Vec<AddedToken> = tokens
            .iter()
            .zip(&types)
            .filter(|(_, &kind)| kind == TOKEN_TYPE_CONTROL || kind == TOKEN_TYPE_USER_DEFINED)
            .map(|(token, &kind)| {
                AddedToken::from(token.clone(), kind == TOKEN_TYPE_CONTROL).normalized(false)
            })
            .collect();
        inner
            .add_tokens(added)
            .map_err(|e| format!("tokenizer.ggml.tokens: {e}"))?;
        inner.set_encode_special_tokens(true);
        Ok(GgufTokenizer { inner, eos_id })
    }

    /// Token ids of `text`, with no BOS and no control tokens.
    pub fn encode(&self, text: &str) -> Result<Vec<u32>, String> {
        self.inner
            .encode_fast(text, false)
            .map(|encoding| encoding.get_ids().to_vec())
            .map_err(|e| e.to_string())
    }

    /// The text of `ids`, control tokens left out.
    pub fn decode(&self, ids: &[u32]) -> Result<String, String> {
        self.inner.decode(ids, true).map_err(|e| e.to_string())
    }

    /// The text of `ids`, control tokens spelled out.
    pub fn decode_with_control(&self, ids: &[u32]) -> Result<String, String> {
        self.inner.decode(ids, false).map_err(|e| e.to_string())
    }

    /// The id of a token, such as the control token `<|im_start|>`, if the vocabulary has it.
    pub fn token_id(&self, token: &str) -> Option<u32> {
        self.inner.token_to_id(token)
    }

    pub fn eos_id(&self) -> u32 {
        self.eos_id
    }
}

fn split_then_bytes(pattern: &str) -> Result<Sequence, String> {
    let split = Split::new(
        SplitPattern::Regex(pattern.to_string()),
        SplitDelimiterBehavior::Isolated,
        false,
    )
    .map_err(|e| format!("pre-tokenizer regex: {e}"))?;
    let steps: Vec<PreTokenizerWrapper> =
        vec![split.into(), ByteLevel::new(false, false, false).into()];
    Ok(Sequence::new(steps))
}

fn string<'a>(metadata: &'a HashMap<String, Value>, key: &str) -> Result<&'a str, String> {
    metadata
        .get(key)
        .ok_or_else(|| format!("{key} is missing"))?
        .to_string()
        .map(String::as_str)
        .map_err(|e| format!("{key}: {e}"))
}

fn array<'a>(metadata: &'a HashMap<String, Value>, key: &str) -> Result<&'a Vec<Value>, String> {
    metadata
        .get(key)
        .ok_or_else(|| format!("{key} is missing"))?
        .to_vec()
        .map_err(|e| format!("{key}: {e}"))
}
