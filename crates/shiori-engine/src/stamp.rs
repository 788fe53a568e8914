//! What the indexer remembers of a file to tell whether it must read it again: its content
//! hash, stamped with the reader that read it and the groups it was given.

use shiori_ingest::READER;

/// The file's content hash, followed by the reader that reads it ([`shiori_ingest::READER`])
/// and the groups it is given: a new reader, or a change of its groups alone (its
/// `.NAME.groups`, its project's `groups`), indexes it again.
pub(crate) fn stamped_hash(mut hash: String, groups: [Option<&str>; 2]) -> String {
    hash.push('@');
    hash.push_str(READER);
    for groups in groups.into_iter().flatten() {
        hash.push('+');
        hash.push_str(groups);
    }
    hash
}

/// Whether a stored file's stamped hash was made by this version's reader: one made by an
/// earlier reader (or before readers were stamped) is read again even when the file is as it
/// was.
pub(crate) fn read_by_this_reader(stamped: &str) -> bool {
    let hash = stamped.split('+').next().unwrap_or_default();
    hash.rsplit_once('@')
        .is_some_and(|(_, reader)| reader == READER)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hash_carries_its_reader_before_its_groups() {
        let stamped = stamped_hash("abc".into(), [Some("hr"), None]);
        assert_eq!(stamped, format!("abc@{READER}+hr"));
        assert!(read_by_this_reader(&stamped));
        assert!(read_by_this_reader(&format!("partial:abc@{READER}")));
        assert!(
            !read_by_this_reader("abc+hr"),
            "stored before readers were stamped"
        );
        assert!(!read_by_this_reader("abc@1"), "an earlier reader");
    }
}
