//! `shiori index --watch`: index the targets, then index them again whenever files under them
//! change, once the changes have settled, and every `[connectors] poll_seconds` for targets with
//! remote sources (which send no events).

use crate::{Engine, EngineError, IndexReport, IndexTarget, Progress};
use notify::event::{AccessKind, AccessMode, EventKind};
use notify::{RecommendedWatcher, RecursiveMode, Watcher};
use std::ops::ControlFlow;
use std::path::{Component, Path, PathBuf};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// Why watching stopped short.
#[derive(Debug, thiserror::Error)]
#[error("cannot watch {path}: {message}")]
pub struct WatchError {
    pub path: String,
    pub message: String,
}

/// One indexing pass the watcher ran: which target, and how it went.
pub struct WatchPass<'a> {
    pub target: &'a IndexTarget,
    pub result: Result<IndexReport, EngineError>,
    /// The first pass indexes every target; later ones only those with changed files.
    pub initial: bool,
}

type Events = Receiver<notify::Result<notify::Event>>;

impl Engine {
    /// Indexes `targets`, then re-indexes a target whenever files under it change: a pass starts
    /// once no change has arrived for `debounce`, so a burst of writes costs one pass. Unchanged
    /// files are skipped as in any run and deleted ones dropped. Passes that fail are reported
    /// and watching goes on; it stops when `on_pass` breaks (or the process is interrupted).
    pub fn watch(
        &mut self,
        targets: &[IndexTarget],
        debounce: Duration,
        progress: &dyn Progress,
        on_pass: &mut dyn FnMut(WatchPass<'_>) -> ControlFlow<()>,
    ) -> Result<(), EngineError> {
        let roots = roots_per_target(self, targets)?;
        let (sender, events) = channel();
        let mut watcher = notify::recommended_watcher(sender).map_err(|e| watch_error("", e))?;
        // Mirrors of remote sources live in the data directory; they are polled, not watched.
        let ignored = std::fs::canonicalize(&self.data_dir).unwrap_or(self.data_dir.clone());
        for root in roots
            .iter()
            .flatten()
            .filter(|root| !root.starts_with(&ignored))
        {
            watch_root(&mut watcher, root)?;
        }
        let polled: Vec<bool> = targets.iter().map(|t| self.has_remotes(t)).collect();
        let poll = polled
            .contains(&true)
            .then(|| Duration::from_secs(self.config.connectors.poll_seconds));
        for target in targets {
            let result = self.index_target(target, progress);
            let pass = WatchPass {
                target,
                result,
                initial: true,
            };
            if on_pass(pass).is_break() {
                return Ok(());
            }
        }
        // Polls keep their own schedule, so a folder that changes all the time does not
        // postpone them.
        let mut next_poll = poll.map(|interval| Instant::now() + interval);
        loop {
            let wait = next_poll.map(|at| at.saturating_duration_since(Instant::now()));
            let changed: Vec<PathBuf> = match settled_changes(&events, debounce, wait) {
                Wake::Changed(changed) => changed
                    .into_iter()
                    .filter(|path| !path.starts_with(&ignored))
                    .collect(),
                Wake::Poll => Vec::new(),
                // The watcher is gone: nothing more will arrive.
                Wake::Gone => return Ok(()),
            };
            let polling = next_poll.is_some_and(|at| Instant::now() >= at);
            if polling {
                next_poll = poll.map(|interval| Instant::now() + interval);
            }
            for ((target, target_roots), remote) in targets.iter().zip(&roots).zip(&polled) {
                let due = (polling && *remote)
                    || changed.iter().any(|path| is_indexable(path, target_roots));
                if !due {
                    continue;
                }
                let result = self.index_target(target, progress);
                let pass = WatchPass {
                    target,
                    result,
                    initial: false,
                };
                if on_pass(pass).is_break() {
                    return Ok(());
                }
            }
        }
    }
}

/// The canonical paths each target walks (events name canonical paths).
fn roots_per_target(
    engine: &Engine,
    targets: &[IndexTarget],
) -> Result<Vec<Vec<PathBuf>>, EngineError> {
    targets
        .iter()
        .map(|target| {
            Ok(engine
                .target_paths(target)?
                .into_iter()
                .map(|path| std::fs::canonicalize(&path).unwrap_or(path))
                .collect())
        })
        .collect()
}

/// Folders are watched recursively; a file is watched through its folder, since editors save by
/// writing a new file and renaming it over the old one.
fn watch_root(watcher: &mut RecommendedWatcher, root: &Path) -> Result<(), EngineError> {
    let (path, mode) = if root.is_dir() {
        (root, RecursiveMode::Recursive)
    } else {
        (
            root.parent().unwrap_or(Path::new("/")),
            RecursiveMode::NonRecursive,
        )
    };
    watcher
        .watch(path, mode)
        .map_err(|e| watch_error(&path.display().to_string(), e))
}

fn watch_error(path: &str, error: notify::Error) -> EngineError {
    EngineError::Watch(WatchError {
        path: path.to_string(),
        message: error.to_string(),
    })
}

/// What ended a wait for changes.
enum Wake {
    /// Files changed (and settled).
    Changed(Vec<PathBuf>),
    /// The poll interval passed without a change: time to list remote sources again.
    Poll,
    /// The watcher is gone.
    Gone,
}

/// Waits for a change (at most `poll`, when given), then gathers changes until none has come
/// for `debounce`. Opening and reading files (the indexer's own reads among them) are not
/// changes. A watcher error (its event queue overflowed, say) counts as a change everywhere.
fn settled_changes(events: &Events, debounce: Duration, poll: Option<Duration>) -> Wake {
    let mut changed = Vec::new();
    let mut first = true;
    loop {
        let wait = if first { poll } else { Some(debounce) };
        let event = match wait.map(|wait| events.recv_timeout(wait)) {
            None => match events.recv() {
                Ok(event) => event,
                Err(_) => return Wake::Gone,
            },
            Some(Ok(event)) => event,
            Some(Err(RecvTimeoutError::Timeout)) if first => return Wake::Poll,
            Some(Err(RecvTimeoutError::Timeout)) => return Wake::Changed(changed),
            Some(Err(RecvTimeoutError::Disconnected)) => return Wake::Gone,
        };
        match event {
            Ok(event) if is_change(&event.kind) => {
                changed.extend(event.paths);
                first = false;
            }
            Ok(_) => {}
            Err(error) => {
                tracing::warn!("file watcher: {error}; re-indexing everything watched");
                changed.push(PathBuf::from("/"));
                first = false;
            }
        }
    }
}

fn is_change(kind: &EventKind) -> bool {
    match kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) => false,
        _ => true,
    }
}

/// Whether a changed path can affect a target: it lies under one of its roots (or is a folder
/// holding one, for a removed folder or an error) and is not hidden, as the walk skips hidden
/// entries.
fn is_indexable(path: &Path, roots: &[PathBuf]) -> bool {
    roots.iter().any(|root| {
        if root.starts_with(path) {
            return true;
        }
        path.strip_prefix(root).is_ok_and(|inside| {
            !inside.components().any(
                |c| matches!(c, Component::Normal(name) if name.to_string_lossy().starts_with('.')),
            )
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use notify::event::{CreateKind, ModifyKind};

    #[test]
    fn opening_a_file_is_not_a_change_but_writing_one_is() {
        assert!(!is_change(&EventKind::Access(AccessKind::Open(
            AccessMode::Read
        ))));
        assert!(is_change(&EventKind::Access(AccessKind::Close(
            AccessMode::Write
        ))));
        assert!(is_change(&EventKind::Create(CreateKind::File)));
        assert!(is_change(&EventKind::Modify(ModifyKind::Any)));
    }

    #[test]
    fn changes_count_under_a_root_unless_hidden() {
        let roots = [PathBuf::from("/docs"), PathBuf::from("/faq/a.jsonl")];
        assert!(is_indexable(Path::new("/docs/guide/a.md"), &roots));
        assert!(is_indexable(Path::new("/faq/a.jsonl"), &roots));
        assert!(
            is_indexable(Path::new("/"), &roots),
            "a folder holding a root"
        );
        assert!(!is_indexable(Path::new("/docs/.git/index"), &roots));
        assert!(!is_indexable(Path::new("/docs2/a.md"), &roots));
        assert!(!is_indexable(Path::new("/faq/b.jsonl"), &roots));
    }

    #[test]
    fn a_burst_of_changes_settles_into_one_batch() {
        let (sender, events) = channel();
        let event = |kind, path: &str| {
            Ok(notify::Event {
                kind,
                paths: vec![PathBuf::from(path)],
                attrs: Default::default(),
            })
        };
        sender
            .send(event(
                EventKind::Access(AccessKind::Open(AccessMode::Read)),
                "/r",
            ))
            .unwrap();
        sender
            .send(event(EventKind::Create(CreateKind::File), "/a"))
            .unwrap();
        sender
            .send(event(EventKind::Modify(ModifyKind::Any), "/b"))
            .unwrap();
        let settle = Duration::from_millis(50);
        let batch = settled_changes(&events, settle, None);
        assert!(
            matches!(batch, Wake::Changed(paths) if paths == [PathBuf::from("/a"), PathBuf::from("/b")])
        );
        assert!(matches!(
            settled_changes(&events, settle, Some(settle)),
            Wake::Poll
        ));
        drop(sender);
        assert!(matches!(settled_changes(&events, settle, None), Wake::Gone));
    }
}
