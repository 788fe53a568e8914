//! What the indexer remembers of a file to tell whether it must read it again: its content
//! hash, stamped with the reader that read it, the section it lies in and the groups it was
//! given.

use shiori_ingest::{content_hash, READER};

/// The file's content hash, followed by the reader that reads it ([`shiori_ingest::READER`]),
/// a hash of its section path ([`shiori_ingest::Sections`]) when it lies in one, and the groups
/// it is given: a new reader, a renamed section (its folder's index page retitled), or a change
/// of its groups alone (its `.NAME.groups`, its project's `groups`), indexes it again.
pub(crate) fn stamped_hash(mut hash: String, section: &str, groups: [Option<&str>; 2]) -> String {
    hash.push('@');
    hash.push_str(READER);
    if !section.is_empty() {
        hash.push('/');
        hash.push_str(&section_stamp(section));
    }
    for groups in groups.into_iter().flatten() {
        hash.push('+');
        hash.push_str(groups);
    }
    hash
}

/// Whether a stored file's stamped hash was made by this version's reader for a file in
/// `section` given `groups`: one made by an earlier reader (or before readers were stamped), in
/// another section or for other groups is read again even when the file is as it was.
pub(crate) fn still_current(stamped: &str, section: &str, groups: [Option<&str>; 2]) -> bool {
    let stamp = stamped_hash(String::new(), section, groups);
    stamped.len() > stamp.len() && stamped.ends_with(&stamp)
}

/// A short hash of a section path: titles may hold any character, the stamp's separators too.
fn section_stamp(section: &str) -> String {
    content_hash(section.as_bytes())[..16].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const HR: [Option<&str>; 2] = [Some("hr"), None];
    const NONE: [Option<&str>; 2] = [None, None];

    #[test]
    fn a_hash_carries_its_reader_before_its_groups() {
        let stamped = stamped_hash("abc".into(), "", HR);
        assert_eq!(stamped, format!("abc@{READER}+hr"));
        assert!(still_current(&stamped, "", HR));
        assert!(still_current(&format!("partial:abc@{READER}"), "", NONE));
        assert!(
            !still_current("abc+hr", "", HR),
            "stored before readers were stamped"
        );
        assert!(!still_current("abc@1", "", NONE), "an earlier reader");
    }

    #[test]
    fn a_file_whose_section_was_retitled_is_read_again() {
        let groups = [Some("hr+it"), None];
        let stamped = stamped_hash("abc".into(), "Acme › HR", groups);
        assert!(stamped.starts_with(&format!("abc@{READER}/")));
        assert!(stamped.ends_with("+hr+it"));
        assert!(still_current(&stamped, "Acme › HR", groups));
        assert!(!still_current(&stamped, "Acme › People", groups));
        assert!(
            !still_current(&stamped, "", groups),
            "its folder's index page went"
        );
        let outside = stamped_hash("abc".into(), "", NONE);
        assert!(!still_current(&outside, "Acme", NONE), "an index page came");
    }

    #[test]
    fn a_file_given_other_groups_is_read_again() {
        let stamped = stamped_hash("abc".into(), "", HR);
        assert!(
            !still_current(&stamped, "", NONE),
            "its groups were taken off"
        );
        assert!(
            !still_current(&stamped, "", [Some("hr"), Some("sales")]),
            "a project holding it now restricts it"
        );
        let open = stamped_hash("abc".into(), "", NONE);
        assert!(!still_current(&open, "", HR), "its sidecar now names hr");
    }
}
