//! Markdown tables for the loaders of formats with tables (DOCX, XLSX).

/// Renders rows as a Markdown table, the first row as its header. Rows are padded to the widest
/// row so every line has the same number of cells.
pub(super) fn markdown_table(rows: &[Vec<String>]) -> String {
    let width = rows.iter().map(Vec::len).max().unwrap_or(0);
    if width == 0 {
        return String::new();
    }
    let mut lines = Vec::with_capacity(rows.len() + 1);
    for (index, row) in rows.iter().enumerate() {
        lines.push(table_row(row, width));
        if index == 0 {
            lines.push(format!("|{}", " --- |".repeat(width)));
        }
    }
    lines.join("\n")
}

/// One `| a | b |` line; a cell's own pipes and line breaks would break the table, so they are
/// escaped and flattened.
pub(super) fn table_row(cells: &[String], width: usize) -> String {
    let mut line = String::from("|");
    for index in 0..width {
        let cell = cells.get(index).map_or("", String::as_str);
        let flat = cell.split_whitespace().collect::<Vec<_>>().join(" ");
        line.push(' ');
        line.push_str(&flat.replace('|', "\\|"));
        line.push_str(" |");
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(cells: &[&str]) -> Vec<String> {
        cells.iter().map(|c| c.to_string()).collect()
    }

    #[test]
    fn renders_header_separator_and_padded_rows() {
        let rows = [
            row(&["Plan", "Price"]),
            row(&["Pro"]),
            row(&["A|B", "x\ny"]),
        ];
        assert_eq!(
            markdown_table(&rows),
            "| Plan | Price |\n| --- | --- |\n| Pro |  |\n| A\\|B | x y |"
        );
        assert_eq!(markdown_table(&[]), "");
    }
}
