use crate::error::{IngestError, IngestFailure};
use crate::load::Format;
use globset::{Glob, GlobSet, GlobSetBuilder};
use std::collections::BTreeMap;
use std::fs::{self, Metadata};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};
use walkdir::{DirEntry, WalkDir};

/// Which files a folder walk picks up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalkOptions {
    /// Globs a file must match (its path relative to the root, or its name). Empty means every
    /// file with a supported extension; non-empty replaces that extension filter.
    pub include: Vec<String>,
    /// Globs that drop matching files, and whole folders when a folder matches.
    pub exclude: Vec<String>,
    /// Larger files are reported as failures rather than read.
    pub max_file_bytes: u64,
}

impl Default for WalkOptions {
    fn default() -> Self {
        WalkOptions {
            include: Vec::new(),
            exclude: Vec::new(),
            max_file_bytes: 10 * 1024 * 1024,
        }
    }
}

/// A file chosen for loading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiscoveredFile {
    /// Canonical and absolute, so the same file reached twice is found once.
    pub path: PathBuf,
    pub size: u64,
    /// Modification time, seconds since the Unix epoch.
    pub modified: i64,
    /// Modification time, nanoseconds since the Unix epoch: the change check compares this, since
    /// a same-size edit within the second of the last index would hide behind whole seconds.
    pub modified_ns: i64,
}

/// Finds the files under `roots`, sorted by path. A root that is a file is always taken, since
/// naming it is a request for it; folders are walked recursively, skipping hidden entries
/// (`.git`, `.shiori`, …). Files that cannot be used (too large, unreadable) come back as
/// failures so one bad file does not stop the walk; only a missing root or a bad glob is an
/// error.
pub fn discover(roots: &[PathBuf], options: &WalkOptions) -> Result<Walked, IngestError> {
    let filter = Filter::new(options)?;
    let mut found = Found {
        max_file_bytes: options.max_file_bytes,
        files: BTreeMap::new(),
        failures: Vec::new(),
        skipped: Vec::new(),
    };
    for root in roots {
        let metadata = fs::metadata(root).map_err(|source| match source.kind() {
            ErrorKind::NotFound => IngestError::MissingRoot { path: root.clone() },
            _ => IngestError::Io {
                path: root.clone(),
                source,
            },
        })?;
        if metadata.is_dir() {
            walk_folder(root, &filter, &mut found);
        } else {
            found.add(root, &metadata);
        }
    }
    Ok(Walked {
        files: found.files.into_values().collect(),
        failures: sorted(found.failures),
        skipped: sorted(found.skipped),
    })
}

/// What a walk found.
#[derive(Debug, Default)]
pub struct Walked {
    pub files: Vec<DiscoveredFile>,
    /// Files it should have taken but cannot use (too large, unreadable).
    pub failures: Vec<IngestFailure>,
    /// What a folder walk left out that the user should hear of: documents in a format Shiori
    /// has no reader for (`.doc`, `.rtf`, …, with the format to save them in), and links that
    /// lead out of the folder (which are not followed).
    pub skipped: Vec<IngestFailure>,
}

fn sorted(mut failures: Vec<IngestFailure>) -> Vec<IngestFailure> {
    failures.sort_by(|a, b| a.path.cmp(&b.path));
    failures.dedup();
    failures
}

/// Why a document format a folder may well hold is not read, and what to save it as.
fn unreadable_format(path: &Path) -> Option<&'static str> {
    let extension = path.extension()?.to_str()?.to_ascii_lowercase();
    Some(match extension.as_str() {
        "doc" => "a Word 97-2003 document, which Shiori cannot read: save it as .docx or PDF",
        "rtf" => "a Rich Text document, which Shiori cannot read: save it as .docx or PDF",
        "xls" => "an Excel 97-2003 workbook, which Shiori cannot read: save it as .xlsx",
        "ppt" => "a PowerPoint 97-2003 deck, which Shiori cannot read: save it as .pptx or PDF",
        "odt" | "ods" | "odp" => {
            "an OpenDocument file, which Shiori cannot read: save it as .docx, .xlsx, .pptx or PDF"
        }
        "pages" | "numbers" | "key" => {
            "an Apple iWork file, which Shiori cannot read: export it as .docx, .xlsx, .pptx or PDF"
        }
        _ => return None,
    })
}

struct Filter {
    include: Option<GlobSet>,
    exclude: Option<GlobSet>,
}

/// Which files a walk with some options takes, told from a path relative to the walked folder
/// alone: a remote source's sync asks it before downloading an object the walk would skip.
pub struct PathFilter(Filter);

impl PathFilter {
    pub fn new(options: &WalkOptions) -> Result<PathFilter, IngestError> {
        Filter::new(options).map(PathFilter)
    }

    /// Whether the walk takes the file at `relative`: no hidden or excluded name on the way
    /// (an excluded folder takes its files with it), and the file itself included.
    pub fn takes(&self, relative: &Path) -> bool {
        let mut folder = PathBuf::new();
        let components: Vec<&std::ffi::OsStr> = relative.iter().collect();
        let Some((file, folders)) = components.split_last() else {
            return false;
        };
        for name in folders {
            folder.push(name);
            if hidden(name) || self.0.excludes(&folder, Path::new(name)) {
                return false;
            }
        }
        let name = Path::new(file);
        !hidden(file)
            && !self.0.excludes(relative, name)
            && self.0.includes(relative, name, relative)
    }
}

fn hidden(name: &std::ffi::OsStr) -> bool {
    let name = name.to_string_lossy();
    name.starts_with('.') || name.starts_with("~$")
}

impl Filter {
    fn new(options: &WalkOptions) -> Result<Filter, IngestError> {
        Ok(Filter {
            include: glob_set(&options.include)?,
            exclude: glob_set(&options.exclude)?,
        })
    }

    fn excludes(&self, relative: &Path, name: &Path) -> bool {
        self.exclude
            .as_ref()
            .is_some_and(|globs| globs.is_match(relative) || globs.is_match(name))
    }

    fn includes(&self, relative: &Path, name: &Path, path: &Path) -> bool {
        match &self.include {
            Some(globs) => globs.is_match(relative) || globs.is_match(name),
            None => Format::from_path(path).is_some(),
        }
    }
}

/// `None` for no patterns, so that "no include globs" can mean "the default extensions".
fn glob_set(patterns: &[String]) -> Result<Option<GlobSet>, IngestError> {
    if patterns.is_empty() {
        return Ok(None);
    }
    let mut builder = GlobSetBuilder::new();
    for pattern in patterns {
        let glob = Glob::new(pattern).map_err(|source| IngestError::InvalidGlob {
            pattern: pattern.clone(),
            source,
        })?;
        builder.add(glob);
    }
    builder
        .build()
        .map(Some)
        .map_err(|source| IngestError::InvalidGlob {
            pattern: patterns.join(", "),
            source,
        })
}

fn walk_folder(root: &Path, filter: &Filter, found: &mut Found) {
    let inside = fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let mut links_out = Vec::new();
    let walker = WalkDir::new(root)
        .follow_links(true)
        .into_iter()
        .filter_entry(|entry| {
            if entry.depth() == 0 {
                return true;
            }
            if let Some(link) = link_out_of(entry, &inside) {
                links_out.push(link);
                return false;
            }
            !skipped(entry, root, filter)
        });
    for entry in walker {
        let entry = match entry {
            Ok(entry) => entry,
            Err(err) => {
                let path = err.path().unwrap_or(root).to_path_buf();
                let reason = match (err.loop_ancestor(), err.io_error()) {
                    (Some(ancestor), _) => {
                        format!("symbolic link loops back to {}", ancestor.display())
                    }
                    (None, Some(io)) => io.to_string(),
                    (None, None) => err.to_string(),
                };
                found.failures.push(IngestFailure { path, reason });
                continue;
            }
        };
        if !entry.file_type().is_file() {
            continue;
        }
        let relative = relative(&entry, root);
        let name = Path::new(entry.file_name());
        if filter.excludes(relative, name) {
            continue;
        }
        if !filter.includes(relative, name, entry.path()) {
            if let (None, Some(reason)) = (&filter.include, unreadable_format(entry.path())) {
                found.skipped.push(IngestFailure {
                    path: fs::canonicalize(entry.path()).unwrap_or(entry.path().to_path_buf()),
                    reason: reason.to_string(),
                });
            }
            continue;
        }
        match entry.metadata() {
            Ok(metadata) => found.add(entry.path(), &metadata),
            Err(err) => found.failures.push(IngestFailure {
                path: entry.path().to_path_buf(),
                reason: err.to_string(),
            }),
        }
    }
    found.skipped.extend(links_out);
}

/// A link whose target lies outside the walked folder (`inside`, canonical): following it
/// would index files from wherever anyone who can write in the folder points, under the
/// folder's readers. A link within the folder is followed.
fn link_out_of(entry: &DirEntry, inside: &Path) -> Option<IngestFailure> {
    if !entry.path_is_symlink() {
        return None;
    }
    let target = fs::canonicalize(entry.path()).ok()?;
    (!target.starts_with(inside)).then(|| IngestFailure {
        path: entry.path().to_path_buf(),
        reason: "a link to outside the folder, not followed".to_string(),
    })
}

/// Hidden entries (`.git`, `.shiori`, editor lock files), Office lock files (`~$report.docx`,
/// which are not documents) and excluded folders are not walked.
fn skipped(entry: &DirEntry, root: &Path, filter: &Filter) -> bool {
    let name = Path::new(entry.file_name());
    hidden(entry.file_name())
        || (entry.file_type().is_dir() && filter.excludes(relative(entry, root), name))
}

fn relative<'a>(entry: &'a DirEntry, root: &Path) -> &'a Path {
    entry.path().strip_prefix(root).unwrap_or(entry.path())
}

struct Found {
    max_file_bytes: u64,
    /// Keyed by canonical path: overlapping roots and symlinks must not load a file twice.
    files: BTreeMap<PathBuf, DiscoveredFile>,
    failures: Vec<IngestFailure>,
    skipped: Vec<IngestFailure>,
}

impl Found {
    fn add(&mut self, path: &Path, metadata: &Metadata) {
        let path = match fs::canonicalize(path) {
            Ok(canonical) => canonical,
            Err(err) => {
                let reason = err.to_string();
                self.failures.push(IngestFailure {
                    path: path.to_path_buf(),
                    reason,
                });
                return;
            }
        };
        let size = metadata.len();
        if size > self.max_file_bytes {
            let reason = format!(
                "file too large: {} exceeds the {} limit",
                human_size(size),
                human_size(self.max_file_bytes)
            );
            self.failures.push(IngestFailure { path, reason });
            return;
        }
        let modified_ns = metadata.modified().map_or(0, unix_nanos);
        self.files.insert(
            path.clone(),
            DiscoveredFile {
                path,
                size,
                modified: modified_ns.div_euclid(NANOS_PER_SECOND),
                modified_ns,
            },
        );
    }
}

fn human_size(bytes: u64) -> String {
    const KB: u64 = 1024;
    const MB: u64 = 1024 * KB;
    // Display only: f64 is exact far beyond any file size that matters here.
    match bytes {
        b if b >= MB => format!("{:.1} MB", b as f64 / MB as f64),
        b if b >= KB => format!("{:.1} KB", b as f64 / KB as f64),
        b => format!("{b} bytes"),
    }
}

const NANOS_PER_SECOND: i64 = 1_000_000_000;

/// Nanoseconds since the Unix epoch, saturating (an i64 holds them until the year 2262).
pub fn unix_nanos(time: SystemTime) -> i64 {
    match time.duration_since(UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_nanos()).unwrap_or(i64::MAX),
        Err(before) => i64::try_from(before.duration().as_nanos()).map_or(i64::MIN, |ns| -ns),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_filter_takes_what_the_walk_takes() {
        let options = WalkOptions {
            include: vec!["**/*.md".into()],
            exclude: vec!["drafts".into(), "**/*.tmp.md".into()],
            max_file_bytes: u64::MAX,
        };
        let filter = PathFilter::new(&options).unwrap();
        for (path, taken) in [
            ("guide.md", true),
            ("team/notes.md", true),
            ("team/notes.txt", false),
            ("drafts/plan.md", false),
            ("team/drafts/plan.md", false),
            ("team/x.tmp.md", false),
            (".hidden/a.md", false),
            ("team/~$lock.md", false),
        ] {
            assert_eq!(filter.takes(Path::new(path)), taken, "{path}");
        }
        let defaults = PathFilter::new(&WalkOptions {
            include: Vec::new(),
            exclude: Vec::new(),
            max_file_bytes: u64::MAX,
        })
        .unwrap();
        assert!(defaults.takes(Path::new("a/report.pdf")));
        assert!(!defaults.takes(Path::new("a/image.psd")));
    }

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        for (name, contents) in [
            ("docs/a.md", "# A"),
            ("docs/b.TXT", "b"),
            ("docs/c.doc", "%PDF"),
            ("docs/.git/config.md", "hidden"),
            ("docs/.shiori/cache.jsonl", "hidden"),
            ("docs/.draft.md", "hidden"),
            ("docs/~$report.docx", "an Office lock file"),
            ("docs/sub/d.html", "<p>d</p>"),
            ("docs/sub/deeper/e.jsonl", "{}"),
            ("docs/node_modules/x.md", "vendored"),
        ] {
            let path = dir.path().join(name);
            fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            fs::write(path, contents).expect("write");
        }
        dir
    }

    fn names(dir: &tempfile::TempDir, files: &[DiscoveredFile]) -> Vec<String> {
        let base = fs::canonicalize(dir.path()).expect("canonical");
        files
            .iter()
            .map(|f| {
                f.path
                    .strip_prefix(&base)
                    .expect("under base")
                    .to_string_lossy()
                    .into_owned()
            })
            .collect()
    }

    #[test]
    fn walks_supported_files_sorted_and_skips_hidden_entries() {
        let dir = tree();
        let options = WalkOptions {
            exclude: vec!["node_modules".into()],
            ..WalkOptions::default()
        };
        let Walked {
            files,
            failures,
            skipped,
        } = discover(&[dir.path().join("docs")], &options).expect("discover");
        assert!(failures.is_empty(), "{failures:?}");
        // A document Shiori cannot read is left out, and said to be.
        let [doc] = skipped.as_slice() else {
            panic!("expected c.doc alone, got {skipped:?}");
        };
        assert!(doc.path.ends_with("docs/c.doc"), "{doc:?}");
        assert!(doc.reason.contains("save it as .docx"), "{doc:?}");
        assert_eq!(
            names(&dir, &files),
            [
                "docs/a.md",
                "docs/b.TXT",
                "docs/sub/d.html",
                "docs/sub/deeper/e.jsonl"
            ]
        );
        assert!(files.iter().all(|f| f.path.is_absolute() && f.modified > 0));
        assert_eq!(files[0].size, 3);
    }

    #[test]
    fn include_globs_replace_the_extension_filter_and_exclude_globs_prune() {
        let dir = tree();
        let root = [dir.path().join("docs")];
        let only_doc = WalkOptions {
            include: vec!["*.doc".into()],
            ..WalkOptions::default()
        };
        let files = discover(&root, &only_doc).expect("discover").files;
        assert_eq!(names(&dir, &files), ["docs/c.doc"]);

        let relative = WalkOptions {
            include: vec!["sub/**".into()],
            exclude: vec!["deeper".into(), "*.md".into()],
            ..WalkOptions::default()
        };
        let files = discover(&root, &relative).expect("discover").files;
        assert_eq!(names(&dir, &files), ["docs/sub/d.html"]);
    }

    #[test]
    fn file_roots_are_taken_as_named_and_overlaps_are_found_once() {
        let dir = tree();
        let roots = [
            dir.path().join("docs/c.doc"),
            dir.path().join("docs/sub"),
            dir.path().join("docs/sub/../sub/d.html"),
        ];
        let files = discover(&roots, &WalkOptions::default())
            .expect("discover")
            .files;
        assert_eq!(
            names(&dir, &files),
            ["docs/c.doc", "docs/sub/d.html", "docs/sub/deeper/e.jsonl"]
        );
    }

    #[test]
    fn files_over_the_limit_are_failures() {
        let dir = tempfile::tempdir().expect("tempdir");
        let big = dir.path().join("big.txt");
        fs::write(&big, vec![b'a'; 1024 * 1024 * 3 / 2]).expect("write");
        fs::write(dir.path().join("small.txt"), "ok").expect("write");
        let options = WalkOptions {
            max_file_bytes: 1024 * 1024,
            ..WalkOptions::default()
        };
        let Walked {
            files, failures, ..
        } = discover(&[dir.path().to_path_buf()], &options).expect("discover");
        assert_eq!(files.len(), 1);
        let [failure] = failures.as_slice() else {
            panic!("expected one failure, got {failures:?}");
        };
        assert_eq!(failure.path, fs::canonicalize(&big).expect("canonical"));
        assert_eq!(
            failure.reason,
            "file too large: 1.5 MB exceeds the 1.0 MB limit"
        );
    }

    #[test]
    fn links_are_followed_inside_the_folder_only() {
        let dir = tempfile::tempdir().expect("tempdir");
        for (name, text) in [("docs/guide/a.md", "# A"), ("secrets/b.md", "# B")] {
            let path = dir.path().join(name);
            fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            fs::write(path, text).expect("write");
        }
        let docs = dir.path().join("docs");
        std::os::unix::fs::symlink("guide", docs.join("same-guide")).expect("link");
        std::os::unix::fs::symlink("../secrets", docs.join("team")).expect("link");
        std::os::unix::fs::symlink("../secrets/b.md", docs.join("b.md")).expect("link");
        let walked =
            discover(std::slice::from_ref(&docs), &WalkOptions::default()).expect("discover");
        assert_eq!(names(&dir, &walked.files), ["docs/guide/a.md"]);
        let left_out: Vec<_> = walked.skipped.iter().map(|s| s.path.clone()).collect();
        assert_eq!(left_out, [docs.join("b.md"), docs.join("team")]);
        assert!(walked.skipped[0].reason.contains("not followed"));
    }

    #[test]
    fn a_missing_root_is_an_error_naming_it() {
        let err =
            discover(&[PathBuf::from("/no/such/folder")], &WalkOptions::default()).unwrap_err();
        assert!(matches!(err, IngestError::MissingRoot { .. }), "{err}");
        assert_eq!(err.to_string(), "/no/such/folder: no such file or folder");
    }

    #[test]
    fn a_bad_glob_is_an_error_naming_it() {
        let options = WalkOptions {
            include: vec!["a[".into()],
            ..WalkOptions::default()
        };
        let err = discover(&[], &options).unwrap_err();
        assert!(err.to_string().starts_with("invalid glob \"a[\""), "{err}");
    }

    #[test]
    fn sizes_read_naturally() {
        assert_eq!(human_size(50 * 1024 * 1024), "50.0 MB");
        assert_eq!(human_size(1536), "1.5 KB");
        assert_eq!(human_size(12), "12 bytes");
    }
}
