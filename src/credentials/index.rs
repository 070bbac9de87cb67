//! The index of stored secrets: each name and the store that holds it, never a value. The
//! keychain cannot list its entries and the file store cannot without its passphrase, so
//! `credential list` and lookups read this (`credentials.json` in the data directory).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{CredentialError, StoreKind};

pub const FILE_NAME: &str = "credentials.json";

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Index {
    #[serde(default)]
    pub secrets: BTreeMap<String, StoreKind>,
    /// How many times the index was written: a process that read values before sees they may
    /// have changed since (see `SecretLookup::generation`).
    #[serde(default)]
    pub changes: u64,
}

impl Index {
    pub fn path(data_dir: &Path) -> PathBuf {
        data_dir.join(FILE_NAME)
    }

    /// Reads the index; a missing file is an empty index. Callers hold the credentials lock.
    pub fn read(data_dir: &Path) -> Result<Index, CredentialError> {
        let path = Index::path(data_dir);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| CredentialError::Corrupt {
                path,
                reason: format!(
                    "{e}; it only lists names, so delete it and store the secrets again"
                ),
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Index::default()),
            Err(source) => Err(CredentialError::Io { path, source }),
        }
    }

    /// Replaces the index atomically.
    pub fn write(&self, data_dir: &Path) -> Result<(), CredentialError> {
        let path = Index::path(data_dir);
        let io = |source| CredentialError::Io {
            path: path.clone(),
            source,
        };
        std::fs::create_dir_all(data_dir).map_err(io)?;
        let text = serde_json::to_vec_pretty(self).map_err(|e| CredentialError::Corrupt {
            path: path.clone(),
            reason: e.to_string(),
        })?;
        let temporary = path.with_extension(format!("json.tmp-{}", std::process::id()));
        std::fs::write(&temporary, text).map_err(io)?;
        std::fs::rename(&temporary, &path).map_err(io)
    }
}
