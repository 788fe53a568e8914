use super::recursive;

/// Splits a Markdown table (a header line, a rule line, then rows) between rows, with the header
/// and rule on top of every piece so that each chunk says what its columns mean. A row too long
/// for a piece is split on its own, the header still on top of each part.
pub(super) fn split(text: &str, max: usize) -> Vec<String> {
    let mut lines = text.lines();
    let (Some(header), Some(rule)) = (lines.next(), lines.next()) else {
        return recursive::split(text, max);
    };
    let head = format!("{header}\n{rule}");
    let budget = max.saturating_sub(head.chars().count() + 1);
    if budget == 0 {
        // A header wider than a chunk leaves no room to repeat it.
        return recursive::split(text, max);
    }
    let mut pieces = Vec::new();
    let mut rows = String::new();
    let mut rows_chars = 0;
    for row in lines {
        let row_chars = row.chars().count();
        if !rows.is_empty() && rows_chars + 1 + row_chars > budget {
            pieces.push(format!("{head}\n{rows}"));
            rows.clear();
            rows_chars = 0;
        }
        if row_chars > budget {
            pieces.extend(
                recursive::split(row, budget)
                    .into_iter()
                    .map(|part| format!("{head}\n{part}")),
            );
            continue;
        }
        if !rows.is_empty() {
            rows.push('\n');
            rows_chars += 1;
        }
        rows.push_str(row);
        rows_chars += row_chars;
    }
    if !rows.is_empty() {
        pieces.push(format!("{head}\n{rows}"));
    }
    if pieces.is_empty() {
        pieces.push(text.to_owned());
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_piece_starts_with_the_header() {
        let text = "| Plan | Price |\n| --- | --- |\n| Starter | 12 |\n| Pro | 30 |\n| Team | 99 |";
        let pieces = split(text, 60);
        assert_eq!(
            pieces,
            [
                "| Plan | Price |\n| --- | --- |\n| Starter | 12 |\n| Pro | 30 |",
                "| Plan | Price |\n| --- | --- |\n| Team | 99 |",
            ]
        );
        assert!(pieces.iter().all(|p| p.chars().count() <= 60));
        assert_eq!(split(text, 1000), [text]);
    }

    #[test]
    fn long_rows_split_under_the_header_and_wide_headers_fall_back() {
        let text = "| Note |\n| --- |\n| one two three four five six |";
        let pieces = split(text, 30);
        assert!(pieces.len() > 1, "{pieces:?}");
        for piece in &pieces {
            assert!(piece.starts_with("| Note |\n| --- |\n"), "{piece}");
        }
        let wide = split(text, 10);
        assert!(wide.iter().all(|p| p.chars().count() <= 10), "{wide:?}");
        assert_eq!(split("| Only |\n| --- |", 100), ["| Only |\n| --- |"]);
    }
}
