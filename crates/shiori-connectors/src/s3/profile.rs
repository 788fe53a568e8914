//! The AWS shared credentials and config files (`~/.aws/credentials`, `~/.aws/config`) for the
//! profile `AWS_PROFILE` names (`default` without it): what `object_store` does not read itself.

use object_store::aws::AmazonS3ConfigKey;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// A setting a profile may give.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum ProfileKey {
    AccessKeyId,
    SecretAccessKey,
    SessionToken,
    Region,
    Endpoint,
}

impl ProfileKey {
    fn from_name(name: &str) -> Option<ProfileKey> {
        Some(match name {
            "aws_access_key_id" => ProfileKey::AccessKeyId,
            "aws_secret_access_key" => ProfileKey::SecretAccessKey,
            "aws_session_token" => ProfileKey::SessionToken,
            "region" => ProfileKey::Region,
            "endpoint_url" => ProfileKey::Endpoint,
            _ => return None,
        })
    }

    /// The variables that, when set, win over the profile.
    pub(crate) fn env_names(self) -> &'static [&'static str] {
        match self {
            ProfileKey::AccessKeyId => &["AWS_ACCESS_KEY_ID"],
            ProfileKey::SecretAccessKey => &["AWS_SECRET_ACCESS_KEY"],
            ProfileKey::SessionToken => &["AWS_SESSION_TOKEN"],
            ProfileKey::Region => &["AWS_REGION", "AWS_DEFAULT_REGION"],
            ProfileKey::Endpoint => &["AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"],
        }
    }

    pub(crate) fn config_key(self) -> AmazonS3ConfigKey {
        match self {
            ProfileKey::AccessKeyId => AmazonS3ConfigKey::AccessKeyId,
            ProfileKey::SecretAccessKey => AmazonS3ConfigKey::SecretAccessKey,
            ProfileKey::SessionToken => AmazonS3ConfigKey::Token,
            ProfileKey::Region => AmazonS3ConfigKey::Region,
            ProfileKey::Endpoint => AmazonS3ConfigKey::Endpoint,
        }
    }
}

/// Where the two files are and which profile to read.
pub(crate) struct ProfileFiles {
    pub(crate) profile: String,
    pub(crate) credentials: Option<PathBuf>,
    pub(crate) config: Option<PathBuf>,
}

impl ProfileFiles {
    pub(crate) fn from_env() -> ProfileFiles {
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let file = |variable: &str, name: &str| {
            std::env::var_os(variable)
                .map(PathBuf::from)
                .or_else(|| home.as_ref().map(|home| home.join(".aws").join(name)))
        };
        ProfileFiles {
            profile: std::env::var("AWS_PROFILE").unwrap_or_else(|_| "default".into()),
            credentials: file("AWS_SHARED_CREDENTIALS_FILE", "credentials"),
            config: file("AWS_CONFIG_FILE", "config"),
        }
    }
}

/// The profile's settings: the credentials file's section wins over the config file's.
pub(crate) fn settings(files: &ProfileFiles) -> BTreeMap<ProfileKey, String> {
    let read = |path: &Option<PathBuf>| {
        path.as_ref()
            .and_then(|path| std::fs::read_to_string(path).ok())
            .unwrap_or_default()
    };
    let config_section = if files.profile == "default" {
        "default".to_string()
    } else {
        format!("profile {}", files.profile)
    };
    let mut settings = section(&read(&files.config), &config_section);
    settings.extend(section(&read(&files.credentials), &files.profile));
    settings
}

/// The known keys of one `[name]` section of an INI file.
fn section(text: &str, name: &str) -> BTreeMap<ProfileKey, String> {
    let mut inside = false;
    let mut found = BTreeMap::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('#') || line.starts_with(';') || line.is_empty() {
            continue;
        }
        if let Some(header) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            inside = header.trim() == name;
            continue;
        }
        if !inside {
            continue;
        }
        if let Some((key, value)) = line.split_once('=') {
            if let Some(key) = ProfileKey::from_name(key.trim()) {
                found.insert(key, value.trim().to_string());
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_named_profile_from_both_files() {
        let dir = tempfile::tempdir().unwrap();
        let credentials = dir.path().join("credentials");
        let config = dir.path().join("config");
        std::fs::write(
            &credentials,
            "[default]\naws_access_key_id = DEF\n\n[work]\n# comment\naws_access_key_id = AKIA1\naws_secret_access_key=s3cr3t\n",
        )
        .unwrap();
        std::fs::write(
            &config,
            "[default]\nregion = us-east-1\n[profile work]\nregion = ap-northeast-1\nendpoint_url = http://127.0.0.1:9000\n",
        )
        .unwrap();
        let files = ProfileFiles {
            profile: "work".into(),
            credentials: Some(credentials),
            config: Some(config),
        };
        let found = settings(&files);
        assert_eq!(found[&ProfileKey::AccessKeyId], "AKIA1");
        assert_eq!(found[&ProfileKey::SecretAccessKey], "s3cr3t");
        assert_eq!(found[&ProfileKey::Region], "ap-northeast-1");
        assert_eq!(found[&ProfileKey::Endpoint], "http://127.0.0.1:9000");
        assert!(!found.contains_key(&ProfileKey::SessionToken));
    }

    #[test]
    fn missing_files_give_nothing() {
        let files = ProfileFiles {
            profile: "default".into(),
            credentials: Some("/nonexistent/credentials".into()),
            config: None,
        };
        assert!(settings(&files).is_empty());
    }
}
