//! The `[connectors]` table of `shiori.toml`. Credentials are named here (an environment
//! variable, a file), never given.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// How remote sources are reached and kept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ConnectorSettings {
    /// Objects one source downloads at a time.
    pub downloads: usize,
    /// How often `shiori index --watch` lists remote sources again, in seconds.
    pub poll_seconds: u64,
    pub webdav: WebDavSettings,
    pub gdrive: DriveSettings,
}

impl Default for ConnectorSettings {
    fn default() -> Self {
        ConnectorSettings {
            downloads: 4,
            poll_seconds: 300,
            webdav: WebDavSettings::default(),
            gdrive: DriveSettings::default(),
        }
    }
}

/// WebDAV's basic or digest credentials, read from these variables when set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WebDavSettings {
    pub username_env: String,
    pub password_env: String,
}

impl Default for WebDavSettings {
    fn default() -> Self {
        WebDavSettings {
            username_env: "SHIORI_WEBDAV_USERNAME".into(),
            password_env: "SHIORI_WEBDAV_PASSWORD".into(),
        }
    }
}

/// Google Drive: the credentials file, where the API is, and whose Drive permissions map to
/// which Shiori groups.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DriveSettings {
    /// A service-account key or an authorized-user file (OAuth refresh token);
    /// `GOOGLE_APPLICATION_CREDENTIALS` names it when unset.
    pub credentials: Option<PathBuf>,
    /// The Drive API's root (a test points it at a scripted server).
    pub api_url: String,
    /// Where tokens are asked for, when the credentials file does not say (`token_uri`).
    pub token_url: String,
    /// A Drive principal (an email address of a user or group, `domain:example.com`, `anyone`)
    /// → the Shiori groups its documents are readable by. A document none of whose readers is
    /// mapped is read by admin keys only.
    pub readers: BTreeMap<String, Vec<String>>,
}

impl Default for DriveSettings {
    fn default() -> Self {
        DriveSettings {
            credentials: None,
            api_url: "https://www.googleapis.com".into(),
            token_url: "https://oauth2.googleapis.com/token".into(),
            readers: BTreeMap::new(),
        }
    }
}
