//! Who may read what. A document names the groups that may read it in its `groups` metadata
//! (none: everyone); a reader is resolved once, at the edge, from the caller's API key, and
//! travels inside [`crate::Filters`] into every search, so the stores enforce it where they
//! read.

use std::collections::BTreeSet;

/// The chunk and document metadata key holding the groups that may read them, comma-separated.
pub const GROUPS_KEY: &str = "groups";

/// What a reader may see.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Access {
    /// The machine's owner and admin keys: every document.
    #[default]
    Everything,
    /// Documents without groups, and those naming at least one of these groups.
    Groups(BTreeSet<String>),
}

impl Access {
    /// Whether a document whose `groups` metadata is `groups` (`None`: no groups) is readable.
    pub fn can_read(&self, groups: Option<&str>) -> bool {
        match (self, groups) {
            (Access::Everything, _) | (_, None) => true,
            (Access::Groups(readable), Some(groups)) => {
                let mut named = split_groups(groups).peekable();
                named.peek().is_none() || named.any(|group| readable.contains(group))
            }
        }
    }

    /// The groups this reader is limited to, `None` when it reads everything.
    pub fn groups(&self) -> Option<&BTreeSet<String>> {
        match self {
            Access::Everything => None,
            Access::Groups(groups) => Some(groups),
        }
    }
}

/// The groups named in a `groups` value, which may be separated by commas, semicolons or spaces
/// (a CSV cell cannot hold a comma-separated list unquoted).
pub fn split_groups(groups: &str) -> impl Iterator<Item = &str> {
    groups
        .split([',', ';', ' '])
        .map(str::trim)
        .filter(|group| !group.is_empty())
}

/// The one form groups are stored, configured and compared in: lowercase, so `HR` in a record
/// and `hr` on a key name the same group instead of silently hiding the record.
pub fn normal_group(group: &str) -> String {
    group.trim().to_lowercase()
}

/// The stored form of a set of groups: normal, sorted, distinct, comma-separated.
pub fn joined_groups<'a>(groups: impl IntoIterator<Item = &'a str>) -> String {
    let distinct: BTreeSet<String> = groups.into_iter().map(normal_group).collect();
    distinct.into_iter().collect::<Vec<_>>().join(",")
}

/// What a document's groups are stored as when the layers that restrict it have no group in
/// common: no key's group (a group name cannot hold `!`), so only readers of everything (admin
/// keys, the machine's owner) read it.
pub const NO_READER_GROUP: &str = "!none";

/// The groups that may read a document, from each layer that may restrict it (its record, its
/// file's `.NAME.groups`, its project), each in stored form; a missing or empty layer restricts
/// nothing. A layer only ever narrows: a reader must be allowed by every restricting layer, so
/// the result is the groups they all name, [`NO_READER_GROUP`] when they share none, and `None`
/// (everyone) only when no layer restricts.
pub fn narrowed_groups<'a>(layers: impl IntoIterator<Item = Option<&'a str>>) -> Option<String> {
    let mut allowed: Option<BTreeSet<&str>> = None;
    for layer in layers.into_iter().flatten() {
        let named: BTreeSet<&str> = split_groups(layer).collect();
        if named.is_empty() {
            continue;
        }
        allowed = Some(match allowed {
            None => named,
            Some(allowed) => allowed.intersection(&named).copied().collect(),
        });
    }
    allowed.map(|groups| {
        if groups.is_empty() {
            NO_READER_GROUP.to_string()
        } else {
            joined_groups(groups)
        }
    })
}

/// Checks that a group name can be used: it must be a plain word, since stores match it inside
/// the comma-separated stored form.
pub fn check_group_name(group: &str) -> Result<(), InvalidGroupName> {
    let valid = !group.is_empty()
        && group
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if valid {
        Ok(())
    } else {
        Err(InvalidGroupName {
            group: group.to_string(),
        })
    }
}

/// A group name that is not a plain word.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("group {group:?} must be letters, digits, '-', '_' or '.' (no spaces or commas)")]
pub struct InvalidGroupName {
    pub group: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn groups(names: &[&str]) -> Access {
        Access::Groups(names.iter().map(|name| name.to_string()).collect())
    }

    #[test]
    fn documents_without_groups_are_everyones() {
        assert!(groups(&["sales"]).can_read(None));
        assert!(groups(&["sales"]).can_read(Some("")));
        assert!(groups(&[]).can_read(None));
    }

    #[test]
    fn a_reader_needs_one_of_the_documents_groups() {
        assert!(groups(&["sales"]).can_read(Some("hr,sales")));
        assert!(groups(&["sales"]).can_read(Some("hr; sales")));
        assert!(!groups(&["sales"]).can_read(Some("hr")));
        assert!(!groups(&["sales"]).can_read(Some("hr,sales-emea")));
        assert!(!groups(&[]).can_read(Some("hr")));
        assert!(Access::Everything.can_read(Some("hr")));
    }

    #[test]
    fn stored_groups_are_sorted_and_distinct() {
        assert_eq!(joined_groups(["sales", "hr", "sales"]), "hr,sales");
        assert_eq!(joined_groups(split_groups("b; a b")), "a,b");
    }

    #[test]
    fn groups_are_compared_in_lowercase() {
        assert_eq!(joined_groups(split_groups("HR, Sales")), "hr,sales");
        assert_eq!(normal_group(" Legal "), "legal");
    }

    #[test]
    fn a_layer_only_narrows_what_the_others_allow() {
        let project = Some("hr,legal");
        assert_eq!(
            narrowed_groups([Some(""), None, project]).as_deref(),
            project
        );
        assert_eq!(
            narrowed_groups([Some("hr"), None, project]).as_deref(),
            Some("hr")
        );
        assert_eq!(
            narrowed_groups([Some("sales"), None, project]).as_deref(),
            Some(NO_READER_GROUP)
        );
        assert_eq!(
            narrowed_groups([None, Some("hr"), Some("")]).as_deref(),
            Some("hr")
        );
        assert_eq!(narrowed_groups([Some(""), None, None]), None);
        assert!(!groups(&["sales", "hr"]).can_read(Some(NO_READER_GROUP)));
        assert!(Access::Everything.can_read(Some(NO_READER_GROUP)));
        assert!(check_group_name(NO_READER_GROUP).is_err());
    }

    #[test]
    fn group_names_are_plain_words() {
        assert!(check_group_name("hr-emea.2").is_ok());
        assert!(check_group_name("hr,sales").is_err());
        assert!(check_group_name("").is_err());
        assert!(check_group_name("h r").is_err());
    }
}
