//! Table rows as units that carry their header: `Plan: Business · Requests per minute: 600`,
//! one line a row, so a chunk, a quoted row or a search hit says what each value means. The
//! loaders of every format with tables (Markdown, HTML, DOCX, XLSX, PPTX) render rows here.

/// Between the cells of a row.
pub(crate) const CELL_SEPARATOR: &str = " · ";

/// The body rows of a table whose first row is its header, one line each. A cell reads
/// `Header: value`; an empty value is left out, and so is a row with no value at all. A table
/// of one row has no header to give it: its cells are listed as they are.
pub(crate) fn table_lines(rows: &[Vec<String>]) -> String {
    let Some((header, body)) = rows.split_first() else {
        return String::new();
    };
    if body.is_empty() {
        return row_line(&[], header);
    }
    body.iter()
        .map(|row| row_line(header, row))
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The rows of a table with no header row whose rows are each a name and its value (an HTML
/// table of `<td>` pairs: `Point of contact | Dave Lamb`), one `name: value` line each. Such a
/// table's first row is a pair like the others, not the names of its columns.
fn pair_lines(rows: &[Vec<String>]) -> String {
    rows.iter()
        .filter_map(|row| match row.as_slice() {
            [name, value] => Some(row_line(
                std::slice::from_ref(name),
                std::slice::from_ref(value),
            )),
            _ => None,
        })
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// An HTML table as lines: a row per line, each value with its column's name, or each name
/// with its value when the table has no `<th>` (`headed`) and its rows are pairs.
pub(crate) fn html_table_lines(rows: &[Vec<String>], headed: bool) -> String {
    if !headed && are_pairs(rows) {
        pair_lines(rows)
    } else {
        table_lines(rows)
    }
}

/// Whether every row of `rows` (at least two) is a name and a value.
fn are_pairs(rows: &[Vec<String>]) -> bool {
    rows.len() > 1 && rows.iter().all(|row| row.len() == 2)
}

/// One row under `header`; see [`table_lines`].
pub(crate) fn row_line(header: &[String], row: &[String]) -> String {
    let cells: Vec<String> = row
        .iter()
        .enumerate()
        .filter_map(|(index, value)| {
            let value = flat(value);
            if value.is_empty() {
                return None;
            }
            let name = header.get(index).map(|name| flat(name)).unwrap_or_default();
            Some(match name.is_empty() || name == value {
                true => value,
                false => format!("{name}: {value}"),
            })
        })
        .collect();
    cells.join(CELL_SEPARATOR)
}

/// A cell on one line: its own line breaks and runs of spaces become single spaces.
fn flat(cell: &str) -> String {
    cell.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(table: &[&[&str]]) -> Vec<Vec<String>> {
        table
            .iter()
            .map(|row| row.iter().map(|cell| cell.to_string()).collect())
            .collect()
    }

    #[test]
    fn each_row_carries_its_header() {
        let table = rows(&[
            &["Plan", "Requests per minute", "Note"],
            &["Business", "600", ""],
            &["Starter", "100", "per\nkey"],
            &["", "", ""],
            &["Trial", "10", "", "extra"],
        ]);
        assert_eq!(
            table_lines(&table),
            "Plan: Business · Requests per minute: 600\n\
             Plan: Starter · Requests per minute: 100 · Note: per key\n\
             Plan: Trial · Requests per minute: 10 · extra"
        );
    }

    #[test]
    fn a_table_of_pairs_reads_each_name_with_its_value() {
        let table = rows(&[
            &["Location", "230 S. Dearborn St., 35th floor"],
            &["Point of contact", "Dave Lamb"],
            &["Slack channel", ""],
        ]);
        assert!(are_pairs(&table));
        assert_eq!(
            pair_lines(&table),
            "Location: 230 S. Dearborn St., 35th floor\nPoint of contact: Dave Lamb"
        );
        assert!(!are_pairs(&table[..1]), "one row is no table of pairs");
        assert!(!are_pairs(&rows(&[&["a", "b"], &["c", "d", "e"]])));
    }

    #[test]
    fn a_lone_row_or_no_row() {
        assert_eq!(table_lines(&rows(&[&["a", "b"]])), "a · b");
        assert_eq!(table_lines(&[]), "");
    }
}
