//! What the connector remembers between listings (the mirror keeps it as an opaque string):
//! where the changes feed stands, and the folders under the root, since a change names only
//! its file's parents and whether a file is in scope depends on theirs.

use super::api::{Change, DriveFile, FOLDER};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Folders deeper than this under the root are not walked (a guard, not a Drive limit).
pub(super) const MAX_DEPTH: usize = 64;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Cursor {
    /// The changes feed's page token.
    pub token: String,
    pub folders: Folders,
}

impl Cursor {
    /// Strings and maps of strings always serialize; were one not to, the empty cursor would
    /// only make the next listing a full one.
    pub(super) fn encode(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// `None` for a cursor this version did not write: the listing starts over.
    pub(super) fn decode(text: &str) -> Option<Cursor> {
        serde_json::from_str(text).ok()
    }
}

/// The folders under the root: id → where it is.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub(super) struct Folders(BTreeMap<String, Folder>);

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Folder {
    pub parent: String,
    pub name: String,
}

impl Folders {
    pub(super) fn insert(&mut self, id: &str, parent: &str, name: &str) {
        self.0.insert(
            id.to_string(),
            Folder {
                parent: parent.to_string(),
                name: name.to_string(),
            },
        );
    }

    pub(super) fn contains(&self, id: &str) -> bool {
        self.0.contains_key(id)
    }

    /// The mirror path of folder `id` (`""` for the root), or `None` when it is not under the
    /// root.
    pub(super) fn path(&self, root: &str, id: &str) -> Option<String> {
        let mut names = Vec::new();
        let mut current = id;
        while current != root {
            let folder = self.0.get(current)?;
            if names.len() >= MAX_DEPTH {
                return None;
            }
            names.push(safe_name(&folder.name));
            current = &folder.parent;
        }
        names.reverse();
        Some(names.join("/"))
    }

    /// Folders between the root and `id`, counting `id`; `None` when it is not under the root.
    pub(super) fn depth(&self, root: &str, id: &str) -> Option<usize> {
        let path = self.path(root, id)?;
        Some(if path.is_empty() {
            0
        } else {
            path.split('/').count()
        })
    }

    /// The path of the first of `file`'s parents under the root.
    pub(super) fn parent_path(&self, root: &str, file: &DriveFile) -> Option<String> {
        file.parents
            .iter()
            .find_map(|parent| self.path(root, parent))
    }
}

/// A Drive name as one path component: a `/` in it would make folders.
pub(super) fn safe_name(name: &str) -> String {
    name.replace('/', "_")
}

/// What a change to a folder means for the known ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum FolderChange {
    /// Not a folder, or one that changes nothing here.
    None,
    /// A known folder was renamed, moved, trashed or removed, or the root was trashed or
    /// removed: its files' paths or presence changed without a change for each.
    Relist,
    /// A folder not known; it enters the scope if one of its parents is in it.
    Unknown,
}

pub(super) fn folder_change(change: &Change, root: &str, folders: &Folders) -> FolderChange {
    let Some(id) = change
        .file_id
        .as_deref()
        .or(change.file.as_ref().map(|f| f.id.as_str()))
    else {
        return FolderChange::None;
    };
    let gone = change.removed || change.file.as_ref().is_none_or(|file| file.trashed);
    if id == root {
        return if gone {
            FolderChange::Relist
        } else {
            FolderChange::None
        };
    }
    match (folders.0.get(id), &change.file) {
        (Some(_), _) if gone => FolderChange::Relist,
        (Some(known), Some(file)) => {
            if file.name == known.name && file.parents.contains(&known.parent) {
                FolderChange::None
            } else {
                FolderChange::Relist
            }
        }
        (None, Some(file)) if file.mime_type == FOLDER && !gone => FolderChange::Unknown,
        _ => FolderChange::None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(id: &str, name: &str, parent: &str) -> DriveFile {
        DriveFile {
            id: id.into(),
            name: name.into(),
            mime_type: FOLDER.into(),
            parents: vec![parent.into()],
            ..DriveFile::default()
        }
    }

    fn change(file: DriveFile) -> Change {
        Change {
            file_id: Some(file.id.clone()),
            removed: false,
            file: Some(file),
        }
    }

    fn tree() -> Folders {
        let mut folders = Folders::default();
        folders.insert("a", "root", "A");
        folders.insert("b", "a", "B/C");
        folders
    }

    #[test]
    fn a_cursor_survives_the_round_trip_and_a_foreign_one_is_ignored() {
        let cursor = Cursor {
            token: "4711".into(),
            folders: tree(),
        };
        assert_eq!(Cursor::decode(&cursor.encode()), Some(cursor));
        assert_eq!(Cursor::decode("4711"), None);
    }

    #[test]
    fn paths_follow_parents_up_to_the_root_only() {
        let folders = tree();
        assert_eq!(folders.path("root", "root").as_deref(), Some(""));
        assert_eq!(folders.path("root", "b").as_deref(), Some("A/B_C"));
        assert_eq!(folders.depth("root", "b"), Some(2));
        assert_eq!(folders.path("root", "elsewhere"), None);
        let mut looped = Folders::default();
        looped.insert("x", "y", "X");
        looped.insert("y", "x", "Y");
        assert_eq!(looped.path("root", "x"), None);
    }

    #[test]
    fn a_file_is_in_scope_through_any_parent_under_the_root() {
        let folders = tree();
        let mut file = DriveFile {
            id: "f".into(),
            parents: vec!["elsewhere".into()],
            ..DriveFile::default()
        };
        assert_eq!(folders.parent_path("root", &file), None);
        file.parents.push("b".into());
        assert_eq!(folders.parent_path("root", &file).as_deref(), Some("A/B_C"));
        file.parents = vec!["root".into()];
        assert_eq!(folders.parent_path("root", &file).as_deref(), Some(""));
    }

    #[test]
    fn a_known_folder_renamed_moved_or_trashed_lists_again() {
        let folders = tree();
        let same = change(folder("a", "A", "root"));
        assert_eq!(folder_change(&same, "root", &folders), FolderChange::None);
        let renamed = change(folder("a", "A2", "root"));
        assert_eq!(
            folder_change(&renamed, "root", &folders),
            FolderChange::Relist
        );
        let moved = change(folder("b", "B/C", "root"));
        assert_eq!(
            folder_change(&moved, "root", &folders),
            FolderChange::Relist
        );
        let mut trashed = folder("a", "A", "root");
        trashed.trashed = true;
        assert_eq!(
            folder_change(&change(trashed), "root", &folders),
            FolderChange::Relist
        );
        let removed = Change {
            file_id: Some("b".into()),
            removed: true,
            file: None,
        };
        assert_eq!(
            folder_change(&removed, "root", &folders),
            FolderChange::Relist
        );
        let root_renamed = change(folder("root", "Renamed", "parent"));
        assert_eq!(
            folder_change(&root_renamed, "root", &folders),
            FolderChange::None
        );
        let new = change(folder("n", "New", "a"));
        assert_eq!(folder_change(&new, "root", &folders), FolderChange::Unknown);
        let plain = change(DriveFile {
            id: "f".into(),
            mime_type: "text/plain".into(),
            ..DriveFile::default()
        });
        assert_eq!(folder_change(&plain, "root", &folders), FolderChange::None);
    }
}
