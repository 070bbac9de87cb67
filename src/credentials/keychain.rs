//! The OS keychain (the `keyring` crate): Keychain Services on macOS, the Credential Manager on
//! Windows, the Secret Service over D-Bus on Linux. Entries are `service = "capabilities"`,
//! `user = NAME`.
//!
//! A keychain that is missing, locked behind a prompt nobody answers, or wedged must not hang a
//! command: every operation runs on its own thread and is abandoned after [`KEYCHAIN_TIMEOUT`],
//! after which this process treats the keychain as unavailable.

use std::sync::Mutex;
use std::sync::mpsc;
use std::time::Duration;

use super::{CredentialError, Secret, SecretStore, StoreKind};

/// The service name every entry is filed under.
const SERVICE: &str = "capabilities";

/// How long one keychain operation may take. Well under the 3 s a command may take to say the
/// keychain is not there, leaving time to print the message.
const KEYCHAIN_TIMEOUT: Duration = Duration::from_millis(2500);

/// The OS keychain. Cheap to create; nothing is contacted until the first operation.
#[derive(Default)]
pub struct KeychainStore {
    /// Set once an operation found the keychain unavailable, so later ones fail at once
    /// instead of each waiting for the timeout again.
    unavailable: Mutex<Option<String>>,
}

impl KeychainStore {
    pub fn new() -> KeychainStore {
        KeychainStore::default()
    }

    /// Whether the keychain answers here: `Ok` when a lookup of a name that is surely not
    /// stored gets a clean "not found".
    pub fn probe(&self) -> Result<(), CredentialError> {
        self.get("capabilities.doctor-probe").map(|_| ())
    }

    /// Runs `op` on an entry on a thread of its own, waiting at most [`KEYCHAIN_TIMEOUT`].
    fn run<T: Send + 'static>(
        &self,
        name: &str,
        op: impl FnOnce(keyring::Entry) -> keyring::Result<T> + Send + 'static,
    ) -> Result<T, CredentialError> {
        if let Some(reason) = self
            .unavailable
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
        {
            return Err(CredentialError::KeychainUnavailable { reason });
        }
        let name = name.to_string();
        let (sender, receiver) = mpsc::channel();
        let spawned = std::thread::Builder::new()
            .name("keychain".into())
            .spawn(move || {
                let outcome = keyring::Entry::new(SERVICE, &name).and_then(op);
                // The receiver is gone when the caller gave up waiting; nothing to do then.
                let _ = sender.send(outcome);
            });
        if let Err(e) = spawned {
            return Err(CredentialError::Keychain {
                reason: format!("cannot start a thread to reach it: {e}"),
            });
        }
        let outcome = match receiver.recv_timeout(KEYCHAIN_TIMEOUT) {
            Ok(outcome) => outcome,
            Err(_) => {
                let reason = format!(
                    "it did not answer within {:.1} s (is it locked, or waiting for a password prompt nobody can see?)",
                    KEYCHAIN_TIMEOUT.as_secs_f64()
                );
                return Err(self.mark_unavailable(reason));
            }
        };
        outcome.map_err(|error| self.explain(error))
    }

    fn mark_unavailable(&self, reason: String) -> CredentialError {
        *self.unavailable.lock().unwrap_or_else(|p| p.into_inner()) = Some(reason.clone());
        CredentialError::KeychainUnavailable { reason }
    }

    /// Turns a keyring error into ours. None of keyring's messages contain a secret's value
    /// (`BadEncoding` carries the bytes but does not print them).
    fn explain(&self, error: keyring::Error) -> CredentialError {
        match error {
            keyring::Error::NoDefaultStore => {
                let reason = match keyring::Entry::store_status() {
                    Err(cause) => describe_platform_error(cause),
                    Ok(()) => "no credential store is set up".to_string(),
                };
                self.mark_unavailable(reason)
            }
            keyring::Error::PlatformFailure(cause) | keyring::Error::NoStorageAccess(cause) => {
                self.mark_unavailable(cause.to_string())
            }
            keyring::Error::BadEncoding(_) => CredentialError::Keychain {
                reason: "the stored value is not valid UTF-8; store it again with `capabilities credential set`".into(),
            },
            other => CredentialError::Keychain { reason: other.to_string() },
        }
    }
}

fn describe_platform_error(error: &keyring::Error) -> String {
    match error {
        keyring::Error::PlatformFailure(cause) | keyring::Error::NoStorageAccess(cause) => {
            cause.to_string()
        }
        other => other.to_string(),
    }
}

impl SecretStore for KeychainStore {
    fn kind(&self) -> StoreKind {
        StoreKind::Keychain
    }

    fn get(&self, name: &str) -> Result<Option<Secret>, CredentialError> {
        self.run(name, |entry| match entry.get_password() {
            Ok(value) => Ok(Some(Secret::new(value))),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(e),
        })
    }

    fn set(&self, name: &str, value: &Secret) -> Result<(), CredentialError> {
        let value = value.clone();
        self.run(name, move |entry| entry.set_password(value.expose()))
    }

    fn remove(&self, name: &str) -> Result<bool, CredentialError> {
        self.run(name, |entry| match entry.delete_credential() {
            Ok(()) => Ok(true),
            Err(keyring::Error::NoEntry) => Ok(false),
            Err(e) => Err(e),
        })
    }
}
