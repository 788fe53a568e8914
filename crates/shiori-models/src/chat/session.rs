//! One llama.cpp context and the tokens its KV cache holds. A new prompt that starts like the
//! last one (the same system prompt and documents, as the steps of one answer often do) only
//! computes the tokens after the shared prefix.

use llama_cpp_2::context::session::{LlamaStateSeqFlags, SeqState};
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_batch::{BatchAddError, LlamaBatch};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::DecodeError;

/// Why the context could not compute a token.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error(transparent)]
    Batch(#[from] BatchAddError),
    #[error("llama.cpp could not decode: {0}")]
    Decode(#[source] DecodeError),
}

/// A context's cached prompt, taken out of it.
pub struct CachedPrompt {
    state: SeqState,
    tokens: Vec<LlamaToken>,
}

pub struct Session {
    context: LlamaContext<'static>,
    /// The tokens whose keys and values the context holds, position by position.
    cached: Vec<LlamaToken>,
}

impl Session {
    pub fn new(context: LlamaContext<'static>) -> Self {
        Session {
            context,
            cached: Vec::new(),
        }
    }

    /// The most tokens the context holds.
    pub fn capacity(&self) -> usize {
        self.context.n_ctx() as usize
    }

    /// The KV cache's content, for a larger context to start from. Drops this context first,
    /// so the two are never held at once.
    pub fn into_cached(self) -> Option<CachedPrompt> {
        let state = self
            .context
            .state_seq_get(0, LlamaStateSeqFlags::empty())
            .ok()?;
        Some(CachedPrompt {
            state,
            tokens: self.cached,
        })
    }

    /// Starts from what another context had cached; starts empty if it does not fit.
    pub fn resume(&mut self, cached: CachedPrompt) {
        match self.context.state_seq_set(&cached.state, 0) {
            Ok(()) => self.cached = cached.tokens,
            Err(_) => self.forget(),
        }
    }

    /// Brings the KV cache to `prompt`, keeping the prefix it shares with what is cached, and
    /// leaves the logits of the prompt's last token ready for sampling. Before each pass it asks
    /// `keep_going`, and stops there once told no (what was computed stays cached).
    pub fn prefill(
        &mut self,
        prompt: &[LlamaToken],
        keep_going: &mut dyn FnMut() -> bool,
    ) -> Result<(), SessionError> {
        // The last prompt token is always decoded again: its logits start the reply.
        let shared = common_prefix(&self.cached, prompt).min(prompt.len().saturating_sub(1));
        let kept = self
            .context
            .clear_kv_cache_seq(Some(0), Some(shared as u32), None)
            .unwrap_or(false);
        let start = if kept {
            shared
        } else {
            // Recurrent models cannot drop part of their state: start over.
            self.context.clear_kv_cache();
            0
        };
        self.cached.truncate(start);
        // One micro-batch a pass: llama.cpp computes no more at once, so nothing is lost by
        // asking between them.
        let batch_size = self.context.n_ubatch() as usize;
        let mut batch = LlamaBatch::new(batch_size, 1);
        for chunk in prompt[start..].chunks(batch_size) {
            if !keep_going() {
                break;
            }
            batch.clear();
            let last = self.cached.len() + chunk.len() - 1;
            for &token in chunk {
                let position = self.cached.len();
                batch.add(token, position as i32, &[0], position == last)?;
                self.cached.push(token);
            }
            self.decode(&mut batch)?;
        }
        Ok(())
    }

    /// Empties the KV cache: the next prompt is computed whole.
    pub fn forget(&mut self) {
        self.cached.clear();
        self.context.clear_kv_cache();
    }

    /// Samples the next token from the logits of the last decoded one.
    pub fn sample(&mut self, sampler: &mut LlamaSampler) -> LlamaToken {
        sampler.sample(&self.context, -1)
    }

    /// Appends a generated token and computes the logits that follow it.
    pub fn advance(&mut self, token: LlamaToken) -> Result<(), SessionError> {
        let mut batch = LlamaBatch::new(1, 1);
        batch.add(token, self.cached.len() as i32, &[0], true)?;
        self.cached.push(token);
        self.decode(&mut batch)
    }

    fn decode(&mut self, batch: &mut LlamaBatch) -> Result<(), SessionError> {
        self.context.decode(batch).map_err(|e| {
            // What the failed batch wrote is unknown: nothing cached can be trusted.
            self.forget();
            SessionError::Decode(e)
        })
    }
}

fn common_prefix(a: &[LlamaToken], b: &[LlamaToken]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}
