//! Access tokens for the Drive API from a Google credentials file: a service-account key signs
//! a JWT assertion (RS256), an authorized-user file trades its refresh token. A token is kept
//! until shortly before it expires. No credential (key, secret, refresh token, access token)
//! is put in an error or a log.

use crate::{http, ConnectorError, DriveSettings};
use reqwest::blocking::Client;
use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

pub(super) const SCOPE: &str = "https://www.googleapis.com/auth/drive.readonly";
const CREDENTIALS_ENV: &str = "GOOGLE_APPLICATION_CREDENTIALS";
const JWT_GRANT: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/// An assertion's lifetime: the most Google accepts.
const ASSERTION_SECONDS: u64 = 3600;
/// A token this close to its expiry is renewed rather than sent.
const EXPIRY_MARGIN: Duration = Duration::from_secs(60);
const WHAT: &str = "the Google token endpoint";

/// What proves who the connector is.
enum Grant {
    ServiceAccount {
        client_email: String,
        key: jsonwebtoken::EncodingKey,
        key_id: Option<String>,
    },
    AuthorizedUser {
        client_id: String,
        client_secret: String,
        refresh_token: String,
    },
}

/// Hands out access tokens, asking the token endpoint only when the one it holds is gone.
pub(super) struct Tokens {
    grant: Grant,
    token_url: String,
    client: Client,
    current: Mutex<Option<Token>>,
}

#[derive(Clone)]
struct Token {
    value: String,
    renew_at: Instant,
}

/// The fields of either kind of credentials file (the rest is ignored).
#[derive(Deserialize)]
struct CredentialsFile {
    #[serde(rename = "type")]
    kind: Option<String>,
    client_email: Option<String>,
    private_key: Option<String>,
    private_key_id: Option<String>,
    token_uri: Option<String>,
    client_id: Option<String>,
    client_secret: Option<String>,
    refresh_token: Option<String>,
}

#[derive(Serialize)]
struct Claims<'a> {
    iss: &'a str,
    scope: &'a str,
    aud: &'a str,
    iat: u64,
    exp: u64,
}

#[derive(Deserialize)]
struct TokenResponse {
    access_token: String,
    expires_in: Option<u64>,
}

impl Tokens {
    pub(super) fn from_settings(settings: &DriveSettings) -> Result<Tokens, ConnectorError> {
        let path = credentials_path(settings, |name| std::env::var_os(name))?;
        let text = std::fs::read_to_string(&path).map_err(|error| {
            ConnectorError::io(
                format!("the Google credentials file {}", path.display()),
                error,
            )
        })?;
        let file = parse(&text, &path)?;
        let token_url = file
            .token_uri
            .clone()
            .unwrap_or_else(|| settings.token_url.clone());
        Ok(Tokens {
            grant: grant(file, &path)?,
            token_url,
            client: http::client(WHAT)?,
            current: Mutex::new(None),
        })
    }

    /// A token valid for a while yet. The lock is held while a new one is asked for, so
    /// threads downloading together ask once.
    pub(super) fn token(&self) -> Result<String, ConnectorError> {
        let mut current = self
            .current
            .lock()
            .map_err(|_| ConnectorError::protocol(WHAT, "a thread holding the token panicked"))?;
        if let Some(token) = current.as_ref().filter(|t| Instant::now() < t.renew_at) {
            return Ok(token.value.clone());
        }
        let token = self.request()?;
        *current = Some(token.clone());
        Ok(token.value)
    }

    /// Forgets `rejected` (the API answered 401 to it), unless another thread already did.
    pub(super) fn reject(&self, rejected: &str) {
        if let Ok(mut current) = self.current.lock() {
            if current.as_ref().is_some_and(|t| t.value == rejected) {
                *current = None;
            }
        }
    }

    fn request(&self) -> Result<Token, ConnectorError> {
        let form = self.form()?;
        let asked = Instant::now();
        let response = http::send(WHAT, || {
            self.client
                .post(&self.token_url)
                .header(
                    reqwest::header::CONTENT_TYPE,
                    "application/x-www-form-urlencoded",
                )
                .body(form.clone())
        })?;
        let answer: TokenResponse = response
            .json()
            .map_err(|error| ConnectorError::transport(WHAT, false, error))?;
        let lifetime = Duration::from_secs(answer.expires_in.unwrap_or(ASSERTION_SECONDS));
        Ok(Token {
            value: answer.access_token,
            renew_at: asked + lifetime.saturating_sub(EXPIRY_MARGIN),
        })
    }

    /// The token request's body.
    fn form(&self) -> Result<String, ConnectorError> {
        let mut form = url::form_urlencoded::Serializer::new(String::new());
        match &self.grant {
            Grant::ServiceAccount {
                client_email,
                key,
                key_id,
            } => {
                let assertion =
                    assertion(client_email, key, key_id.as_deref(), &self.token_url, now())?;
                form.append_pair("grant_type", JWT_GRANT);
                form.append_pair("assertion", &assertion);
            }
            Grant::AuthorizedUser {
                client_id,
                client_secret,
                refresh_token,
            } => {
                form.append_pair("grant_type", "refresh_token");
                form.append_pair("client_id", client_id);
                form.append_pair("client_secret", client_secret);
                form.append_pair("refresh_token", refresh_token);
            }
        }
        Ok(form.finish())
    }
}

/// The credentials file: the setting, else the variable Google's own libraries read.
fn credentials_path(
    settings: &DriveSettings,
    env: impl Fn(&str) -> Option<OsString>,
) -> Result<PathBuf, ConnectorError> {
    settings
        .credentials
        .clone()
        .or_else(|| env(CREDENTIALS_ENV).filter(|value| !value.is_empty()).map(PathBuf::from))
        .ok_or_else(|| {
            ConnectorError::Config(format!(
                "Google Drive needs credentials: set [connectors.gdrive] credentials in shiori.toml \
                 or the {CREDENTIALS_ENV} environment variable to a service-account key or an \
                 authorized-user JSON file"
            ))
        })
}

fn parse(text: &str, path: &Path) -> Result<CredentialsFile, ConnectorError> {
    // serde_json's message may quote part of the file; only where it failed is told.
    serde_json::from_str(text).map_err(|error| {
        ConnectorError::Config(format!(
            "the Google credentials file {} is not valid JSON (line {}, column {})",
            path.display(),
            error.line(),
            error.column()
        ))
    })
}

fn grant(file: CredentialsFile, path: &Path) -> Result<Grant, ConnectorError> {
    let missing = |field: &str| {
        ConnectorError::Config(format!(
            "the Google credentials file {} has no \"{field}\"",
            path.display()
        ))
    };
    match file.kind.as_deref() {
        Some("service_account") => {
            let pem = file.private_key.ok_or_else(|| missing("private_key"))?;
            let key = jsonwebtoken::EncodingKey::from_rsa_pem(pem.as_bytes()).map_err(|error| {
                ConnectorError::transport(
                    format!("the private key in {}", path.display()),
                    false,
                    error,
                )
            })?;
            Ok(Grant::ServiceAccount {
                client_email: file.client_email.ok_or_else(|| missing("client_email"))?,
                key,
                key_id: file.private_key_id,
            })
        }
        Some("authorized_user") => Ok(Grant::AuthorizedUser {
            client_id: file.client_id.ok_or_else(|| missing("client_id"))?,
            client_secret: file.client_secret.ok_or_else(|| missing("client_secret"))?,
            refresh_token: file.refresh_token.ok_or_else(|| missing("refresh_token"))?,
        }),
        _ => Err(ConnectorError::Config(format!(
            "the Google credentials file {} is neither a service-account key nor an \
             authorized-user file (\"type\": \"service_account\" or \"authorized_user\")",
            path.display()
        ))),
    }
}

/// The signed JWT a service account trades for a token.
fn assertion(
    client_email: &str,
    key: &jsonwebtoken::EncodingKey,
    key_id: Option<&str>,
    audience: &str,
    issued: u64,
) -> Result<String, ConnectorError> {
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256);
    header.kid = key_id.map(str::to_string);
    let claims = Claims {
        iss: client_email,
        scope: SCOPE,
        aud: audience,
        iat: issued,
        exp: issued + ASSERTION_SECONDS,
    };
    jsonwebtoken::encode(&header, &claims, key).map_err(|error| {
        ConnectorError::transport("signing the service-account assertion", false, error)
    })
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_setting_wins_over_the_variable_and_neither_names_both() {
        let mut settings = DriveSettings::default();
        let env = |_: &str| Some(OsString::from("/from/env.json"));
        assert_eq!(
            credentials_path(&settings, env).unwrap(),
            PathBuf::from("/from/env.json")
        );
        settings.credentials = Some("/from/settings.json".into());
        assert_eq!(
            credentials_path(&settings, env).unwrap(),
            PathBuf::from("/from/settings.json")
        );
        settings.credentials = None;
        let error = credentials_path(&settings, |_| None)
            .unwrap_err()
            .to_string();
        assert!(error.contains("GOOGLE_APPLICATION_CREDENTIALS"), "{error}");
        assert!(error.contains("[connectors.gdrive] credentials"), "{error}");
    }

    #[test]
    fn a_broken_file_is_described_without_its_content() {
        let path = Path::new("/keys/drive.json");
        let error = parse("{\"private_key\": \"SECRET", path)
            .err()
            .unwrap()
            .to_string();
        assert!(!error.contains("SECRET"), "{error}");
        let file = parse(r#"{"type": "authorized_user", "client_id": "c"}"#, path).unwrap();
        let error = grant(file, path).err().unwrap().to_string();
        assert!(error.contains("client_secret"), "{error}");
        let file = parse(r#"{"type": "external_account"}"#, path).unwrap();
        assert!(matches!(grant(file, path), Err(ConnectorError::Config(_))));
    }
}
