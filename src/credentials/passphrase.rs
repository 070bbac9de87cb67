//! Where the file store's passphrase comes from: `CAPABILITIES_PASSPHRASE`, else a hidden prompt
//! on the terminal (twice when the file is created), else an error that says how to provide it.
//! It is asked for at most once per process.

use std::io::IsTerminal;
use std::path::Path;
use std::sync::Mutex;

use age::secrecy::{ExposeSecret, SecretString};

use super::CredentialError;
use crate::env_vars;

pub struct Passphrase {
    known: Mutex<Option<SecretString>>,
    /// False in tests that must never touch the terminal.
    may_prompt: bool,
}

impl Passphrase {
    /// The passphrase of this process: the environment variable, or a prompt when a person is
    /// at a terminal.
    pub fn from_environment() -> Passphrase {
        let known = std::env::var(env_vars::CAPABILITIES_PASSPHRASE)
            .ok()
            .filter(|p| !p.is_empty())
            .map(SecretString::from);
        Passphrase {
            known: Mutex::new(known),
            may_prompt: true,
        }
    }

    #[cfg(test)]
    pub fn fixed(passphrase: &str) -> Passphrase {
        Passphrase {
            known: Mutex::new(Some(SecretString::from(passphrase.to_string()))),
            may_prompt: false,
        }
    }

    /// True when the passphrase is known without asking anyone.
    pub fn from_env(&self) -> bool {
        self.known
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some()
    }

    /// Forgets a passphrase that turned out to be wrong, so a prompt can ask again next time.
    pub fn forget(&self) {
        if self.may_prompt && std::env::var_os(env_vars::CAPABILITIES_PASSPHRASE).is_none() {
            *self.known.lock().unwrap_or_else(|p| p.into_inner()) = None;
        }
    }

    /// The passphrase for the file at `path`; `creating` asks for it twice.
    pub fn get(&self, path: &Path, creating: bool) -> Result<SecretString, CredentialError> {
        let mut known = self.known.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(passphrase) = known.as_ref() {
            return Ok(passphrase.clone());
        }
        // A prompt needs a person: stdin or stderr on a terminal (rpassword reads /dev/tty,
        // so `echo value | capabilities credential set` can still ask).
        let interactive =
            self.may_prompt && (std::io::stdin().is_terminal() || std::io::stderr().is_terminal());
        if !interactive {
            return Err(CredentialError::NoPassphrase {
                path: path.to_path_buf(),
            });
        }
        let prompt_error = |e: std::io::Error| match e.kind() {
            std::io::ErrorKind::Interrupted => CredentialError::Interrupted,
            _ => CredentialError::Prompt {
                reason: e.to_string(),
            },
        };
        let passphrase = if creating {
            let first = SecretString::from(
                super::hidden::ask(format!(
                    "New passphrase for the encrypted credential file {}: ",
                    path.display()
                ))
                .map_err(prompt_error)?,
            );
            let again = SecretString::from(
                super::hidden::ask("Repeat the passphrase: ").map_err(prompt_error)?,
            );
            if first.expose_secret() != again.expose_secret() {
                return Err(CredentialError::PassphraseMismatch);
            }
            first
        } else {
            SecretString::from(
                super::hidden::ask(format!("Passphrase of {}: ", path.display()))
                    .map_err(prompt_error)?,
            )
        };
        if passphrase.expose_secret().is_empty() {
            return Err(CredentialError::EmptyPassphrase);
        }
        *known = Some(passphrase.clone());
        Ok(passphrase)
    }
}
