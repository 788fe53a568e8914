//! What the GGUF chat tests share.

use shiori_core::{ChatModel, ChatRequest, ChatResponse};
use std::ops::ControlFlow;

/// Answers `request` with a token sink, returning the response and the pieces streamed to it.
pub fn chat_streamed(model: &dyn ChatModel, request: &ChatRequest) -> (ChatResponse, Vec<String>) {
    let mut pieces = Vec::new();
    let response = model
        .chat(
            request,
            Some(&mut |piece: &str| {
                pieces.push(piece.to_string());
                ControlFlow::Continue(())
            }),
        )
        .unwrap();
    (response, pieces)
}
