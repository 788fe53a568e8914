//! Where a page sits in its site: the titles of the index pages (`_index.md`, `index.html`,
//! `README.md`) of the folders above it, outermost first. A handbook's pages rarely repeat
//! what their folder's index page says once: whose handbook it is, which product a manual is
//! for. The section path carries that into every page's chunks, as a site's breadcrumbs do.

use crate::chunk::CONTEXT_SEPARATOR;
use crate::load::{load_file, Format};
use crate::structure::index_page_rank;
use crate::walk::DiscoveredFile;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The metadata key of a document's section path: [`Sections::path_of`] its file.
pub const SECTION_PATH_KEY: &str = "section_path";

/// The index page of each folder of one walk, with its title.
#[derive(Debug, Default)]
pub struct Sections {
    by_folder: HashMap<PathBuf, IndexPage>,
}

#[derive(Debug)]
struct IndexPage {
    path: PathBuf,
    rank: u8,
    title: String,
}

impl Sections {
    /// Reads the title of each folder's index page among `files` (one walk's files, so a
    /// section is a folder the walk took). Only text formats are read here: a scanned
    /// `README.pdf` is not OCRed twice. An index page that fails to load names no section; it
    /// fails on its own when it is indexed.
    pub fn read(files: &[DiscoveredFile]) -> Sections {
        let mut by_folder: HashMap<PathBuf, IndexPage> = HashMap::new();
        for file in files {
            let (Some(rank), Some(folder)) = (index_page_rank(&file.path), file.path.parent())
            else {
                continue;
            };
            if by_folder.get(folder).is_some_and(|page| page.rank <= rank) {
                continue;
            }
            if let Some(title) = page_title(&file.path, file.modified) {
                let page = IndexPage {
                    path: file.path.clone(),
                    rank,
                    title,
                };
                by_folder.insert(folder.to_path_buf(), page);
            }
        }
        Sections { by_folder }
    }

    /// The titles of the sections `path` lies in, outermost first: each folder above it with
    /// an index page, except that an index page does not sit in its own section.
    pub fn of(&self, path: &Path) -> Vec<&str> {
        let mut titles: Vec<&str> = path
            .ancestors()
            .skip(1)
            .filter_map(|folder| self.by_folder.get(folder))
            .filter(|page| page.path != path)
            .map(|page| page.title.as_str())
            .collect();
        titles.reverse();
        titles.dedup();
        titles
    }

    /// [`Sections::of`] as one line, as documents keep it under [`SECTION_PATH_KEY`]; empty
    /// outside any section.
    pub fn path_of(&self, path: &Path) -> String {
        self.of(path).join(CONTEXT_SEPARATOR)
    }
}

fn page_title(path: &Path, modified: i64) -> Option<String> {
    let text_format = matches!(
        Format::from_path(path),
        Some(Format::Markdown | Format::Html | Format::Text)
    );
    if !text_format {
        return None;
    }
    let loaded = load_file(path, modified).ok()?;
    let title = loaded.documents.into_iter().next()?.title;
    (!title.is_empty()).then_some(title)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn discovered(root: &Path, files: &[(&str, &str)]) -> Vec<DiscoveredFile> {
        files
            .iter()
            .map(|(name, text)| {
                let path = root.join(name);
                fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
                fs::write(&path, text).expect("write");
                DiscoveredFile {
                    path,
                    size: text.len() as u64,
                    modified: 0,
                    modified_ns: 0,
                }
            })
            .collect()
    }

    #[test]
    fn a_page_lies_in_the_sections_of_the_index_pages_above_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        let files = discovered(
            root,
            &[
                ("README.md", "# Acme handbook\n\nWelcome."),
                ("hr/README.md", "# Intro\n\nHR pages."),
                ("hr/_index.md", "---\ntitle: People\n---\nHR pages."),
                ("hr/leave.md", "# Leave\n\nTen days."),
                ("hr/forms/claim.md", "# Claims\n\nFile them."),
                ("notes/todo.md", "# Todo\n\nNothing."),
            ],
        );
        let sections = Sections::read(&files);
        assert_eq!(
            sections.of(&root.join("hr/leave.md")),
            ["Acme handbook", "People"]
        );
        assert_eq!(
            sections.of(&root.join("hr/forms/claim.md")),
            ["Acme handbook", "People"]
        );
        assert_eq!(sections.of(&root.join("notes/todo.md")), ["Acme handbook"]);
        assert_eq!(sections.of(&root.join("hr/_index.md")), ["Acme handbook"]);
        assert_eq!(
            sections.of(&root.join("hr/README.md")),
            ["Acme handbook", "People"]
        );
        assert!(sections.of(&root.join("README.md")).is_empty());
    }

    #[test]
    fn an_index_page_outside_the_walk_or_in_a_binary_format_names_no_section() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        let mut files = discovered(root, &[("docs/page.md", "# Page\n\nText.")]);
        fs::write(root.join("README.md"), "# Not walked").expect("write");
        files.extend(discovered(root, &[("docs/README.pdf", "not a pdf")]));
        let sections = Sections::read(&files);
        assert!(sections.of(&root.join("docs/page.md")).is_empty());
    }
}
