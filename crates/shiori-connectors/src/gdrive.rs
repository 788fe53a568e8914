//! Google Drive (API v3): a folder and everything under it, in My Drive or a shared drive.
//! The first listing walks the folder tree; later ones read the changes feed from the page
//! token the previous one kept. Google Docs, Sheets and Slides are exported as DOCX, XLSX and
//! PPTX; other Google types (forms, maps, shortcuts…) have no content to index and are skipped.
//! Drive permissions become Shiori groups through `[connectors.gdrive] readers`.

mod api;
mod auth;
mod cursor;

use crate::{http, Connector, ConnectorError, DriveSettings, Listed, Listing, RemoteObject};
use api::{Api, Change, DriveFile, Permission, FOLDER};
use cursor::{folder_change, safe_name, Cursor, FolderChange, Folders, MAX_DEPTH};
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::io::Write;

/// Google types with an export, and what they become.
const EXPORTS: [(&str, &str, &str); 3] = [
    (
        "application/vnd.google-apps.document",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "docx",
    ),
    (
        "application/vnd.google-apps.spreadsheet",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "xlsx",
    ),
    (
        "application/vnd.google-apps.presentation",
        "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "pptx",
    ),
];
const GOOGLE_TYPES: &str = "application/vnd.google-apps.";

pub(crate) struct DriveConnector {
    folder: String,
    api: Api,
    /// `[connectors.gdrive] readers` with lower-case principals (Drive's addresses and domains
    /// are not case-sensitive).
    readers: BTreeMap<String, Vec<String>>,
}

/// How a Drive file is mirrored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Folder,
    /// Downloaded as it is.
    Binary,
    /// Converted to this MIME type, whose extension the name gets.
    Export {
        mime_type: &'static str,
        extension: &'static str,
    },
    Skipped,
}

/// What one listing found: objects by id (a file with two parents under the root is listed
/// once), and ids gone from the scope.
#[derive(Default)]
struct Found {
    objects: BTreeMap<String, RemoteObject>,
    deleted: BTreeSet<String>,
}

impl Found {
    fn add(&mut self, object: RemoteObject) {
        self.deleted.remove(&object.id);
        self.objects.insert(object.id.clone(), object);
    }

    fn delete(&mut self, id: &str) {
        self.objects.remove(id);
        self.deleted.insert(id.to_string());
    }
}

impl DriveConnector {
    pub(crate) fn new(
        folder: &str,
        settings: &DriveSettings,
    ) -> Result<DriveConnector, ConnectorError> {
        Ok(DriveConnector {
            folder: folder.to_string(),
            api: Api::new(settings)?,
            readers: settings
                .readers
                .iter()
                .map(|(principal, groups)| (principal.to_lowercase(), groups.clone()))
                .collect(),
        })
    }

    fn shown(&self) -> String {
        format!("gdrive://{}", self.folder)
    }

    /// Everything under the folder, and a cursor whose token was taken before the walk, so a
    /// change made while it runs is read next time.
    fn list_all(&self) -> Result<Listed, ConnectorError> {
        let what = self.shown();
        let token = self.api.start_page_token(&what)?;
        self.check_root(&what)?;
        let mut folders = Folders::default();
        let mut found = Found::default();
        self.walk(&self.folder, &mut folders, &mut found)?;
        Ok(Listed {
            listing: Listing::Complete(found.objects.into_values().collect()),
            cursor: Some(Cursor { token, folders }.encode()),
            refused: Vec::new(),
        })
    }

    fn check_root(&self, what: &str) -> Result<(), ConnectorError> {
        let root = self
            .api
            .file(what, &self.folder)
            .map_err(|error| match error {
                ConnectorError::Status { status: 404, .. } => ConnectorError::protocol(
                    what,
                    "Drive has no such folder, or the credentials' account cannot see it \
                     (share the folder with that account)",
                ),
                other => other,
            })?;
        if root.mime_type != FOLDER {
            return Err(ConnectorError::protocol(
                what,
                format!("this is a {} file, not a folder", root.mime_type),
            ));
        }
        Ok(())
    }

    /// Adds what `start` (a folder in `folders`, or the root) holds, sub-folders included.
    fn walk(
        &self,
        start: &str,
        folders: &mut Folders,
        found: &mut Found,
    ) -> Result<(), ConnectorError> {
        let mut pending = vec![start.to_string()];
        while let Some(folder) = pending.pop() {
            let Some(path) = folders.path(&self.folder, &folder) else {
                continue;
            };
            let depth = folders.depth(&self.folder, &folder).unwrap_or(MAX_DEPTH);
            for file in self.api.children(&self.shown(), &folder)? {
                if kind(&file.mime_type) != Kind::Folder {
                    if !found.objects.contains_key(&file.id) {
                        self.add_file(file, &path, found)?;
                    }
                } else if file.id == self.folder || folders.contains(&file.id) {
                    // A folder reached twice (Drive lets an item have several parents).
                } else if depth + 1 > MAX_DEPTH {
                    tracing::warn!(
                        "{}: {}/{} is more than {MAX_DEPTH} folders deep; not mirrored",
                        self.shown(),
                        path,
                        file.name
                    );
                } else {
                    folders.insert(&file.id, &folder, &file.name);
                    pending.push(file.id);
                }
            }
        }
        Ok(())
    }

    /// What changed since `cursor`; a listing of everything when the folders moved.
    fn follow(&self, cursor: Cursor) -> Result<Listed, ConnectorError> {
        let what = self.shown();
        let (changes, token) = self.api.changes(&what, &cursor.token)?;
        let mut folders = cursor.folders;
        let mut unknown = Vec::new();
        for change in &changes {
            match folder_change(change, &self.folder, &folders) {
                FolderChange::Relist => return self.list_all(),
                FolderChange::Unknown => unknown.extend(change.file.as_ref()),
                FolderChange::None => {}
            }
        }
        let mut found = Found::default();
        self.enter_folders(&unknown, &mut folders, &mut found)?;
        for change in changes {
            self.apply(change, &folders, &mut found)?;
        }
        Ok(Listed {
            listing: Listing::Changes {
                changed: found.objects.into_values().collect(),
                deleted: found.deleted.into_iter().collect(),
            },
            cursor: Some(Cursor { token, folders }.encode()),
            refused: Vec::new(),
        })
    }

    /// Walks each new folder whose parent is in scope: it may have come with files (moved in
    /// from elsewhere) that have no change of their own. A folder inside another new one is
    /// reached once its parent is known, hence the rounds.
    fn enter_folders(
        &self,
        unknown: &[&DriveFile],
        folders: &mut Folders,
        found: &mut Found,
    ) -> Result<(), ConnectorError> {
        let mut entered: HashSet<&str> = HashSet::new();
        loop {
            let mut progress = false;
            for folder in unknown {
                if entered.contains(folder.id.as_str()) || folders.contains(&folder.id) {
                    continue;
                }
                let Some(parent) = folder
                    .parents
                    .iter()
                    .find(|parent| folders.path(&self.folder, parent).is_some())
                else {
                    continue;
                };
                if folders.depth(&self.folder, parent).unwrap_or(MAX_DEPTH) < MAX_DEPTH {
                    folders.insert(&folder.id, parent, &folder.name);
                    self.walk(&folder.id, folders, found)?;
                }
                entered.insert(&folder.id);
                progress = true;
            }
            if !progress {
                return Ok(());
            }
        }
    }

    /// One change to a file: in scope it is (re)listed, otherwise it is gone from here.
    fn apply(
        &self,
        change: Change,
        folders: &Folders,
        found: &mut Found,
    ) -> Result<(), ConnectorError> {
        let id = change
            .file_id
            .clone()
            .or_else(|| change.file.as_ref().map(|file| file.id.clone()));
        let Some(id) = id else {
            return Ok(());
        };
        match change.file {
            Some(file) if !change.removed && !file.trashed => {
                if kind(&file.mime_type) == Kind::Folder {
                    return Ok(());
                }
                match folders.parent_path(&self.folder, &file) {
                    Some(path) => self.add_file(file, &path, found),
                    None => {
                        found.delete(&id);
                        Ok(())
                    }
                }
            }
            _ => {
                found.delete(&id);
                Ok(())
            }
        }
    }

    /// Adds `file`, in the folder at `folder_path`, unless its type has nothing to mirror.
    fn add_file(
        &self,
        file: DriveFile,
        folder_path: &str,
        found: &mut Found,
    ) -> Result<(), ConnectorError> {
        let kind = kind(&file.mime_type);
        let Some(name) = mirrored_name(&file.name, kind) else {
            tracing::debug!(
                "{}: {} ({}) has no content to mirror",
                self.shown(),
                file.name,
                file.mime_type
            );
            return Ok(());
        };
        let groups = self.groups(&file)?;
        found.add(RemoteObject {
            path: if folder_path.is_empty() {
                name
            } else {
                format!("{folder_path}/{name}")
            },
            marker: marker(&file),
            size: file.size.as_deref().and_then(|size| size.parse().ok()),
            export: match kind {
                Kind::Export { mime_type, .. } => Some(mime_type.to_string()),
                _ => None,
            },
            groups,
            id: file.id,
        });
        Ok(())
    }

    /// The groups that may read `file`; `None` when no readers are configured.
    fn groups(&self, file: &DriveFile) -> Result<Option<Vec<String>>, ConnectorError> {
        if self.readers.is_empty() {
            return Ok(None);
        }
        let asked;
        let permissions = match &file.permissions {
            Some(permissions) => permissions,
            None => {
                asked = self.api.permissions(&self.shown(), &file.id)?;
                &asked
            }
        };
        Ok(Some(groups(&self.readers, permissions)))
    }
}

impl Connector for DriveConnector {
    fn list(&self, cursor: Option<&str>) -> Result<Listed, ConnectorError> {
        let Some(text) = cursor else {
            return self.list_all();
        };
        match Cursor::decode(text) {
            Some(cursor) => self.follow(cursor),
            None => {
                tracing::info!(
                    "{}: the kept cursor is not one this version wrote; listing everything",
                    self.shown()
                );
                self.list_all()
            }
        }
    }

    fn fetch(
        &self,
        object: &RemoteObject,
        into: &mut dyn Write,
        limit: u64,
    ) -> Result<u64, ConnectorError> {
        let what = format!("{}/{}", self.shown(), object.path);
        let response = match &object.export {
            Some(mime_type) => self.api.export(&what, &object.id, mime_type)?,
            None => self.api.media(&what, &object.id)?,
        };
        http::copy_limited(&what, response, into, limit)
    }
}

fn kind(mime_type: &str) -> Kind {
    if mime_type == FOLDER {
        return Kind::Folder;
    }
    if let Some((_, to, extension)) = EXPORTS.iter().find(|(from, _, _)| *from == mime_type) {
        return Kind::Export {
            mime_type: to,
            extension,
        };
    }
    if mime_type.starts_with(GOOGLE_TYPES) {
        Kind::Skipped
    } else {
        Kind::Binary
    }
}

/// The name a file has in the mirror: an export's gets the extension of what it becomes.
fn mirrored_name(name: &str, kind: Kind) -> Option<String> {
    match kind {
        Kind::Binary => Some(safe_name(name)),
        Kind::Export { extension, .. } => Some(format!("{}.{extension}", safe_name(name))),
        Kind::Folder | Kind::Skipped => None,
    }
}

/// What changes when the content does: the checksum of a binary file; Google files have none,
/// and their version moves with every edit.
fn marker(file: &DriveFile) -> String {
    file.md5_checksum
        .clone()
        .or_else(|| file.version.clone())
        .or_else(|| file.modified_time.clone())
        .unwrap_or_default()
}

/// The principal a permission names, as `readers` spells it.
fn principal(permission: &Permission) -> Option<String> {
    match permission.kind.as_str() {
        "user" | "group" => permission
            .email_address
            .as_ref()
            .map(|email| email.to_lowercase()),
        "domain" => permission
            .domain
            .as_ref()
            .map(|domain| format!("domain:{}", domain.to_lowercase())),
        "anyone" => Some("anyone".into()),
        _ => None,
    }
}

/// The groups the mapped principals among `permissions` give, sorted; none mapped is none.
fn groups(readers: &BTreeMap<String, Vec<String>>, permissions: &[Permission]) -> Vec<String> {
    let groups: BTreeSet<&String> = permissions
        .iter()
        .filter_map(principal)
        .filter_map(|principal| readers.get(&principal))
        .flatten()
        .collect();
    groups.into_iter().cloned().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn permission(kind: &str, email: Option<&str>, domain: Option<&str>) -> Permission {
        Permission {
            kind: kind.into(),
            email_address: email.map(str::to_string),
            domain: domain.map(str::to_string),
        }
    }

    #[test]
    fn permissions_map_through_readers_to_a_union_of_groups() {
        let readers: BTreeMap<String, Vec<String>> = [
            ("alice@example.com", vec!["staff"]),
            ("team@example.com", vec!["eng", "staff"]),
            ("domain:example.com", vec!["all"]),
            ("anyone", vec!["public"]),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.into_iter().map(str::to_string).collect()))
        .collect();
        let permissions = [
            permission("user", Some("Alice@Example.com"), None),
            permission("group", Some("team@example.com"), None),
            permission("domain", None, Some("EXAMPLE.com")),
        ];
        assert_eq!(groups(&readers, &permissions), ["all", "eng", "staff"]);
        assert_eq!(
            groups(&readers, &[permission("anyone", None, None)]),
            ["public"]
        );
        let unmapped = [permission("user", Some("bob@elsewhere.org"), None)];
        assert!(groups(&readers, &unmapped).is_empty());
        assert!(groups(&readers, &[permission("user", None, None)]).is_empty());
    }

    #[test]
    fn google_files_are_exported_under_the_name_of_what_they_become() {
        let doc = kind("application/vnd.google-apps.document");
        assert_eq!(mirrored_name("Plan", doc).as_deref(), Some("Plan.docx"));
        assert_eq!(
            doc,
            Kind::Export {
                mime_type:
                    "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
                extension: "docx"
            }
        );
        let sheet = kind("application/vnd.google-apps.spreadsheet");
        assert_eq!(mirrored_name("Q3/Q4", sheet).as_deref(), Some("Q3_Q4.xlsx"));
        let slides = kind("application/vnd.google-apps.presentation");
        assert_eq!(mirrored_name("Deck", slides).as_deref(), Some("Deck.pptx"));
        for skipped in ["form", "shortcut", "map", "drawing"] {
            let google = kind(&format!("application/vnd.google-apps.{skipped}"));
            assert_eq!(mirrored_name("x", google), None, "{skipped}");
        }
        assert_eq!(kind(FOLDER), Kind::Folder);
        assert_eq!(
            mirrored_name("a.pdf", kind("application/pdf")).as_deref(),
            Some("a.pdf")
        );
    }

    #[test]
    fn the_marker_is_the_checksum_else_the_version_else_the_time() {
        let mut file = DriveFile {
            md5_checksum: Some("abc".into()),
            version: Some("7".into()),
            modified_time: Some("2024-05-01T10:00:00.000Z".into()),
            ..DriveFile::default()
        };
        assert_eq!(marker(&file), "abc");
        file.md5_checksum = None;
        assert_eq!(marker(&file), "7");
        file.version = None;
        assert_eq!(marker(&file), "2024-05-01T10:00:00.000Z");
    }
}
