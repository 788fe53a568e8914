//! What the connector tests share: the real servers (`shiori_connectors::test_servers`) and
//! small helpers.

// Each test binary uses its own part of this module.
#![allow(dead_code, unused_imports)]

pub use shiori_connectors::test_servers::{free_port, python, Moto, Server};
use shiori_connectors::{RemoteObject, SyncLimits};
use std::path::Path;

pub fn limits() -> SyncLimits {
    SyncLimits {
        max_object_bytes: 10 * 1024 * 1024,
        downloads: 4,
    }
}

/// Records nothing: these tests look at files and downloads, not readers.
pub fn no_readers(_: &Path, _: Option<&[String]>) -> std::io::Result<()> {
    Ok(())
}

/// The mirrored file's text, if it is there.
pub fn mirrored(mirror: &Path, path: &str) -> Option<String> {
    std::fs::read_to_string(shiori_connectors::mirror_files(mirror).join(path)).ok()
}

pub fn paths(objects: &[RemoteObject]) -> Vec<String> {
    let mut paths: Vec<String> = objects.iter().map(|o| o.path.clone()).collect();
    paths.sort();
    paths
}
