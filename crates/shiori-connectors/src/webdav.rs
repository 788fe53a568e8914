//! WebDAV folders (Nextcloud, ownCloud, SharePoint, IIS, Apache mod_dav, WsgiDAV…): listed one
//! level at a time with `PROPFIND Depth: 1`, as many servers refuse `Depth: infinity`; an
//! object's ETag is its change marker; objects are fetched with GET. Basic credentials come
//! from the environment variables `[connectors.webdav]` names.

mod multistatus;

use crate::{http, Connector, ConnectorError, Listed, ObjectFailure, RemoteObject, WebDavSettings};
use multistatus::{DavResource, Properties};
use percent_encoding::percent_decode_str;
use reqwest::blocking::{Client, RequestBuilder};
use reqwest::header::CONTENT_TYPE;
use reqwest::{Method, StatusCode};
use std::collections::{HashSet, VecDeque};
use std::io::{BufReader, Read, Write};
use url::Url;

/// Only what the mirror needs: without a body the server sends every property it has
/// (`allprop`), quotas and locks included.
const PROPFIND_BODY: &str = r#"<?xml version="1.0" encoding="utf-8"?>
<d:propfind xmlns:d="DAV:"><d:prop><d:resourcetype/><d:getetag/><d:getcontentlength/><d:getlastmodified/></d:prop></d:propfind>"#;

/// Bytes one folder's listing may take: several times what 100,000 entries need, so only a
/// server that never ends its answer is cut off.
const MAX_LISTING_BYTES: u64 = 1 << 30;

/// Folders deeper than this are not listed: a link on the server to an ancestor folder makes a
/// tree of ever longer paths that never ends.
const MAX_DEPTH: usize = 64;

pub(crate) struct WebDavConnector {
    base: Url,
    /// The base's path percent-decoded, ending in `/`: what every listed path starts with.
    base_path: String,
    client: Client,
    credentials: Option<Credentials>,
    settings: WebDavSettings,
    propfind: Method,
}

/// Deliberately not `Debug`, so that no log or error can print the password.
struct Credentials {
    username: String,
    password: String,
}

/// Where a listed href points.
enum Place {
    Inside(Located),
    /// The listed folder itself, or a path beside it that is still below the base.
    Elsewhere,
    /// A path outside the base, decoded.
    OutsideBase(String),
}

/// An href inside the listed folder: its URL on the base's server and its path below the base.
struct Located {
    url: Url,
    relative: String,
}

impl WebDavConnector {
    pub(crate) fn new(
        base: &url::Url,
        settings: &WebDavSettings,
    ) -> Result<WebDavConnector, ConnectorError> {
        let mut base = base.clone();
        if !base.path().ends_with('/') {
            let folder = format!("{}/", base.path());
            base.set_path(&folder);
        }
        let shown = shown(&base);
        let propfind = Method::from_bytes(b"PROPFIND")
            .map_err(|error| ConnectorError::protocol(&shown, error.to_string()))?;
        Ok(WebDavConnector {
            base_path: decoded_path(&base),
            client: http::client(&shown)?,
            credentials: credentials(settings)?,
            settings: settings.clone(),
            propfind,
            base,
        })
    }

    /// The resources one PROPFIND of `folder` lists; `None` for a sub-folder removed since its
    /// parent was listed.
    fn list_folder(&self, folder: &Url) -> Result<Option<Vec<DavResource>>, ConnectorError> {
        let shown = shown(folder);
        let response = match http::send(&shown, || self.propfind_request(folder)) {
            Ok(response) => response,
            Err(ConnectorError::Status { status: 404, .. }) if *folder != self.base => {
                return Ok(None)
            }
            Err(error) => return Err(self.listing_error(error)),
        };
        if response.status() != StatusCode::MULTI_STATUS {
            let message = format!(
                "answered PROPFIND with HTTP {} rather than 207 Multi-Status: not a WebDAV folder",
                response.status().as_u16()
            );
            return Err(ConnectorError::protocol(shown, message));
        }
        let body = BufReader::new(http::Paced::body(response.take(MAX_LISTING_BYTES)));
        multistatus::parse(body, &shown).map(Some)
    }

    fn propfind_request(&self, folder: &Url) -> RequestBuilder {
        self.authorized(self.client.request(self.propfind.clone(), folder.clone()))
            .header("Depth", "1")
            .header(CONTENT_TYPE, "application/xml; charset=utf-8")
            .body(PROPFIND_BODY)
    }

    fn authorized(&self, request: RequestBuilder) -> RequestBuilder {
        match &self.credentials {
            Some(credentials) => {
                request.basic_auth(&credentials.username, Some(&credentials.password))
            }
            None => request,
        }
    }

    /// Where `href`, listed in `folder`, points: inside the folder, the folder itself (or
    /// beside it, still below the base), or outside the base — a URL that is not the server's
    /// own name for it (a proxy rewriting paths, another case or Unicode form), or a hostile
    /// listing; each such href is refused alone.
    fn locate(&self, folder: &Url, href: &str) -> Result<Place, ConnectorError> {
        let resolved = folder.join(href).map_err(|error| {
            ConnectorError::protocol(shown(folder), format!("the listed href {href:?}: {error}"))
        })?;
        // Only the path is taken: a full URL with another host (a proxy's inside name) is still
        // read from the server the credentials were meant for.
        let mut url = self.base.clone();
        url.set_path(resolved.path());
        let path = decoded_path(&url);
        let folder_path = decoded_path(folder);
        let Some(relative) = path.strip_prefix(self.base_path.as_str()) else {
            if path.trim_end_matches('/') == self.base_path.trim_end_matches('/') {
                return Ok(Place::Elsewhere);
            }
            return Ok(Place::OutsideBase(path));
        };
        let inside_folder = path
            .strip_prefix(folder_path.as_str())
            .is_some_and(|name| !name.trim_end_matches('/').is_empty());
        Ok(match inside_folder {
            true => Place::Inside(Located {
                relative: relative.trim_end_matches('/').to_string(),
                url,
            }),
            false => Place::Elsewhere,
        })
    }

    /// The base listed nothing but hrefs outside it: the URL is not the server's own name for
    /// the folder, and a listing that silently found nothing would empty the mirror.
    fn misnamed_base(&self, outside: &str) -> ConnectorError {
        let message = format!(
            "the server lists {outside:?}, outside {:?}; write the folder's URL as the server \
             spells it",
            self.base_path
        );
        ConnectorError::protocol(shown(&self.base), message)
    }

    /// An error status with what the operator can do about it.
    fn listing_error(&self, error: ConnectorError) -> ConnectorError {
        with_hint(error, |status| match status {
            401 => Some(self.credentials_hint()),
            404 => Some("no such folder; check the path in the URL".into()),
            _ => None,
        })
    }

    fn fetch_error(&self, error: ConnectorError) -> ConnectorError {
        with_hint(error, |status| {
            (status == 401).then(|| self.credentials_hint())
        })
    }

    fn credentials_hint(&self) -> String {
        let WebDavSettings {
            username_env,
            password_env,
        } = &self.settings;
        match self.credentials {
            Some(_) => format!("the credentials in {username_env} and {password_env} were refused"),
            None => format!("the server wants credentials: set {username_env} and {password_env}"),
        }
    }
}

impl Connector for WebDavConnector {
    /// Walks the folder breadth-first, one PROPFIND a folder; each folder is listed once, so an
    /// href pointing back at an ancestor cannot loop.
    fn list(&self, _cursor: Option<&str>) -> Result<Listed, ConnectorError> {
        let mut objects = Vec::new();
        let mut listed_ids = HashSet::new();
        let mut listed_folders = HashSet::from([self.base_path.clone()]);
        let mut pending = VecDeque::from([(self.base.clone(), 0)]);
        let mut refused = Vec::new();
        while let Some((folder, depth)) = pending.pop_front() {
            let Some(resources) = self.list_folder(&folder)? else {
                continue;
            };
            let (mut inside, mut outside) = (0, None);
            for resource in resources {
                let located = match self.locate(&folder, &resource.href)? {
                    Place::Inside(located) => located,
                    Place::Elsewhere => continue,
                    Place::OutsideBase(path) => {
                        refused.push(ObjectFailure {
                            object: format!("{}{path}", shown(&self.base)),
                            reason: format!(
                                "listed in {} but outside the source's folder; not mirrored",
                                shown(&folder)
                            ),
                        });
                        outside.get_or_insert(path);
                        continue;
                    }
                };
                inside += 1;
                if !resource.properties.collection {
                    if listed_ids.insert(located.url.path().to_string()) {
                        objects.push(remote_object(located, resource.properties));
                    }
                } else if depth >= MAX_DEPTH {
                    tracing::warn!(
                        "{}: more than {MAX_DEPTH} folders deep; not mirrored",
                        shown(&located.url)
                    );
                } else if listed_folders.insert(decoded_path(&located.url)) {
                    pending.push_back((as_folder(located.url), depth + 1));
                }
            }
            if let (0, Some(outside), true) = (inside, outside, folder == self.base) {
                return Err(self.misnamed_base(&outside));
            }
        }
        Ok(Listed::complete_refusing(objects, refused))
    }

    fn fetch(
        &self,
        object: &RemoteObject,
        into: &mut dyn Write,
        limit: u64,
    ) -> Result<u64, ConnectorError> {
        let mut url = self.base.clone();
        url.set_path(&object.id);
        let shown = shown(&url);
        let response = http::send(&shown, || self.authorized(self.client.get(url.clone())))
            .map_err(|error| self.fetch_error(error))?;
        http::copy_limited(&shown, response, into, limit)
    }
}

/// Basic credentials when both variables are set; neither set is anonymous access.
fn credentials(settings: &WebDavSettings) -> Result<Option<Credentials>, ConnectorError> {
    let username = variable(&settings.username_env)?;
    let password = variable(&settings.password_env)?;
    let missing = match (username, password) {
        (Some(username), Some(password)) => return Ok(Some(Credentials { username, password })),
        (None, None) => return Ok(None),
        (Some(_), None) => (&settings.password_env, &settings.username_env),
        (None, Some(_)) => (&settings.username_env, &settings.password_env),
    };
    Err(ConnectorError::Config(format!(
        "[connectors.webdav]: {} is set but {} is not; set both for a server that asks for \
         credentials, or neither",
        missing.1, missing.0
    )))
}

/// The variable's value; an empty one counts as unset, as shells and container files often
/// leave a variable empty rather than remove it.
fn variable(name: &str) -> Result<Option<String>, ConnectorError> {
    match std::env::var(name) {
        Ok(value) => Ok((!value.is_empty()).then_some(value)),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => Err(ConnectorError::Config(format!(
            "[connectors.webdav]: {name} is not valid UTF-8"
        ))),
    }
}

fn with_hint(error: ConnectorError, hint: impl Fn(u16) -> Option<String>) -> ConnectorError {
    match error {
        ConnectorError::Status {
            what,
            status,
            retry_after,
            detail,
        } => ConnectorError::Status {
            detail: hint(status).map_or(detail, |hint| format!(": {hint}")),
            what,
            status,
            retry_after,
        },
        other => other,
    }
}

fn remote_object(located: Located, properties: Properties) -> RemoteObject {
    RemoteObject {
        id: located.url.path().to_string(),
        path: located.relative,
        marker: marker(&properties),
        size: properties.length,
        export: None,
        groups: None,
    }
}

/// The ETag without its quotes or weak prefix (a server may switch between the two for the
/// same content); a server without ETags gets length and modification time.
fn marker(properties: &Properties) -> String {
    let etag = properties
        .etag
        .as_deref()
        .map(|etag| etag.trim().trim_start_matches("W/").trim_matches('"'))
        .filter(|etag| !etag.is_empty());
    match etag {
        Some(etag) => etag.to_string(),
        None => format!(
            "{}@{}",
            properties
                .length
                .map(|length| length.to_string())
                .unwrap_or_default(),
            properties.modified.as_deref().unwrap_or_default()
        ),
    }
}

/// Some servers list a folder without its trailing `/` and then redirect a PROPFIND of it.
fn as_folder(mut url: Url) -> Url {
    if !url.path().ends_with('/') {
        let folder = format!("{}/", url.path());
        url.set_path(&folder);
    }
    url
}

fn decoded_path(url: &Url) -> String {
    percent_decode_str(url.path())
        .decode_utf8_lossy()
        .into_owned()
}

fn shown(url: &Url) -> String {
    format!("webdav+{url}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn connector(base: &str) -> WebDavConnector {
        let settings = WebDavSettings {
            username_env: "SHIORI_TEST_WEBDAV_UNIT_UNSET_USER".into(),
            password_env: "SHIORI_TEST_WEBDAV_UNIT_UNSET_PASSWORD".into(),
        };
        WebDavConnector::new(&Url::parse(base).unwrap(), &settings).unwrap()
    }

    fn located(connector: &WebDavConnector, folder: &str, href: &str) -> Option<(String, String)> {
        let folder = Url::parse(folder).unwrap();
        match connector.locate(&folder, href).unwrap() {
            Place::Inside(located) => Some((located.url.to_string(), located.relative)),
            Place::Elsewhere | Place::OutsideBase(_) => None,
        }
    }

    #[test]
    fn hrefs_become_decoded_paths_below_the_base() {
        let dav = connector("https://cloud.example.com/dav/My%20Docs/");
        let folder = "https://cloud.example.com/dav/My%20Docs/";
        assert_eq!(
            located(
                &dav,
                folder,
                "/dav/My%20Docs/sub/%E6%97%A5%E6%9C%AC%20a.txt"
            ),
            Some((
                "https://cloud.example.com/dav/My%20Docs/sub/%E6%97%A5%E6%9C%AC%20a.txt".into(),
                "sub/日本 a.txt".into()
            ))
        );
        // A full URL naming the proxy's inside host is read from the base's host.
        assert_eq!(
            located(&dav, folder, "http://backend:8080/dav/My%20Docs/a.txt"),
            Some((
                "https://cloud.example.com/dav/My%20Docs/a.txt".into(),
                "a.txt".into()
            ))
        );
        assert_eq!(
            located(&dav, folder, "sub/"),
            Some((
                "https://cloud.example.com/dav/My%20Docs/sub/".into(),
                "sub".into()
            ))
        );
    }

    #[test]
    fn the_folder_itself_and_what_is_beside_it_are_skipped() {
        let dav = connector("https://cloud.example.com/dav/docs/");
        let sub = "https://cloud.example.com/dav/docs/sub/";
        assert_eq!(located(&dav, sub, "/dav/docs/sub/"), None);
        assert_eq!(located(&dav, sub, "/dav/docs/sub"), None);
        assert_eq!(located(&dav, sub, "/dav/docs/other/x.txt"), None);
        assert_eq!(
            located(&dav, "https://cloud.example.com/dav/docs/", "/dav/docs"),
            None
        );
    }

    #[test]
    fn an_href_outside_the_base_is_placed_outside() {
        let dav = connector("https://cloud.example.com/dav/docs/");
        let folder = Url::parse("https://cloud.example.com/dav/docs/").unwrap();
        let place = dav.locate(&folder, "/remote.php/dav/docs/a.txt").unwrap();
        assert!(
            matches!(&place, Place::OutsideBase(path) if path == "/remote.php/dav/docs/a.txt"),
            "an href outside the base was placed inside"
        );
        let error = dav.misnamed_base("/remote.php/dav/docs/a.txt").to_string();
        assert!(
            error.contains("webdav+https://cloud.example.com/dav/docs/"),
            "{error}"
        );
    }

    #[test]
    fn the_marker_is_the_bare_etag_or_length_and_date() {
        let with_etag = |etag: &str| Properties {
            etag: Some(etag.into()),
            ..Properties::default()
        };
        assert_eq!(marker(&with_etag("\"abc\"")), "abc");
        assert_eq!(marker(&with_etag("W/\"abc\"")), "abc");
        assert_eq!(marker(&with_etag("abc-1")), "abc-1");
        let without = Properties {
            length: Some(12),
            modified: Some("Mon, 12 Jan 1998 09:25:56 GMT".into()),
            ..Properties::default()
        };
        assert_eq!(marker(&without), "12@Mon, 12 Jan 1998 09:25:56 GMT");
    }

    #[test]
    fn one_credential_without_the_other_names_the_missing_variable() {
        let settings = WebDavSettings {
            username_env: "SHIORI_TEST_WEBDAV_UNIT_HALF_USER".into(),
            password_env: "SHIORI_TEST_WEBDAV_UNIT_HALF_PASSWORD".into(),
        };
        std::env::set_var(&settings.username_env, "reader");
        let base = Url::parse("https://cloud.example.com/dav/").unwrap();
        let Err(error) = WebDavConnector::new(&base, &settings) else {
            panic!("half the credentials were accepted");
        };
        let message = error.to_string();
        assert!(matches!(error, ConnectorError::Config(_)), "{message}");
        assert!(
            message.contains("SHIORI_TEST_WEBDAV_UNIT_HALF_PASSWORD is not"),
            "{message}"
        );
        assert!(!message.contains("reader"), "{message}");
    }
}
