//! What a run reports while it answers, and how its caller stops it.

use crate::corpus::RagError;
use shiori_core::{ChatError, TokenReceiver, TraceStep};
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// A step's token sink: a model still computing is told to stop once the listener cancels. For
/// the streamed answer step, pieces also go to the listener and the first one's time is noted.
pub(crate) struct Forward<'a> {
    pub listener: Listener<'a>,
    pub run_started: Instant,
    /// Whether the pieces go to the listener; a step whose reply is read whole only listens for
    /// a stop.
    pub stream: bool,
    /// Milliseconds from the run's start to the first piece.
    pub first_token_ms: Option<f64>,
}

impl TokenReceiver for Forward<'_> {
    fn token(&mut self, text: &str) -> ControlFlow<()> {
        if !self.stream {
            return self.keep_going();
        }
        let run_started = self.run_started;
        self.first_token_ms
            .get_or_insert_with(|| run_started.elapsed().as_secs_f64() * 1000.0);
        self.listener.token(text)
    }

    fn keep_going(&mut self) -> ControlFlow<()> {
        match self.listener.must_stop_models() {
            true => ControlFlow::Break(()),
            false => ControlFlow::Continue(()),
        }
    }

    fn wants_pieces(&self) -> bool {
        self.stream
    }
}

/// One thing a run reports: a step once it has ended, or a piece of the answer as it is generated.
#[derive(Debug, Clone, PartialEq)]
pub enum AnswerEvent {
    Step(TraceStep),
    Token(String),
}

/// Who listens to a run: events go to `on_event`; once `cancel` is set, the run stops at the next
/// step or token (an upstream stream is dropped with it). Once `expired` is set (the caller's
/// time is up), every model is stopped and the run answers with the sentences quoted from what
/// it retrieved, saying so in `degraded`.
#[derive(Clone, Copy, Default)]
pub struct Listener<'a> {
    pub on_event: Option<&'a (dyn Fn(AnswerEvent) + Sync)>,
    pub cancel: Option<&'a AtomicBool>,
    pub expired: Option<&'a AtomicBool>,
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

    pub(crate) fn is_expired(&self) -> bool {
        self.expired
            .is_some_and(|expired| expired.load(Ordering::Relaxed))
    }

    /// Whether a model still computing must stop: the run is cancelled or out of time.
    pub(crate) fn must_stop_models(&self) -> bool {
        self.is_cancelled() || self.is_expired()
    }

    pub(crate) fn check(&self) -> Result<(), RagError> {
        match self.is_cancelled() {
            true => Err(RagError::Cancelled),
            false => Ok(()),
        }
    }

    /// Forwards a generated piece; breaks off the generation once cancelled.
    pub(crate) fn token(&self, text: &str) -> ControlFlow<()> {
        if self.must_stop_models() {
            return ControlFlow::Break(());
        }
        self.emit(AnswerEvent::Token(text.to_string()));
        ControlFlow::Continue(())
    }

    /// A chat outcome, as [`RagError::Cancelled`] when the run was cancelled meanwhile (the model
    /// then failed because its token sink broke off), or [`RagError::OutOfTime`] when its time
    /// ran out.
    pub(crate) fn cancelled_or<T>(&self, outcome: Result<T, ChatError>) -> Result<T, RagError> {
        self.check()?;
        match outcome {
            Err(ChatError::Cancelled { .. }) if self.is_expired() => Err(RagError::OutOfTime),
            outcome => Ok(outcome?),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_answer_sink_tells_a_computing_model_to_stop_once_the_run_is_cancelled() {
        let cancel = AtomicBool::new(false);
        let mut forward = Forward {
            listener: Listener {
                on_event: None,
                cancel: Some(&cancel),
                expired: None,
            },
            run_started: Instant::now(),
            stream: true,
            first_token_ms: None,
        };
        assert!(forward.wants_pieces());
        assert!(forward.keep_going().is_continue());
        assert_eq!(forward.first_token_ms, None, "asking is not a token");
        assert!(forward.token("Plimp").is_continue());
        assert!(forward.first_token_ms.is_some());
        cancel.store(true, Ordering::Relaxed);
        assert!(forward.keep_going().is_break());
        assert!(forward.token("more").is_break());
    }

    #[test]
    fn a_step_read_whole_hears_no_pieces_but_still_stops_its_model() {
        let cancel = AtomicBool::new(false);
        let heard = std::sync::Mutex::new(Vec::new());
        let on_event = |event: AnswerEvent| heard.lock().unwrap().push(event);
        let mut forward = Forward {
            listener: Listener {
                on_event: Some(&on_event),
                cancel: Some(&cancel),
                expired: None,
            },
            run_started: Instant::now(),
            stream: false,
            first_token_ms: None,
        };
        assert!(
            !forward.wants_pieces(),
            "an HTTP model is asked for the whole reply"
        );
        assert!(forward.token("{\"relevant\"").is_continue());
        cancel.store(true, Ordering::Relaxed);
        assert!(forward.token(": true}").is_break());
        assert!(forward.keep_going().is_break());
        assert!(
            heard.lock().unwrap().is_empty(),
            "a grade is not the answer"
        );
        assert_eq!(forward.first_token_ms, None);
    }
}
