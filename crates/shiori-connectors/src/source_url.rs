//! The URLs a project path may be.

use crate::ConnectorError;
use std::fmt;
use std::str::FromStr;
use url::Url;

/// A remote source, parsed from a project path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceUrl {
    /// `s3://BUCKET/PREFIX/`: any S3-compatible store.
    S3 { bucket: String, prefix: String },
    /// `webdav+https://HOST/PATH/` (or `webdav+http://`): the folder's URL without the prefix.
    WebDav { base: Url },
    /// `git+https://…`, `git+file://…`, with `#BRANCH` (the remote's default branch without).
    Git {
        remote: String,
        branch: Option<String>,
    },
    /// `gdrive://FOLDER_ID`: a Drive folder, in My Drive or a shared drive.
    Drive { folder: String },
}

impl SourceUrl {
    /// Whether a project path is meant as a URL (`SCHEME://…`) rather than a local path: such
    /// a path is parsed as a source, so a scheme Shiori does not read fails instead of being
    /// looked for on disk.
    pub fn is_remote(path: &str) -> bool {
        path.split_once("://").is_some_and(|(scheme, _)| {
            let mut chars = scheme.chars();
            chars.next().is_some_and(|c| c.is_ascii_alphabetic())
                && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        })
    }

    /// A short stable name for the source's mirror folder.
    pub fn key(&self) -> String {
        let hash = blake3::hash(self.to_string().as_bytes()).to_hex();
        format!("{}-{}", self.kind(), &hash[..16])
    }

    /// What a mirrored object's path is shown after (always ending in `/`): the URL as
    /// configured, a Git branch written `@BRANCH` since `#` separates a chunk from its source.
    pub fn shown_prefix(&self) -> String {
        let shown = match self {
            SourceUrl::Git {
                remote,
                branch: Some(branch),
            } => format!("git+{remote}@{branch}"),
            other => other.to_string(),
        };
        if shown.ends_with('/') {
            shown
        } else {
            format!("{shown}/")
        }
    }

    /// `s3`, `webdav`, `git` or `gdrive`.
    pub fn kind(&self) -> &'static str {
        match self {
            SourceUrl::S3 { .. } => "s3",
            SourceUrl::WebDav { .. } => "webdav",
            SourceUrl::Git { .. } => "git",
            SourceUrl::Drive { .. } => "gdrive",
        }
    }
}

impl FromStr for SourceUrl {
    type Err = ConnectorError;

    fn from_str(text: &str) -> Result<SourceUrl, ConnectorError> {
        let bad = |reason: &str| ConnectorError::BadUrl {
            url: without_userinfo(text),
            reason: reason.to_string(),
        };
        if let Some(rest) = text.strip_prefix("s3://") {
            let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
            if bucket.is_empty() {
                return Err(bad("no bucket: write s3://BUCKET/PREFIX/"));
            }
            return Ok(SourceUrl::S3 {
                bucket: bucket.to_string(),
                prefix: prefix.to_string(),
            });
        }
        if let Some(rest) = text.strip_prefix("webdav+") {
            let mut base = Url::parse(rest).map_err(|error| bad(&error.to_string()))?;
            if !matches!(base.scheme(), "http" | "https") || base.host_str().is_none() {
                return Err(bad("write webdav+https://HOST/PATH/"));
            }
            if !base.username().is_empty() || base.password().is_some() {
                return Err(bad(
                    "credentials do not go in the URL: set [connectors.webdav]",
                ));
            }
            if !base.path().ends_with('/') {
                let folder = format!("{}/", base.path());
                base.set_path(&folder);
            }
            return Ok(SourceUrl::WebDav { base });
        }
        if let Some(rest) = text.strip_prefix("git+") {
            let (remote, branch) = match rest.split_once('#') {
                Some((remote, branch)) if !branch.is_empty() => (remote, Some(branch.to_string())),
                Some(_) => return Err(bad("an empty branch after #")),
                None => (rest, None),
            };
            let parsed = Url::parse(remote).map_err(|error| bad(&error.to_string()))?;
            if !matches!(parsed.scheme(), "http" | "https" | "file") {
                return Err(bad("write git+https://… or git+file://…"));
            }
            if !parsed.username().is_empty() || parsed.password().is_some() {
                return Err(bad("credentials do not go in the URL"));
            }
            return Ok(SourceUrl::Git {
                remote: remote.to_string(),
                branch,
            });
        }
        if let Some(folder) = text.strip_prefix("gdrive://") {
            let folder = folder.trim_end_matches('/');
            let valid = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
            if folder.is_empty() || !folder.chars().all(valid) {
                return Err(bad(
                    "write gdrive://FOLDER_ID (the id in the folder's address)",
                ));
            }
            return Ok(SourceUrl::Drive {
                folder: folder.to_string(),
            });
        }
        Err(bad(
            "known schemes are s3://, webdav+https://, git+https://, git+file:// and gdrive://",
        ))
    }
}

/// `text` with any `user:password@` after its scheme replaced, so an error never repeats a
/// credential someone pasted into a URL.
fn without_userinfo(text: &str) -> String {
    let Some((scheme, rest)) = text.split_once("://") else {
        return text.to_string();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}://…@{}", &rest[at + 1..]),
        None => text.to_string(),
    }
}

impl fmt::Display for SourceUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SourceUrl::S3 { bucket, prefix } => write!(f, "s3://{bucket}/{prefix}"),
            SourceUrl::WebDav { base } => write!(f, "webdav+{base}"),
            SourceUrl::Git { remote, branch } => match branch {
                Some(branch) => write!(f, "git+{remote}#{branch}"),
                None => write!(f, "git+{remote}"),
            },
            SourceUrl::Drive { folder } => write!(f, "gdrive://{folder}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_each_scheme_and_prints_it_back() {
        for text in [
            "s3://docs/handbook/",
            "s3://docs/",
            "webdav+https://cloud.example.com/remote.php/dav/files/me/Docs/",
            "git+https://example.com/org/repo.git#main",
            "git+file:///srv/repo",
            "gdrive://1AbC-d_E",
        ] {
            let url: SourceUrl = text.parse().unwrap();
            assert_eq!(url.to_string(), text);
            assert!(SourceUrl::is_remote(text));
        }
        let git: SourceUrl = "git+https://example.com/org/repo.git#main".parse().unwrap();
        assert_eq!(
            git.shown_prefix(),
            "git+https://example.com/org/repo.git@main/"
        );
        let drive: SourceUrl = "gdrive://1AbC".parse().unwrap();
        assert_eq!(drive.shown_prefix(), "gdrive://1AbC/");
        let folder: SourceUrl = "webdav+http://127.0.0.1:8080/Docs".parse().unwrap();
        assert_eq!(folder.to_string(), "webdav+http://127.0.0.1:8080/Docs/");
    }

    #[test]
    fn refuses_what_it_cannot_read_naming_the_url() {
        for text in [
            "s3:///prefix",
            "ftp+x://h/",
            "webdav+ftp://host/x",
            "webdav+https://me:secret@host/x/",
            "git+ssh://host/repo",
            "git+https://host/repo#",
            "gdrive://",
            "gdrive://a/b",
            "ftp://host/x",
        ] {
            let error = text.parse::<SourceUrl>().unwrap_err().to_string();
            assert!(error.contains(&without_userinfo(text)), "{error}");
            assert!(!error.contains("secret"), "{error}");
            assert!(SourceUrl::is_remote(text), "{text}");
        }
    }

    #[test]
    fn local_paths_are_not_urls() {
        for path in ["docs", "/srv/docs", "a:b/c", "./x://y", "my docs/2024"] {
            assert!(!SourceUrl::is_remote(path), "{path}");
        }
    }

    #[test]
    fn each_source_has_its_own_mirror_key() {
        let a: SourceUrl = "s3://docs/a/".parse().unwrap();
        let b: SourceUrl = "s3://docs/b/".parse().unwrap();
        assert_ne!(a.key(), b.key());
        assert!(a.key().starts_with("s3-"));
    }
}
