//! A Word file of tens of kilobytes whose `document.xml` (under the unpacking budget) holds
//! 40 MB of short paragraphs fails alone on the text budget (issue 48, item 4: such a file made
//! 358,930 chunks and held the write lock for a quarter of an hour).

mod bombs;

use shiori_ingest::samples::{self, Block};

#[test]
fn a_word_file_of_endless_short_paragraphs_fails_alone() {
    let paragraph =
        "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor \
                     incididunt ut labore.";
    let blocks: Vec<Block<'_>> = (0..400_000).map(|_| Block::Paragraph(paragraph)).collect();
    let bomb = samples::docx(&blocks).expect("docx");
    assert!(bomb.len() < 1024 * 1024, "{} bytes", bomb.len());
    bombs::assert_fails_alone("paragraphs.docx", &bomb, "MiB of text");
}
