use std::time::Duration;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Why a source could not be listed or an object fetched. Messages name the source or object
/// (never a credential).
#[derive(Debug, thiserror::Error)]
pub enum ConnectorError {
    #[error("{url:?} is not a source Shiori reads: {reason}")]
    BadUrl { url: String, reason: String },
    #[error("{0}")]
    Config(String),
    #[error("{what}: the server answered HTTP {status}{detail}")]
    Status {
        what: String,
        status: u16,
        retry_after: Option<Duration>,
        detail: String,
    },
    #[error("{what}: {source}")]
    Transport {
        what: String,
        /// A failure that may pass (a refused or dropped connection, a timeout).
        transient: bool,
        #[source]
        source: BoxError,
    },
    #[error("{what}: {message}")]
    Protocol { what: String, message: String },
    #[error("{what} is over the {limit}-byte limit ([ingest] max_file_mb){size}")]
    TooLarge {
        what: String,
        limit: u64,
        /// `" (N bytes)"` when the size is known.
        size: String,
    },
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
}

impl ConnectorError {
    pub(crate) fn transport(
        what: impl Into<String>,
        transient: bool,
        source: impl Into<BoxError>,
    ) -> ConnectorError {
        ConnectorError::Transport {
            what: what.into(),
            transient,
            source: source.into(),
        }
    }

    pub(crate) fn protocol(what: impl Into<String>, message: impl Into<String>) -> ConnectorError {
        ConnectorError::Protocol {
            what: what.into(),
            message: message.into(),
        }
    }

    pub(crate) fn io(what: impl Into<String>, source: std::io::Error) -> ConnectorError {
        ConnectorError::Io {
            what: what.into(),
            source,
        }
    }

    pub(crate) fn too_large(what: impl Into<String>, limit: u64, size: Option<u64>) -> Self {
        ConnectorError::TooLarge {
            what: what.into(),
            limit,
            size: size.map_or(String::new(), |size| format!(" ({size} bytes)")),
        }
    }
}

impl shiori_llm::Retryable for ConnectorError {
    fn transient(&self) -> Option<Option<Duration>> {
        match self {
            ConnectorError::Status {
                status: 408 | 425 | 429 | 500..=599,
                retry_after,
                ..
            } => Some(*retry_after),
            ConnectorError::Transport {
                transient: true, ..
            } => Some(None),
            _ => None,
        }
    }
}
