//! Where the state store's encryption key lives, and the choice of that place.
//!
//! The key belongs in the credential store: the OS keychain, or the encrypted credential file
//! when its passphrase is in the environment. A machine with neither (a headless server, a CI
//! runner) must still be able to run scripts without a prompt that nobody can answer, so the
//! first use falls back to a key file (mode 0600) in the data directory; that keeps the
//! database unreadable on its own (a backup, a copy, a synced folder), though not from someone
//! who can read the whole data directory. `capabilities doctor` says which one is in use.
//!
//! The first use records the choice, and a check value sealed with the key, in the database,
//! so every later process uses the same key and a different key is caught with a clear error
//! instead of failing on each value.

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use zeroize::Zeroizing;

use super::seal::StateCipher;
use crate::credentials::{
    Credentials, STATE_KEY_NAME, StoreKind, decode_key, encode_key, random_key,
};

/// What the check value seals; opening it proves the key is the one the store was keyed with.
const CHECK: &[u8] = b"capabilities state store";
/// The sealing context of the check value.
pub(super) const CHECK_CONTEXT: &str = "meta.key_check";

/// Where a store's key is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeySource {
    /// The credential store of that kind (the key named `capabilities.state-key`).
    Credentials(StoreKind),
    /// The key file in the data directory.
    KeyFile,
    /// `CAPABILITIES_STATE_KEY`, which every replica of a shared store can be given.
    Environment,
}

impl KeySource {
    pub fn as_str(self) -> &'static str {
        match self {
            KeySource::Credentials(StoreKind::Keychain) => "keychain",
            KeySource::Credentials(StoreKind::File) => "file",
            KeySource::KeyFile => "key-file",
            KeySource::Environment => "env",
        }
    }

    pub fn parse(recorded: &str) -> Option<KeySource> {
        match recorded {
            "keychain" => Some(KeySource::Credentials(StoreKind::Keychain)),
            "file" => Some(KeySource::Credentials(StoreKind::File)),
            "key-file" => Some(KeySource::KeyFile),
            "env" => Some(KeySource::Environment),
            _ => None,
        }
    }
}

impl fmt::Display for KeySource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            KeySource::Credentials(StoreKind::Keychain) => "the OS keychain",
            KeySource::Credentials(StoreKind::File) => "the encrypted credential file",
            KeySource::KeyFile => "the state key file",
            KeySource::Environment => "the environment (CAPABILITIES_STATE_KEY)",
        })
    }
}

/// The places a store's key may come from.
pub struct StateKeys {
    key_file: PathBuf,
    credentials: Option<Arc<Credentials>>,
}

impl StateKeys {
    /// Only the key file (for stores opened without the user's credential stores).
    pub fn key_file(key_file: PathBuf) -> StateKeys {
        StateKeys {
            key_file,
            credentials: None,
        }
    }

    /// The credential stores first, then the key file.
    pub fn with_credentials(mut self, credentials: Arc<Credentials>) -> StateKeys {
        self.credentials = Some(credentials);
        self
    }

    pub fn key_file_path(&self) -> &Path {
        &self.key_file
    }

    /// The key for a store that has none yet: the credential store's, when it answers without
    /// asking anyone, else the key file's.
    pub fn first(&self) -> Result<(KeySource, Zeroizing<[u8; 32]>), String> {
        if let Some(key) = environment_key() {
            return Ok((KeySource::Environment, key?));
        }
        if let Some(credentials) = &self.credentials {
            let kind = credentials.default_store();
            let usable = match kind {
                StoreKind::Keychain => Ok(()),
                // A prompt would hang a hub whose stdin is JSON-RPC.
                StoreKind::File if credentials.file().passphrase_from_env() => Ok(()),
                StoreKind::File => Err(format!(
                    "the credential file's passphrase is not in {}",
                    crate::env_vars::CAPABILITIES_PASSPHRASE
                )),
            };
            match usable.and_then(|()| credentials.state_key(kind).map_err(|e| e.to_string())) {
                Ok(key) => return Ok((KeySource::Credentials(kind), key)),
                Err(reason) => tracing::info!(
                    "runs are encrypted with a key kept in {}, because {kind} credential store cannot hold it: {reason}",
                    self.key_file.display()
                ),
            }
        }
        Ok((KeySource::KeyFile, self.read_or_create_key_file()?))
    }

    /// The key kept in `source`, which a store recorded at its first use. Never creates one:
    /// a missing key is reported, not replaced (a new key would not open the runs anyway).
    pub fn recorded(&self, source: KeySource) -> Result<Zeroizing<[u8; 32]>, String> {
        let kind = match source {
            KeySource::KeyFile => return self.read_key_file(),
            KeySource::Environment => {
                return environment_key().unwrap_or_else(|| {
                    Err(format!(
                        "{} is not set; give this process the key the store was made with",
                        crate::env_vars::CAPABILITIES_STATE_KEY
                    ))
                });
            }
            KeySource::Credentials(kind) => kind,
        };
        let credentials = self
            .credentials
            .as_ref()
            .ok_or("this command does not open the credential stores")?;
        if kind == StoreKind::File && !credentials.file().passphrase_from_env() {
            // A prompt would hang a hub whose stdin is JSON-RPC.
            return Err(format!(
                "the credential file needs its passphrase in {}",
                crate::env_vars::CAPABILITIES_PASSPHRASE
            ));
        }
        credentials
            .existing_state_key(kind)
            .map_err(|e| e.to_string())?
            .ok_or_else(|| format!("it holds no `{STATE_KEY_NAME}`"))
    }

    fn read_key_file(&self) -> Result<Zeroizing<[u8; 32]>, String> {
        let text = Zeroizing::new(
            std::fs::read_to_string(&self.key_file)
                .map_err(|e| format!("cannot read {}: {e}", self.key_file.display()))?,
        );
        decode_key(text.trim()).ok_or_else(|| {
            format!(
                "{} does not hold a key (64 hex digits)",
                self.key_file.display()
            )
        })
    }

    /// Creates the key file unless another process just did; either way, its key. The file is
    /// written aside and moved into place only if no file is there yet, so nobody ever reads half
    /// a key and two first runs agree on one.
    fn read_or_create_key_file(&self) -> Result<Zeroizing<[u8; 32]>, String> {
        if self.key_file.exists() {
            return self.read_key_file();
        }
        let cannot = |e: std::io::Error| format!("cannot create {}: {e}", self.key_file.display());
        let key = random_key().map_err(cannot)?;
        let dir = self.key_file.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(cannot)?;
        // tempfile creates the file readable by its owner only (0600 on Unix).
        let mut aside = tempfile::Builder::new()
            .prefix(".state-key")
            .tempfile_in(dir)
            .map_err(cannot)?;
        let text = Zeroizing::new(encode_key(&key));
        aside.write_all(text.as_bytes()).map_err(cannot)?;
        aside.as_file().sync_all().map_err(cannot)?;
        match aside.persist_noclobber(&self.key_file) {
            Ok(_) => Ok(key),
            Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => self.read_key_file(),
            Err(e) => Err(cannot(e.error)),
        }
    }
}

/// `CAPABILITIES_STATE_KEY` when it is set: 32 bytes in base64, or 64 hex digits as the key file
/// holds them. A process given it uses it whatever the store recorded (the check value still
/// proves it is the right key), so replicas on other machines need no keychain of their own.
pub fn environment_key() -> Option<Result<Zeroizing<[u8; 32]>, String>> {
    let text = Zeroizing::new(std::env::var(crate::env_vars::CAPABILITIES_STATE_KEY).ok()?);
    let text = text.trim();
    if let Some(key) = decode_key(text) {
        return Some(Ok(key));
    }
    let decoded = Zeroizing::new(
        data_encoding::BASE64
            .decode(text.as_bytes())
            .unwrap_or_default(),
    );
    Some(match <[u8; 32]>::try_from(decoded.as_slice()) {
        Ok(bytes) => Ok(Zeroizing::new(bytes)),
        Err(_) => Err(format!(
            "{} does not hold a key: give 32 bytes in base64 (`openssl rand -base64 32`) or 64 hex digits",
            crate::env_vars::CAPABILITIES_STATE_KEY
        )),
    })
}

/// The check value a new store records with its key source.
pub(super) fn check_value(cipher: &StateCipher) -> Result<Vec<u8>, String> {
    cipher
        .seal(CHECK_CONTEXT, CHECK)
        .map_err(|e| format!("cannot seal the key check: {e}"))
}

/// True when `recorded` is the check value sealed with `cipher`'s key.
pub(super) fn check_matches(cipher: &StateCipher, recorded: &[u8]) -> bool {
    cipher
        .open(CHECK_CONTEXT, recorded)
        .is_ok_and(|opened| opened == CHECK)
}
