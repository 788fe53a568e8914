//! Writers of small but real PDF, DOCX, XLSX and PPTX files, for tests and for `shiori bench
//! ingest` (which needs PDFs of a chosen size). PDFs set their text in a CID font (Type0,
//! Identity-H, with a ToUnicode map), the way Japanese PDFs are written, so any text survives.

mod office;
mod pdf;

pub use office::{
    column_name, docx, pptx, sheet_xml, word_document, xlsx, xlsx_with_sheet_xml, zip_parts, Block,
    Slide,
};
pub use pdf::{encrypted_pdf, pdf};

use thiserror::Error;

#[derive(Debug, Error)]
pub enum SampleError {
    #[error("writing the zip: {0}")]
    Zip(#[from] zip::result::ZipError),
    #[error("writing the zip: {0}")]
    Io(#[from] std::io::Error),
    #[error("writing the PDF: {0}")]
    Pdf(#[from] lopdf::Error),
}
