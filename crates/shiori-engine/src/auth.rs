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
    /// The reader of this entry by name alone (`--as NAME`, where no value is presented).
    fn reader(&self) -> Reader {
        Reader {
            owner: Some(self.name.clone()),
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
    /// Who owns the conversations and MCP sessions this reader starts: a presented key's name
    /// with a fingerprint of its value and what it reads, so a key given a new value or other
    /// groups (or a new key under an old name) does not read what the old one was answered;
    /// `None` for the machine's owner (local commands, a server without named keys), whose
    /// conversations are everyone's.
    pub owner: Option<String>,
    pub access: Access,
    /// May reindex, upload, delete and evaluate.
    pub admin: bool,
}

impl Reader {
    /// The machine's owner: reads and may do everything.
    pub fn owner() -> Reader {
        Reader {
            owner: None,
            access: Access::Everything,
            admin: true,
        }
    }

    /// A caller no key vouches for: reads only documents without groups, may change nothing,
    /// and owns no conversation anyone else has.
    pub fn nobody() -> Reader {
        Reader {
            owner: Some(String::new()),
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
                Ok(value) if !value.is_empty() => Ok(presented_key(&value, key)),
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
                .map(|(value, key)| presented_key(&value, &key))
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

/// A key's digest and the reader it stands for, owning what it starts under its name and a
/// fingerprint of its value, groups and admin right.
fn presented_key(value: &str, key: &KeyConfig) -> (Vec<u8>, Reader) {
    let value_digest = digest(value);
    let mut reader = key.reader();
    let mut fingerprint = Sha256::new();
    fingerprint.update(b"shiori conversation owner\0");
    fingerprint.update(&value_digest);
    fingerprint.update([u8::from(reader.admin)]);
    if let Access::Groups(groups) = &reader.access {
        for group in groups {
            fingerprint.update(group.as_bytes());
            fingerprint.update([0]);
        }
    }
    let fingerprint: String = fingerprint.finalize()[..8]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    reader.owner = Some(format!("{}#{fingerprint}", key.name));
    (value_digest, reader)
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
        assert!(hr.owner.as_deref().unwrap().starts_with("hr#"), "{hr:?}");
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
    fn a_key_with_a_new_value_or_other_groups_owns_nothing_of_the_old_one() {
        let owner = |value: &str, groups: &[&str]| {
            let keyring = Keyring::from_keys([(value.to_string(), key("sales", groups, false))]);
            keyring.reader(value).unwrap().owner.clone()
        };
        let before = owner("old-secret", &["sales", "hr"]);
        assert_eq!(before, owner("old-secret", &["hr", "sales"]));
        assert_ne!(before, owner("new-secret", &["sales", "hr"]));
        assert_ne!(before, owner("old-secret", &["sales"]));
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
