//! Keeps a server on the index's latest commit when another process writes it: `shiori index`
//! run beside `shiori serve` is served within a poll, without a restart.

use crate::state::SharedState;
use std::sync::Arc;
use std::time::Duration;

/// How often the store's commit count is read: one small SQLite read.
const POLL: Duration = Duration::from_secs(1);

/// Polls until the server is told to stop; a poll that fails is logged and the next one
/// tries again, the old index serving meanwhile.
pub(crate) async fn follow_commits(state: SharedState) {
    let mut stopping = state.shutdown.subscribe();
    loop {
        tokio::select! {
            () = tokio::time::sleep(POLL) => {}
            _ = stopping.changed() => return,
        }
        let polled = Arc::clone(&state);
        match tokio::task::spawn_blocking(move || polled.catch_up()).await {
            Ok(Ok(true)) => tracing::info!("the index changed on disk; serving its latest commit"),
            Ok(Ok(false)) => {}
            Ok(Err(error)) => tracing::warn!(
                "the index changed on disk but cannot be opened again: {}",
                state.engine().shown_paths().redact(&error.to_string())
            ),
            Err(error) => tracing::warn!("checking the index for changes failed: {error}"),
        }
    }
}
