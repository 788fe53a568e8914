//! What a page is made of, as the loaders keep it: a title (front matter first), headings as
//! `#` lines that the chunker splits under, paragraphs, one line per list item and per table
//! row (each row with its header), and no markup, templating or front matter in the text.

pub(crate) mod converted;
mod front_matter;
pub(crate) mod html_text;
mod markdown;
mod pdf_text;
pub(crate) mod rows;
pub(crate) mod templating;

pub(crate) use pdf_text::reflow;
use std::collections::BTreeMap;
use std::path::Path;

/// A Markdown page read for its structure.
#[derive(Debug, PartialEq)]
pub(crate) struct Page {
    /// The front matter's title, if it has one.
    pub title: Option<String>,
    /// When the front matter says the page last changed, as written.
    pub date: Option<String>,
    /// Front matter fields kept as metadata.
    pub fields: BTreeMap<String, String>,
    /// The readable text, headings as `#` lines.
    pub text: String,
}

/// Reads a Markdown page: front matter, then templating, then Markdown itself. The front
/// matter's summary of the page ([`front_matter::FrontMatter::lead`]) opens the text as its
/// first paragraph.
pub(crate) fn markdown_page(source: &str) -> Page {
    let front = front_matter::split(source);
    let body = match front.lead() {
        Some(lead) => format!("{lead}\n\n{}", front.body),
        None => front.body.to_string(),
    };
    Page {
        title: front.title,
        date: front.date,
        fields: front.fields,
        text: markdown::render(&templating::strip(&body)),
    }
}

/// A title made from a file name when the file has none of its own: `travel-policy.md` reads
/// "Travel policy", and an index page (`_index.md`, `index.html`, `README.md`) takes its
/// folder's name.
pub(crate) fn readable_name(path: &Path) -> String {
    let stem = path
        .file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = match path.parent().and_then(Path::file_name) {
        Some(folder) if index_page_rank(path).is_some() => folder.to_string_lossy().into_owned(),
        _ => stem,
    };
    let spaced = name.replace(['-', '_'], " ");
    let spaced = spaced.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut chars = spaced.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => spaced,
    }
}

/// Whether `path` is its folder's index page (`_index`, `index` or `README`, any extension),
/// and how it ranks against another in the same folder: lower wins. Site generators read
/// `_index` and `index` as the section's page, and a repository shows its `README`.
pub(crate) fn index_page_rank(path: &Path) -> Option<u8> {
    let stem = path.file_stem()?.to_str()?.to_ascii_lowercase();
    ["_index", "index", "readme"]
        .iter()
        .position(|name| *name == stem)
        .and_then(|rank| u8::try_from(rank).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_read_as_titles() {
        assert_eq!(
            readable_name(Path::new("hr/travel-policy.md")),
            "Travel policy"
        );
        assert_eq!(
            readable_name(Path::new("handbook/paid_leave/_index.md")),
            "Paid leave"
        );
        assert_eq!(readable_name(Path::new("docs/README.md")), "Docs");
        assert_eq!(readable_name(Path::new("経費精算.md")), "経費精算");
    }

    #[test]
    fn a_page_gives_its_title_and_clean_text() {
        let page = markdown_page(
            "---\ntitle: Leave\nlastmod: 2025-04-01\n---\n\n{{< hint >}}\n## Paid leave\n\n\
             You get **20 days**.\n{{< /hint >}}\n",
        );
        assert_eq!(page.title.as_deref(), Some("Leave"));
        assert_eq!(page.date.as_deref(), Some("2025-04-01"));
        assert_eq!(page.text, "## Paid leave\n\nYou get 20 days.");
    }
}
