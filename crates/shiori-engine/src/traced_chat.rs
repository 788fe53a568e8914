//! Every chat model call as a span of the request's trace, whichever provider answers: the
//! model, its tokens and whether it failed, the same figures the answer's `Trace` and usage carry.

use shiori_core::{ChatError, ChatModel, ChatRequest, ChatResponse, TokenSink};

pub(crate) struct TracedChat {
    name: String,
    model: Box<dyn ChatModel>,
}

impl TracedChat {
    pub(crate) fn new(name: &str, model: Box<dyn ChatModel>) -> TracedChat {
        TracedChat {
            name: name.to_string(),
            model,
        }
    }
}

impl ChatModel for TracedChat {
    fn model_id(&self) -> &str {
        self.model.model_id()
    }

    fn context_tokens(&self) -> Option<usize> {
        self.model.context_tokens()
    }

    fn chat(
        &self,
        request: &ChatRequest,
        on_token: Option<TokenSink<'_>>,
    ) -> Result<ChatResponse, ChatError> {
        let span = tracing::info_span!(
            "model_call",
            model = %self.name,
            model_id = %self.model.model_id(),
            streamed = on_token.is_some(),
            prompt_tokens = tracing::field::Empty,
            completion_tokens = tracing::field::Empty,
            error = tracing::field::Empty,
        );
        let _entered = span.enter();
        let result = self.model.chat(request, on_token);
        match &result {
            Ok(response) => {
                span.record("prompt_tokens", response.usage.prompt_tokens);
                span.record("completion_tokens", response.usage.completion_tokens);
            }
            Err(error) => {
                span.record("error", tracing::field::display(error));
            }
        }
        result
    }
}
