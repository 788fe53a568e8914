//! A workbook of a megabyte or so whose one shared string unpacks to 512 MiB fails alone before
//! calamine reads it (issue 48, item 4).

mod bombs;

use std::io::{Cursor, Write};
use zip::write::SimpleFileOptions;
use zip::ZipWriter;

const MIB: usize = 1024 * 1024;
const SHEET_NS: &str = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";
const REL_NS: &str = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
const PACKAGE_REL_NS: &str = "http://schemas.openxmlformats.org/package/2006/relationships";

/// A workbook with one cell, which shows shared string 0: 512 MiB of one letter.
fn shared_string_bomb() -> Vec<u8> {
    let mut zip = ZipWriter::new(Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default();
    let mut part = |name: &str, xml: &str| {
        zip.start_file(name, options).expect("part");
        zip.write_all(xml.as_bytes()).expect("write");
    };
    part(
        "[Content_Types].xml",
        r#"<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/></Types>"#,
    );
    part(
        "_rels/.rels",
        &format!(
            r#"<Relationships xmlns="{PACKAGE_REL_NS}"><Relationship Id="rId1" Type="{REL_NS}/officeDocument" Target="xl/workbook.xml"/></Relationships>"#
        ),
    );
    part(
        "xl/workbook.xml",
        &format!(
            r#"<workbook xmlns="{SHEET_NS}" xmlns:r="{REL_NS}"><sheets><sheet name="Data" sheetId="1" r:id="rId1"/></sheets></workbook>"#
        ),
    );
    part(
        "xl/_rels/workbook.xml.rels",
        &format!(
            r#"<Relationships xmlns="{PACKAGE_REL_NS}"><Relationship Id="rId1" Type="{REL_NS}/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="{REL_NS}/sharedStrings" Target="sharedStrings.xml"/></Relationships>"#
        ),
    );
    part(
        "xl/worksheets/sheet1.xml",
        &format!(
            r#"<worksheet xmlns="{SHEET_NS}"><sheetData><row r="1"><c r="A1" t="s"><v>0</v></c></row></sheetData></worksheet>"#
        ),
    );
    part(
        "xl/sharedStrings.xml",
        &format!(r#"<sst xmlns="{SHEET_NS}" count="1" uniqueCount="1"><si><t>"#),
    );
    let letters = vec![b'a'; MIB];
    for _ in 0..512 {
        zip.write_all(&letters).expect("write");
    }
    zip.write_all(b"</t></si></sst>").expect("write");
    zip.finish().expect("zip").into_inner()
}

#[test]
fn a_workbook_with_a_huge_shared_string_fails_alone() {
    let bomb = shared_string_bomb();
    assert!(bomb.len() < 2 * MIB, "{} bytes", bomb.len());
    bombs::assert_fails_alone("strings.xlsx", &bomb, "unpacks to more than");
}
