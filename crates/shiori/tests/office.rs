//! End to end: a folder of PDF, Word, Excel and PowerPoint files (written by the test itself) is
//! indexed with the CLI; table cells, pages and slides are found and shown with their numbers,
//! and each bad file is reported by path while the rest is indexed.

mod common;

use common::*;
use serde_json::Value;
use shiori_ingest::samples::{self, Block, Slide};
use std::path::Path;

fn write(dir: &Path, name: &str, bytes: &[u8]) {
    std::fs::write(dir.join(name), bytes).unwrap();
}

/// A sheet of a million formatted but empty cells around two rows of values.
fn sparse_sheet() -> String {
    let mut xml = String::from(
        r#"<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><dimension ref="A1:XFD1048576"/><sheetData>"#,
    );
    xml.push_str(r#"<row r="1"><c r="A1" t="inlineStr"><is><t>Warehouse</t></is></c><c r="B1" t="inlineStr"><is><t>Capacity</t></is></c></row>"#);
    for row in 2..=1001 {
        xml.push_str(&format!(r#"<row r="{row}">"#));
        for column in 0..1000 {
            let name = samples::column_name(column);
            xml.push_str(&format!(r#"<c r="{name}{row}" s="1"/>"#));
        }
        xml.push_str("</row>");
    }
    xml.push_str(r#"<row r="1048576"><c r="A1048576" t="inlineStr"><is><t>Kobe depot</t></is></c><c r="B1048576" t="inlineStr"><is><t>12000 pallets</t></is></c></row>"#);
    xml.push_str("</sheetData></worksheet>");
    xml
}

fn write_corpus(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let report = samples::pdf(&[
        "Annual Report 2025\nThis report covers the results of the company.",
        "Safety\nThe Kyoto plant reached 400 days without an accident.",
        "海外展開\nシンガポール支社は2026年に開設予定です。",
    ])
    .unwrap();
    write(dir, "report.pdf", &report);
    let handbook = samples::docx(&[
        Block::Heading(1, "Employee Handbook"),
        Block::Heading(2, "Parking"),
        Block::Paragraph("Parking permits are issued by the facilities team."),
        Block::Heading(2, "Meal allowance"),
        Block::Table(vec![
            vec!["City", "Daily meal allowance"],
            vec!["Tokyo", "5,000 yen"],
            vec!["Fukuoka", "3,500 yen"],
        ]),
    ])
    .unwrap();
    write(dir, "handbook.docx", &handbook);
    let plans = samples::xlsx(&[
        (
            "Prices",
            vec![
                vec!["Plan", "Monthly fee (USD)", "Seats"],
                vec!["Starter", "12", "3"],
                vec!["Business", "79", "25"],
                vec!["Enterprise", "480", "unlimited"],
            ],
        ),
        (
            "Regions",
            vec![vec!["Region", "Manager"], vec!["Kansai", "Aiko Tanaka"]],
        ),
    ])
    .unwrap();
    write(dir, "plans.xlsx", &plans);
    let deck = samples::pptx(
        &[
            Slide {
                title: "Kickoff",
                body: vec!["Welcome to the project"],
                notes: None,
            },
            Slide {
                title: "Launch timeline",
                body: vec!["The beta opens on 3 March", "General availability in June"],
                notes: Some("Stress that the beta is invite-only."),
            },
        ],
        &[1, 2],
    )
    .unwrap();
    write(dir, "deck.pptx", &deck);
    let sparse = samples::xlsx_with_sheet_xml(&[("Depots", sparse_sheet())]).unwrap();
    write(dir, "depots.xlsx", &sparse);

    write(
        dir,
        "locked.pdf",
        &samples::encrypted_pdf(&["Secret merger plans"], "hunter2").unwrap(),
    );
    write(dir, "corrupt.pdf", &report[..report.len() / 3]);
    let not_office = samples::zip_parts(&[("photo-list.txt", "beach.jpg")]).unwrap();
    write(dir, "photos.docx", &not_office);
    write(dir, "empty.docx", b"");
}

fn search(data: &Path, query: &str, mode: &str) -> Vec<Value> {
    run_json(data, &["search", query, "--mode", mode])["hits"]
        .as_array()
        .unwrap()
        .clone()
}

fn text_output(data: &Path, args: &[&str]) -> String {
    let output = run(data, args);
    assert!(
        output.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn indexes_office_files_finds_table_cells_and_shows_pages_and_slides() {
    let work = tempfile::tempdir().unwrap();
    let corpus = work.path().join("corpus");
    write_corpus(&corpus);
    let data = work.path().join("data");

    let report = index_with_failures(&data, &corpus);
    // The blank Word file is read as holding nothing, and said to be (a warning).
    assert_eq!(report["files_indexed"], 6, "{report}");
    assert_eq!(
        report["warnings"][0]["path"], "corpus/empty.docx",
        "{report}"
    );
    assert_eq!(
        report["warnings"][0]["reason"], "file is empty: nothing in it to index",
        "{report}"
    );
    // 3 pages + 1 Word document + 2 sheets + 2 slides + 1 sheet.
    assert_eq!(report["documents"], 9, "{report}");
    let mut failures: Vec<(String, String)> = report["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let path = f["path"].as_str().unwrap();
            let name = path.rsplit('/').next().unwrap().to_string();
            (name, f["reason"].as_str().unwrap().to_string())
        })
        .collect();
    failures.sort();
    let expected = [
        ("corrupt.pdf", "not a readable PDF"),
        ("locked.pdf", "encrypted PDF"),
        (
            "photos.docx",
            "not a Word (.docx) file (the zip has no word/document.xml)",
        ),
    ];
    assert_eq!(failures.len(), expected.len(), "{failures:?}");
    for ((name, reason), (expected_name, expected_reason)) in failures.iter().zip(expected) {
        assert_eq!(name, expected_name);
        assert!(reason.contains(expected_reason), "{name}: {reason}");
    }
    let stats = run_json(&data, &["stats"]);
    assert_eq!(
        stats["files"], 6,
        "nothing of the bad files is stored, the blank one holds nothing: {stats}"
    );
    assert_eq!(stats["documents"], 9, "{stats}");

    for mode in ["bm25", "hybrid"] {
        let hits = search(&data, "monthly fee of the Enterprise plan", mode);
        let top = &hits[0];
        assert!(
            top["doc_id"]
                .as_str()
                .unwrap()
                .ends_with("plans.xlsx#sheet1"),
            "{mode}: {hits:?}"
        );
        let text = top["text"].as_str().unwrap();
        assert!(
            text.lines().all(|row| row.starts_with("Plan: ")),
            "every row carries its header: {text}"
        );
        assert!(
            text.contains("Plan: Enterprise · Monthly fee (USD): 480 · Seats: unlimited"),
            "{text}"
        );
        assert!(top["source"]
            .as_str()
            .unwrap()
            .ends_with("plans.xlsx sheet Prices"));

        let hits = search(&data, "daily meal allowance in Fukuoka", mode);
        let text = hits[0]["text"].as_str().unwrap();
        assert!(
            text.contains("City: Fukuoka · Daily meal allowance: 3,500 yen"),
            "{mode}: {hits:?}"
        );

        let hits = search(&data, "Kobe depot capacity", mode);
        assert!(
            hits[0]["source"]
                .as_str()
                .unwrap()
                .ends_with("depots.xlsx sheet Depots"),
            "{mode}: {hits:?}"
        );
    }

    let answer = text_output(
        &data,
        &[
            "ask",
            "How many days without an accident did the Kyoto plant reach?",
        ],
    );
    assert!(answer.contains("400 days"), "{answer}");
    assert!(answer.contains("report.pdf p.2"), "{answer}");

    let japanese = search(&data, "シンガポール支社はいつ開設されますか", "hybrid");
    assert!(
        japanese[0]["source"]
            .as_str()
            .unwrap()
            .ends_with("report.pdf p.3"),
        "{japanese:?}"
    );

    let slides = text_output(&data, &["search", "When does the beta open?"]);
    let first = slides.lines().next().unwrap_or_default();
    assert!(first.contains("deck.pptx slide 2"), "{slides}");
    assert!(
        slides.contains("invite-only"),
        "notes are indexed: {slides}"
    );
}
