//! API keys and who they read as. `[[auth.keys]]` in `shiori.toml` names each key, the
//! environment variable holding its value, and its groups; [`Keyring::load`] reads the values
//! once, at start-up, and [`Keyring::reader`] turns a presented key into the [`Reader`] every
//! read of that request runs as.

use crate::error::ConfigProblem;
use crate::EngineError;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use shiori_core::{check_group_name, normal_group, Access};
use std::collections::BTreeSet;

/// The variable whose value alone (without `[[auth.keys]]`) is one admin key.
pub const LEGACY_KEY_VARIABLE: &str = "SHIORI_API_KEY";

/// The `[auth]` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct AuthConfig {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub keys: Vec<KeyConfig>,
}

/// One `[[auth.keys]]` entry; its value is never in the file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyConfig {
    pub name: String,
    /// The environment variable holding the key's value.
    pub env: String,
    /// The groups whose documents the key reads (besides those without groups).
    #[serde(default)]
    pub groups: Vec<String>,
    /// Reads everything; may reindex, upload, delete and evaluate.
    #[serde(default)]
    pub admin: bool,
}

impl AuthConfig {
    /// Names are distinct and non-empty, every key names its variable, groups are plain words.
    pub(crate) fn check(&self) -> Result<(), ConfigProblem> {
        let mut names = BTreeSet::new();
        for key in &self.keys {
            if key.name.trim().is_empty() || !names.insert(key.name.as_str()) {
                return Err(ConfigProblem(format!(
                    "[[auth.keys]] names must be distinct and non-empty: {:?}",
                    key.name
                )));
            }
            if key.env.trim().is_empty() {
                return Err(ConfigProblem(format!(
                    "[[auth.keys]] {:?} has an empty `env`",
                    key.name
                )));
            }
            for group in &key.groups {
                check_group_name(group).map_err(|message| {
                    ConfigProblem(format!("[[auth.keys]] {:?}: {message}", key.name))
                })?;
            }
        }
        Ok(())
    }

    /// The reader a key stands for, by name (`shiori search --as NAME`).
    pub fn reader(&self, name: &str) -> Result<Reader, EngineError> {
        self.keys
            .iter()
            .find(|key| key.name == name)
            .map(KeyConfig::reader)
            .ok_or_else(|| {
                let known: Vec<&str> = self.keys.iter().map(|key| key.name.as_str()).collect();
                EngineError::Invalid(format!(
                    "no [[auth.keys]] entry is named {name:?}; configured keys: {}",
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                ))
            })
    }
}

impl KeyConfig {
    fn reader(&self) -> Reader {
        Reader {
            key: Some(self.name.clone()),
            access: if self.admin {
                Access::Everything
            } else {
                Access::Groups(
                    self.groups
                        .iter()
                        .map(|group| normal_group(group))
                        .collect(),
                )
            },
            admin: self.admin,
        }
    }
}

/// Who a request reads as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reader {
    /// The key's name; `None` for the machine's owner (local commands, a server without named
    /// keys), whose conversations are everyone's.
    pub key: Option<String>,
    pub access: Access,
    /// May reindex, upload, delete and evaluate.
    pub admin: bool,
}

impl Reader {
    /// The machine's owner: reads and may do everything.
    pub fn owner() -> Reader {
        Reader {
            key: None,
            access: Access::Everything,
            admin: true,
        }
    }

    /// A caller no key vouches for: reads only documents without groups, may change nothing,
    /// and owns no conversation anyone else has.
    pub fn nobody() -> Reader {
        Reader {
            key: Some(String::new()),
            access: Access::Groups(BTreeSet::new()),
            admin: false,
        }
    }
}

/// The keys a server accepts, with their values.
#[derive(Debug, Clone, Default)]
pub struct Keyring {
    keys: Vec<(Vec<u8>, Reader)>,
}

impl Keyring {
    /// `[[auth.keys]]` with each value from its variable (a missing one is an error naming the
    /// key); without entries, `SHIORI_API_KEY` as one admin key; else no keys at all.
    pub fn load(auth: &AuthConfig) -> Result<Keyring, EngineError> {
        if auth.keys.is_empty() {
            return Ok(match std::env::var(LEGACY_KEY_VARIABLE) {
                Ok(value) if !value.is_empty() => Keyring::single_admin(&value),
                _ => Keyring::default(),
            });
        }
        let keys = auth
            .keys
            .iter()
            .map(|key| match std::env::var(&key.env) {
                Ok(value) if !value.is_empty() => Ok((digest(&value), key.reader())),
                _ => Err(EngineError::Invalid(format!(
                    "the API key {:?} reads its value from ${}, which is not set",
                    key.name, key.env
                ))),
            })
            .collect::<Result<_, _>>()?;
        Ok(Keyring { keys })
    }

    /// One key that reads and may do everything, as the machine's owner does.
    pub fn single_admin(value: &str) -> Keyring {
        Keyring {
            keys: vec![(digest(value), Reader::owner())],
        }
    }

    /// Named keys, each with its reader (for servers started in tests and embedders).
    pub fn from_keys(keys: impl IntoIterator<Item = (String, KeyConfig)>) -> Keyring {
        Keyring {
            keys: keys
                .into_iter()
                .map(|(value, key)| (digest(&value), key.reader()))
                .collect(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The reader of a presented key. Digests are compared, each in full, so neither a key's
    /// contents nor its length leak through timing.
    pub fn reader(&self, presented: &str) -> Option<&Reader> {
        let presented = digest(presented);
        // Every key is compared, so the time taken does not say which one matched.
        self.keys.iter().fold(None, |found, (value, reader)| {
            match constant_time_eq(value, &presented) {
                true => Some(reader),
                false => found,
            }
        })
    }
}

fn digest(value: &str) -> Vec<u8> {
    Sha256::digest(value.as_bytes()).to_vec()
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(name: &str, groups: &[&str], admin: bool) -> KeyConfig {
        KeyConfig {
            name: name.into(),
            env: format!("KEY_{name}"),
            groups: groups.iter().map(|g| g.to_string()).collect(),
            admin,
        }
    }

    #[test]
    fn a_presented_key_reads_as_its_groups() {
        let keyring = Keyring::from_keys([
            ("hr-secret".to_string(), key("hr", &["hr"], false)),
            ("root-secret".to_string(), key("root", &[], true)),
        ]);
        let hr = keyring.reader("hr-secret").unwrap();
        assert_eq!(hr.key.as_deref(), Some("hr"));
        assert_eq!(hr.access, Access::Groups(["hr".to_string()].into()));
        assert!(!hr.admin);
        assert_eq!(
            keyring.reader("root-secret").unwrap().access,
            Access::Everything
        );
        assert!(keyring.reader("hr-secre").is_none());
        assert!(keyring.reader("").is_none());
    }

    #[test]
    fn a_missing_variable_names_the_key() {
        let auth = AuthConfig {
            keys: vec![KeyConfig {
                env: "SHIORI_TEST_KEY_THAT_IS_NEVER_SET".into(),
                ..key("sales-team", &["sales"], false)
            }],
        };
        let error = Keyring::load(&auth).unwrap_err().to_string();
        assert!(error.contains("sales-team"), "{error}");
        assert!(
            error.contains("SHIORI_TEST_KEY_THAT_IS_NEVER_SET"),
            "{error}"
        );
    }

    #[test]
    fn key_entries_are_checked() {
        let twice = AuthConfig {
            keys: vec![key("a", &[], false), key("a", &[], false)],
        };
        assert!(twice.check().is_err());
        let bad_group = AuthConfig {
            keys: vec![key("a", &["h r"], false)],
        };
        assert!(bad_group.check().is_err());
        let unknown = AuthConfig::default().reader("nobody").unwrap_err();
        assert!(unknown.to_string().contains("nobody"));
    }
}
