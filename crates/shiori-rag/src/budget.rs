//! Fits a request's completion budget to the model's context window, so a model with a small
//! context (a llama.cpp server with `n_ctx 512`) is asked for what fits instead of a fixed cap.

use shiori_core::{ChatModel, ChatRequest};
use std::borrow::Cow;

/// Tokens kept free for the chat template's markup around the messages.
const TEMPLATE_TOKENS: usize = 32;

/// An upper estimate of a text's tokens: a token per non-ASCII character (Japanese runs close
/// to that) and per three ASCII bytes (English runs near four).
pub(crate) fn estimate_tokens(text: &str) -> usize {
    let (ascii, other) =
        text.chars()
            .fold((0usize, 0usize), |(ascii, other), c| match c.is_ascii() {
                true => (ascii + 1, other),
                false => (ascii, other + 1),
            });
    ascii.div_ceil(3) + other
}

/// `request` with `max_tokens` lowered to what `model`'s context leaves after the prompt;
/// unchanged when the model does not say its context or the prompt leaves nothing (the model
/// then reports the overflow itself).
pub(crate) fn fit_to_context<'r>(
    model: &dyn ChatModel,
    request: &'r ChatRequest,
) -> Cow<'r, ChatRequest> {
    let Some(context) = model.context_tokens() else {
        return Cow::Borrowed(request);
    };
    let prompt: usize = request
        .messages
        .iter()
        .map(|message| estimate_tokens(&message.content))
        .sum::<usize>()
        + TEMPLATE_TOKENS;
    let Some(room) = context.checked_sub(prompt).filter(|room| *room > 0) else {
        return Cow::Borrowed(request);
    };
    let room = u32::try_from(room).unwrap_or(u32::MAX);
    match request.max_tokens {
        Some(max) if max <= room => Cow::Borrowed(request),
        _ => Cow::Owned(ChatRequest {
            max_tokens: Some(room),
            ..request.clone()
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shiori_core::{ChatError, ChatMessage, ChatResponse, TokenSink};

    struct Sized(Option<usize>);

    impl ChatModel for Sized {
        fn model_id(&self) -> &str {
            "test:sized"
        }

        fn context_tokens(&self) -> Option<usize> {
            self.0
        }

        fn chat(
            &self,
            _: &ChatRequest,
            _: Option<TokenSink<'_>>,
        ) -> Result<ChatResponse, ChatError> {
            unreachable!("budgets are fitted without calling the model")
        }
    }

    fn request(prompt: &str) -> ChatRequest {
        ChatRequest {
            messages: vec![ChatMessage::user(prompt)],
            max_tokens: Some(800),
            ..ChatRequest::default()
        }
    }

    #[test]
    fn estimates_japanese_and_english_from_above() {
        assert_eq!(estimate_tokens("請求書"), 3);
        assert_eq!(estimate_tokens("invoice"), 3);
    }

    #[test]
    fn lowers_the_budget_to_what_the_context_leaves() {
        let prompt = "word ".repeat(300);
        let asked = request(&prompt);
        let fitted = fit_to_context(&Sized(Some(1_024)), &asked);
        assert_eq!(
            fitted.max_tokens,
            Some(1_024 - 500 - TEMPLATE_TOKENS as u32)
        );
        assert_eq!(
            fit_to_context(&Sized(Some(8_192)), &asked).max_tokens,
            Some(800)
        );
        assert_eq!(fit_to_context(&Sized(None), &asked).max_tokens, Some(800));
        assert_eq!(
            fit_to_context(&Sized(Some(512)), &asked).max_tokens,
            Some(800),
            "nothing fits: the model reports the overflow"
        );
    }
}
