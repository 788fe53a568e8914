//! Local chat models: a quantized GGUF (SmolLM2, Qwen2.5) run with candle on the CPU, with the
//! tokenizer and chat template the file carries.

mod reply;
mod stream;
mod template;
mod tokenizer;
mod weights;

use std::fs::File;
use std::path::Path;

use candle_core::quantized::gguf_file::Content;
use candle_core::{Device, Tensor};
use candle_transformers::generation::LogitsProcessor;
use shiori_core::{ChatError, ChatModel, ChatRequest, ChatResponse, TokenSink, Usage};

use crate::ModelLoadError;
use reply::Reply;
use stream::TextStream;
use template::{parse_tool_calls, ChatTemplate, Piece, IM_END, IM_START};
pub use tokenizer::GgufTokenizer;
use weights::{Forward, Weights};

const DEFAULT_MAX_TOKENS: usize = 512;
/// Prompt tokens per forward pass: bounds the attention scores' memory (heads × chunk × context)
/// on long prompts.
const PREFILL_CHUNK: usize = 256;
const DEFAULT_SEED: u64 = 0x5348_494f_5249;

/// A GGUF chat model. Loads once; every call starts from an empty KV cache, so one instance can
/// serve many threads (llama models concurrently, qwen2 models one call at a time).
pub struct GgufChatModel {
    model_id: String,
    weights: Weights,
    tokenizer: GgufTokenizer,
    template: ChatTemplate,
    /// Tokens that end a reply: `<|im_end|>`, the end-of-text token and the GGUF's EOS.
    stop_ids: Vec<u32>,
    context_length: usize,
    seed: u64,
}

impl GgufChatModel {
    /// Loads a GGUF of llama or qwen2 architecture with a gpt2-style tokenizer and a ChatML
    /// template. The model id is `local:` and the file name without `.gguf`.
    pub fn load(path: &Path) -> Result<Self, ModelLoadError> {
        let io_error = |source| ModelLoadError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut file = File::open(path).map_err(io_error)?;
        let content = Content::read(&mut file)
            .map_err(|e| ModelLoadError::invalid(path, format!("not a readable GGUF file: {e}")))?;
        let metadata_string = |key: &str| {
            content
                .metadata
                .get(key)
                .and_then(|v| v.to_string().ok())
                .cloned()
                .ok_or_else(|| ModelLoadError::invalid(path, format!("{key} is missing")))
        };
        let architecture = metadata_string("general.architecture")?;
        let template = ChatTemplate::from_jinja(&metadata_string("tokenizer.chat_template")?)
            .map_err(|e| ModelLoadError::invalid(path, e))?;
        let declared_context = content
            .metadata
            .get(&format!("{architecture}.context_length"))
            .and_then(|v| v.to_u32().ok())
            .ok_or_else(|| {
                ModelLoadError::invalid(path, format!("{architecture}.context_length is missing"))
            })? as usize;
        let tokenizer = GgufTokenizer::from_metadata(&content.metadata)
            .map_err(|e| ModelLoadError::invalid(path, e))?;
        let control = |token: &str| {
            tokenizer.token_id(token).ok_or_else(|| {
                ModelLoadError::invalid(path, format!("the vocabulary has no {token}"))
            })
        };
        control(IM_START)?;
        let mut stop_ids = vec![control(IM_END)?, tokenizer.eos_id()];
        stop_ids.extend(tokenizer.token_id("<|endoftext|>"));

        let weights = Weights::load(path, &architecture, content, &mut file)?;
        let stem = path
            .file_name()
            .map(|name| name.to_string_lossy())
            .unwrap_or_default();
        Ok(GgufChatModel {
            model_id: format!("local:{}", stem.trim_end_matches(".gguf")),
            context_length: weights.max_positions(declared_context),
            weights,
            tokenizer,
            template,
            stop_ids,
            seed: DEFAULT_SEED,
        })
    }

    /// Seeds temperature sampling (the default seed is fixed, so runs repeat).
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// The most tokens prompt and reply may hold together.
    pub fn context_length(&self) -> usize {
        self.context_length
    }

    pub fn tokenizer(&self) -> &GgufTokenizer {
        &self.tokenizer
    }

    /// The token ids of `request`'s prompt, up to where the reply starts.
    pub fn prompt_ids(&self, request: &ChatRequest) -> Result<Vec<u32>, ChatError> {
        self.encode_prompt(request).map(|(ids, _)| ids)
    }

    /// The prompt's ids and the text the reply was begun with.
    fn encode_prompt(&self, request: &ChatRequest) -> Result<(Vec<u32>, &'static str), ChatError> {
        let (pieces, prefill) = self.template.render(request);
        let mut ids = Vec::new();
        for piece in pieces {
            match piece {
                Piece::Control(token) => ids.push(
                    self.tokenizer
                        .token_id(token)
                        .ok_or_else(|| self.failure(format!("the vocabulary has no {token}")))?,
                ),
                Piece::Text(text) => ids.extend(
                    self.tokenizer
                        .encode(&text)
                        .map_err(|e| self.failure(format!("tokenizing the prompt: {e}")))?,
                ),
            }
        }
        Ok((ids, prefill))
    }

    fn failure(&self, message: impl ToString) -> ChatError {
        ChatError::Permanent {
            provider: self.model_id.clone(),
            message: message.to_string(),
        }
    }

    /// Feeds the prompt, then samples until a stop token, `max_new` tokens, the context's end or
    /// a complete reply.
    fn generate(
        &self,
        model: &mut dyn Forward,
        prompt: &[u32],
        max_new: usize,
        temperature: Option<f64>,
        reply: &mut Reply,
    ) -> candle_core::Result<usize> {
        let mut logits = None;
        for (index, chunk) in prompt.chunks(PREFILL_CHUNK).enumerate() {
            let input = Tensor::new(chunk, &Device::Cpu)?.unsqueeze(0)?;
            logits = Some(model.forward(&input, index * PREFILL_CHUNK)?);
        }
        let mut sampler = LogitsProcessor::new(self.seed, temperature, None);
        let mut stream = TextStream::new(|ids: &[u32]| self.tokenizer.decode(ids));
        let mut position = prompt.len();
        while let Some(current) = logits.take() {
            let next = sampler.sample(&current.squeeze(0)?)?;
            if self.stop_ids.contains(&next) {
                break;
            }
            if let Some(piece) = stream.push(next).map_err(candle_core::Error::msg)? {
                reply.push(&piece);
            }
            if reply.is_complete() || stream.ids().len() >= max_new {
                break;
            }
            let input = Tensor::new(&[next], &Device::Cpu)?.unsqueeze(0)?;
            logits = Some(model.forward(&input, position)?);
            position += 1;
        }
        if let Some(piece) = stream.finish().map_err(candle_core::Error::msg)? {
            reply.push(&piece);
        }
        Ok(stream.ids().len())
    }
}

impl ChatModel for GgufChatModel {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn context_tokens(&self) -> Option<usize> {
        Some(self.context_length)
    }

    fn chat(
        &self,
        request: &ChatRequest,
        on_token: Option<TokenSink<'_>>,
    ) -> Result<ChatResponse, ChatError> {
        let (prompt, prefill) = self.encode_prompt(request)?;
        if prompt.len() >= self.context_length {
            return Err(ChatError::ContextTooLong {
                provider: self.model_id.clone(),
                message: format!(
                    "the prompt has {} tokens; the context holds {}",
                    prompt.len(),
                    self.context_length
                ),
            });
        }
        let max_new = request
            .max_tokens
            .map_or(DEFAULT_MAX_TOKENS, |n| n as usize)
            .min(self.context_length - prompt.len());
        let temperature = request.temperature.map(f64::from);

        let mut ignore = |_: &str| std::ops::ControlFlow::Continue(());
        let sink: TokenSink<'_> = match on_token {
            Some(sink) => sink,
            None => &mut ignore,
        };
        let mut reply = Reply::new(request.json_mode, sink);
        reply.push(prefill);
        let completion_tokens = if max_new > 0 {
            self.weights
                .with_fresh_cache(|model| {
                    self.generate(model, &prompt, max_new, temperature, &mut reply)
                })
                .map_err(|e| self.failure(format!("generation failed: {e}")))?
        } else {
            0
        };
        if reply.is_cancelled() {
            return Err(ChatError::Cancelled {
                provider: self.model_id.clone(),
            });
        }
        let reply = reply.into_text();
        let (content, tool_calls) = if request.tools.is_empty() {
            (reply, Vec::new())
        } else {
            parse_tool_calls(&reply, &request.tools)
        };
        Ok(ChatResponse {
            content,
            tool_calls,
            usage: Usage {
                prompt_tokens: prompt.len() as u64,
                completion_tokens: completion_tokens as u64,
            },
            model: self.model_id.clone(),
        })
    }
}
