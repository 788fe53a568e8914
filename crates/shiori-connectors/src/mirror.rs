//! A source's mirror in the data directory: `files/` holds each object at its path (what the
//! indexer walks), `manifest.json` each object's change marker, and `partial/` downloads in
//! progress, moved into place only when whole, so a run stopped half-way leaves every mirrored
//! file either as it was or complete.

use crate::{Connector, ConnectorError, Listing, RemoteObject, SourceUrl};
use serde::{Deserialize, Serialize};
use shiori_llm::error_chain;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

const MANIFEST: &str = "manifest.json";

/// Where the mirror of `url` lives under the data directory.
pub fn mirror_folder(data_dir: &Path, url: &SourceUrl) -> PathBuf {
    data_dir.join("sources").join(url.key())
}

/// The folder of mirrored files inside a mirror: what the indexer walks.
pub fn mirror_files(mirror: &Path) -> PathBuf {
    mirror.join("files")
}

/// How much one sync may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyncLimits {
    /// Larger objects are not downloaded (`[ingest] max_file_mb`).
    pub max_object_bytes: u64,
    /// Objects downloaded at a time.
    pub downloads: usize,
}

/// An object that could not be mirrored, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ObjectFailure {
    /// The source's URL and the object's path in it.
    pub object: String,
    pub reason: String,
}

/// What one sync did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SyncReport {
    pub fetched: usize,
    pub unchanged: usize,
    pub deleted: usize,
    pub failures: Vec<ObjectFailure>,
    /// Bytes downloaded.
    pub bytes: u64,
}

/// Records who may read a mirrored file: `None` leaves it to the project, `Some(&[])` is no
/// mapped reader. Given by the caller, which owns the format.
pub type RecordReaders<'a> = dyn Fn(&Path, Option<&[String]>) -> std::io::Result<()> + Sync + 'a;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct Manifest {
    cursor: Option<String>,
    objects: BTreeMap<String, Entry>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Entry {
    path: String,
    marker: String,
    groups: Option<Vec<String>>,
}

/// Brings the mirror at `mirror` up to date with the source: new and changed objects are
/// downloaded (only those), deleted ones removed, moved ones renamed. A listing that fails
/// fails the sync and leaves the mirror as it was; an object that fails is reported and keeps
/// its previous copy.
pub fn sync(
    url: &SourceUrl,
    connector: &dyn Connector,
    mirror: &Path,
    limits: &SyncLimits,
    record_readers: &RecordReaders,
) -> Result<SyncReport, ConnectorError> {
    sync_wanted(url, connector, mirror, limits, record_readers, &|_| true)
}

/// [`sync`] of the objects whose path `wanted` takes (what the project's walk would index):
/// the others are neither downloaded nor kept.
pub fn sync_wanted(
    url: &SourceUrl,
    connector: &dyn Connector,
    mirror: &Path,
    limits: &SyncLimits,
    record_readers: &RecordReaders,
    wanted: &dyn Fn(&str) -> bool,
) -> Result<SyncReport, ConnectorError> {
    let files = mirror_files(mirror);
    let partial = mirror.join("partial");
    for folder in [&files, &partial] {
        std::fs::create_dir_all(folder)
            .map_err(|error| ConnectorError::io(folder.display().to_string(), error))?;
    }
    let mut manifest = read_manifest(mirror);
    let listed = connector.list(manifest.cursor.as_deref())?;
    let mut report = SyncReport {
        failures: listed.refused,
        ..SyncReport::default()
    };
    let (listed_objects, deleted, complete) = match listed.listing {
        Listing::Complete(mut objects) => {
            objects.retain(|object| wanted(&object.path));
            let present: HashSet<&str> = objects.iter().map(|o| o.id.as_str()).collect();
            let gone = manifest
                .objects
                .keys()
                .filter(|id| !present.contains(id.as_str()))
                .cloned()
                .collect();
            (objects, gone, true)
        }
        Listing::Changes {
            changed,
            mut deleted,
        } => {
            let (kept, unwanted): (Vec<_>, Vec<_>) =
                changed.into_iter().partition(|object| wanted(&object.path));
            deleted.extend(unwanted.into_iter().map(|object| object.id));
            (kept, deleted, false)
        }
    };
    for id in deleted {
        if let Some(entry) = manifest.objects.remove(&id) {
            remove_mirrored(&files, &entry.path, record_readers);
            report.deleted += 1;
        }
    }
    let placed = place_objects(url, listed_objects, &manifest, &mut report);
    let mut fetch = Vec::new();
    for object in placed {
        match manifest.objects.get(&object.id) {
            Some(entry) if entry.marker == object.marker && files.join(&entry.path).is_file() => {
                if entry.path != object.path {
                    // What records the old path's readers must not outlive it.
                    record_readers(&files.join(&entry.path), None)
                        .and_then(|()| move_mirrored(&files, &entry.path, &object.path))
                        .map_err(|error| ConnectorError::io(object.path.clone(), error))?;
                }
                if entry.path != object.path || entry.groups != object.groups {
                    record(&files, &object, record_readers)?;
                }
                if entry.groups != object.groups {
                    touch(&files.join(&object.path))
                        .map_err(|error| ConnectorError::io(object.path.clone(), error))?;
                }
                manifest
                    .objects
                    .insert(object.id.clone(), entry_of(&object));
            }
            _ => fetch.push(object),
        }
    }
    let fetched = download_all(
        url,
        connector,
        &fetch,
        &files,
        &partial,
        limits,
        record_readers,
    );
    for (object, outcome) in fetch.iter().zip(fetched) {
        match outcome {
            Ok(bytes) => {
                if let Some(old) = manifest.objects.get(&object.id) {
                    if old.path != object.path {
                        remove_mirrored(&files, &old.path, record_readers);
                    }
                }
                manifest.objects.insert(object.id.clone(), entry_of(object));
                report.fetched += 1;
                report.bytes += bytes;
            }
            Err(error) => report.failures.push(ObjectFailure {
                object: shown_object(url, &object.path),
                reason: error_chain(&error),
            }),
        }
    }
    report.unchanged = manifest.objects.len() - report.fetched;
    // A change feed moves on only when every change it gave was taken; otherwise the next sync
    // reads the same changes again (the ones taken are then unchanged).
    if complete || report.failures.is_empty() {
        manifest.cursor = listed.cursor;
    }
    write_manifest(mirror, &manifest)?;
    Ok(report)
}

fn entry_of(object: &RemoteObject) -> Entry {
    Entry {
        path: object.path.clone(),
        marker: object.marker.clone(),
        groups: object.groups.clone(),
    }
}

/// The objects to mirror, each at a path that is safe and its own: hidden names and paths that
/// would leave the mirror are skipped (reported), and a path two objects share gets the
/// second object's id in its name.
fn place_objects(
    url: &SourceUrl,
    objects: Vec<RemoteObject>,
    manifest: &Manifest,
    report: &mut SyncReport,
) -> Vec<RemoteObject> {
    let listed: HashSet<&str> = objects.iter().map(|o| o.id.as_str()).collect();
    let mut taken: HashMap<String, String> = manifest
        .objects
        .iter()
        .filter(|(id, _)| !listed.contains(id.as_str()))
        .map(|(id, entry)| (entry.path.clone(), id.clone()))
        .collect();
    let mut placed = Vec::with_capacity(objects.len());
    for mut object in objects {
        match safe_path(&object.path) {
            Some(true) => {}
            Some(false) => continue,
            None => {
                report.failures.push(ObjectFailure {
                    object: shown_object(url, &object.path),
                    reason: "its path would leave the source's folder; not mirrored".into(),
                });
                continue;
            }
        }
        if taken.get(&object.path).is_some_and(|id| *id != object.id) {
            object.path = with_id(&object.path, &object.id);
        }
        taken.insert(object.path.clone(), object.id.clone());
        placed.push(object);
    }
    placed
}

/// `Some(true)` for a relative path of plain names, `Some(false)` for one with a hidden name
/// (skipped, as folder walks skip them; a `.NAME.groups` there would speak for another file),
/// `None` for one that would leave the folder.
fn safe_path(path: &str) -> Option<bool> {
    let relative = Path::new(path);
    if path.is_empty() || path.contains('\0') {
        return None;
    }
    let mut visible = true;
    for component in relative.components() {
        match component {
            Component::Normal(name) => visible &= !name.to_string_lossy().starts_with('.'),
            _ => return None,
        }
    }
    Some(visible)
}

/// `dir/name.ext` → `dir/name~ID.ext`.
fn with_id(path: &str, id: &str) -> String {
    let tag: String = id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .collect();
    let (folder, name) = path.rsplit_once('/').map_or(("", path), |(f, n)| (f, n));
    let (stem, extension) = match name.rsplit_once('.') {
        Some((stem, extension)) if !stem.is_empty() => (stem, format!(".{extension}")),
        _ => (name, String::new()),
    };
    let renamed = format!("{stem}~{tag}{extension}");
    if folder.is_empty() {
        renamed
    } else {
        format!("{folder}/{renamed}")
    }
}

pub(crate) fn shown_object(url: &SourceUrl, path: &str) -> String {
    format!("{}{path}", url.shown_prefix())
}

/// Downloads each object on `limits.downloads` threads; results in the order of `objects`.
fn download_all(
    url: &SourceUrl,
    connector: &dyn Connector,
    objects: &[RemoteObject],
    files: &Path,
    partial: &Path,
    limits: &SyncLimits,
    record_readers: &RecordReaders,
) -> Vec<Result<u64, ConnectorError>> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<u64, ConnectorError>>>> =
        Mutex::new((0..objects.len()).map(|_| None).collect());
    let workers = limits.downloads.clamp(1, objects.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                let index = next.fetch_add(1, Ordering::Relaxed);
                let Some(object) = objects.get(index) else {
                    break;
                };
                let outcome = download(
                    url,
                    connector,
                    object,
                    files,
                    partial,
                    limits,
                    record_readers,
                );
                if let Ok(mut results) = results.lock() {
                    results[index] = Some(outcome);
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .zip(objects)
        .map(|(outcome, object)| {
            outcome.unwrap_or_else(|| {
                Err(ConnectorError::protocol(
                    &object.path,
                    "the download thread stopped",
                ))
            })
        })
        .collect()
}

fn download(
    url: &SourceUrl,
    connector: &dyn Connector,
    object: &RemoteObject,
    files: &Path,
    partial: &Path,
    limits: &SyncLimits,
    record_readers: &RecordReaders,
) -> Result<u64, ConnectorError> {
    let shown = shown_object(url, &object.path);
    let limit = limits.max_object_bytes;
    if let Some(size) = object.size.filter(|&size| size > limit) {
        return Err(ConnectorError::too_large(shown, limit, Some(size)));
    }
    let temporary = partial.join(blake3::hash(object.id.as_bytes()).to_hex().as_str());
    let io = |error| ConnectorError::io(shown.clone(), error);
    let written = (|| {
        let file = std::fs::File::create(&temporary).map_err(io)?;
        let mut writer = std::io::BufWriter::new(file);
        let bytes = connector.fetch(object, &mut writer, limit)?;
        let file = writer
            .into_inner()
            .map_err(|error| io(error.into_error()))?;
        file.sync_all().map_err(io)?;
        let target = files.join(&object.path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        std::fs::rename(&temporary, &target).map_err(io)?;
        record(files, object, record_readers)?;
        Ok(bytes)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}

fn record(
    files: &Path,
    object: &RemoteObject,
    record_readers: &RecordReaders,
) -> Result<(), ConnectorError> {
    record_readers(&files.join(&object.path), object.groups.as_deref())
        .map_err(|error| ConnectorError::io(object.path.clone(), error))
}

/// Marks a mirrored file as modified now, so the indexer, which skips files whose size and
/// time are as it last saw them, reads it again with its new readers.
fn touch(file: &Path) -> std::io::Result<()> {
    std::fs::File::options()
        .write(true)
        .open(file)?
        .set_modified(std::time::SystemTime::now())
}

fn move_mirrored(files: &Path, from: &str, to: &str) -> std::io::Result<()> {
    let target = files.join(to);
    if let Some(parent) = target.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::rename(files.join(from), &target)?;
    prune_empty_folders(files, &files.join(from));
    Ok(())
}

/// Removes a mirrored file, what records its readers, and folders it leaves empty; a file
/// already gone is no error.
fn remove_mirrored(files: &Path, path: &str, record_readers: &RecordReaders) {
    let file = files.join(path);
    if let Err(error) = record_readers(&file, None) {
        tracing::warn!("{}: {error}", file.display());
    }
    match std::fs::remove_file(&file) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => tracing::warn!("{}: {error}", file.display()),
    }
    prune_empty_folders(files, &file);
}

fn prune_empty_folders(files: &Path, file: &Path) {
    let mut folder = file.parent();
    while let Some(current) = folder.filter(|f| *f != files && f.starts_with(files)) {
        if std::fs::remove_dir(current).is_err() {
            break;
        }
        folder = current.parent();
    }
}

/// The manifest, or an empty one when there is none or it cannot be read (every object is then
/// fetched again: slower, never wrong).
fn read_manifest(mirror: &Path) -> Manifest {
    let path = mirror.join(MANIFEST);
    match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_else(|error| {
            tracing::warn!("{}: {error}; every object is fetched again", path.display());
            Manifest::default()
        }),
        Err(_) => Manifest::default(),
    }
}

fn write_manifest(mirror: &Path, manifest: &Manifest) -> Result<(), ConnectorError> {
    let path = mirror.join(MANIFEST);
    let temporary = mirror.join(format!("{MANIFEST}.partial"));
    let io = |error| ConnectorError::io(path.display().to_string(), error);
    let bytes = serde_json::to_vec(manifest)
        .map_err(|error| ConnectorError::protocol(path.display().to_string(), error.to_string()))?;
    let mut file = std::fs::File::create(&temporary).map_err(io)?;
    file.write_all(&bytes).map_err(io)?;
    file.sync_all().map_err(io)?;
    std::fs::rename(&temporary, &path).map_err(io)
}

#[cfg(test)]
mod tests;
