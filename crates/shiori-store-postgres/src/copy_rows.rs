//! Rows for `COPY … FROM STDIN` in PostgreSQL's text format: the bulk path for chunk rows when
//! no term rows need the keys an `INSERT … RETURNING` gives back.

use crate::PostgresError;
use postgres::Transaction;
use std::io::Write as _;

/// Rows being written, tab-separated columns, one row per line.
#[derive(Default)]
pub(crate) struct CopyRows {
    buffer: String,
    at_row_start: bool,
    rows: usize,
}

impl CopyRows {
    pub(crate) fn new() -> CopyRows {
        CopyRows {
            at_row_start: true,
            ..CopyRows::default()
        }
    }

    fn separate(&mut self) {
        if !std::mem::replace(&mut self.at_row_start, false) {
            self.buffer.push('\t');
        }
    }

    /// A text column; the format's escapes keep tabs, line ends and backslashes in the value.
    pub(crate) fn text(&mut self, value: &str) -> &mut CopyRows {
        self.separate();
        for c in value.chars() {
            match c {
                '\\' => self.buffer.push_str("\\\\"),
                '\t' => self.buffer.push_str("\\t"),
                '\n' => self.buffer.push_str("\\n"),
                '\r' => self.buffer.push_str("\\r"),
                c => self.buffer.push(c),
            }
        }
        self
    }

    /// A number column.
    pub(crate) fn number(&mut self, value: i64) -> &mut CopyRows {
        self.separate();
        self.buffer.push_str(&value.to_string());
        self
    }

    pub(crate) fn end_row(&mut self) {
        self.buffer.push('\n');
        self.at_row_start = true;
        self.rows += 1;
    }

    /// Sends the rows with `copy` (`COPY table (columns) FROM STDIN`); returns how many.
    pub(crate) fn send(
        self,
        transaction: &mut Transaction,
        copy: &str,
    ) -> Result<usize, PostgresError> {
        let mut writer = transaction.copy_in(copy)?;
        writer
            .write_all(self.buffer.as_bytes())
            .map_err(PostgresError::Copy)?;
        writer.finish()?;
        Ok(self.rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_what_the_text_format_would_read_as_separators() {
        let mut rows = CopyRows::new();
        rows.text("a\tb\\c\nd\re").number(-7);
        rows.end_row();
        rows.text("x").number(1);
        rows.end_row();
        assert_eq!(rows.buffer, "a\\tb\\\\c\\nd\\re\t-7\nx\t1\n");
        assert_eq!(rows.rows, 2);
    }
}
