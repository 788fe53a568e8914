use super::records::failure_at;
use super::{file_stem, part_document, LoadedFile};
use crate::error::IngestError;
use crate::limits::Unpacked;
use crate::normalize::normalize;
use crate::structure::rows::table_lines;
use calamine::{DataRef, Reader, Xlsx, XlsxError};
use std::collections::BTreeMap;
use std::io::Cursor;
use std::path::Path;
use zip::ZipArchive;

/// Cells with a value kept per sheet: bounds memory on a pathological sheet while leaving room
/// for any sheet a person would ask questions about.
const MAX_SHEET_CELLS: usize = 2_000_000;
/// Excel's 1900 date system counts days from 1899-12-30 (its phantom 1900-02-29 included).
const EXCEL_EPOCH_DAYS_BEFORE_UNIX: f64 = 25_569.0;
const SECONDS_PER_DAY: f64 = 86_400.0;

/// An Excel workbook, one document per sheet with values: one line per row, each cell named by
/// the sheet's first row with values (`Plan: Pro · Monthly fee: 30.5`), so every chunk and every
/// quoted row says what its values mean. Only cells
/// with values are read, streamed from the sheet XML, so a sheet of a million formatted but
/// empty cells costs a scan, not a grid. A bad sheet fails alone.
pub(super) fn load(path: &Path, bytes: Vec<u8>, modified: i64) -> Result<LoadedFile, IngestError> {
    if bytes.is_empty() {
        return Err(IngestError::Empty {
            path: path.to_path_buf(),
        });
    }
    check_unpacked(path, &bytes)?;
    let mut workbook = Xlsx::new(Cursor::new(bytes)).map_err(|err| IngestError::Parse {
        path: path.to_path_buf(),
        message: format!("not an Excel (.xlsx) workbook: {err}"),
    })?;
    let stem = file_stem(path);
    let mut loaded = LoadedFile::default();
    for (index, name) in workbook.sheet_names().iter().enumerate() {
        let rows = match sheet_rows(&mut workbook, name) {
            Ok(rows) => rows,
            Err(reason) => {
                let failure = failure_at(path, &format!("sheet {name:?}"), reason);
                loaded.record_failures.push(failure);
                continue;
            }
        };
        let text = normalize(&table_lines(&rows));
        if text.is_empty() {
            continue;
        }
        let number = index + 1;
        let mut document = part_document(
            path,
            &format!("sheet{number}"),
            &format!("sheet {name}"),
            format!("{stem}: {name}"),
            text,
            "xlsx",
            modified,
        );
        document.metadata.insert("sheet".to_owned(), name.clone());
        document
            .metadata
            .insert("sheet_number".to_owned(), number.to_string());
        loaded.documents.push(document);
    }
    Ok(loaded)
}

/// Unpacks every XML part of the workbook once, only counting, before calamine reads any: it
/// reads the shared strings whole into memory, and the sizes a zip declares can lie. A package
/// that is no zip, or a part that does not unpack, is left for calamine to report.
fn check_unpacked(path: &Path, bytes: &[u8]) -> Result<(), IngestError> {
    let Ok(mut archive) = ZipArchive::new(Cursor::new(bytes)) else {
        return Ok(());
    };
    let mut unpacked = Unpacked::new();
    for index in 0..archive.len() {
        let Ok(part) = archive.by_index(index) else {
            continue;
        };
        // Pictures and other media are never read; a name that does not decode is counted.
        let xml = part.name().map_or(true, |name| {
            name.ends_with(".xml") || name.ends_with(".rels")
        });
        if !xml {
            continue;
        }
        if let Err(budget) = unpacked.measure(part) {
            return Err(IngestError::OverBudget {
                path: path.to_path_buf(),
                budget,
            });
        }
    }
    Ok(())
}

/// Why a sheet's cells could not be read.
#[derive(Debug, thiserror::Error)]
enum SheetError {
    #[error(transparent)]
    Xlsx(#[from] XlsxError),
    #[error("more than {MAX_SHEET_CELLS} cells with values")]
    TooManyCells,
}

/// The sheet's rows with values, each holding only the columns that have a value somewhere.
fn sheet_rows(
    workbook: &mut Xlsx<Cursor<Vec<u8>>>,
    name: &str,
) -> Result<Vec<Vec<String>>, SheetError> {
    let mut reader = match workbook.worksheet_cells_reader(name) {
        Ok(reader) => reader,
        // A chart sheet, or a worksheet written as `<sheetData/>`: no cells to read.
        Err(XlsxError::NotAWorksheet(_)) => return Ok(Vec::new()),
        Err(err) => return Err(err.into()),
    };
    let mut cells: BTreeMap<u32, BTreeMap<u32, String>> = BTreeMap::new();
    let mut count = 0usize;
    while let Some(cell) = reader.next_cell()? {
        let Some(value) = cell_text(cell.get_value()) else {
            continue;
        };
        count += 1;
        if count > MAX_SHEET_CELLS {
            return Err(SheetError::TooManyCells);
        }
        let (row, column) = cell.get_position();
        cells.entry(row).or_default().insert(column, value);
    }
    let mut columns: Vec<u32> = cells.values().flat_map(|row| row.keys().copied()).collect();
    columns.sort_unstable();
    columns.dedup();
    Ok(cells
        .into_values()
        .map(|row| {
            columns
                .iter()
                .map(|column| row.get(column).cloned().unwrap_or_default())
                .collect()
        })
        .collect())
}

fn cell_text(value: &DataRef<'_>) -> Option<String> {
    let text = match value {
        DataRef::Empty => return None,
        DataRef::String(text) | DataRef::DateTimeIso(text) | DataRef::DurationIso(text) => {
            text.clone()
        }
        DataRef::SharedString(text) => (*text).to_owned(),
        DataRef::Int(number) => number.to_string(),
        DataRef::Float(number) => number.to_string(),
        DataRef::Bool(flag) => flag.to_string(),
        DataRef::DateTime(date) if date.is_datetime() => excel_date(date.as_f64()),
        DataRef::DateTime(duration) => duration.as_f64().to_string(),
        DataRef::Error(error) => error.to_string(),
    };
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// An Excel serial date as `YYYY-MM-DD`, with `THH:MM:SS` when it has a time of day.
fn excel_date(serial: f64) -> String {
    let seconds = ((serial - EXCEL_EPOCH_DAYS_BEFORE_UNIX) * SECONDS_PER_DAY).round() as i64;
    let (days, second_of_day) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    let (year, month, day) = civil_from_days(days);
    let date = format!("{year:04}-{month:02}-{day:02}");
    if second_of_day == 0 {
        return date;
    }
    let (hour, minute, second) = (
        second_of_day / 3600,
        second_of_day % 3600 / 60,
        second_of_day % 60,
    );
    format!("{date}T{hour:02}:{minute:02}:{second:02}")
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk_document;
    use crate::load::{load_file, tests::fixture};
    use crate::samples::{self, sheet_xml, xlsx, xlsx_with_sheet_xml};
    use shiori_core::ChunkerConfig;

    #[test]
    fn each_sheet_is_its_rows_with_their_header_and_knows_its_sheet() {
        let dir = tempfile::tempdir().expect("tempdir");
        let bytes = xlsx(&[
            (
                "Prices",
                vec![
                    vec!["Plan", "", "Monthly fee"],
                    vec!["Starter", "", "12"],
                    vec!["Pro", "", "30.5"],
                ],
            ),
            ("Empty", vec![]),
            ("支社", vec![vec!["都市", "人数"], vec!["大阪", "42"]]),
        ])
        .expect("xlsx");
        let path = fixture(&dir, "plans.xlsx", &bytes);
        let loaded = load_file(&path, 5).expect("load");
        assert!(
            loaded.record_failures.is_empty(),
            "{:?}",
            loaded.record_failures
        );
        let [prices, branches] = loaded.documents.as_slice() else {
            panic!("expected two sheets, got {:?}", loaded.documents);
        };
        let name = path.to_string_lossy();
        assert_eq!(
            prices.text,
            "Plan: Starter · Monthly fee: 12\nPlan: Pro · Monthly fee: 30.5"
        );
        assert_eq!(prices.title, "plans: Prices");
        assert_eq!(prices.source, format!("{name} sheet Prices"));
        assert_eq!(prices.doc_id, format!("{name}#sheet1"));
        assert_eq!(prices.metadata["sheet"], "Prices");
        assert_eq!(prices.metadata["doc_type"], "xlsx");
        assert_eq!(branches.metadata["sheet"], "支社");
        assert_eq!(branches.metadata["sheet_number"], "3");
        assert_eq!(branches.text, "都市: 大阪 · 人数: 42");
    }

    #[test]
    fn every_row_of_a_long_sheet_carries_the_header_in_every_chunk() {
        let dir = tempfile::tempdir().expect("tempdir");
        let rows: Vec<Vec<String>> = (0..200)
            .map(|i| vec![format!("item-{i}"), format!("{}", i * 3)])
            .collect();
        let mut table = vec![vec!["Item", "Stock"]];
        table.extend(rows.iter().map(|r| vec![r[0].as_str(), r[1].as_str()]));
        let path = fixture(
            &dir,
            "stock.xlsx",
            &xlsx(&[("Stock", table)]).expect("xlsx"),
        );
        let doc = &load_file(&path, 0).expect("load").documents[0];
        let chunks = chunk_document(doc, &ChunkerConfig::default(), None).unwrap();
        assert!(chunks.len() > 3, "{}", chunks.len());
        for chunk in &chunks {
            assert!(
                chunk.text.lines().all(|row| row.starts_with("Item: item-")),
                "{}",
                chunk.text
            );
            assert!(chunk.text.chars().count() <= 800);
            assert_eq!(chunk.metadata["sheet"], "Stock");
        }
        assert!(chunks
            .last()
            .expect("chunks")
            .text
            .ends_with("Item: item-199 · Stock: 597"));
    }

    #[test]
    fn a_million_empty_cells_cost_a_scan_not_a_grid() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut xml = String::from(
            r#"<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><dimension ref="A1:XFD1048576"/><sheetData>"#,
        );
        xml.push_str(r#"<row r="1"><c r="A1" t="inlineStr"><is><t>Key</t></is></c><c r="XFD1" t="inlineStr"><is><t>Value</t></is></c></row>"#);
        for row in 2..=1000 {
            xml.push_str(&format!(r#"<row r="{row}">"#));
            for column in 0..1000 {
                xml.push_str(&format!(
                    r#"<c r="{}{row}" s="1"/>"#,
                    samples::column_name(column)
                ));
            }
            xml.push_str("</row>");
        }
        xml.push_str(r#"<row r="1048576"><c r="A1048576" t="inlineStr"><is><t>last</t></is></c><c r="XFD1048576"><v>7</v></c></row>"#);
        xml.push_str("</sheetData></worksheet>");
        let bytes = xlsx_with_sheet_xml(&[("Sparse", xml)]).expect("xlsx");
        let path = fixture(&dir, "sparse.xlsx", &bytes);
        let doc = &load_file(&path, 0).expect("load").documents[0];
        assert_eq!(doc.text, "Key: last · Value: 7");
    }

    #[test]
    fn a_broken_sheet_fails_alone() {
        let dir = tempfile::tempdir().expect("tempdir");
        let good = sheet_xml(&[vec!["City"], vec!["Nagoya"]]);
        let broken = r#"<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row r="1"><c r="A1"><v>1</v></x></row></sheetData></worksheet>"#;
        let bytes =
            xlsx_with_sheet_xml(&[("Good", good), ("Bad", broken.to_owned())]).expect("xlsx");
        let path = fixture(&dir, "mixed.xlsx", &bytes);
        let loaded = load_file(&path, 0).expect("load");
        assert_eq!(loaded.documents.len(), 1);
        assert_eq!(loaded.documents[0].metadata["sheet"], "Good");
        let [failure] = loaded.record_failures.as_slice() else {
            panic!("expected one failure, got {:?}", loaded.record_failures);
        };
        assert!(failure.reason.starts_with("sheet \"Bad\": "), "{failure}");
    }

    #[test]
    fn foreign_files_are_not_workbooks() {
        let dir = tempfile::tempdir().expect("tempdir");
        let other = samples::zip_parts(&[("readme.txt", "hello")]).expect("zip");
        for (name, bytes) in [
            ("other.xlsx", other.as_slice()),
            ("text.xlsx", b"a,b\n1,2\n"),
        ] {
            let path = fixture(&dir, name, bytes);
            let err = load_file(&path, 0).unwrap_err();
            assert!(
                err.to_string()
                    .contains(&format!("{name}: not an Excel (.xlsx) workbook")),
                "{err}"
            );
        }
        let empty = fixture(&dir, "empty.xlsx", b"");
        assert!(matches!(
            load_file(&empty, 0).unwrap_err(),
            IngestError::Empty { .. }
        ));
    }

    #[test]
    fn dates_render_as_iso_dates() {
        assert_eq!(excel_date(45_352.0), "2024-03-01");
        assert_eq!(excel_date(45_352.5), "2024-03-01T12:00:00");
        assert_eq!(excel_date(25_569.0), "1970-01-01");
    }
}
