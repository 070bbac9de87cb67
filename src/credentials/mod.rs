//! Where the values of `${secret:NAME}` references come from, and where they are kept: the OS
//! keychain ([`KeychainStore`]) or, where there is none, an encrypted file ([`FileStore`]).
//! [`Credentials`] puts the two behind one name → value lookup, remembers which store holds
//! which name (an index of names, never values), and keeps the state store's key.
//!
//! Secrets are looked up only when a connection opens, and only by the bridge to an upstream;
//! nothing else sees them. The index counts its writes, so a process notices a value stored
//! anew by another and reads it again ([`Resolved`] keeps what was derived from the values). In memory they are [`Secret`]s, wiped on drop and printed as `•••`.
//! A person types a passphrase or a value at a [`hidden`] prompt, which a signal stops. The
//! process keeps its memory (and the environment it was started with) from the servers it
//! starts ([`keep_private`]).

mod file;
mod forms;
pub(crate) mod hidden;
mod index;
mod keychain;
mod leaves;
mod passphrase;
mod private_memory;
mod redaction;
mod resolved;
mod secret;

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use zeroize::Zeroizing;

pub use file::FileStore;
pub use index::Index;
pub use keychain::KeychainStore;
pub use passphrase::Passphrase;
pub use private_memory::keep_private;
pub(crate) use redaction::remember;
pub use redaction::{MASK, RedactingStderr, Redaction, SHORTEST, ScriptWritten, Sent, WEAK};
pub use resolved::{Resolved, Snapshot};
pub use secret::Secret;

use crate::env_vars;

/// Looks up a stored secret by name. The error is a message for the user.
pub trait SecretLookup: Send + Sync {
    fn secret(&self, name: &str) -> Result<String, String>;

    /// A number that changes whenever a stored value may have changed (`credential set`, in
    /// this process or another), so that what was read, and the redaction made of it, is read
    /// again; constant for a lookup whose values never change.
    fn generation(&self) -> u64 {
        0
    }

    /// Where secrets that change while the process runs (OAuth tokens) are read and written;
    /// `None` for a lookup that cannot keep anything.
    fn vault(&self) -> Option<&dyn SecretVault> {
        None
    }
}

/// Secrets the process itself writes and reads again (a connection's OAuth tokens): every read
/// goes to the store, past the per-process cache, since another process may have replaced the
/// value. Errors are messages for the user, without the value.
pub trait SecretVault: Send + Sync {
    /// `None` when nothing is stored under `name`.
    fn load(&self, name: &str) -> Result<Option<Secret>, String>;
    fn save(&self, name: &str, value: &Secret) -> Result<(), String>;
    /// Removing what is not there is not an error.
    fn erase(&self, name: &str) -> Result<(), String>;
    /// Waits until no other process (nor another caller in this one) refreshes `name`, and
    /// holds them off until the returned lock drops: a refresh token is single-use, so two
    /// refreshes of one connection at once would leave the second refused and the connection
    /// signed out. `None` where values are not shared between processes.
    fn refresh_lock(&self, _name: &str) -> Result<Option<std::fs::File>, String> {
        Ok(None)
    }
}

/// The lookup for code that has no secret store: every secret is missing, with the fix.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoSecretStore;

impl SecretLookup for NoSecretStore {
    fn secret(&self, name: &str) -> Result<String, String> {
        Err(format!(
            "secret `{name}` is not stored; store it with `capabilities credential set {name}`, or reference an environment variable with `${{env:VAR}}` instead"
        ))
    }
}

/// Which store holds a secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StoreKind {
    Keychain,
    File,
}

impl StoreKind {
    pub fn as_str(self) -> &'static str {
        match self {
            StoreKind::Keychain => "keychain",
            StoreKind::File => "file",
        }
    }
}

impl fmt::Display for StoreKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for StoreKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "keychain" => Ok(StoreKind::Keychain),
            "file" => Ok(StoreKind::File),
            other => Err(format!(
                "`{other}` is not a credential store; use `keychain` (the OS keychain) or `file` (an encrypted file, for machines without one)"
            )),
        }
    }
}

/// A place secrets are kept.
pub trait SecretStore: Send + Sync {
    fn kind(&self) -> StoreKind;
    /// `None` when nothing is stored under `name`.
    fn get(&self, name: &str) -> Result<Option<Secret>, CredentialError>;
    fn set(&self, name: &str, value: &Secret) -> Result<(), CredentialError>;
    /// True when something was removed.
    fn remove(&self, name: &str) -> Result<bool, CredentialError>;
}

/// Why a secret could not be stored, read or removed. No message contains a secret's value.
#[derive(Debug, thiserror::Error)]
pub enum CredentialError {
    #[error(
        "the OS keychain is not available here: {reason}. Use the encrypted file store instead: `capabilities credential set NAME --store file` for one secret, or `store = \"file\"` under [credentials] in config.toml for all of them (its passphrase comes from a prompt or ${})",
        env_vars::CAPABILITIES_PASSPHRASE
    )]
    KeychainUnavailable { reason: String },

    #[error("the OS keychain failed: {reason}")]
    Keychain { reason: String },

    #[error(
        "the encrypted credential file {} needs its passphrase: set {} or run the command in a terminal to be asked for it",
        .path.display(), env_vars::CAPABILITIES_PASSPHRASE
    )]
    NoPassphrase { path: PathBuf },

    #[error(
        "cannot read the passphrase from the terminal ({reason}); set {} instead",
        env_vars::CAPABILITIES_PASSPHRASE
    )]
    Prompt { reason: String },

    #[error("stopped at the passphrase prompt; nothing was read")]
    Interrupted,

    #[error("the two passphrases differ; nothing was stored")]
    PassphraseMismatch,

    #[error("the passphrase is empty; the encrypted file store needs one")]
    EmptyPassphrase,

    #[error(
        "wrong passphrase for the encrypted credential file {}; check {} (or what you typed)",
        .path.display(), env_vars::CAPABILITIES_PASSPHRASE
    )]
    WrongPassphrase { path: PathBuf },

    #[error(
        "the credential file {} is damaged ({reason}); move it away and store the secrets again with `capabilities credential set`",
        .path.display()
    )]
    Corrupt { path: PathBuf, reason: String },

    #[error("cannot use {}: {source}", .path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },

    #[error(
        "secret `{name}` is not stored (looked in the {store} store); store it with `capabilities credential set {name}`{elsewhere}",
        elsewhere = if *.store == StoreKind::Keychain {
            " (where no keychain works, such as over SSH or in a container: add `--store file`, and `store = \"file\"` under [credentials] so it is looked for there)"
        } else {
            ""
        }
    )]
    NotStored { name: String, store: StoreKind },

    #[error(
        "`{name}` is not a secret name: use letters, digits, `_`, `-` and `.` (as in `${{secret:NAME}}`)"
    )]
    InvalidName { name: String },

    #[error("`{name}` is the name of capabilities' own state-store key; pick another name")]
    Reserved { name: String },
}

/// The secret that holds the key encrypting runs and their journal at rest.
pub const STATE_KEY_NAME: &str = "capabilities.state-key";

/// Taken in the data directory while the state key is made in a credential store, and left
/// there: it shows that a state store was keyed in that directory.
pub const STATE_KEY_LOCK_FILE_NAME: &str = "state-key.lock";

/// The directory, in the data directory, of the advisory locks that serialize refreshes of one
/// secret (an OAuth connection's tokens) across processes: one file per name, left there.
pub const REFRESH_LOCK_DIR_NAME: &str = "refresh-locks";

/// Checks a name the way `${secret:NAME}` references are checked.
pub fn check_name(name: &str) -> Result<(), CredentialError> {
    let valid = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if !valid {
        return Err(CredentialError::InvalidName {
            name: name.to_string(),
        });
    }
    if name == STATE_KEY_NAME {
        return Err(CredentialError::Reserved {
            name: name.to_string(),
        });
    }
    Ok(())
}

/// Both stores, the index of names, and a per-process cache of values already read (so a hub
/// with many connections asks the keychain, or decrypts the file, once per secret, until the
/// index says a value changed).
pub struct Credentials {
    data_dir: PathBuf,
    default_store: StoreKind,
    keychain: KeychainStore,
    file: FileStore,
    cache: Mutex<Cache>,
}

/// Values read (or why they could not be), as of one generation of the index.
#[derive(Default)]
struct Cache {
    generation: u64,
    values: HashMap<String, Result<Secret, String>>,
}

impl Credentials {
    /// The stores of the data directory `data_dir`; new secrets go to `default_store` unless
    /// told otherwise. Nothing is contacted until a secret is needed.
    pub fn new(data_dir: &Path, default_store: StoreKind) -> Credentials {
        Credentials::with_passphrase(data_dir, default_store, Passphrase::from_environment())
    }

    pub fn with_passphrase(
        data_dir: &Path,
        default_store: StoreKind,
        passphrase: Passphrase,
    ) -> Credentials {
        Credentials {
            data_dir: data_dir.to_path_buf(),
            default_store,
            keychain: KeychainStore::new(),
            file: FileStore::new(data_dir, passphrase),
            cache: Mutex::default(),
        }
    }

    pub fn default_store(&self) -> StoreKind {
        self.default_store
    }

    pub fn keychain(&self) -> &KeychainStore {
        &self.keychain
    }

    pub fn file(&self) -> &FileStore {
        &self.file
    }

    fn store(&self, kind: StoreKind) -> &dyn SecretStore {
        match kind {
            StoreKind::Keychain => &self.keychain,
            StoreKind::File => &self.file,
        }
    }

    /// Every stored name and its store (from the index; no store is contacted).
    pub fn list(&self) -> Result<Vec<(String, StoreKind)>, CredentialError> {
        let _lock = file::lock(&self.lock_path(), false)?;
        Ok(Index::read(&self.data_dir)?.secrets.into_iter().collect())
    }

    /// The store that holds `name`: the index's answer, else the default store (a secret put
    /// in the keychain by another tool under service `capabilities` is found too).
    pub fn store_of(&self, name: &str) -> Result<StoreKind, CredentialError> {
        Ok(self.indexed(name)?.unwrap_or(self.default_store))
    }

    fn indexed(&self, name: &str) -> Result<Option<StoreKind>, CredentialError> {
        let _lock = file::lock(&self.lock_path(), false)?;
        Ok(Index::read(&self.data_dir)?.secrets.get(name).copied())
    }

    /// Reads a secret from the store that holds it.
    pub fn get(&self, name: &str) -> Result<Secret, CredentialError> {
        let indexed = self.indexed(name)?;
        let store = indexed.unwrap_or(self.default_store);
        let not_stored = || CredentialError::NotStored {
            name: name.to_string(),
            store,
        };
        let found = match self.store(store).get(name) {
            // A name we never stored is only looked for in passing: say it is not stored rather
            // than why the default store cannot be asked.
            Err(_) if indexed.is_none() => return Err(not_stored()),
            other => other?,
        };
        let secret = found.ok_or_else(not_stored)?;
        redaction::remember(&secret);
        Ok(secret)
    }

    /// Stores `value` under `name` in `store` (the default when `None`) and records it in the
    /// index. A secret that moves to another store is removed from the old one.
    pub fn set(
        &self,
        name: &str,
        value: &Secret,
        store: Option<StoreKind>,
    ) -> Result<StoreKind, CredentialError> {
        check_name(name)?;
        let store = store.unwrap_or(self.default_store);
        self.store(store).set(name, value)?;
        let previous = self.update_index(|index| index.secrets.insert(name.to_string(), store))?;
        if let Some(previous) = previous.filter(|p| *p != store) {
            // Leaving a copy behind would keep a value the user meant to replace.
            if let Err(e) = self.store(previous).remove(name) {
                tracing::warn!(
                    "secret `{name}` is now in the {store} store, but its old copy in the {previous} store could not be removed: {e}"
                );
            }
        }
        self.forget(name);
        Ok(store)
    }

    /// Removes a secret from its store and the index; returns the store it was in.
    pub fn remove(&self, name: &str) -> Result<StoreKind, CredentialError> {
        check_name(name)?;
        let indexed = self.indexed(name)?;
        let store = indexed.unwrap_or(self.default_store);
        let removed = match self.store(store).remove(name) {
            Err(_) if indexed.is_none() => false,
            other => other?,
        };
        let indexed = self
            .update_index(|index| index.secrets.remove(name))?
            .is_some();
        self.forget(name);
        if removed || indexed {
            Ok(store)
        } else {
            Err(CredentialError::NotStored {
                name: name.to_string(),
                store,
            })
        }
    }

    /// The 32-byte key that encrypts runs and their journal at rest: read from `kind`'s store,
    /// or created there (from the OS's random source) on first use. Concurrent first uses
    /// agree on one key.
    pub fn state_key(&self, kind: StoreKind) -> Result<Zeroizing<[u8; 32]>, CredentialError> {
        // A lock of its own: the file store takes the credentials lock inside `set`.
        let _lock = file::lock(&self.data_dir.join(STATE_KEY_LOCK_FILE_NAME), true)?;
        if let Some(key) = self.existing_state_key(kind)? {
            return Ok(key);
        }
        let store = self.store(kind);
        let key = random_key().map_err(|source| CredentialError::Io {
            path: self.data_dir.clone(),
            source,
        })?;
        store.set(STATE_KEY_NAME, &Secret::new(encode_key(&key)))?;
        Ok(key)
    }

    /// The state key kept in `kind`'s store, never creating one: `None` when there is none.
    /// A stored value that is not a key is an error, so it is never overwritten.
    pub fn existing_state_key(
        &self,
        kind: StoreKind,
    ) -> Result<Option<Zeroizing<[u8; 32]>>, CredentialError> {
        let Some(hex) = self.store(kind).get(STATE_KEY_NAME)? else {
            return Ok(None);
        };
        decode_key(hex.expose())
            .map(Some)
            .ok_or_else(|| CredentialError::Corrupt {
                path: PathBuf::from(format!("{STATE_KEY_NAME} in the {kind} store")),
                reason: "it does not hold a key (64 hex digits)".to_string(),
            })
    }

    fn lock_path(&self) -> PathBuf {
        self.data_dir.join(file::LOCK_FILE_NAME)
    }

    fn update_index<T>(&self, change: impl FnOnce(&mut Index) -> T) -> Result<T, CredentialError> {
        let _lock = file::lock(&self.lock_path(), true)?;
        let mut index = Index::read(&self.data_dir)?;
        let outcome = change(&mut index);
        index.changes = index.changes.wrapping_add(1);
        index.write(&self.data_dir)?;
        Ok(outcome)
    }

    fn forget(&self, name: &str) {
        self.cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values
            .remove(name);
    }
}

/// 32 bytes from the OS's random source.
pub fn random_key() -> std::io::Result<Zeroizing<[u8; 32]>> {
    let mut key = Zeroizing::new([0u8; 32]);
    getrandom::fill(key.as_mut_slice())
        .map_err(|e| std::io::Error::other(format!("the OS random source failed: {e}")))?;
    Ok(key)
}

/// A key as the 64 hex digits it is stored as.
pub fn encode_key(key: &[u8; 32]) -> String {
    key.iter().map(|b| format!("{b:02x}")).collect()
}

/// The key that [`encode_key`] wrote; `None` for anything else.
pub fn decode_key(hex: &str) -> Option<Zeroizing<[u8; 32]>> {
    if hex.len() != 64 || !hex.is_ascii() {
        return None;
    }
    let mut key = Zeroizing::new([0u8; 32]);
    for (i, byte) in key.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(key)
}

impl SecretLookup for Credentials {
    fn secret(&self, name: &str) -> Result<String, String> {
        let generation = self.generation();
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if cache.generation != generation {
            *cache = Cache {
                generation,
                values: HashMap::new(),
            };
        }
        // Failures are remembered too, so a missing keychain costs its timeout once, not once
        // per connection.
        let found = cache
            .values
            .entry(name.to_string())
            .or_insert_with(|| self.get(name).map_err(|e| e.to_string()));
        found
            .as_ref()
            .map(|secret| secret.expose().to_string())
            .map_err(Clone::clone)
    }

    /// How many times the index was written: every `credential set` and `remove` writes it.
    /// Asked on every run and tool answer, so it takes no lock: the index is replaced whole
    /// (written aside, then renamed), and a reader sees the old one or the new one.
    fn generation(&self) -> u64 {
        Index::read(&self.data_dir).map_or(0, |index| index.changes)
    }

    fn vault(&self) -> Option<&dyn SecretVault> {
        Some(self)
    }
}

impl SecretVault for Credentials {
    fn load(&self, name: &str) -> Result<Option<Secret>, String> {
        match self.get(name) {
            Ok(secret) => Ok(Some(secret)),
            Err(CredentialError::NotStored { .. }) => Ok(None),
            Err(e) => Err(e.to_string()),
        }
    }

    fn save(&self, name: &str, value: &Secret) -> Result<(), String> {
        self.set(name, value, None)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    fn erase(&self, name: &str) -> Result<(), String> {
        match self.remove(name) {
            Ok(_) | Err(CredentialError::NotStored { .. }) => Ok(()),
            Err(e) => Err(e.to_string()),
        }
    }

    /// An advisory lock on a file of its own beside the stores, whichever store holds `name`:
    /// the keychain has no locks to offer, and the file store's own lock is held only while
    /// its file is written.
    fn refresh_lock(&self, name: &str) -> Result<Option<std::fs::File>, String> {
        check_name(name).map_err(|e| e.to_string())?;
        let path = self
            .data_dir
            .join(REFRESH_LOCK_DIR_NAME)
            .join(format!("{name}.lock"));
        file::lock(&path, true).map(Some).map_err(|e| {
            format!(
                "cannot take the refresh lock of `{name}` ({e}); check that the data directory {} is writable",
                self.data_dir.display()
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_stored_anew_by_another_process_is_read_anew() {
        let dir = tempfile::tempdir().unwrap();
        let open =
            || Credentials::with_passphrase(dir.path(), StoreKind::File, Passphrase::fixed("x"));
        let (hub, cli) = (open(), open());
        cli.set("api", &Secret::new("first-value".into()), None)
            .unwrap();
        let before = hub.generation();
        assert_eq!(hub.secret("api").unwrap(), "first-value");
        // Cached: read once per generation.
        assert_eq!(hub.generation(), before);
        cli.set("api", &Secret::new("second-value".into()), None)
            .unwrap();
        assert_ne!(hub.generation(), before);
        assert_eq!(hub.secret("api").unwrap(), "second-value");
        // A secret missing when first asked for is found once stored.
        assert!(hub.secret("later").is_err());
        cli.set("later", &Secret::new("third-value".into()), None)
            .unwrap();
        assert_eq!(hub.secret("later").unwrap(), "third-value");
        cli.remove("api").unwrap();
        assert!(hub.secret("api").is_err());
    }

    #[test]
    fn a_refresh_lock_holds_off_every_other_until_it_drops() {
        let dir = tempfile::tempdir().unwrap();
        let credentials =
            Credentials::with_passphrase(dir.path(), StoreKind::File, Passphrase::fixed("x"));
        let held = credentials
            .refresh_lock("oauth.peer.default")
            .unwrap()
            .expect("a lock");
        let path = dir
            .path()
            .join(REFRESH_LOCK_DIR_NAME)
            .join("oauth.peer.default.lock");
        let other = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        assert!(matches!(
            other.try_lock(),
            Err(std::fs::TryLockError::WouldBlock)
        ));
        drop(held);
        other.try_lock().expect("free once dropped");
        // A name is a file name only when it is a valid secret name.
        let error = credentials.refresh_lock("../elsewhere").unwrap_err();
        assert!(error.contains("../elsewhere"), "{error}");
    }

    #[test]
    fn names_follow_the_reference_syntax() {
        assert!(check_name("github-personal.v2_x").is_ok());
        for bad in ["", "a b", "a/b", "ä"] {
            let e = check_name(bad).unwrap_err();
            assert!(e.to_string().contains("letters, digits"), "{e}");
        }
        assert!(matches!(
            check_name(STATE_KEY_NAME),
            Err(CredentialError::Reserved { .. })
        ));
    }

    #[test]
    fn index_records_the_store_and_the_state_key_is_stable() {
        let dir = tempfile::tempdir().unwrap();
        let credentials =
            Credentials::with_passphrase(dir.path(), StoreKind::File, Passphrase::fixed("p"));
        credentials
            .set("token", &Secret::new("value-1".into()), None)
            .unwrap();
        assert_eq!(
            credentials.list().unwrap(),
            vec![("token".to_string(), StoreKind::File)]
        );
        assert_eq!(credentials.secret("token").unwrap(), "value-1");
        credentials
            .set("token", &Secret::new("value-2".into()), None)
            .unwrap();
        assert_eq!(credentials.secret("token").unwrap(), "value-2");
        let key = credentials.state_key(StoreKind::File).unwrap();
        assert_eq!(*credentials.state_key(StoreKind::File).unwrap(), *key);
        // The key is not a user secret: it stays out of the index.
        assert_eq!(credentials.list().unwrap().len(), 1);
        assert_eq!(credentials.remove("token").unwrap(), StoreKind::File);
        assert!(matches!(
            credentials.remove("token"),
            Err(CredentialError::NotStored { .. })
        ));
        let e = credentials.secret("token").unwrap_err();
        assert!(e.contains("credential set token"), "{e}");
    }
}
