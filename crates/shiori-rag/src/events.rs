//! What a run reports while it answers, and how its caller stops it.

use crate::corpus::RagError;
use shiori_core::{ChatError, TraceStep};
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};

/// One thing a run reports: a step once it has ended, or a piece of the answer as it is generated.
#[derive(Debug, Clone, PartialEq)]
pub enum AnswerEvent {
    Step(TraceStep),
    Token(String),
}

/// Who listens to a run: events go to `on_event`; once `cancel` is set, the run stops at the next
/// step or token (an upstream stream is dropped with it).
#[derive(Clone, Copy, Default)]
pub struct Listener<'a> {
    pub on_event: Option<&'a (dyn Fn(AnswerEvent) + Sync)>,
    pub cancel: Option<&'a AtomicBool>,
}

impl Listener<'_> {
    pub(crate) fn emit(&self, event: AnswerEvent) {
        if let Some(on_event) = self.on_event {
            on_event(event);
        }
    }

    pub(crate) fn is_cancelled(&self) -> bool {
        self.cancel
            .is_some_and(|cancel| cancel.load(Ordering::Relaxed))
    }

    pub(crate) fn check(&self) -> Result<(), RagError> {
        match self.is_cancelled() {
            true => Err(RagError::Cancelled),
            false => Ok(()),
        }
    }

    /// Forwards a generated piece; breaks off the generation once cancelled.
    pub(crate) fn token(&self, text: &str) -> ControlFlow<()> {
        if self.is_cancelled() {
            return ControlFlow::Break(());
        }
        self.emit(AnswerEvent::Token(text.to_string()));
        ControlFlow::Continue(())
    }

    /// A chat outcome, as [`RagError::Cancelled`] when the run was cancelled meanwhile (the model
    /// then failed because its token sink broke off).
    pub(crate) fn cancelled_or<T>(&self, outcome: Result<T, ChatError>) -> Result<T, RagError> {
        self.check()?;
        Ok(outcome?)
    }
}
