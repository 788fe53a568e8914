//! A consistent copy of an embedded store that is in use, and what `shiori doctor` reads of one.
//!
//! The tables are copied with SQLite's online backup API in a single step, which runs inside one
//! read transaction: the copy is one commit's state whatever writers do meanwhile, and writers
//! are not blocked (WAL). The derived indexes are copied beside it and kept only when they
//! provably describe that same commit; otherwise the copy carries none and they are rebuilt from
//! its tables when it is next opened.

use crate::error::{sqlite, IndexError, SqliteError};
use crate::vectors::file_checksum;
use crate::{tables, COMMITS, DIRTY, TABLES_FILE, VECTORS_CHECKSUM};
use rusqlite::backup::{Backup, StepResult};
use rusqlite::{Connection, OpenFlags};
use shiori_store::StoreError;
use std::path::Path;
use std::time::Duration;

const BM25_DIR: &str = "bm25";
const VECTORS_FILE: &str = "vectors.usearch";

/// What a store's tables say about it, and whether its derived indexes match them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inspection {
    pub schema_version: Option<String>,
    pub chunks: u64,
    /// Commits of the derived indexes so far: the generation they describe.
    pub commits: u64,
    /// SQLite's own check of its pages ("ok" when sound).
    pub integrity: String,
    /// Why the derived indexes would be rebuilt at the next open; `None` when they match.
    pub derived_stale: Option<String>,
}

/// What [`snapshot`] copied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    pub commits: u64,
    pub chunks: u64,
    /// Whether the BM25 and vector indexes were copied (they match the tables' commit).
    pub derived: bool,
}

/// Reads the store in `dir` without writing to it; `None` when there is no store.
pub fn inspect(dir: &Path) -> Result<Option<Inspection>, StoreError> {
    let path = dir.join(TABLES_FILE);
    if !path.is_file() {
        return Ok(None);
    }
    sqlite(|| {
        let connection = tables::open_read_only(&path)?;
        let integrity: String = connection.query_row("PRAGMA quick_check", [], |row| row.get(0))?;
        let (commits, chunks) = generation(&connection)?;
        Ok(Some(Inspection {
            schema_version: tables::get_meta(&connection, "schema_version")?,
            chunks,
            commits,
            integrity,
            derived_stale: derived_mismatch(dir, &connection, chunks)?,
        }))
    })
}

/// Copies the store in `dir` (which may be written meanwhile, by this process or another) into
/// the empty folder `dest`.
pub fn snapshot(dir: &Path, dest: &Path) -> Result<Snapshot, StoreError> {
    sqlite(|| {
        let source = tables::open_read_only(&dir.join(TABLES_FILE))?;
        let mut copy = Connection::open(dest.join(TABLES_FILE))?;
        copy_pages(&source, &mut copy)?;
        let (commits, chunks) = generation(&copy)?;
        let derived = tables::get_meta(&copy, DIRTY)?.as_deref() != Some("1")
            && copy_derived_of(dir, dest, (commits, chunks))?;
        Ok(Snapshot {
            commits,
            chunks,
            derived,
        })
    })
}

/// Copies every page in one step (-1), so the whole copy is read in one transaction; a writer
/// holding the database locked only delays it.
fn copy_pages(source: &Connection, copy: &mut Connection) -> Result<(), SqliteError> {
    let backup = Backup::new(source, copy)?;
    loop {
        match backup.step(-1)? {
            StepResult::Done => return Ok(()),
            _ => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// Copies the derived indexes if no write moved the live store while they were copied and the
/// copies check out against the snapshot's tables; removes what it copied otherwise.
fn copy_derived_of(dir: &Path, dest: &Path, wanted: (u64, u64)) -> Result<bool, SqliteError> {
    let live = tables::open_read_only(&dir.join(TABLES_FILE))?;
    let settled = |live: &Connection| -> Result<bool, SqliteError> {
        let dirty = tables::get_meta(live, DIRTY)?.as_deref() == Some("1");
        Ok(!dirty && generation(live)?.0 == wanted.0)
    };
    if !settled(&live)? {
        return Ok(false);
    }
    // A file renamed or removed under the copy (a merge of BM25 segments) only means no copy.
    let copied = copy_tree(&dir.join(BM25_DIR), &dest.join(BM25_DIR)).is_ok()
        && std::fs::copy(dir.join(VECTORS_FILE), dest.join(VECTORS_FILE)).is_ok();
    let copy =
        Connection::open_with_flags(dest.join(TABLES_FILE), OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    if copied && settled(&live)? && derived_mismatch(dest, &copy, wanted.1)?.is_none() {
        return Ok(true);
    }
    let _ = std::fs::remove_dir_all(dest.join(BM25_DIR));
    let _ = std::fs::remove_file(dest.join(VECTORS_FILE));
    Ok(false)
}

/// The commit count and the number of chunks the tables hold.
fn generation(connection: &Connection) -> Result<(u64, u64), SqliteError> {
    let commits = tables::get_meta(connection, COMMITS)?
        .and_then(|count| count.parse().ok())
        .unwrap_or(0);
    Ok((commits, tables::count(connection, "chunks")?))
}

/// Why the derived indexes in `dir` do not describe the tables `connection` reads: a write in
/// progress, a vector file other than the one committed, damaged BM25 files, or another count.
fn derived_mismatch(
    dir: &Path,
    connection: &Connection,
    chunks: u64,
) -> Result<Option<String>, SqliteError> {
    if tables::get_meta(connection, DIRTY)?.as_deref() == Some("1") {
        return Ok(Some(
            "a write stopped before the derived indexes caught up".into(),
        ));
    }
    let committed = tables::get_meta(connection, VECTORS_CHECKSUM)?;
    let vectors = dir.join(VECTORS_FILE);
    if chunks > 0 && (committed.is_none() || committed != file_checksum(&vectors)?) {
        return Ok(Some(format!(
            "{VECTORS_FILE} does not match the checksum written at its last commit"
        )));
    }
    Ok(bm25_mismatch(&dir.join(BM25_DIR), chunks)?)
}

fn bm25_mismatch(dir: &Path, chunks: u64) -> Result<Option<String>, IndexError> {
    let backend = |error: tantivy::TantivyError| IndexError::Backend(error.to_string());
    if !dir.join("meta.json").is_file() {
        return Ok((chunks > 0).then(|| "there is no BM25 index".to_string()));
    }
    let index = tantivy::Index::open_in_dir(dir).map_err(backend)?;
    let damaged = index.validate_checksum().map_err(backend)?;
    if !damaged.is_empty() {
        return Ok(Some(format!("{} BM25 file(s) are damaged", damaged.len())));
    }
    let reader = index
        .reader_builder()
        .reload_policy(tantivy::ReloadPolicy::Manual)
        .try_into()
        .map_err(backend)?;
    let indexed = reader.searcher().num_docs();
    Ok((indexed != chunks).then(|| format!("BM25 holds {indexed} chunk(s), the tables {chunks}")))
}

/// Copies the files of `from` (one level: a tantivy directory) into `to`, leaving out its lock
/// files.
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        if entry.file_type()?.is_file() && !name.to_string_lossy().ends_with(".lock") {
            std::fs::copy(entry.path(), to.join(&name))?;
        }
    }
    Ok(())
}
