use super::*;
use crate::Listed;
use std::sync::atomic::AtomicUsize;

/// A source held in memory that counts its fetches; `changes` switches it to a change feed.
#[derive(Default)]
struct Memory {
    objects: Mutex<BTreeMap<String, (String, Vec<u8>)>>,
    fetches: AtomicUsize,
    failing: Mutex<HashSet<String>>,
    changes: Mutex<Option<(Vec<String>, Vec<String>)>>,
}

impl Memory {
    fn put(&self, path: &str, content: &str) {
        let marker = blake3::hash(content.as_bytes()).to_hex().to_string();
        let mut objects = self.objects.lock().unwrap();
        objects.insert(path.into(), (marker, content.as_bytes().to_vec()));
    }

    fn object(&self, id: &str) -> RemoteObject {
        let objects = self.objects.lock().unwrap();
        let (marker, content) = &objects[id];
        RemoteObject {
            id: id.into(),
            path: id.into(),
            marker: marker.clone(),
            size: Some(content.len() as u64),
            export: None,
            groups: None,
        }
    }

    fn fetches(&self) -> usize {
        self.fetches.swap(0, Ordering::Relaxed)
    }
}

impl Connector for Memory {
    fn list(&self, cursor: Option<&str>) -> Result<Listed, ConnectorError> {
        let ids: Vec<String> = self.objects.lock().unwrap().keys().cloned().collect();
        let changes = self.changes.lock().unwrap().clone();
        let listing = match (cursor, changes) {
            (Some(_), Some((changed, deleted))) => Listing::Changes {
                changed: changed.iter().map(|id| self.object(id)).collect(),
                deleted,
            },
            _ => Listing::Complete(ids.iter().map(|id| self.object(id)).collect()),
        };
        Ok(Listed {
            listing,
            cursor: Some(format!("after-{}", ids.len())),
            refused: Vec::new(),
        })
    }

    fn fetch(
        &self,
        object: &RemoteObject,
        into: &mut dyn Write,
        limit: u64,
    ) -> Result<u64, ConnectorError> {
        self.fetches.fetch_add(1, Ordering::Relaxed);
        if self.failing.lock().unwrap().contains(&object.id) {
            return Err(ConnectorError::protocol(&object.id, "the server broke off"));
        }
        let content = self.objects.lock().unwrap()[&object.id].1.clone();
        crate::http::copy_stream(&object.id, &mut content.as_slice(), into, limit)
    }
}

fn url() -> SourceUrl {
    "s3://bucket/docs/".parse().unwrap()
}

fn limits() -> SyncLimits {
    SyncLimits {
        max_object_bytes: 1000,
        downloads: 3,
    }
}

fn no_readers(_: &Path, _: Option<&[String]>) -> std::io::Result<()> {
    Ok(())
}

fn run(source: &Memory, mirror: &Path) -> SyncReport {
    sync(&url(), source, mirror, &limits(), &no_readers).unwrap()
}

fn read(mirror: &Path, path: &str) -> Option<String> {
    std::fs::read_to_string(mirror_files(mirror).join(path)).ok()
}

#[test]
fn a_second_sync_fetches_only_what_changed_and_drops_what_was_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let source = Memory::default();
    source.put("a.md", "alpha");
    source.put("sub/b.md", "beta");
    source.put("sub/c.md", "gamma");
    let first = run(&source, dir.path());
    assert_eq!((first.fetched, first.unchanged, first.deleted), (3, 0, 0));
    assert_eq!(source.fetches(), 3);
    assert_eq!(first.bytes, 14);

    let again = run(&source, dir.path());
    assert_eq!((again.fetched, again.unchanged, again.deleted), (0, 3, 0));
    assert_eq!(source.fetches(), 0);

    source.put("a.md", "alpha, edited");
    source.objects.lock().unwrap().remove("sub/b.md");
    source.put("d.md", "delta");
    let changed = run(&source, dir.path());
    assert_eq!(
        (changed.fetched, changed.unchanged, changed.deleted),
        (2, 1, 1)
    );
    assert_eq!(source.fetches(), 2);
    assert_eq!(read(dir.path(), "a.md").as_deref(), Some("alpha, edited"));
    assert_eq!(read(dir.path(), "sub/b.md"), None);
    assert_eq!(read(dir.path(), "d.md").as_deref(), Some("delta"));
}

#[test]
fn a_failed_download_keeps_the_previous_copy_and_is_tried_again() {
    let dir = tempfile::tempdir().unwrap();
    let source = Memory::default();
    source.put("a.md", "alpha");
    source.put("b.md", "beta");
    run(&source, dir.path());
    source.put("a.md", "alpha, edited");
    source.failing.lock().unwrap().insert("a.md".into());
    let failed = run(&source, dir.path());
    assert_eq!(failed.fetched, 0);
    assert_eq!(failed.failures.len(), 1);
    assert_eq!(failed.failures[0].object, "s3://bucket/docs/a.md");
    assert_eq!(read(dir.path(), "a.md").as_deref(), Some("alpha"));
    assert!(std::fs::read_dir(dir.path().join("partial"))
        .unwrap()
        .next()
        .is_none());

    source.failing.lock().unwrap().clear();
    assert_eq!(run(&source, dir.path()).fetched, 1);
    assert_eq!(read(dir.path(), "a.md").as_deref(), Some("alpha, edited"));
}

#[test]
fn an_object_over_the_limit_is_reported_without_a_download() {
    let dir = tempfile::tempdir().unwrap();
    let source = Memory::default();
    source.put("big.txt", &"x".repeat(5000));
    source.put("small.txt", "ok");
    let report = run(&source, dir.path());
    assert_eq!(report.fetched, 1);
    assert_eq!(source.fetches(), 1);
    let reason = &report.failures[0].reason;
    assert!(
        reason.contains("over the 1000-byte limit") && reason.contains("5000"),
        "{reason}"
    );
}

#[test]
fn paths_that_leave_the_mirror_or_hide_are_not_written() {
    for (path, reported) in [
        ("../escape.md", true),
        ("/etc/x.md", true),
        (".a.md.groups", false),
    ] {
        assert_eq!(safe_path(path), if reported { None } else { Some(false) });
    }
    assert_eq!(safe_path("a/b c.md"), Some(true));
    assert_eq!(with_id("dir/report.pdf", "1x/Y"), "dir/report~1xY.pdf");
    assert_eq!(with_id("README", "7"), "README~7");
}

#[test]
fn a_change_feed_moves_on_only_when_every_change_was_taken() {
    let dir = tempfile::tempdir().unwrap();
    let source = Memory::default();
    source.put("a.md", "alpha");
    source.put("b.md", "beta");
    run(&source, dir.path());
    source.put("a.md", "alpha 2");
    source.objects.lock().unwrap().remove("b.md");
    *source.changes.lock().unwrap() = Some((vec!["a.md".into()], vec!["b.md".into()]));
    source.failing.lock().unwrap().insert("a.md".into());
    let failed = run(&source, dir.path());
    assert_eq!((failed.fetched, failed.deleted), (0, 1));
    assert_eq!(read_manifest(dir.path()).cursor.as_deref(), Some("after-2"));

    source.failing.lock().unwrap().clear();
    let taken = run(&source, dir.path());
    assert_eq!((taken.fetched, taken.unchanged), (1, 0));
    assert_eq!(read_manifest(dir.path()).cursor.as_deref(), Some("after-1"));
    assert_eq!(read(dir.path(), "b.md"), None);
}

#[test]
fn an_unreadable_manifest_means_fetching_again_not_failing() {
    let dir = tempfile::tempdir().unwrap();
    let source = Memory::default();
    source.put("a.md", "alpha");
    run(&source, dir.path());
    std::fs::write(dir.path().join(MANIFEST), b"{not json").unwrap();
    assert_eq!(run(&source, dir.path()).fetched, 1);
}

#[test]
fn new_readers_alone_are_recorded_and_mark_the_file_changed_without_a_download() {
    let dir = tempfile::tempdir().unwrap();
    let source = Memory::default();
    source.put("a.md", "alpha");
    let recorded: Mutex<Vec<Option<Vec<String>>>> = Mutex::new(Vec::new());
    let record = |_: &Path, groups: Option<&[String]>| {
        recorded
            .lock()
            .unwrap()
            .push(groups.map(<[String]>::to_vec));
        Ok(())
    };
    sync(&url(), &source, dir.path(), &limits(), &record).unwrap();
    let file = mirror_files(dir.path()).join("a.md");
    let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
    std::fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(old)
        .unwrap();

    struct Regrouped<'a>(&'a Memory);
    impl Connector for Regrouped<'_> {
        fn list(&self, cursor: Option<&str>) -> Result<Listed, ConnectorError> {
            let mut listed = self.0.list(cursor)?;
            if let Listing::Complete(objects) = &mut listed.listing {
                for object in objects {
                    object.groups = Some(vec!["legal".into()]);
                }
            }
            Ok(listed)
        }
        fn fetch(
            &self,
            o: &RemoteObject,
            into: &mut dyn Write,
            limit: u64,
        ) -> Result<u64, ConnectorError> {
            self.0.fetch(o, into, limit)
        }
    }
    source.fetches();
    let report = sync(&url(), &Regrouped(&source), dir.path(), &limits(), &record).unwrap();
    assert_eq!((report.fetched, report.unchanged), (0, 1));
    assert_eq!(source.fetches(), 0);
    assert_eq!(
        recorded.lock().unwrap().last().cloned(),
        Some(Some(vec!["legal".to_string()]))
    );
    assert!(std::fs::metadata(&file).unwrap().modified().unwrap() > old);
}

#[test]
fn objects_the_walk_would_skip_are_neither_downloaded_nor_kept() {
    let dir = tempfile::tempdir().unwrap();
    let source = Memory::default();
    source.put("a.md", "alpha");
    source.put("b.txt", "beta");
    run(&source, dir.path());
    assert_eq!(source.fetches(), 2);
    let markdown = |path: &str| path.ends_with(".md");
    let sync_markdown = || {
        sync_wanted(
            &url(),
            &source,
            dir.path(),
            &limits(),
            &no_readers,
            &markdown,
        )
        .unwrap()
    };
    let report = sync_markdown();
    assert_eq!(
        (report.fetched, report.unchanged, report.deleted),
        (0, 1, 1)
    );
    assert_eq!(read(dir.path(), "b.txt"), None);
    source.put("c.txt", "gamma");
    let report = sync_markdown();
    assert_eq!(report.fetched, 0);
    assert_eq!(source.fetches(), 0);
}
