//! `shiori doctor`: whether this machine and data directory are ready to index and answer, each
//! missing or broken piece named with the command that fixes it. Every check only reads: the
//! doctor never fetches, migrates or rebuilds, so it is safe beside a running server.

mod data;
mod machine;

use crate::Config;
use serde::Serialize;
use shiori_models::assets::ShioriHome;
use std::path::Path;

/// How a check came out. A warning leaves the machine usable (an optional piece, a loose
/// setting); a failure stops indexing or answering, and makes the doctor exit non-zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Warn,
    Fail,
}

/// One check: what was looked at, what was found, and the command that fixes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    pub name: String,
    pub status: Status,
    pub detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

impl Check {
    fn ok(name: impl Into<String>, detail: impl Into<String>) -> Check {
        Check {
            name: name.into(),
            status: Status::Ok,
            detail: detail.into(),
            fix: None,
        }
    }

    fn warn(name: impl Into<String>, detail: impl Into<String>, fix: impl Into<String>) -> Check {
        Check {
            status: Status::Warn,
            fix: Some(fix.into()),
            ..Check::ok(name, detail)
        }
    }

    fn fail(name: impl Into<String>, detail: impl Into<String>, fix: impl Into<String>) -> Check {
        Check {
            status: Status::Fail,
            ..Check::warn(name, detail, fix)
        }
    }
}

/// Every check's outcome; `ok` when none failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnosis {
    pub ok: bool,
    pub checks: Vec<Check>,
}

/// Runs every check for the data directory `data_dir` and the assets in `home`.
pub fn diagnose(data_dir: &Path, home: &ShioriHome) -> Diagnosis {
    let (config, mut checks) = data::config(data_dir);
    checks.extend(machine::assets(&config, home));
    checks.push(machine::ocr());
    checks.push(machine::cpu());
    checks.push(machine::disk(data_dir));
    checks.extend(data::store(data_dir, &config));
    checks.extend(data::keys(&config));
    checks.extend(data::providers(&config));
    checks.extend(data::connectors(&config));
    Diagnosis {
        ok: checks.iter().all(|check| check.status != Status::Fail),
        checks,
    }
}

/// Whether the environment variable `name` holds a value (which is never read further).
fn variable_set(name: &str) -> bool {
    std::env::var_os(name).is_some_and(|value| !value.is_empty())
}

/// The configuration the other checks read: the data directory's, or the defaults when it has
/// none or it does not load (that failure is its own check).
type Loaded = (Config, Vec<Check>);
