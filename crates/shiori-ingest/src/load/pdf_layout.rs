//! A page's text as the PDF places its glyphs: a line where the baseline moves, a space where
//! the gap after a glyph is wider than the glyph's own advance, and a blank line where the gap
//! between two lines is clearly wider than the page's usual one.
//!
//! pdf-extract's own plain-text output takes a glyph the font gives no width for as advancing
//! nothing, so every glyph placed on its own after one came out as a new word (`Tran sit B en
//! efit`, `t i t l e :`), measures an advance without the text's character spacing, and ends
//! every line of a page with a blank one, so no paragraph could be told apart.

use pdf_extract::{MediaBox, OutputDev, OutputError, Transform};

/// A gap wider than this share of the font size after a glyph's advance is a word space: a
/// space glyph is a quarter to a third of the size, kerning and rounding a few hundredths.
const WORD_GAP: f64 = 0.1;

/// How much wider than the line's usual pitch a glyph without a width may be.
const WIDE_GLYPH: f64 = 1.5;

/// A baseline that moves by more than this share of the font size starts a new line.
const LINE_MOVE: f64 = 0.5;

/// A gap between lines this many times the page's usual one separates paragraphs.
const PARAGRAPH_GAP: f64 = 1.5;

struct Glyph {
    x: f64,
    /// Where its advance ends; `None` when the font gives no width for it.
    end: Option<f64>,
    size: f64,
    /// It starts a string the content stream shows (a gap before it may be a space).
    run_start: bool,
    /// Where its characters start in the line's text.
    at: usize,
}

struct Line {
    /// The baseline, growing down the page.
    y: f64,
    /// The glyphs' characters, run together.
    text: String,
    glyphs: Vec<Glyph>,
}

impl Line {
    /// The line's text, a space where a gap after a glyph's advance is a word's.
    fn text(&self) -> String {
        // A glyph without a width (some fonts give none) is taken to advance as far as the
        // widest letters do: half as far again as the line's glyphs usually go from one to the
        // next (an `M` or a `B` is about 1.5 times the average letter of a font).
        let usual = usual_step(self.glyphs.iter().map(|glyph| glyph.x));
        let mut text = String::with_capacity(self.text.len() + self.glyphs.len() / 4);
        for (index, glyph) in self.glyphs.iter().enumerate() {
            let next_at = self
                .glyphs
                .get(index + 1)
                .map_or(self.text.len(), |next| next.at);
            let characters = &self.text[glyph.at..next_at];
            let previous = index.checked_sub(1).map(|before| &self.glyphs[before]);
            if let Some(previous) = previous.filter(|_| glyph.run_start) {
                let end = previous
                    .end
                    .or(usual.map(|pitch| previous.x + pitch * WIDE_GLYPH))
                    .unwrap_or(previous.x);
                let spaced = text.ends_with(' ') || characters.starts_with(' ');
                if !spaced && glyph.x > end + glyph.size * WORD_GAP {
                    text.push(' ');
                }
            }
            text.push_str(characters);
        }
        text
    }
}

/// The text of one page, collected glyph by glyph.
#[derive(Default)]
pub(super) struct LaidOut {
    lines: Vec<Line>,
    /// The next glyph starts a string the content stream shows.
    run_starts: bool,
}

impl LaidOut {
    /// The page's lines, one a line, with a blank line between paragraphs.
    pub(super) fn text(self) -> String {
        let usual = usual_step(self.lines.iter().map(|line| line.y));
        let mut text = String::new();
        for (index, line) in self.lines.iter().enumerate() {
            if index > 0 {
                let gap = line.y - self.lines[index - 1].y;
                let paragraph = usual.is_some_and(|usual| gap > usual * PARAGRAPH_GAP);
                text.push_str(if paragraph { "\n\n" } else { "\n" });
            }
            text.push_str(&line.text());
        }
        text
    }
}

/// The median of the forward steps between consecutive `positions` (a glyph's pitch along a
/// line, a line's gap down a page); `None` without any.
fn usual_step(positions: impl Iterator<Item = f64>) -> Option<f64> {
    let positions: Vec<f64> = positions.collect();
    let mut steps: Vec<f64> = positions
        .windows(2)
        .map(|pair| pair[1] - pair[0])
        .filter(|step| *step > 0.0)
        .collect();
    steps.sort_by(f64::total_cmp);
    steps.get(steps.len() / 2).copied()
}

impl OutputDev for LaidOut {
    fn begin_page(
        &mut self,
        _: u32,
        _: &MediaBox,
        _: Option<(f64, f64, f64, f64)>,
    ) -> Result<(), OutputError> {
        Ok(())
    }

    fn end_page(&mut self) -> Result<(), OutputError> {
        Ok(())
    }

    fn output_character(
        &mut self,
        trm: &Transform,
        width: f64,
        spacing: f64,
        font_size: f64,
        char: &str,
    ) -> Result<(), OutputError> {
        // The size the glyph is drawn at on the page: the text matrix scales the font size.
        let across = font_size * (trm.m11 + trm.m21);
        let up = font_size * (trm.m12 + trm.m22);
        let size = (across * up).abs().sqrt();
        let scale = if font_size == 0.0 {
            0.0
        } else {
            size / font_size
        };
        let (x, y) = (trm.m31, -trm.m32);
        let end = (width > 0.0).then_some(x + (width * font_size + spacing) * scale);
        let run_start = std::mem::take(&mut self.run_starts);
        let same_line = self
            .lines
            .last()
            .is_some_and(|line| (y - line.y).abs() <= size * LINE_MOVE);
        if !same_line {
            self.lines.push(Line {
                y,
                text: String::new(),
                glyphs: Vec::new(),
            });
        }
        let Some(line) = self.lines.last_mut() else {
            return Ok(());
        };
        line.glyphs.push(Glyph {
            x,
            end,
            size,
            run_start,
            at: line.text.len(),
        });
        line.text.push_str(char);
        Ok(())
    }

    fn begin_word(&mut self) -> Result<(), OutputError> {
        self.run_starts = true;
        Ok(())
    }

    fn end_word(&mut self) -> Result<(), OutputError> {
        Ok(())
    }

    fn end_line(&mut self) -> Result<(), OutputError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Shows `text` as the content stream would, one glyph a string, at `size` points from
    /// `(x, y)` (PDF space, growing up); `widths` per glyph in thousandths of the size, 0 for
    /// a glyph the font gives no width for.
    fn show(page: &mut LaidOut, text: &str, widths: &[f64], (mut x, y): (f64, f64), size: f64) {
        for (char, width) in text.chars().zip(widths) {
            page.begin_word().unwrap();
            let trm = Transform::row_major(1.0, 0.0, 0.0, 1.0, x, y);
            page.output_character(&trm, width / 1000.0, 0.0, size, &char.to_string())
                .unwrap();
            page.end_word().unwrap();
            // A glyph the font gives no width for is as wide as a `B` really is.
            let advance = if *width > 0.0 { *width } else { 667.0 };
            x += advance / 1000.0 * size;
        }
    }

    #[test]
    fn glyphs_placed_one_by_one_make_words_even_without_widths() {
        let mut page = LaidOut::default();
        // `n` and `B` have no width: a gap after them is no word space.
        let widths = [611.0, 389.0, 556.0, 0.0, 556.0, 278.0, 333.0];
        show(&mut page, "Transit", &widths, (72.0, 700.0), 20.0);
        show(
            &mut page,
            "Benefit",
            &[0.0, 556.0, 556.0, 556.0, 333.0, 278.0, 333.0],
            (144.0, 700.0),
            20.0,
        );
        assert_eq!(page.text(), "Transit Benefit");
    }

    #[test]
    fn lines_break_where_the_baseline_moves_and_paragraphs_where_the_gap_widens() {
        let mut page = LaidOut::default();
        let widths = [556.0; 4];
        for (index, y) in [700.0, 686.0, 672.0, 640.0, 626.0].into_iter().enumerate() {
            show(&mut page, &format!("l{index}"), &widths, (72.0, y), 10.0);
        }
        assert_eq!(page.text(), "l0\nl1\nl2\n\nl3\nl4");
    }
}
