//! The encrypted file store, for machines without a keychain (headless servers, containers):
//! every secret in one [age](https://age-encryption.org) file encrypted with a passphrase
//! (scrypt), `credentials.age` in the data directory. Nothing is ever written in clear: the
//! plaintext lives only in wiped buffers, and the file is replaced atomically.
//!
//! Writers (`credential set` in two terminals, the hub creating the state key) take an exclusive
//! lock on `credentials.lock`, then read, change and rewrite the file, so none loses another's
//! secret. Readers take a shared lock.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use age::secrecy::SecretString;
use serde::{Deserialize, Serialize};
use zeroize::Zeroizing;

use super::passphrase::Passphrase;
use super::{CredentialError, Secret, SecretStore, StoreKind};

/// The file's name inside the data directory.
pub const FILE_NAME: &str = "credentials.age";
/// Guards both the encrypted file and the index of names.
pub(crate) const LOCK_FILE_NAME: &str = "credentials.lock";

/// The plaintext inside the age envelope, as read.
#[derive(Deserialize)]
struct Contents {
    secrets: BTreeMap<String, String>,
}

/// The plaintext inside the age envelope, as written: borrowed, so no clear copy outlives the
/// wiped buffer it is encoded into.
#[derive(Serialize)]
struct ContentsRef<'a> {
    version: u32,
    secrets: BTreeMap<&'a str, &'a str>,
}

pub struct FileStore {
    path: PathBuf,
    lock_path: PathBuf,
    passphrase: Passphrase,
    /// The secrets as last read, and which version of the file they are, so a process that
    /// resolves several references decrypts once, yet sees what another process wrote since
    /// (a connection's refreshed tokens).
    cache: Mutex<Option<(Stamp, BTreeMap<String, Secret>)>>,
}

/// What tells one version of the file from another: it is replaced by a rename, so a new
/// version is a new file (another inode), and its time and size change too.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    modified: Option<std::time::SystemTime>,
    len: u64,
    inode: u64,
}

impl Stamp {
    /// The file's stamp now; `None` when it is not there (or cannot be looked at).
    fn of(path: &Path) -> Option<Stamp> {
        let metadata = std::fs::metadata(path).ok()?;
        #[cfg(unix)]
        let inode = std::os::unix::fs::MetadataExt::ino(&metadata);
        #[cfg(not(unix))]
        let inode = 0;
        Some(Stamp {
            modified: metadata.modified().ok(),
            len: metadata.len(),
            inode,
        })
    }
}

impl FileStore {
    pub fn new(data_dir: &Path, passphrase: Passphrase) -> FileStore {
        FileStore {
            path: data_dir.join(FILE_NAME),
            lock_path: data_dir.join(LOCK_FILE_NAME),
            passphrase,
            cache: Mutex::new(None),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn exists(&self) -> bool {
        self.path.exists()
    }

    /// Whether a passphrase can be had without asking (the environment variable is set).
    pub fn passphrase_from_env(&self) -> bool {
        self.passphrase.from_env()
    }

    fn cached(&self) -> std::sync::MutexGuard<'_, Option<(Stamp, BTreeMap<String, Secret>)>> {
        self.cache.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Reads and decrypts the file; `None` when it does not exist yet.
    fn read(&self) -> Result<Option<BTreeMap<String, Secret>>, CredentialError> {
        let bytes = match std::fs::read(&self.path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => {
                return Err(CredentialError::Io {
                    path: self.path.clone(),
                    source,
                });
            }
        };
        let passphrase = self.passphrase.get(&self.path, false)?;
        let plaintext = decrypt(&bytes, &passphrase).map_err(|error| match error {
            // The passphrase's stanza is the only one; failing to open it means a wrong passphrase.
            age::DecryptError::DecryptionFailed | age::DecryptError::NoMatchingKeys => {
                self.passphrase.forget();
                CredentialError::WrongPassphrase {
                    path: self.path.clone(),
                }
            }
            other => CredentialError::Corrupt {
                path: self.path.clone(),
                reason: other.to_string(),
            },
        })?;
        let contents: Contents =
            serde_json::from_slice(&plaintext).map_err(|e| CredentialError::Corrupt {
                path: self.path.clone(),
                reason: format!("its contents are not readable: {e}"),
            })?;
        Ok(Some(
            contents
                .secrets
                .into_iter()
                .map(|(name, value)| (name, Secret::new(value)))
                .collect(),
        ))
    }

    /// Encrypts `secrets` and replaces the file with them atomically (write a temporary file
    /// beside it, then rename), readable by its owner only.
    fn write(
        &self,
        secrets: &BTreeMap<String, Secret>,
        creating: bool,
    ) -> Result<(), CredentialError> {
        let passphrase = self.passphrase.get(&self.path, creating)?;
        let contents = ContentsRef {
            version: 1,
            secrets: secrets
                .iter()
                .map(|(name, value)| (name.as_str(), value.expose()))
                .collect(),
        };
        let mut plaintext = Zeroizing::new(Vec::new());
        serde_json::to_writer(&mut *plaintext, &contents).map_err(|e| {
            CredentialError::Corrupt {
                path: self.path.clone(),
                reason: format!("cannot encode the secrets: {e}"),
            }
        })?;
        let ciphertext =
            encrypt(&plaintext, &passphrase).map_err(|e| CredentialError::Corrupt {
                path: self.path.clone(),
                reason: format!("cannot encrypt: {e}"),
            })?;
        let io = |source| CredentialError::Io {
            path: self.path.clone(),
            source,
        };
        let temporary = self
            .path
            .with_extension(format!("age.tmp-{}", std::process::id()));
        let mut file = private_file(&temporary).map_err(io)?;
        file.write_all(&ciphertext)
            .and_then(|()| file.sync_all())
            .map_err(io)?;
        std::fs::rename(&temporary, &self.path).map_err(io)?;
        Ok(())
    }

    /// Read, change and rewrite under the exclusive lock.
    fn update<T>(
        &self,
        change: impl FnOnce(&mut BTreeMap<String, Secret>) -> T,
    ) -> Result<T, CredentialError> {
        let _lock = lock(&self.lock_path, true)?;
        let existing = self.read()?;
        let creating = existing.is_none();
        let mut secrets = existing.unwrap_or_default();
        let outcome = change(&mut secrets);
        self.write(&secrets, creating)?;
        *self.cached() = Stamp::of(&self.path).map(|stamp| (stamp, secrets));
        Ok(outcome)
    }
}

impl SecretStore for FileStore {
    fn kind(&self) -> StoreKind {
        StoreKind::File
    }

    fn get(&self, name: &str) -> Result<Option<Secret>, CredentialError> {
        if let Some((stamp, secrets)) = self.cached().as_ref()
            && Stamp::of(&self.path).as_ref() == Some(stamp)
        {
            return Ok(secrets.get(name).cloned());
        }
        let (stamp, secrets) = {
            let _lock = lock(&self.lock_path, false)?;
            // Taken under the lock, before the read: a write after it shows as a change.
            let stamp = Stamp::of(&self.path);
            (stamp, self.read()?.unwrap_or_default())
        };
        let found = secrets.get(name).cloned();
        *self.cached() = stamp.map(|stamp| (stamp, secrets));
        Ok(found)
    }

    fn set(&self, name: &str, value: &Secret) -> Result<(), CredentialError> {
        self.update(|secrets| {
            secrets.insert(name.to_string(), value.clone());
        })
    }

    fn remove(&self, name: &str) -> Result<bool, CredentialError> {
        if !self.exists() {
            return Ok(false);
        }
        self.update(|secrets| secrets.remove(name).is_some())
    }
}

fn decrypt(
    ciphertext: &[u8],
    passphrase: &SecretString,
) -> Result<Zeroizing<Vec<u8>>, age::DecryptError> {
    let identity = age::scrypt::Identity::new(passphrase.clone());
    let decryptor = age::Decryptor::new(ciphertext)?;
    let mut reader = decryptor.decrypt(std::iter::once(&identity as &dyn age::Identity))?;
    let mut plaintext = Zeroizing::new(Vec::new());
    reader.read_to_end(&mut plaintext)?;
    Ok(plaintext)
}

/// The scrypt work factor (log2 of N, with r = 8): 2^17 is OWASP's recommendation, 128 MiB and
/// a fraction of a second per read. age's own choice, about a second of this machine's time,
/// reaches 2^20 on a fast one: a GiB of memory for every command that reads a secret, more than
/// the containers this store is meant for allow.
#[cfg(not(test))]
const WORK_FACTOR: u8 = 17;
/// Unit tests make dozens of files; the format and the code path are the same.
#[cfg(test)]
const WORK_FACTOR: u8 = 10;

fn encrypt(plaintext: &[u8], passphrase: &SecretString) -> Result<Vec<u8>, age::EncryptError> {
    let mut recipient = age::scrypt::Recipient::new(passphrase.clone());
    recipient.set_work_factor(WORK_FACTOR);
    age::encrypt(&recipient, plaintext)
}

/// Creates (or truncates) a file only its owner can read.
fn private_file(path: &Path) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}

/// Takes the store's lock (exclusive for writers, shared for readers) until the file is dropped.
pub(crate) fn lock(path: &Path, exclusive: bool) -> Result<File, CredentialError> {
    let io = |source| CredentialError::Io {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(io)?;
    if exclusive {
        file.lock()
    } else {
        file.lock_shared()
    }
    .map_err(io)?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(dir: &Path, passphrase: &str) -> FileStore {
        FileStore::new(dir, Passphrase::fixed(passphrase))
    }

    #[test]
    fn a_value_another_process_wrote_is_read_again() {
        let dir = tempfile::tempdir().unwrap();
        let one = store(dir.path(), "correct horse");
        let other = store(dir.path(), "correct horse");
        one.set("oauth.peer.default", &Secret::new("tokens-1".into()))
            .unwrap();
        assert_eq!(
            other
                .get("oauth.peer.default")
                .unwrap()
                .map(|s| s.expose().to_string()),
            Some("tokens-1".to_string())
        );
        one.set("oauth.peer.default", &Secret::new("tokens-2".into()))
            .unwrap();
        // `other` read the file before: its copy is stale, and not used.
        assert_eq!(
            other
                .get("oauth.peer.default")
                .unwrap()
                .map(|s| s.expose().to_string()),
            Some("tokens-2".to_string())
        );
    }

    #[test]
    fn round_trip_and_nothing_in_clear() {
        let dir = tempfile::tempdir().unwrap();
        let writer = store(dir.path(), "correct horse");
        writer
            .set("github", &Secret::new("canary-5f2b9c".into()))
            .unwrap();
        writer.set("slack", &Secret::new("xoxb-1".into())).unwrap();
        let reader = store(dir.path(), "correct horse");
        assert_eq!(
            reader.get("github").unwrap().unwrap().expose(),
            "canary-5f2b9c"
        );
        assert!(reader.get("nope").unwrap().is_none());
        let raw = std::fs::read(dir.path().join(FILE_NAME)).unwrap();
        assert!(!raw.windows(6).any(|w| w == b"canary"));
        assert!(reader.remove("github").unwrap());
        assert!(!reader.remove("github").unwrap());
        assert!(
            store(dir.path(), "correct horse")
                .get("github")
                .unwrap()
                .is_none()
        );
        assert_eq!(
            store(dir.path(), "correct horse")
                .get("slack")
                .unwrap()
                .unwrap()
                .expose(),
            "xoxb-1"
        );
    }

    #[test]
    fn wrong_passphrase_is_named_and_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        store(dir.path(), "right")
            .set("a", &Secret::new("value-a".into()))
            .unwrap();
        let before = std::fs::read(dir.path().join(FILE_NAME)).unwrap();
        let wrong = store(dir.path(), "wrong");
        let error = wrong.get("a").unwrap_err();
        assert!(
            matches!(error, CredentialError::WrongPassphrase { .. }),
            "{error}"
        );
        assert!(
            error.to_string().contains("CAPABILITIES_PASSPHRASE"),
            "{error}"
        );
        assert!(wrong.set("b", &Secret::new("value-b".into())).is_err());
        assert_eq!(std::fs::read(dir.path().join(FILE_NAME)).unwrap(), before);
    }

    #[test]
    fn a_corrupted_file_is_reported_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        store(dir.path(), "p")
            .set("a", &Secret::new("value-a".into()))
            .unwrap();
        let path = dir.path().join(FILE_NAME);
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 5;
        bytes[last] ^= 0xff;
        std::fs::write(&path, &bytes).unwrap();
        let error = store(dir.path(), "p").get("a").unwrap_err();
        assert!(matches!(error, CredentialError::Corrupt { .. }), "{error}");
        assert!(error.to_string().contains("damaged"), "{error}");
        std::fs::write(&path, b"not an age file").unwrap();
        let error = store(dir.path(), "p")
            .set("b", &Secret::new("x".into()))
            .unwrap_err();
        assert!(matches!(error, CredentialError::Corrupt { .. }), "{error}");
        assert_eq!(std::fs::read(&path).unwrap(), b"not an age file");
    }
}
