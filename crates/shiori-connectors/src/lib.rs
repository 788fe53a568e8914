//! Documents from beyond the local disk. A project path may be a URL (`s3://`, `webdav+https://`,
//! `git+https://`, `git+file://`, `gdrive://`); each kind of source is a [`Connector`], which
//! lists what the source holds with a change marker per object (an ETag, a blob id, a Drive
//! checksum) and fetches one object. [`sync`] keeps a mirror folder of a source in the data
//! directory: it downloads only objects whose marker moved, removes the ones the source deleted
//! and records readers where the source has permissions, so the indexer reads remote documents
//! as the files it already knows (formats, incremental re-indexing, deletion, groups).
//! Credentials come from environment variables or files named in the configuration; none is
//! written to the mirror or put in an error message.

mod error;
mod gdrive;
mod git;
mod http;
mod mirror;
mod s3;
mod settings;
mod source_url;
#[cfg(feature = "test-servers")]
pub mod test_servers;
mod webdav;
mod xml;

pub use error::ConnectorError;
pub use mirror::{
    mirror_files, mirror_folder, sync, sync_wanted, ObjectFailure, RecordReaders, SyncLimits,
    SyncReport,
};
pub use settings::{ConnectorSettings, DriveSettings, WebDavSettings};
pub use source_url::SourceUrl;

use std::io::Write;

/// One object a source holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteObject {
    /// What the source calls it, stable across renames where the source has such a thing (a
    /// Drive file id); otherwise its path.
    pub id: String,
    /// Where it goes in the mirror: relative, `/`-separated (checked by [`sync`]).
    pub path: String,
    /// Changes whenever the content does (an ETag, a Git blob id, a Drive checksum or version).
    pub marker: String,
    /// Its size in bytes, when the listing says.
    pub size: Option<u64>,
    /// The format the source converts it to when fetched (a Google Doc exported as DOCX).
    pub export: Option<String>,
    /// The Shiori groups that may read it, for sources with permissions (Drive); `None` leaves
    /// it to the project's groups, and an empty list means no mapped reader: admins only.
    pub groups: Option<Vec<String>>,
}

/// What a listing found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listing {
    /// Everything the source holds now: whatever the mirror has beyond it was deleted.
    Complete(Vec<RemoteObject>),
    /// Only what changed since the cursor the previous listing returned.
    Changes {
        changed: Vec<RemoteObject>,
        /// Ids of objects removed (or moved out of the source).
        deleted: Vec<String>,
    },
}

/// A listing and the cursor the next one starts from (Drive's page token).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    pub listing: Listing,
    pub cursor: Option<String>,
    /// What the listing named but Shiori cannot take (a name it cannot place), each reported
    /// alone while the rest is mirrored.
    pub refused: Vec<ObjectFailure>,
}

impl Listed {
    /// Everything the source holds, for a connector without a change feed.
    pub fn complete(objects: Vec<RemoteObject>) -> Listed {
        Listed::complete_refusing(objects, Vec::new())
    }

    /// Everything the source holds but `refused`.
    pub fn complete_refusing(objects: Vec<RemoteObject>, refused: Vec<ObjectFailure>) -> Listed {
        Listed {
            listing: Listing::Complete(objects),
            cursor: None,
            refused,
        }
    }
}

/// One kind of remote source.
pub trait Connector: Send + Sync {
    /// Lists the source; `cursor` is what the previous listing returned, `None` on a first
    /// sync (a connector without change feeds always lists everything).
    fn list(&self, cursor: Option<&str>) -> Result<Listed, ConnectorError>;

    /// Writes the object's content to `into` and returns its length; more than `limit` bytes
    /// fail with [`ConnectorError::TooLarge`] before more is read.
    fn fetch(
        &self,
        object: &RemoteObject,
        into: &mut dyn Write,
        limit: u64,
    ) -> Result<u64, ConnectorError>;
}

/// The connector for `url`.
pub fn connect(
    url: &SourceUrl,
    settings: &ConnectorSettings,
    state_dir: &std::path::Path,
) -> Result<Box<dyn Connector>, ConnectorError> {
    Ok(match url {
        SourceUrl::S3 { bucket, prefix } => Box::new(s3::S3Connector::new(bucket, prefix)?),
        SourceUrl::WebDav { base } => {
            Box::new(webdav::WebDavConnector::new(base, &settings.webdav)?)
        }
        SourceUrl::Git { remote, branch } => Box::new(git::GitConnector::new(
            remote,
            branch.as_deref(),
            state_dir,
        )?),
        SourceUrl::Drive { folder } => {
            Box::new(gdrive::DriveConnector::new(folder, &settings.gdrive)?)
        }
    })
}
