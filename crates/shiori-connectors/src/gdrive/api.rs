//! The Drive API v3 calls the connector makes, with their paging, their bearer token (renewed
//! once on a 401) and Drive's way of saying "slow down": besides 429 and 5xx (retried by
//! [`RetryPolicy`] as everywhere), a 403 whose reason is `rateLimitExceeded` or
//! `userRateLimitExceeded`.

use super::auth::Tokens;
use crate::http::{self, Refusal};
use crate::{ConnectorError, DriveSettings};
use reqwest::blocking::{Client, Response};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use url::Url;

/// The fields read of every file (a partial response: Drive sends only what is asked).
const FILE_FIELDS: &str = "id,name,mimeType,md5Checksum,modifiedTime,version,size,parents,trashed,\
                           permissions(type,emailAddress,domain,role)";
const PERMISSION_FIELDS: &str = "type,emailAddress,domain,role";
/// The most a page of files or changes may hold (Drive may send fewer, and a page of
/// permissions takes its own default).
const PAGE_SIZE: &str = "1000";
pub(super) const FOLDER: &str = "application/vnd.google-apps.folder";

/// A file or folder as Drive describes it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(super) struct DriveFile {
    pub id: String,
    pub name: String,
    pub mime_type: String,
    pub md5_checksum: Option<String>,
    pub modified_time: Option<String>,
    /// An int64, which Drive's JSON writes as a string (as it does `size`).
    pub version: Option<String>,
    pub size: Option<String>,
    pub parents: Vec<String>,
    pub trashed: bool,
    /// Absent where the caller may not see them (shared drives, for non-organizers).
    pub permissions: Option<Vec<Permission>>,
}

/// Who may read a file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(super) struct Permission {
    #[serde(rename = "type")]
    pub kind: String,
    pub email_address: Option<String>,
    pub domain: Option<String>,
}

/// One entry of the changes feed.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(super) struct Change {
    /// Absent for a change to a shared drive itself.
    pub file_id: Option<String>,
    /// The file was deleted for good or the caller lost access to it.
    pub removed: bool,
    pub file: Option<DriveFile>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FileList {
    next_page_token: Option<String>,
    #[serde(default)]
    files: Vec<DriveFile>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ChangeList {
    next_page_token: Option<String>,
    new_start_page_token: Option<String>,
    #[serde(default)]
    changes: Vec<Change>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PermissionList {
    next_page_token: Option<String>,
    #[serde(default)]
    permissions: Vec<Permission>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct StartPageToken {
    start_page_token: String,
}

/// Drive's error body: `{"error": {"message": …, "errors": [{"reason": …}]}}`.
#[derive(Deserialize, Default)]
#[serde(default)]
struct ErrorBody {
    error: ErrorDetail,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ErrorDetail {
    message: String,
    errors: Vec<ErrorReason>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ErrorReason {
    reason: String,
}

pub(super) struct Api {
    base: Url,
    client: Client,
    tokens: Tokens,
}

impl Api {
    pub(super) fn new(settings: &DriveSettings) -> Result<Api, ConnectorError> {
        let base = Url::parse(&settings.api_url)
            .ok()
            .filter(|url| !url.cannot_be_a_base())
            .ok_or_else(|| {
                ConnectorError::Config(format!(
                    "[connectors.gdrive] api_url {:?} is not an http(s) URL",
                    settings.api_url
                ))
            })?;
        Ok(Api {
            base,
            client: http::client("Google Drive")?,
            tokens: Tokens::from_settings(settings)?,
        })
    }

    /// Where the changes feed stands now.
    pub(super) fn start_page_token(&self, what: &str) -> Result<String, ConnectorError> {
        let url = self.url(
            &["changes", "startPageToken"],
            &[("supportsAllDrives", "true")],
        );
        Ok(self.json::<StartPageToken>(what, &url)?.start_page_token)
    }

    pub(super) fn file(&self, what: &str, id: &str) -> Result<DriveFile, ConnectorError> {
        let url = self.url(
            &["files", id],
            &[("fields", FILE_FIELDS), ("supportsAllDrives", "true")],
        );
        self.json(what, &url)
    }

    /// What `folder` holds, bar the trash.
    pub(super) fn children(
        &self,
        what: &str,
        folder: &str,
    ) -> Result<Vec<DriveFile>, ConnectorError> {
        let query = format!("'{}' in parents and trashed=false", quoted(folder));
        let fields = format!("nextPageToken,files({FILE_FIELDS})");
        let mut files = Vec::new();
        let mut page: Option<String> = None;
        loop {
            let mut params = vec![
                ("q", query.as_str()),
                ("fields", fields.as_str()),
                ("pageSize", PAGE_SIZE),
                ("supportsAllDrives", "true"),
                ("includeItemsFromAllDrives", "true"),
            ];
            params.extend(page.as_deref().map(|token| ("pageToken", token)));
            let list: FileList = self.json(what, &self.url(&["files"], &params))?;
            files.extend(list.files);
            match list.next_page_token {
                Some(next) => page = Some(next),
                None => return Ok(files),
            }
        }
    }

    /// Every change since `token`, and the token after the last.
    pub(super) fn changes(
        &self,
        what: &str,
        token: &str,
    ) -> Result<(Vec<Change>, String), ConnectorError> {
        let fields =
            format!("nextPageToken,newStartPageToken,changes(fileId,removed,file({FILE_FIELDS}))");
        let mut changes = Vec::new();
        let mut page = token.to_string();
        loop {
            let url = self.url(
                &["changes"],
                &[
                    ("pageToken", page.as_str()),
                    ("fields", fields.as_str()),
                    ("includeItemsFromAllDrives", "true"),
                    ("supportsAllDrives", "true"),
                    ("pageSize", PAGE_SIZE),
                ],
            );
            let list: ChangeList = self.json(what, &url)?;
            changes.extend(list.changes);
            match (list.next_page_token, list.new_start_page_token) {
                (Some(next), _) => page = next,
                (None, Some(start)) => return Ok((changes, start)),
                (None, None) => {
                    return Err(ConnectorError::protocol(
                        what,
                        "a changes page had neither nextPageToken nor newStartPageToken",
                    ))
                }
            }
        }
    }

    /// A file's permissions, for where the listing left them out.
    pub(super) fn permissions(
        &self,
        what: &str,
        id: &str,
    ) -> Result<Vec<Permission>, ConnectorError> {
        let fields = format!("nextPageToken,permissions({PERMISSION_FIELDS})");
        let mut permissions = Vec::new();
        let mut page: Option<String> = None;
        loop {
            let mut params = vec![("supportsAllDrives", "true"), ("fields", fields.as_str())];
            params.extend(page.as_deref().map(|token| ("pageToken", token)));
            let list: PermissionList =
                self.json(what, &self.url(&["files", id, "permissions"], &params))?;
            permissions.extend(list.permissions);
            match list.next_page_token {
                Some(next) => page = Some(next),
                None => return Ok(permissions),
            }
        }
    }

    /// A binary file's content.
    pub(super) fn media(&self, what: &str, id: &str) -> Result<Response, ConnectorError> {
        let url = self.url(
            &["files", id],
            &[("alt", "media"), ("supportsAllDrives", "true")],
        );
        self.get(what, &url)
    }

    /// A Google Docs, Sheets or Slides file converted to `mime_type`.
    pub(super) fn export(
        &self,
        what: &str,
        id: &str,
        mime_type: &str,
    ) -> Result<Response, ConnectorError> {
        let url = self.url(&["files", id, "export"], &[("mimeType", mime_type)]);
        self.get(what, &url)
    }

    fn url(&self, segments: &[&str], params: &[(&str, &str)]) -> Url {
        let mut url = self.base.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty().extend(["drive", "v3"]).extend(segments);
        }
        url.query_pairs_mut().extend_pairs(params);
        url
    }

    fn json<T: DeserializeOwned>(&self, what: &str, url: &Url) -> Result<T, ConnectorError> {
        self.get(what, url)?
            .json()
            .map_err(|error| ConnectorError::transport(what, error.is_timeout(), error))
    }

    /// GET with the current token; a 401 (the token revoked or expired early) gets one more
    /// try with a new token.
    fn get(&self, what: &str, url: &Url) -> Result<Response, ConnectorError> {
        let token = self.tokens.token()?;
        match self.send(what, url, &token) {
            Err(ConnectorError::Status { status: 401, .. }) => {
                self.tokens.reject(&token);
                self.send(what, url, &self.tokens.token()?)
            }
            outcome => outcome,
        }
    }

    fn send(&self, what: &str, url: &Url, token: &str) -> Result<Response, ConnectorError> {
        let build = || self.client.get(url.clone()).bearer_auth(token);
        http::send_judging(what, build, |what, response| {
            if response.status().as_u16() == 403 {
                forbidden(what, &response.text().unwrap_or_default())
            } else {
                http::status_error(what, response).into()
            }
        })
    }
}

/// What a 403 means, from the reasons in its body.
fn forbidden(what: &str, body: &str) -> Refusal {
    let detail = serde_json::from_str::<ErrorBody>(body)
        .unwrap_or_default()
        .error;
    let has = |reason: &str| detail.errors.iter().any(|error| error.reason == reason);
    if has("exportSizeLimitExceeded") {
        return Refusal::from(ConnectorError::protocol(
            what,
            "Google exports Docs, Sheets and Slides files of at most 10 MB, and this one is \
             larger (exportSizeLimitExceeded); it is not mirrored",
        ));
    }
    let message = detail.message.trim();
    Refusal {
        error: ConnectorError::Status {
            what: what.to_string(),
            status: 403,
            retry_after: None,
            detail: if message.is_empty() {
                String::new()
            } else {
                format!(": {message}")
            },
        },
        retry: has("rateLimitExceeded") || has("userRateLimitExceeded"),
    }
}

/// `id` inside a query's single quotes.
fn quoted(id: &str) -> String {
    id.replace('\\', "\\\\").replace('\'', "\\'")
}

#[cfg(test)]
mod tests {
    use super::*;
    use shiori_llm::Retryable;

    #[test]
    fn a_rate_limit_403_is_retried_and_other_403s_are_not() {
        let body = r#"{"error": {"code": 403, "message": "User Rate Limit Exceeded",
            "errors": [{"domain": "usageLimits", "reason": "userRateLimitExceeded"}]}}"#;
        let failure = forbidden("x", body);
        assert!(failure.retry && failure.transient().is_some());
        let body = r#"{"error": {"message": "Insufficient permissions",
            "errors": [{"reason": "insufficientFilePermissions"}]}}"#;
        let failure = forbidden("x", body);
        assert!(failure.transient().is_none());
        assert!(failure
            .error
            .to_string()
            .contains("Insufficient permissions"));
        let body = r#"{"error": {"errors": [{"reason": "exportSizeLimitExceeded"}]}}"#;
        let message = forbidden("Big.docx", body).error.to_string();
        assert!(message.contains("10 MB"), "{message}");
        assert!(forbidden("x", "<html>").transient().is_none());
    }

    #[test]
    fn an_id_cannot_close_the_query_quote() {
        assert_eq!(quoted(r"a'b\c"), r"a\'b\\c");
    }
}
