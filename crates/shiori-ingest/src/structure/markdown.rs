//! Markdown as a reader sees it: headings kept as `#` lines (the chunker splits under them and
//! carries their path), paragraphs, one line per list item and per table row (with its header),
//! code between plain fences, and no other markup — links read as their text, emphasis and inline HTML
//! disappear, images and HTML comments are dropped.

use super::html_text::{fragment_parts, strip_tags, FragmentPart};
use super::rows::table_lines;
use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use shiori_analysis::is_japanese_char;

/// The readable text of a Markdown page (front matter and templating already removed).
pub(crate) fn render(markdown: &str) -> String {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_YAML_STYLE_METADATA_BLOCKS
        | Options::ENABLE_PLUSES_DELIMITED_METADATA_BLOCKS;
    let mut renderer = Renderer::default();
    for event in Parser::new_ext(markdown, options) {
        renderer.event(event);
    }
    tidy(&renderer.out)
}

#[derive(Default)]
struct Renderer {
    out: String,
    /// A soft line break waiting for the next text: a space between words, nothing between
    /// Japanese characters.
    soft_break: bool,
    /// The number of the next item of each open list, `None` for a bulleted one.
    lists: Vec<Option<u64>>,
    /// Open images and metadata blocks, whose text is not shown.
    hidden: usize,
    table: Option<Table>,
    /// The raw HTML of the block being read: a tag or a comment may span its lines, so the
    /// block's tags are taken off all at once, at its end.
    html_block: Option<String>,
}

#[derive(Default)]
struct Table {
    rows: Vec<Vec<String>>,
    cell: Option<String>,
}

impl Renderer {
    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) | Event::Code(text) => self.text(&text),
            Event::InlineMath(text) | Event::DisplayMath(text) => self.text(&text),
            Event::Html(html) => match &mut self.html_block {
                Some(block) => block.push_str(&html),
                None => self.text(&strip_tags(&html)),
            },
            Event::InlineHtml(html) => self.text(&strip_tags(&html)),
            Event::SoftBreak => self.soft_break = true,
            Event::HardBreak => self.line_break(),
            Event::Rule => self.paragraph_break(),
            Event::FootnoteReference(_) | Event::TaskListMarker(_) => {}
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Heading { level, .. } => {
                self.paragraph_break();
                self.out.push_str(&"#".repeat(heading_depth(level)));
                self.out.push(' ');
            }
            Tag::HtmlBlock => {
                if !self.in_item() {
                    self.paragraph_break();
                }
                self.html_block = Some(String::new());
            }
            Tag::Paragraph | Tag::BlockQuote(_) if !self.in_item() => {
                self.paragraph_break();
            }
            // Fenced, so a `# comment` in code is never read as a heading; the chunker drops
            // the fences.
            Tag::CodeBlock(_) => {
                self.paragraph_break();
                self.out.push_str("```\n");
            }
            Tag::List(first) => {
                self.line_break();
                self.lists.push(first);
            }
            Tag::Item => {
                self.line_break();
                if let Some(Some(number)) = self.lists.last_mut() {
                    self.out.push_str(&format!("{number}. "));
                    *number += 1;
                }
            }
            Tag::Table(_) => {
                self.paragraph_break();
                self.table = Some(Table::default());
            }
            Tag::TableHead | Tag::TableRow => {
                if let Some(table) = &mut self.table {
                    table.rows.push(Vec::new());
                }
            }
            Tag::TableCell => {
                if let Some(table) = &mut self.table {
                    table.cell = Some(String::new());
                }
            }
            Tag::Image { .. } | Tag::MetadataBlock(_) => self.hidden += 1,
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::CodeBlock => {
                self.line_break();
                self.out.push_str("```");
                self.paragraph_break();
            }
            TagEnd::HtmlBlock => {
                let block = self.html_block.take().unwrap_or_default();
                for part in fragment_parts(&block) {
                    match part {
                        FragmentPart::Text(text) => self.html_text(&text),
                        FragmentPart::Table(lines) => self.html_table(&lines),
                    }
                }
                self.end(TagEnd::Paragraph);
            }
            TagEnd::Heading(_) | TagEnd::Paragraph => {
                if self.in_item() {
                    self.line_break();
                } else {
                    self.paragraph_break();
                }
            }
            TagEnd::List(_) => {
                self.lists.pop();
                self.line_break();
            }
            TagEnd::Item => self.line_break(),
            TagEnd::TableCell => {
                if let Some(table) = &mut self.table {
                    let cell = table.cell.take().unwrap_or_default();
                    if let Some(row) = table.rows.last_mut() {
                        row.push(cell);
                    }
                }
            }
            TagEnd::Table => {
                if let Some(table) = self.table.take() {
                    self.out.push_str(&table_lines(&table.rows));
                    self.paragraph_break();
                }
            }
            TagEnd::Image | TagEnd::MetadataBlock(_) => self.hidden = self.hidden.saturating_sub(1),
            _ => {}
        }
    }

    fn in_item(&self) -> bool {
        !self.lists.is_empty()
    }

    fn text(&mut self, text: &str) {
        if self.hidden > 0 {
            return;
        }
        let target = match self.table.as_mut().and_then(|table| table.cell.as_mut()) {
            Some(cell) => cell,
            None => &mut self.out,
        };
        if std::mem::take(&mut self.soft_break) {
            let before = target.chars().next_back();
            let after = text.chars().next();
            let joined = before
                .zip(after)
                .is_some_and(|(before, after)| is_japanese_char(before) && is_japanese_char(after));
            if !joined && before.is_some_and(|c| !c.is_whitespace()) {
                target.push(' ');
            }
        }
        target.push_str(text);
    }

    /// An HTML block's text: its lines joined as a paragraph's are, its paragraphs (`<p>`,
    /// `<br>`, a blank line) kept apart.
    fn html_text(&mut self, text: &str) {
        for (index, paragraph) in text.split("\n\n").enumerate() {
            if index > 0 {
                self.paragraph_break();
            }
            for line in paragraph
                .lines()
                .map(str::trim)
                .filter(|line| !line.is_empty())
            {
                self.text(line);
                self.soft_break = true;
            }
            self.soft_break = false;
        }
    }

    /// An HTML table's lines ([`crate::structure::rows`]), a row a line, apart from the text
    /// around them (in a list item, on lines of their own under it).
    fn html_table(&mut self, lines: &str) {
        if lines.is_empty() {
            return;
        }
        self.end(TagEnd::Paragraph);
        self.out.push_str(lines);
        self.end(TagEnd::Paragraph);
    }

    fn line_break(&mut self) {
        self.soft_break = false;
        if !self.out.is_empty() && !self.out.ends_with('\n') {
            self.out.push('\n');
        }
    }

    fn paragraph_break(&mut self) {
        self.line_break();
        if !self.out.is_empty() && !self.out.ends_with("\n\n") {
            self.out.push('\n');
        }
    }
}

fn heading_depth(level: HeadingLevel) -> usize {
    level as usize
}

/// Trailing spaces off every line, at most one blank line in a row, none at either end.
fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = 0;
    for line in text.lines() {
        let line = line.trim_end();
        if line.trim().is_empty() {
            blank += 1;
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank > 0 { "\n\n" } else { "\n" });
        }
        blank = 0;
        out.push_str(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_never_reaches_the_text() {
        let page = "# Expenses\n\nClaim **within 30 days** via [Expensify](https://x.io) \
                    or `ramp`.\n![chart](c.png)\n\n<!-- old policy -->\n\n\
                    <details><summary>Why?</summary>\n\nAudits.\n\n</details>\n\n\
                    **Q: Can I claim Wi-Fi?**\nYes, up to $50.\n";
        assert_eq!(
            render(page),
            "# Expenses\n\nClaim within 30 days via Expensify or ramp.\n\nWhy?\n\nAudits.\n\n\
             Q: Can I claim Wi-Fi? Yes, up to $50."
        );
    }

    #[test]
    fn an_html_block_whose_tags_span_lines_reads_as_its_text() {
        let page = "Licence:\n\n<p xmlns:dct=\"http://purl.org/dc/terms/\">\n  <a rel=\"license\"\n     \
                    href=\"http://creativecommons.org/\">\n    <img src=\"http://i.cc.org/88x31.png\" \
                    alt=\"CC0\" />\n  </a>\n  To the extent possible under law,\n  <span\n      \
                    content=\"JP\">日本</span>.\n<!-- a comment\n over lines -->\n</p>\n\nAfter.";
        assert_eq!(
            render(page),
            "Licence:\n\nTo the extent possible under law, 日本.\n\nAfter."
        );
    }

    #[test]
    fn a_table_row_carries_its_header() {
        let page = "## Limits\n\n| Plan | Requests per minute |\n| --- | ---: |\n\
                    | **Business** | 600 |\n| Starter | 100 |\n\nAfter.";
        assert_eq!(
            render(page),
            "## Limits\n\nPlan: Business · Requests per minute: 600\n\
             Plan: Starter · Requests per minute: 100\n\nAfter."
        );
    }

    #[test]
    fn an_html_table_in_a_list_item_is_read_as_rows_under_its_header() {
        let page = "1. 次のとおり年次有給休暇を与える。\n    1. 週5日以上の従業員\n        <table>\n\
                    \x20           <tr>\n                <td>0.5年</td>\n                <td>1.5年</td>\n\
                    \x20               <td>2.5年</td>\n            </tr>\n            <tr>\n\
                    \x20               <td>10日</td>\n                <td>11日</td>\n\
                    \x20               <td>12日</td>\n            </tr>\n        </table>\n\
                    \x20   2. 週4日の従業員\n";
        assert_eq!(
            render(page),
            "1. 次のとおり年次有給休暇を与える。\n1. 週5日以上の従業員\n0.5年: 10日 · 1.5年: 11日 · 2.5年: 12日\n\
             2. 週4日の従業員"
        );
    }

    #[test]
    fn lists_are_one_line_an_item_numbered_when_ordered() {
        let page = "Steps:\n\n1. Open *Settings*.\n2. Click **Save**.\n   - nested\n\n\
                    - [x] done\n- plain\n";
        assert_eq!(
            render(page),
            "Steps:\n\n1. Open Settings.\n2. Click Save.\nnested\ndone\nplain"
        );
    }

    #[test]
    fn soft_breaks_join_japanese_without_a_space() {
        assert_eq!(
            render("有給休暇は入社日に\n付与されます。\nSee the\nguide."),
            "有給休暇は入社日に付与されます。 See the guide."
        );
    }

    #[test]
    fn code_keeps_its_lines_between_plain_fences() {
        assert_eq!(
            render("Run:\n\n```sh\n# build\nmake\n```\n\n    indented\n"),
            "Run:\n\n```\n# build\nmake\n```\n\n```\nindented\n```"
        );
    }
}
