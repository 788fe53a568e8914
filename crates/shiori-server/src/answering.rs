//! Runs one answer for any HTTP surface (`/api/query`, `/v1/chat/completions`): admission, the
//! request's time limit, cancellation when the client hangs up or the server stops, and the
//! query latency metric. Surfaces only translate their request into an [`AnswerJob`] and the
//! outcome into their own wire format.

use crate::error::ApiError;
use crate::state::SharedState;
use shiori_core::{Answer, Filters, RetrievalConfig};
use shiori_engine::{AnswerEvent, AskOptions, Engine, Listener, Question, Reader};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch};

/// Events buffered between the answering thread and a slow client.
const STREAM_BUFFER: usize = 64;

/// One question with its settings, as every surface hands it over: the question and the
/// retrieval settings the engine checked when the surface made them.
pub struct AnswerJob {
    pub engine: Arc<Engine>,
    pub question: Question,
    pub retrieval: RetrievalConfig,
    pub filters: Filters,
    pub options: AskOptions,
    /// Who asks: every retrieval of the answer reads only what this reader may.
    pub reader: Reader,
}

/// What a streamed answer sends: its events as they happen, then its end.
pub enum Streamed {
    Event(AnswerEvent),
    Done(Box<Answer>),
    Failed(ApiError),
}

/// Sets its flag when dropped: a handler future dropped (client gone, time limit) cancels the
/// answer it started.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// A checked job with its cancellation flags, ready for a blocking thread.
struct Running {
    job: AnswerJob,
    cancel: Arc<AtomicBool>,
    /// Set when the request's time limit cancelled the answer.
    timed_out: Arc<AtomicBool>,
    limit: Duration,
}

impl Running {
    fn run(&self, on_event: Option<&(dyn Fn(AnswerEvent) + Sync)>) -> Result<Answer, ApiError> {
        let listener = Listener {
            on_event,
            cancel: Some(&self.cancel),
            expired: Some(&self.timed_out),
        };
        let job = &self.job;
        job.engine
            .answer(
                &job.question,
                &job.retrieval,
                &job.filters,
                &job.options,
                &listener,
            )
            .map_err(|error| match self.timed_out.load(Ordering::Relaxed) {
                true => ApiError::Timeout {
                    seconds: self.limit.as_secs(),
                },
                false => ApiError::from(error),
            })
    }
}

/// Waits for a query slot and arms the time limit; errors here are the request's (503) and
/// come before any answering starts.
async fn start(
    state: &SharedState,
    mut job: AnswerJob,
) -> Result<
    (
        Running,
        tokio::sync::OwnedSemaphorePermit,
        tokio::task::JoinHandle<()>,
    ),
    ApiError,
> {
    job.filters.access = job.reader.access.clone();
    job.options.owner = job.reader.owner.clone();
    let permit = crate::admission::admit(state).await?;
    let running = Running {
        job,
        cancel: Arc::new(AtomicBool::new(false)),
        timed_out: Arc::new(AtomicBool::new(false)),
        limit: state.options.request_timeout,
    };
    let timer = tokio::spawn(cancel_on_limit_or_shutdown(
        running.limit,
        state.shutdown.subscribe(),
        Arc::clone(&running.cancel),
        Arc::clone(&running.timed_out),
    ));
    Ok((running, permit, timer))
}

/// Answers `job` whole.
pub async fn answer(state: &SharedState, job: AnswerJob) -> Result<Answer, ApiError> {
    // Latency counts from arrival, so time spent waiting for a slot is in the histogram.
    let started = Instant::now();
    let (running, permit, timer) = start(state, job).await?;
    let _cancel_on_drop = CancelOnDrop(Arc::clone(&running.cancel));
    // The blocking thread continues the request's trace.
    let span = tracing::Span::current();
    let answer = tokio::task::spawn_blocking(move || {
        let _permit = permit;
        span.in_scope(|| running.run(None))
    })
    .await;
    timer.abort();
    state.metrics.record_query(started.elapsed().as_secs_f64());
    answer?
}

/// Answers `job` on a blocking thread, sending its events as they happen and then its end; a
/// receiver dropped (the client hung up) stops the answer at its next step or token.
pub async fn answer_streamed(
    state: &SharedState,
    job: AnswerJob,
) -> Result<mpsc::Receiver<Streamed>, ApiError> {
    let started = Instant::now();
    if let Some(id) = job.options.conversation.clone() {
        // A whole answer reports an unknown or full conversation itself; a stream must know
        // before it starts, so the id is a 404 (or 409) and not an `error` event.
        let engine = Arc::clone(&job.engine);
        let owner = job.reader.owner.clone();
        tokio::task::spawn_blocking(move || engine.conversation_to_continue(&id, owner.as_deref()))
            .await??;
    }
    let (running, permit, timer) = start(state, job).await?;
    let (sender, receiver) = mpsc::channel::<Streamed>(STREAM_BUFFER);
    // A client that hangs up is heard at once, not at the next event sent: a checked answer
    // sends nothing until a sentence is complete. The watcher lets its sender go once the
    // answer has ended, so that the stream can end.
    let hung_up = sender.clone();
    let cancel = Arc::clone(&running.cancel);
    let (ended, answer_ended) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        tokio::select! {
            () = hung_up.closed() => cancel.store(true, Ordering::Relaxed),
            _ = answer_ended => {}
        }
    });
    let state = Arc::clone(state);
    let span = tracing::Span::current();
    tokio::task::spawn_blocking(move || {
        let _entered = span.enter();
        let _permit = permit;
        let _ended = ended;
        let send = |streamed: Streamed| {
            if sender.blocking_send(streamed).is_err() {
                running.cancel.store(true, Ordering::Relaxed);
            }
        };
        let outcome = running.run(Some(&|event| send(Streamed::Event(event))));
        timer.abort();
        state.metrics.record_query(started.elapsed().as_secs_f64());
        send(match outcome {
            Ok(answer) => Streamed::Done(Box::new(answer)),
            Err(error) => Streamed::Failed(error),
        });
    });
    Ok(receiver)
}

/// How long an answer whose time is up may take to stop its model and quote the sources
/// instead: a local model stops within one prompt pass, and quoting takes milliseconds.
pub(crate) const WIND_DOWN: Duration = Duration::from_secs(10);

/// Once an answer has run for `limit`, sets `timed_out`: its models stop and it answers with
/// the sentences quoted from what it retrieved. Cancels it if it has not ended `WIND_DOWN` later,
/// or at once when the server is stopping.
async fn cancel_on_limit_or_shutdown(
    limit: Duration,
    mut shutdown: watch::Receiver<bool>,
    cancel: Arc<AtomicBool>,
    timed_out: Arc<AtomicBool>,
) {
    let stopping = async {
        tokio::time::sleep(limit).await;
        timed_out.store(true, Ordering::Relaxed);
        tokio::time::sleep(WIND_DOWN).await;
    };
    tokio::select! {
        () = stopping => {}
        _ = shutdown.wait_for(|stopping| *stopping) => {}
    }
    cancel.store(true, Ordering::Relaxed);
}
