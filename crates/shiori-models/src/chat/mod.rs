//! Local chat models: any GGUF llama.cpp runs (Llama, Qwen, Gemma, Phi, Mistral, …), linked into
//! the binary, prompted with the chat template the file carries. Replies that must be JSON are
//! held to their schema by grammar-constrained sampling.

mod engine;
mod logs;
mod prompt;
mod reply;
mod session;
mod stream;

use std::num::NonZeroU32;
use std::ops::ControlFlow;
use std::path::Path;
use std::sync::Mutex;

use llama_cpp_2::context::params::{KvCacheType, LlamaContextParams};
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::{ApplyChatTemplateError, NewLlamaChatMessageError};
use shiori_core::{
    parse_tool_calls, ChatError, ChatModel, ChatRequest, ChatResponse, TokenSink, Usage,
};

use crate::ModelLoadError;
use prompt::Piece;
use reply::Reply;
use session::{Session, SessionError};
use stream::TextStream;

const DEFAULT_MAX_TOKENS: usize = 512;
/// The context a model gets unless configured otherwise (or trained for less): room for a RAG
/// prompt and its answer without reserving a KV cache for the 32k–128k tokens newer models
/// are trained for.
const DEFAULT_CONTEXT_TOKENS: usize = 4096;
/// Contexts are sized in steps of this many tokens (llama.cpp pads them to it anyway), so
/// requests of about the same length share one.
const CONTEXT_STEP: usize = 256;
/// Prompt tokens computed in one pass; between passes the caller is asked whether to go on. The
/// compute buffer grows with it, and on CPU a larger pass is not faster: 128 ran as fast as 512
/// (SmolLM2: 285 against 287 prompt tokens/s) for 10 MB less RSS, and 64 as fast as 128
/// (SmolLM2 202 against 209, Qwen2.5-0.5B 95 against 93, medians of 4 alternating runs, within
/// the machine's noise) for 2.4 and 5.3 MB less.
const MICRO_BATCH: u32 = 64;
const DEFAULT_SEED: u32 = 0x5348_494f;

/// Why a request could not be laid out in the model's chat template.
#[derive(Debug, thiserror::Error)]
enum RenderError {
    #[error(transparent)]
    Message(#[from] NewLlamaChatMessageError),
    #[error("llama.cpp cannot apply the model's chat template: {0}")]
    Template(#[source] ApplyChatTemplateError),
    #[error(transparent)]
    Dropped(#[from] prompt::DroppedMessage),
}

/// How a local model runs; `None` takes the default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LocalSettings {
    /// Tokens the context holds, prompt and reply together (4096 by default, capped
    /// at what the model was trained for).
    pub context_tokens: Option<usize>,
    /// Threads that compute (one per physical core).
    pub threads: Option<usize>,
}

/// A GGUF chat model on llama.cpp. The weights load once per process. Calls run one at a time
/// on one context (each already computes on every core), which keeps the KV cache of the last
/// prompt for the next one to start from.
pub struct GgufChatModel {
    model_id: String,
    model: &'static LlamaModel,
    template: LlamaChatTemplate,
    context_tokens: usize,
    threads: usize,
    session: Mutex<Option<Session>>,
    seed: u32,
}

impl GgufChatModel {
    /// Loads a GGUF with the default settings. The model id is `local:` and the file name
    /// without `.gguf`.
    pub fn load(path: &Path) -> Result<Self, ModelLoadError> {
        Self::load_with(path, LocalSettings::default())
    }

    pub fn load_with(path: &Path, settings: LocalSettings) -> Result<Self, ModelLoadError> {
        if !path.is_file() {
            return Err(ModelLoadError::Io {
                path: path.to_path_buf(),
                source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
            });
        }
        let model = engine::model(path)?;
        // A GGUF without a template gets ChatML, the format most small instruct models use.
        let template = model
            .chat_template(None)
            .or_else(|_| LlamaChatTemplate::new("chatml"))
            .map_err(|e| ModelLoadError::invalid(path, format!("its chat template: {e}")))?;
        let trained = model.n_ctx_train() as usize;
        let context_tokens = settings
            .context_tokens
            .unwrap_or(DEFAULT_CONTEXT_TOKENS.min(trained))
            .max(1);
        let stem = path
            .file_name()
            .map(|name| name.to_string_lossy())
            .unwrap_or_default();
        let chat = GgufChatModel {
            model_id: format!("local:{}", stem.trim_end_matches(".gguf")),
            model,
            template,
            context_tokens,
            threads: settings.threads.unwrap_or_else(engine::default_threads),
            session: Mutex::new(None),
            seed: DEFAULT_SEED,
        };
        // A template llama.cpp does not know fails here, at load, not at the first question.
        chat.render(&ChatRequest {
            messages: vec![shiori_core::ChatMessage::user("Hi")],
            ..ChatRequest::default()
        })
        .map_err(|e| ModelLoadError::invalid(path, e))?;
        Ok(chat)
    }

    /// Seeds temperature sampling (the default seed is fixed, so runs repeat).
    pub fn with_seed(mut self, seed: u32) -> Self {
        self.seed = seed;
        self
    }

    /// Empties the KV cache kept from the last call, so the next computes its whole prompt (as
    /// a benchmark of prompt speed needs).
    pub fn forget_cached_prompt(&self) {
        let mut slot = self
            .session
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(session) = slot.as_mut() {
            session.forget();
        }
    }

    /// The CPU features llama.cpp's kernels in this build were compiled for, e.g. `AVX2 FMA
    /// AVX512 AVX512_VNNI`.
    pub fn kernel_features(&self) -> &'static str {
        engine::kernel_features()
    }

    /// The most tokens prompt and reply may hold together.
    pub fn context_length(&self) -> usize {
        self.context_tokens
    }

    /// The token ids of `request`'s prompt, up to where the reply starts.
    pub fn prompt_ids(&self, request: &ChatRequest) -> Result<Vec<i32>, ChatError> {
        let tokens = self.encode_prompt(request)?;
        Ok(tokens.into_iter().map(|token| token.0).collect())
    }

    /// The prompt's text with its control tokens, as the model sees it.
    pub fn prompt_text(&self, request: &ChatRequest) -> Result<String, ChatError> {
        let pieces = self.render(request).map_err(|e| self.failure(e))?;
        Ok(pieces
            .into_iter()
            .map(|piece| match piece {
                Piece::Template(text) | Piece::Message(text) => text,
            })
            .collect())
    }

    /// The request laid out by the model's template, split into template text and messages.
    fn render(&self, request: &ChatRequest) -> Result<Vec<Piece>, RenderError> {
        let turns = prompt::turns(request);
        let marks = prompt::placeholders(turns.len());
        let messages = turns
            .iter()
            .zip(&marks)
            .map(|((role, _), mark)| LlamaChatMessage::new(role.to_string(), mark.clone()))
            .collect::<Result<Vec<_>, _>>()?;
        let rendered = self
            .model
            .apply_chat_template(&self.template, &messages, true)
            .map_err(RenderError::Template)?;
        let contents: Vec<String> = turns.into_iter().map(|(_, content)| content).collect();
        Ok(prompt::split(&rendered, &contents)?)
    }

    fn encode_prompt(&self, request: &ChatRequest) -> Result<Vec<LlamaToken>, ChatError> {
        let vocab = self.model.vocab();
        let mut tokens = Vec::new();
        for (index, piece) in self
            .render(request)
            .map_err(|e| self.failure(e))?
            .into_iter()
            .enumerate()
        {
            // The template's text may name control tokens; the messages' text never does.
            let (text, special) = match &piece {
                Piece::Template(text) => (text, true),
                Piece::Message(text) => (text, false),
            };
            tokens.extend(vocab.tokenize(text.as_bytes(), index == 0, special));
        }
        Ok(tokens)
    }

    fn failure(&self, message: impl ToString) -> ChatError {
        ChatError::Permanent {
            provider: self.model_id.clone(),
            message: message.to_string(),
        }
    }

    /// The session, with room for `tokens` tokens. A context is sized to the requests it has
    /// seen rather than to `context_tokens`: its KV cache is allocated whole, and at 4096 tokens
    /// it outweighs a small model. A larger request grows it, keeping what it had cached.
    fn session_for<'s>(
        &self,
        slot: &'s mut Option<Session>,
        tokens: usize,
    ) -> Result<&'s mut Session, ChatError> {
        if slot
            .as_ref()
            .is_some_and(|session| session.capacity() < tokens)
        {
            let cached = slot.take().and_then(Session::into_cached);
            let mut session = self.new_session(tokens)?;
            if let Some(cached) = cached {
                session.resume(cached);
            }
            *slot = Some(session);
        }
        match slot {
            Some(session) => Ok(session),
            None => Ok(slot.insert(self.new_session(tokens)?)),
        }
    }

    /// A context for at least `tokens` tokens, rounded up to a whole step and at most
    /// `context_tokens`.
    fn new_session(&self, tokens: usize) -> Result<Session, ChatError> {
        let size = tokens
            .div_ceil(CONTEXT_STEP)
            .saturating_mul(CONTEXT_STEP)
            .min(self.context_tokens);
        let threads = self.threads as i32;
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(size as u32))
            .with_n_batch(MICRO_BATCH)
            .with_n_ubatch(MICRO_BATCH)
            .with_n_threads(threads)
            .with_n_threads_batch(threads)
            // Measured on SmolLM2 and Qwen2.5-Coder-0.5B on AVX2 (the 520-token bench prompt):
            // flash attention lets every generated token cost more (SmolLM2: 94 against 110
            // tokens/s) for 5% faster prompts, and without it the keys can be 8-bit (values
            // cannot), which costs neither speed and saves a quarter of the KV cache.
            .with_flash_attention_policy(llama_cpp_sys_2::LLAMA_FLASH_ATTN_TYPE_DISABLED)
            .with_type_k(KvCacheType::Q8_0);
        let backend = engine::backend().map_err(|e| self.failure(e))?;
        let context = self
            .model
            .new_context(backend, params)
            .map_err(|e| self.failure(format!("llama.cpp could not make a context: {e}")))?;
        Ok(Session::new(context))
    }

    fn sampler(&self, request: &ChatRequest) -> Result<LlamaSampler, ChatError> {
        let mut chain = Vec::new();
        chain.extend(self.reply_grammar(request)?);
        match request.temperature {
            Some(t) if t > 0.0 => {
                chain.push(LlamaSampler::temp(t));
                chain.push(LlamaSampler::dist(self.seed));
            }
            _ => chain.push(LlamaSampler::greedy()),
        }
        Ok(LlamaSampler::chain_simple(chain))
    }

    /// The grammar a reply is sampled under: a JSON reply follows its schema from the first
    /// token, a plain one the request's own grammar; a tool call, once the model opens one, with `<tool_call>` or bare as small models
    /// often do, names an offered tool and gives arguments of that tool's schema.
    fn reply_grammar(&self, request: &ChatRequest) -> Result<Option<LlamaSampler>, ChatError> {
        let grammar_of = |schema: &str| {
            llama_cpp_2::json_schema_to_grammar(schema)
                .map_err(|e| self.failure(format!("the JSON schema has no grammar: {e}")))
        };
        let invalid = |e: llama_cpp_2::GrammarError| self.failure(format!("the grammar: {e}"));
        if request.json_mode {
            let schema = request
                .json_schema
                .clone()
                .unwrap_or_else(|| serde_json::json!({"type": "object"}));
            let grammar = grammar_of(&schema.to_string())?;
            return LlamaSampler::grammar(self.model, &grammar, "root")
                .map(Some)
                .map_err(invalid);
        }
        if let Some(grammar) = &request.grammar {
            return LlamaSampler::grammar(self.model, grammar, "root")
                .map(Some)
                .map_err(invalid);
        }
        if request.tools.is_empty() {
            return Ok(None);
        }
        let calls = grammar_of(&prompt::tool_call_schema(&request.tools))?;
        let grammar = format!(
            "{calls}\ntool-call ::= \"{OPEN}\" [ \\n]* root [ \\n]* \"{CLOSE}\" | root\n",
            OPEN = prompt::TOOL_CALL_OPEN,
            CLOSE = prompt::TOOL_CALL_CLOSE,
        );
        LlamaSampler::grammar_lazy(
            self.model,
            &grammar,
            "tool-call",
            [prompt::TOOL_CALL_OPEN, prompt::BARE_TOOL_CALL_OPEN],
            &[],
        )
        .map(Some)
        .map_err(invalid)
    }

    /// Samples until an end-of-generation token, `max_new` tokens or the sink breaks off;
    /// returns how many tokens were generated.
    fn generate(
        &self,
        session: &mut Session,
        prompt: &[LlamaToken],
        max_new: usize,
        sampler: &mut LlamaSampler,
        reply: &mut Reply,
    ) -> Result<usize, SessionError> {
        session.prefill(prompt, &mut || reply.keep_going())?;
        let vocab = self.model.vocab();
        let mut stream = TextStream::default();
        let mut generated = 0;
        while generated < max_new && !reply.is_cancelled() {
            let token = session.sample(sampler);
            if vocab.is_eog(token) {
                break;
            }
            generated += 1;
            if let Some(piece) = stream.push(&vocab.token_to_piece(token, false, None)) {
                reply.push(&piece);
            }
            if generated < max_new && !reply.is_cancelled() {
                session.advance(token)?;
            }
        }
        if let Some(piece) = stream.finish() {
            reply.push(&piece);
        }
        Ok(generated)
    }
}

impl ChatModel for GgufChatModel {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn context_tokens(&self) -> Option<usize> {
        Some(self.context_tokens)
    }

    fn chat(
        &self,
        request: &ChatRequest,
        on_token: Option<TokenSink<'_>>,
    ) -> Result<ChatResponse, ChatError> {
        let prompt = self.encode_prompt(request)?;
        if prompt.len() >= self.context_tokens {
            return Err(ChatError::ContextTooLong {
                provider: self.model_id.clone(),
                message: format!(
                    "the prompt has {} tokens; the context holds {}",
                    prompt.len(),
                    self.context_tokens
                ),
            });
        }
        let max_new = request
            .max_tokens
            .map_or(DEFAULT_MAX_TOKENS, |n| n as usize)
            .min(self.context_tokens - prompt.len());
        let mut sampler = self.sampler(request)?;
        let mut ignore = |_: &str| ControlFlow::Continue(());
        let sink: TokenSink<'_> = match on_token {
            Some(sink) => sink,
            None => &mut ignore,
        };
        let mut reply = Reply::new(sink);
        let mut slot = self
            .session
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let session = self.session_for(&mut slot, prompt.len() + max_new)?;
        let completion_tokens = self
            .generate(session, &prompt, max_new, &mut sampler, &mut reply)
            .map_err(|e| self.failure(e))?;
        drop(slot);
        let usage = Usage {
            prompt_tokens: prompt.len() as u64,
            completion_tokens: completion_tokens as u64,
        };
        if reply.is_cancelled() {
            return Err(ChatError::Cancelled {
                provider: self.model_id.clone(),
                usage,
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
            usage,
            model: self.model_id.clone(),
        })
    }
}
