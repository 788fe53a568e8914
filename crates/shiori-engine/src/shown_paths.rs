//! Paths as every surface shows them, so a server never tells its callers where its files live.
//! A path under the source root (`[ingest] source_root`, or the folder holding the data
//! directory) is shown relative to it; one under a configured folder outside the root (a source,
//! a project path, the evaluation set) is shown from that folder's name; any other keeps only its
//! last two components. A file mirrored from a remote source is shown as the source's URL and its
//! path there. The store keeps absolute, canonical paths; only what leaves the engine is
//! rewritten, and filters written with shown paths are turned back into stored ones.

use crate::indexer::{IndexFailure, IndexReport};
use crate::EngineError;
use shiori_core::{Chunk, Filters};
use std::path::{Component, Path, PathBuf};

/// Components kept of a path that is under no known folder: its folder and file name.
const BARE_COMPONENTS: usize = 2;

/// `text` with every absolute path of two or more components (`/srv/docs/hr/x.pdf`) cut to
/// its last one (`…/x.pdf`), whatever folder it names. For messages that may hold a caller's
/// own words: replacing only the server's real folders would answer "is this where the files
/// live?" for any path a caller sends to be echoed, so every path is cut alike.
pub fn without_absolute_paths(text: &str) -> String {
    let mut cut = String::with_capacity(text.len());
    let mut rest = text;
    let mut after_boundary = true;
    while let Some(c) = rest.chars().next() {
        let length = match (c, after_boundary) {
            ('/', true) => absolute_path_length(rest),
            _ => 0,
        };
        if length > 0 {
            let path = &rest[..length];
            let name = path.trim_end_matches('/').rsplit('/').next().unwrap_or("");
            cut.push_str("…/");
            cut.push_str(name);
            rest = &rest[length..];
            after_boundary = false;
            continue;
        }
        after_boundary = c.is_whitespace() || matches!(c, '"' | '\'' | '(' | '[' | '=' | '`');
        cut.push(c);
        rest = &rest[c.len_utf8()..];
    }
    cut
}

/// The length of the absolute path of two or more components that `text` starts with; 0 for
/// none (a lone `/x`, a URL's `//host`).
fn absolute_path_length(text: &str) -> usize {
    if text.starts_with("//") {
        return 0;
    }
    let end = text
        .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | ')' | ']' | ',' | '`'))
        .unwrap_or(text.len());
    let path = text[..end].trim_end_matches(['.', ':', ';']);
    let components = path.split('/').filter(|part| !part.is_empty()).count();
    match components >= 2 {
        true => path.len(),
        false => 0,
    }
}

/// Rewrites stored absolute paths into shown ones and back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShownPaths {
    root: PathBuf,
    /// Configured folders outside the root, longest first so the closest one names a path.
    outside: Vec<PathBuf>,
    /// Each remote source's mirror folder and the URL prefix its files are shown under.
    remote: Vec<(PathBuf, String)>,
}

impl ShownPaths {
    /// Paths are shown relative to `root`, or from the name of whichever of `folders` outside
    /// the root holds them. Folders that exist are taken canonical, as the indexer stores paths.
    pub fn new(root: &Path, folders: impl IntoIterator<Item = PathBuf>) -> ShownPaths {
        let mut shown = ShownPaths {
            root: canonical(root),
            outside: Vec::new(),
            remote: Vec::new(),
        };
        for folder in folders {
            shown.show_folder(&folder);
        }
        shown
    }

    /// Shows files under `folder` (outside the root) from its name: a configured folder, or an
    /// evaluation set named on the command line.
    pub fn show_folder(&mut self, folder: &Path) {
        let folder = canonical(folder);
        if !folder.starts_with(&self.root) && folder.file_name().is_some() {
            self.outside.push(folder);
            self.outside
                .sort_by_key(|folder| std::cmp::Reverse(folder.as_os_str().len()));
            self.outside.dedup();
        }
    }

    /// Shows files under each mirror folder as the URL prefix given with it.
    pub fn with_remotes(mut self, mirrors: impl IntoIterator<Item = (PathBuf, String)>) -> Self {
        self.remote = mirrors
            .into_iter()
            .map(|(folder, prefix)| (canonical(&folder), prefix))
            .collect();
        self
    }

    fn show_remote(&self, stored: &Path) -> Option<String> {
        self.remote.iter().find_map(|(folder, prefix)| {
            let rest = stored.strip_prefix(folder).ok()?;
            let parts: Vec<_> = rest
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect();
            Some(format!("{prefix}{}", parts.join("/")))
        })
    }

    /// `path` as shown; anything that is not an absolute path (a record id, a URL) is returned
    /// as it is.
    pub fn show(&self, path: &str) -> String {
        let stored = Path::new(path);
        if !stored.is_absolute() {
            return path.to_string();
        }
        if let Some(shown) = self.show_remote(stored) {
            return shown;
        }
        if let Ok(relative) = stored.strip_prefix(&self.root) {
            return if relative.as_os_str().is_empty() {
                ".".to_string()
            } else {
                relative.display().to_string()
            };
        }
        for folder in &self.outside {
            if let (Ok(rest), Some(name)) = (stored.strip_prefix(folder), folder.file_name()) {
                let shown = Path::new(name);
                return if rest.as_os_str().is_empty() {
                    shown.display().to_string()
                } else {
                    shown.join(rest).display().to_string()
                };
            }
        }
        let parts: Vec<_> = stored.components().skip(1).collect();
        let kept = &parts[parts.len().saturating_sub(BARE_COMPONENTS)..];
        kept.iter().collect::<PathBuf>().display().to_string()
    }

    /// A chunk as shown: its source, and the document and chunk ids that are built from its
    /// file's path (a record's own id stays). The file is the document id's (a page's id is
    /// `path#p3`, its source `path p.3`), else the source's (a record's).
    pub fn show_chunk(&self, chunk: &mut Chunk) {
        let file_of = |id: &str| id.split('#').next().unwrap_or_default().to_string();
        let Some(file) = [file_of(&chunk.doc_id), file_of(&chunk.source)]
            .into_iter()
            .find(|file| Path::new(file).is_absolute() && chunk.source.starts_with(file.as_str()))
        else {
            return;
        };
        let shown = self.show(&file);
        for field in [&mut chunk.source, &mut chunk.doc_id, &mut chunk.chunk_id] {
            if let Some(rest) = field.strip_prefix(file.as_str()) {
                *field = format!("{shown}{rest}");
            }
        }
    }

    /// An indexing report as shown: each failure names its file as shown.
    pub fn show_report(&self, report: &mut IndexReport) {
        self.show_failures(&mut report.failures);
        self.show_failures(&mut report.warnings);
    }

    /// Each failure's path as shown, and its reason without the server's folders.
    pub fn show_failures(&self, failures: &mut [IndexFailure]) {
        for failure in failures {
            failure.path = self.show(&failure.path);
            failure.reason = self.redact(&failure.reason);
        }
    }

    /// `text` with every mention of the root and the outside folders replaced by their shown
    /// form: the last guard for messages (an I/O error) that name a file.
    pub fn redact(&self, text: &str) -> String {
        let mut text = text.to_string();
        for (folder, prefix) in &self.remote {
            let shown = prefix.trim_end_matches('/');
            text = text.replace(&folder.display().to_string(), shown);
        }
        for folder in &self.outside {
            let shown = folder.file_name().map(|name| name.to_string_lossy());
            text = text.replace(
                &folder.display().to_string(),
                shown.as_deref().unwrap_or("."),
            );
        }
        let root = self.root.display().to_string();
        if root != "/" {
            text = text.replace(&root, ".");
        }
        text
    }

    /// `filters` with shown paths turned into stored ones: a relative `source_prefix` is taken
    /// from the folder it is shown from, and each document id is also looked for as a file.
    /// Filters match shown paths only: an absolute `source_prefix` or document id is refused,
    /// since whether it matched would tell a caller where the server keeps its files. A
    /// metadata key no store can match (a quote, a backslash) is refused too.
    pub fn stored_filters(&self, filters: &Filters) -> Result<Filters, EngineError> {
        // A store matches a key inside a quoted JSON path, where these would break out of it.
        let unmatchable = |key: &&String| {
            key.is_empty() || key.chars().any(|c| c == '"' || c == '\\' || c.is_control())
        };
        if let Some(key) = filters.metadata.keys().find(unmatchable) {
            return Err(EngineError::Invalid(format!(
                "filters.metadata: {key:?} is not a metadata key (a key is not empty and holds no \
                 quote, backslash or control character)"
            )));
        }
        let absolute = |field: &str, path: &str| {
            EngineError::Invalid(format!(
                "filters.{field}: {path:?} is an absolute path; give paths as results show them \
                 (relative to the source root)"
            ))
        };
        let source_prefix = match &filters.source_prefix {
            Some(prefix) if Path::new(prefix).is_absolute() => {
                return Err(absolute("source_prefix", prefix))
            }
            prefix => prefix.as_ref().map(|prefix| self.stored_path(prefix)),
        };
        let mut doc_ids = Vec::with_capacity(filters.doc_ids.len());
        for id in &filters.doc_ids {
            if Path::new(id).is_absolute() {
                return Err(absolute("doc_ids", id));
            }
            let stored = self.stored_path(id);
            doc_ids.push(id.clone());
            if stored != *id {
                doc_ids.push(stored);
            }
        }
        Ok(Filters {
            source_prefix,
            doc_ids,
            ..filters.clone()
        })
    }

    /// The stored form of a shown path: absolute ones stay; relative ones start from the outside
    /// folder their first component names, or else from the root. A trailing `/` (a folder
    /// prefix) is kept.
    fn stored_path(&self, shown: &str) -> String {
        let relative = Path::new(shown);
        if relative.is_absolute() {
            return shown.to_string();
        }
        for (folder, prefix) in &self.remote {
            if let Some(rest) = shown.strip_prefix(prefix.as_str()) {
                return format!("{}/{rest}", folder.display());
            }
        }
        let parts: Vec<Component> = relative
            .components()
            .filter(|part| matches!(part, Component::Normal(_)))
            .collect();
        let named = parts.first().and_then(|first| {
            self.outside
                .iter()
                .find(|folder| folder.file_name() == Some(first.as_os_str()))
        });
        let (mut path, rest) = match named {
            Some(folder) => (folder.clone(), &parts[1..]),
            None => (self.root.clone(), &parts[..]),
        };
        path.extend(rest);
        let mut stored = path.display().to_string();
        if shown.ends_with('/') && !stored.ends_with('/') {
            stored.push('/');
        }
        stored
    }
}

fn canonical(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    std::fs::canonicalize(&absolute).unwrap_or(absolute)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_absolute_path_is_cut_to_its_name_whatever_folder_it_names() {
        assert_eq!(
            without_absolute_paths("/srv/docs/hr/x.pdf: permission denied"),
            "…/x.pdf: permission denied"
        );
        assert_eq!(
            without_absolute_paths(r#"source_prefix: "/home/guess/docs" is absolute"#),
            r#"source_prefix: "…/docs" is absolute"#
        );
        for untouched in [
            "see https://example.com/a/b and ./hr/x.pdf",
            "no route /healthz",
            "3/4 of the 2024/25 budget",
        ] {
            assert_eq!(without_absolute_paths(untouched), untouched);
        }
    }

    fn shown() -> ShownPaths {
        ShownPaths::new(
            Path::new("/srv/acme"),
            [
                PathBuf::from("/srv/acme/docs"),
                PathBuf::from("/mnt/share/contracts"),
            ],
        )
    }

    fn chunk(doc_id: &str, chunk_id: &str, source: &str) -> Chunk {
        Chunk {
            doc_id: doc_id.into(),
            chunk_id: chunk_id.into(),
            source: source.into(),
            title: String::new(),
            text: String::new(),
            index: 0,
            total: 1,
            modified: 0,
            content_hash: String::new(),
            metadata: Default::default(),
        }
    }

    #[test]
    fn paths_lose_everything_above_the_root_or_their_folder() {
        let shown = shown();
        assert_eq!(shown.show("/srv/acme/docs/a.md"), "docs/a.md");
        assert_eq!(
            shown.show("/mnt/share/contracts/2026/x.pdf"),
            "contracts/2026/x.pdf"
        );
        assert_eq!(shown.show("/home/someone/notes/b.md"), "notes/b.md");
        assert_eq!(shown.show("/b.md"), "b.md");
        assert_eq!(shown.show("/srv/acme"), ".");
        assert_eq!(shown.show("/mnt/share/contracts"), "contracts");
        assert_eq!(shown.show("faq-009"), "faq-009");
        assert_eq!(shown.show("https://example.com/x"), "https://example.com/x");
    }

    #[test]
    fn a_file_chunk_is_shown_whole_and_a_record_keeps_its_id() {
        let shown = shown();
        let mut file = chunk("/srv/acme/a.md", "/srv/acme/a.md#0", "/srv/acme/a.md");
        shown.show_chunk(&mut file);
        assert_eq!(
            (
                file.doc_id.as_str(),
                file.chunk_id.as_str(),
                file.source.as_str()
            ),
            ("a.md", "a.md#0", "a.md")
        );
        let mut record = chunk("faq-009", "faq-009#0", "/srv/acme/docs/faq.jsonl#L9");
        shown.show_chunk(&mut record);
        assert_eq!(
            (
                record.doc_id.as_str(),
                record.chunk_id.as_str(),
                record.source.as_str()
            ),
            ("faq-009", "faq-009#0", "docs/faq.jsonl#L9")
        );
        let mut page = chunk(
            "/mnt/share/contracts/x.pdf#p3",
            "/mnt/share/contracts/x.pdf#p3#0",
            "/mnt/share/contracts/x.pdf p.3",
        );
        shown.show_chunk(&mut page);
        assert_eq!(
            (
                page.doc_id.as_str(),
                page.chunk_id.as_str(),
                page.source.as_str()
            ),
            (
                "contracts/x.pdf#p3",
                "contracts/x.pdf#p3#0",
                "contracts/x.pdf p.3"
            ),
            "a page of a PDF (a sheet, a slide) shows no path of the machine"
        );
    }

    #[test]
    fn a_folder_named_later_is_shown_from_its_name() {
        let mut shown = shown();
        shown.show_folder(Path::new("/data/sets/handbook/docs"));
        assert_eq!(
            shown.show("/data/sets/handbook/docs/hr/leave.md"),
            "docs/hr/leave.md"
        );
        assert_eq!(shown.show("/srv/acme/b.md"), "b.md");
    }

    #[test]
    fn filters_written_with_shown_paths_match_stored_ones() {
        let shown = shown();
        let filters = Filters {
            source_prefix: Some("./docs/".into()),
            doc_ids: vec!["a.md".into(), "contracts/2026/x.pdf".into()],
            ..Filters::default()
        };
        let stored = shown.stored_filters(&filters).unwrap();
        assert_eq!(stored.source_prefix.as_deref(), Some("/srv/acme/docs/"));
        assert_eq!(
            stored.doc_ids,
            [
                "a.md",
                "/srv/acme/a.md",
                "contracts/2026/x.pdf",
                "/mnt/share/contracts/2026/x.pdf"
            ]
        );
    }

    #[test]
    fn absolute_paths_in_filters_are_refused() {
        let shown = shown();
        for filters in [
            Filters {
                source_prefix: Some("/srv/acme/".into()),
                ..Filters::default()
            },
            Filters {
                source_prefix: Some("/elsewhere/".into()),
                ..Filters::default()
            },
            Filters {
                doc_ids: vec!["/srv/acme/a.md".into()],
                ..Filters::default()
            },
        ] {
            let refused = shown.stored_filters(&filters);
            assert!(
                matches!(&refused, Err(EngineError::Invalid(message)) if message.contains("absolute")),
                "{refused:?}"
            );
        }
    }

    #[test]
    fn a_metadata_key_that_would_break_a_json_path_is_refused() {
        let shown = shown();
        for key in ["a\\b", "say \"hi\"", "", "tab\there"] {
            let filters = Filters {
                metadata: [(key.to_string(), "x".to_string())].into(),
                ..Filters::default()
            };
            let refused = shown.stored_filters(&filters);
            assert!(
                matches!(&refused, Err(EngineError::Invalid(m)) if m.starts_with("filters.metadata")),
                "{key:?}: {refused:?}"
            );
        }
        let japanese = Filters {
            metadata: [("部署".to_string(), "人事".to_string())].into(),
            ..Filters::default()
        };
        assert!(shown.stored_filters(&japanese).is_ok());
    }

    #[test]
    fn messages_lose_the_root() {
        let shown = shown();
        assert_eq!(
            shown.redact("/srv/acme/uploads/x.pdf: permission denied"),
            "./uploads/x.pdf: permission denied"
        );
        assert_eq!(
            shown.redact("cannot read /mnt/share/contracts/x.pdf"),
            "cannot read contracts/x.pdf"
        );
    }

    #[test]
    fn mirrored_files_are_shown_by_their_source_url_and_filters_find_them() {
        let shown = shown().with_remotes([(
            PathBuf::from("/srv/acme/.shiori/sources/s3-0123/files"),
            "s3://bucket/docs/".to_string(),
        )]);
        let stored = "/srv/acme/.shiori/sources/s3-0123/files/policies/leave.md";
        assert_eq!(shown.show(stored), "s3://bucket/docs/policies/leave.md");
        let filters = Filters {
            source_prefix: Some("s3://bucket/docs/policies/".into()),
            ..Filters::default()
        };
        let stored_filters = shown.stored_filters(&filters).unwrap();
        assert_eq!(
            stored_filters.source_prefix.as_deref(),
            Some("/srv/acme/.shiori/sources/s3-0123/files/policies/")
        );
        assert_eq!(
            shown.redact("cannot read /srv/acme/.shiori/sources/s3-0123/files/x.md"),
            "cannot read s3://bucket/docs/x.md"
        );
    }
}
