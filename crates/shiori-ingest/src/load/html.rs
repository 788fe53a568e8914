use super::{file_document, normalize_title};
use crate::error::IngestError;
use crate::limits::{Budget, MAX_HTML_DEPTH};
use crate::normalize::normalize;
use crate::structure::converted::{readable, without_front_matter_block};
use crate::structure::html_text::{LINES, PARAGRAPHS};
use crate::structure::readable_name;
use crate::structure::rows::html_table_lines;
use ego_tree::iter::Edge;
use html5ever::tendril::{StrTendril, TendrilSink};
use scraper::{Html, HtmlTreeSink, Node};
use shiori_core::Document;
use std::path::Path;

/// Elements whose text is never the page's content (`head` also hides `title`, read
/// separately; `nav` is the site's menu, the same on every page).
const HIDDEN: &[&str] = &["head", "script", "style", "noscript", "template", "nav"];

/// Elements whose source line breaks are content rather than formatting.
const PREFORMATTED: &[&str] = &["pre", "textarea"];

/// Elements whose text, outside [`PREFORMATTED`] ones (kept as written anyway), is code as
/// written: template syntax there (`{{ .Values.image }}`) is what the page documents, not a
/// converter's leftover.
const CODE: &[&str] = &["code", "kbd", "samp"];

/// How much of a page the parser is given at a time; the depth is checked between pieces, so
/// a page nests at most a piece's worth of elements past [`MAX_HTML_DEPTH`] before it stops.
const PIECE_BYTES: usize = 4 * 1024;

/// An HTML page: visible body text with block structure turned into line breaks, headings into
/// `#` lines the chunker splits under, and each table row into one line that carries its
/// header (see [`crate::structure`]).
pub(super) fn load(path: &Path, html: &str, modified: i64) -> Result<Document, IngestError> {
    let page = parse(html).map_err(|budget| IngestError::OverBudget {
        path: path.to_path_buf(),
        budget,
    })?;
    let mut text = Text::default();
    // A walk over open/close edges rather than recursion: deeply nested (or hostile) pages
    // must not overflow the stack.
    for edge in page.tree.root().traverse() {
        match edge {
            Edge::Open(node) => match node.value() {
                Node::Element(element) => text.open(element.name()),
                Node::Text(chunk) => text.push(chunk),
                _ => {}
            },
            Edge::Close(node) => {
                if let Node::Element(element) = node.value() {
                    text.close(element.name());
                }
            }
        }
    }
    let body = without_front_matter_block(&normalize(&text.body));
    if body.is_empty() {
        return Err(IngestError::NoDocuments {
            path: path.to_path_buf(),
        });
    }
    let title = [text.title, text.first_h1]
        .iter()
        .map(|candidate| normalize_title(candidate))
        .find(|candidate| !candidate.is_empty())
        .unwrap_or_else(|| readable_name(path));
    Ok(file_document(path, title, body, "html", modified))
}

/// The page parsed as scraper parses it, piece by piece, stopping once it nests deeper than
/// [`MAX_HTML_DEPTH`]: the parser checks each new element against every open one, so the time a
/// page takes grows with the square of its depth.
fn parse(html: &str) -> Result<Html, Budget> {
    let sink = HtmlTreeSink::new(Html::new_document());
    let mut parser = html5ever::driver::parse_document(sink, Default::default());
    let mut rest = html;
    while !rest.is_empty() {
        let mut end = PIECE_BYTES.min(rest.len());
        while !rest.is_char_boundary(end) {
            end += 1;
        }
        let (piece, tail) = rest.split_at(end);
        parser.process(StrTendril::from_slice(piece));
        rest = tail;
        if newest_depth(&parser.tokenizer.sink.sink.0.borrow()) > MAX_HTML_DEPTH {
            return Err(Budget::HtmlDepth);
        }
    }
    // A page that nested deep and closed again within one piece is caught here.
    let page = parser.finish();
    if deepest(&page) > MAX_HTML_DEPTH {
        return Err(Budget::HtmlDepth);
    }
    Ok(page)
}

/// How deep the node made last sits (itself and its ancestors): while a page nests deeper,
/// that is its deepest.
fn newest_depth(page: &Html) -> usize {
    page.tree
        .nodes()
        .next_back()
        .map_or(0, |node| node.ancestors().count() + 1)
}

/// How deep the page's deepest node sits, in one walk over open and close edges.
fn deepest(page: &Html) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    for edge in page.tree.root().traverse() {
        match edge {
            Edge::Open(_) => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            Edge::Close(_) => depth = depth.saturating_sub(1),
        }
    }
    deepest
}

/// `h1` … `h6` as a level.
fn heading_level(name: &str) -> Option<usize> {
    let digit = name.strip_prefix('h')?;
    digit.parse().ok().filter(|level| (1..=6).contains(level))
}

/// Text gathered during the walk; the depths count open elements of each kind.
#[derive(Default)]
struct Text {
    body: String,
    title: String,
    first_h1: String,
    hidden: usize,
    preformatted: usize,
    code: usize,
    in_title: bool,
    h1_depth: usize,
    /// Set once an `h1` with text has closed; later ones are not the page's title.
    h1_done: bool,
    /// Open tables, innermost last.
    tables: Vec<TableRows>,
}

/// The rows of a table being read, and the cell being read.
#[derive(Default)]
struct TableRows {
    rows: Vec<Vec<String>>,
    cell: Option<String>,
    /// A `<th>` was read: the table names its columns (or rows) itself.
    headed: bool,
}

impl TableRows {
    /// The table as lines: a row per line, each value with its column's name, or each name
    /// with its value when the table is headerless pairs.
    fn lines(&self) -> String {
        html_table_lines(&self.rows, self.headed)
    }
}

impl Text {
    fn open(&mut self, name: &str) {
        if HIDDEN.contains(&name) {
            self.hidden += 1;
        }
        if PREFORMATTED.contains(&name) {
            self.preformatted += 1;
        }
        if CODE.contains(&name) {
            self.code += 1;
        }
        match name {
            "title" => self.in_title = self.title.is_empty(),
            "table" => self.tables.push(TableRows::default()),
            "tr" => {
                if let Some(table) = self.tables.last_mut() {
                    table.rows.push(Vec::new());
                }
            }
            "td" | "th" => {
                if let Some(table) = self.tables.last_mut() {
                    table.cell = Some(String::new());
                    table.headed |= name == "th";
                }
            }
            _ => {}
        }
        self.break_line(name);
        if let Some(level) = heading_level(name) {
            self.h1_depth += usize::from(level == 1);
            self.body.push_str(&"#".repeat(level));
            self.body.push(' ');
        }
    }

    fn close(&mut self, name: &str) {
        if HIDDEN.contains(&name) {
            self.hidden = self.hidden.saturating_sub(1);
        }
        if PREFORMATTED.contains(&name) {
            self.preformatted = self.preformatted.saturating_sub(1);
        }
        if CODE.contains(&name) {
            self.code = self.code.saturating_sub(1);
        }
        match name {
            "title" => self.in_title = false,
            "h1" => {
                self.h1_depth = self.h1_depth.saturating_sub(1);
                self.h1_done |= self.h1_depth == 0 && !self.first_h1.trim().is_empty();
            }
            "td" | "th" => {
                if let Some(table) = self.tables.last_mut() {
                    let cell = table.cell.take().unwrap_or_default();
                    match table.rows.last_mut() {
                        Some(row) => row.push(cell),
                        None => table.rows.push(vec![cell]),
                    }
                }
            }
            "table" => {
                if let Some(table) = self.tables.pop() {
                    let lines = table.lines();
                    match self.tables.last_mut().and_then(|outer| outer.cell.as_mut()) {
                        Some(cell) => cell.push_str(&lines),
                        None => self.body.push_str(&lines),
                    }
                }
            }
            _ => {}
        }
        if name != "br" {
            self.break_line(name);
        }
    }

    fn break_line(&mut self, name: &str) {
        if self.tables.last().is_some_and(|table| table.cell.is_some()) {
            // Inside a cell a break is a space: a row is one line.
            if PARAGRAPHS.contains(&name) || LINES.contains(&name) || name == "br" {
                self.push_cell_space();
            }
            return;
        }
        if PARAGRAPHS.contains(&name) {
            self.body.push_str("\n\n");
        } else if name == "br" || (LINES.contains(&name) && !self.at_line_start()) {
            // List items and rows open and close a line; one break between them is enough,
            // where a second would read as a paragraph break. `<br><br>` means one, though.
            self.body.push('\n');
        }
    }

    fn at_line_start(&self) -> bool {
        if self.tables.last().is_some_and(|table| table.cell.is_some()) {
            return true;
        }
        self.body.trim_end_matches([' ', '\t']).ends_with('\n')
    }

    fn push_cell_space(&mut self) {
        if let Some(cell) = self.tables.last_mut().and_then(|table| table.cell.as_mut()) {
            cell.push(' ');
        }
    }

    fn push(&mut self, chunk: &str) {
        if self.in_title {
            self.title.push_str(chunk);
        }
        if self.hidden > 0 {
            return;
        }
        if self.h1_depth > 0 && !self.h1_done {
            self.first_h1.push_str(chunk);
        }
        let target = match self.tables.last_mut().and_then(|table| table.cell.as_mut()) {
            Some(cell) => cell,
            None => &mut self.body,
        };
        if self.preformatted > 0 {
            target.push_str(chunk);
            return;
        }
        // Outside <pre>, a source line break is just a space in the rendered page.
        let spaced: String = chunk
            .chars()
            .map(|c| if matches!(c, '\n' | '\r') { ' ' } else { c })
            .collect();
        match self.code {
            0 => target.push_str(&readable(&spaced)),
            _ => target.push_str(&spaced),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::{load_file, tests::fixture};

    #[test]
    fn a_page_nested_past_the_limit_fails_and_one_just_under_it_is_read() {
        let nested = |depth: usize| {
            format!(
                "<html><body>{}text{}</body></html>",
                "<div>".repeat(depth),
                "</div>".repeat(depth)
            )
        };
        let path = Path::new("deep.html");
        let read = load(path, &nested(MAX_HTML_DEPTH - 10), 0).expect("under the limit");
        assert_eq!(read.text, "text");
        // Deep and closed again, then shallow: all of it within one piece the parser is fed.
        let closed = format!("{}<p>after</p>", nested(MAX_HTML_DEPTH + 10));
        for page in [nested(MAX_HTML_DEPTH + 10), closed] {
            let err = load(path, &page, 0).unwrap_err();
            assert!(
                matches!(
                    err,
                    IngestError::OverBudget {
                        budget: Budget::HtmlDepth,
                        ..
                    }
                ),
                "{err}"
            );
        }
    }

    const PAGE: &str = r#"<!DOCTYPE html>
<html><head><title> Kumo
  Cloud   Help </title><style>body { color: red }</style></head>
<body>
  <nav><a href="/">Home</a></nav>
  <h1>Welcome</h1>
  <p>First   paragraph
     continues here.</p>
  <script>alert("no")</script><noscript>Enable JS</noscript>
  <ul><li>one</li><li>two</li></ul>
  <p>Line<br>break &amp; entity</p>
  <table><tr><td>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></table>
  <pre>keep
  lines</pre>
</body></html>"#;

    #[test]
    fn extracts_visible_text_with_headings_and_rows_and_no_menu() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = fixture(&dir, "help.html", PAGE.as_bytes());
        let doc = &load_file(&path, 3).expect("load").documents[0];
        assert_eq!(doc.title, "Kumo Cloud Help");
        assert_eq!(
            doc.text,
            "# Welcome\n\nFirst paragraph continues here.\n\none\ntwo\n\n\
             Line\nbreak & entity\n\na: b\nc: d\n\nkeep\nlines"
        );
        assert_eq!(doc.metadata["doc_type"], "html");
        assert_eq!(doc.modified, 3);
    }

    #[test]
    fn an_admonition_marker_in_a_paragraph_reads_as_its_title() {
        let dir = tempfile::tempdir().expect("tempdir");
        let page = "<html><body><h2>Testing alerts</h2><p>!!! info “Testing matters”\n\
                    Untested alerts are no alerts.</p><p>Wow!!! Fast.</p></body></html>";
        let path = fixture(&dir, "alerts.html", page.as_bytes());
        let doc = &load_file(&path, 3).expect("load").documents[0];
        assert_eq!(
            doc.text,
            "## Testing alerts\n\nTesting matters\nUntested alerts are no alerts.\n\nWow!!! Fast."
        );
    }

    #[test]
    fn a_page_converted_from_a_static_site_reads_as_the_site_shows_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let page = "<html><body><h1>Zoom</h1><pre><code>title: Zoom\nquestions:\n  - webmeetings@gsa.gov\n\
                    redirect_from:\n  - /zoom/</code></pre><ol><li>Install it through [Self Service]({% page\n\
                    “/tools/#self-service” %}).</li></ol><p>::: tip Ask first</p><p>Ask in \
                    {% slack_channel “zoom” %} or <b>email</b> us.</p><p>:::</p>\
                    <p>Set <code>{{ .Values.image }}</code>:</p><pre>image: {{ .Values.image }}</pre>\
                    </body></html>";
        let path = fixture(&dir, "zoom.html", page.as_bytes());
        let doc = &load_file(&path, 3).expect("load").documents[0];
        assert_eq!(
            doc.text,
            "# Zoom\n\nInstall it through Self Service.\n\nAsk first\n\nAsk in zoom or email us.\n\n\
             Set {{ .Values.image }}:\n\nimage: {{ .Values.image }}",
            "template syntax in code is what the page documents"
        );
    }

    #[test]
    fn a_table_row_is_one_line_with_its_header() {
        let dir = tempfile::tempdir().expect("tempdir");
        let page = "<h2>Plans</h2><table><thead><tr><th>Plan</th><th>Requests per minute</th>\
                    </tr></thead><tbody><tr><td><b>Business</b></td><td><p>600</p><p>burst \
                    1,000</p></td></tr><tr><td>Starter</td><td>100</td></tr></tbody></table>";
        let path = fixture(&dir, "plans.html", page.as_bytes());
        let doc = &load_file(&path, 0).expect("load").documents[0];
        assert_eq!(
            doc.text,
            "## Plans\n\nPlan: Business · Requests per minute: 600 burst 1,000\n\
             Plan: Starter · Requests per minute: 100"
        );
        let pairs = "<table><tr><td><strong>Location</strong></td><td>230 S. Dearborn St.<br/>\
                     Chicago</td></tr><tr><td>Point of contact</td><td><a href=\"mailto:x\">Dave \
                     Lamb</a></td></tr></table>";
        let path = fixture(&dir, "office.html", pairs.as_bytes());
        assert_eq!(
            load_file(&path, 0).expect("load").documents[0].text,
            "Location: 230 S. Dearborn St. Chicago\nPoint of contact: Dave Lamb",
            "a headerless table of pairs reads each name with its value"
        );
    }

    #[test]
    fn title_falls_back_to_the_first_h1_then_the_stem() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = fixture(
            &dir,
            "a.htm",
            b"<body><h1>Main <em>topic</em></h1><h1>Other</h1><p>x</p></body>",
        );
        assert_eq!(
            load_file(&path, 0).expect("load").documents[0].title,
            "Main topic"
        );
        let path = fixture(&dir, "plain-page.html", b"<p>just text</p>");
        assert_eq!(
            load_file(&path, 0).expect("load").documents[0].title,
            "Plain page"
        );
    }
}
