//! Writes the OCR'd copy of a BEIR corpus for `scripts/ocr-retrieval-check.sh`: every record of
//! `corpus.jsonl` whose scan `SCANS/<n>.png` exists (n = its line number) is written with the
//! text the image loader read from the scan in place of its own, keeping `_id` and `title`.
//!
//! `cargo run --release -p shiori-ingest --example ocr_corpus -- CORPUS.jsonl SCANS OUT.jsonl`

use rayon::prelude::*;
use serde_json::Value;
use std::error::Error;
use std::io::Write;
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [corpus, scans, out] = args.as_slice() else {
        return Err("usage: ocr_corpus CORPUS.jsonl SCANS_DIR OUT.jsonl".into());
    };
    let records: Vec<(PathBuf, Value)> = std::fs::read_to_string(corpus)?
        .lines()
        .enumerate()
        .map(|(n, line)| {
            Ok((
                PathBuf::from(scans).join(format!("{n}.png")),
                serde_json::from_str(line)?,
            ))
        })
        .collect::<Result<Vec<_>, serde_json::Error>>()?
        .into_iter()
        .filter(|(scan, _)| scan.exists())
        .collect();
    let read: Vec<Result<Value, shiori_ingest::IngestError>> = records
        .into_par_iter()
        .map(|(scan, mut record)| {
            let loaded = shiori_ingest::load_file(&scan, 0)?;
            let text: Vec<&str> = loaded.documents.iter().map(|d| d.text.as_str()).collect();
            record["text"] = Value::String(text.join("\n"));
            Ok(record)
        })
        .collect();
    let mut writer = std::io::BufWriter::new(std::fs::File::create(out)?);
    let mut written = 0;
    for record in read {
        match record {
            Ok(record) => {
                writeln!(writer, "{record}")?;
                written += 1;
            }
            Err(reason) => eprintln!("{reason}"),
        }
    }
    eprintln!("{written} records written to {out}");
    Ok(())
}
