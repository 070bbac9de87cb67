//! Encryption at rest of what the state store keeps about a run's content: its script, the
//! results its calls returned, its envelope and the preview of a pending call's arguments.
//! XChaCha20-Poly1305 with a random nonce per value; each value is bound to where it is stored
//! (table, column, run and call), so a value moved to another row no longer opens.
//!
//! A sealed value is a blob: one version byte, the 24-byte nonce, then the ciphertext and tag.

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

/// The first byte of every sealed value; a later format gets another.
const VERSION: u8 = 1;
const NONCE_LEN: usize = 24;

/// Why a stored value does not open. Never carries the value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OpenError {
    #[error("it is not encrypted (written by an older version of capabilities)")]
    NotSealed,
    #[error("it does not decrypt: it was changed, moved, or encrypted with another key")]
    Rejected,
    #[error("the OS random source failed: {0}")]
    Random(String),
}

/// The cipher of one state key.
pub struct StateCipher {
    aead: XChaCha20Poly1305,
    key: Zeroizing<[u8; 32]>,
}

impl StateCipher {
    pub fn new(key: Zeroizing<[u8; 32]>) -> StateCipher {
        StateCipher {
            aead: XChaCha20Poly1305::new(key.as_slice().into()),
            key,
        }
    }

    /// Encrypts `plaintext` for the place named by `context` (e.g. `calls.result:run_x:3`).
    pub fn seal(&self, context: &str, plaintext: &[u8]) -> Result<Vec<u8>, OpenError> {
        let mut nonce = [0u8; NONCE_LEN];
        getrandom::fill(&mut nonce).map_err(|e| OpenError::Random(e.to_string()))?;
        let payload = Payload {
            msg: plaintext,
            aad: context.as_bytes(),
        };
        // Encryption fails only for messages beyond XChaCha20's 256 GiB limit.
        let ciphertext = self
            .aead
            .encrypt(XNonce::from_slice(&nonce), payload)
            .map_err(|_| OpenError::Rejected)?;
        let mut sealed = Vec::with_capacity(1 + NONCE_LEN + ciphertext.len());
        sealed.push(VERSION);
        sealed.extend_from_slice(&nonce);
        sealed.extend_from_slice(&ciphertext);
        Ok(sealed)
    }

    /// Decrypts what [`seal`](Self::seal) produced for the same `context`.
    pub fn open(&self, context: &str, sealed: &[u8]) -> Result<Vec<u8>, OpenError> {
        let Some((&VERSION, rest)) = sealed.split_first() else {
            return Err(OpenError::NotSealed);
        };
        if rest.len() < NONCE_LEN {
            return Err(OpenError::Rejected);
        }
        let (nonce, ciphertext) = rest.split_at(NONCE_LEN);
        let payload = Payload {
            msg: ciphertext,
            aad: context.as_bytes(),
        };
        self.aead
            .decrypt(XNonce::from_slice(nonce), payload)
            .map_err(|_| OpenError::Rejected)
    }

    /// A key for another purpose (`purpose` names it), derived one way from the state key, so
    /// every process that can read the runs can also check what another signed.
    pub fn derive(&self, purpose: &str) -> Zeroizing<[u8; 32]> {
        let mut hasher = Sha256::new();
        hasher.update(b"capabilities state key derivation\0");
        hasher.update(purpose.as_bytes());
        hasher.update([0]);
        hasher.update(self.key.as_slice());
        Zeroizing::new(hasher.finalize().into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cipher(byte: u8) -> StateCipher {
        StateCipher::new(Zeroizing::new([byte; 32]))
    }

    #[test]
    fn a_sealed_value_opens_only_in_its_place_and_with_its_key() {
        let sealed = cipher(1)
            .seal("calls.result:run_a:0", b"secret result")
            .unwrap();
        assert!(
            !sealed
                .windows(b"secret".len())
                .any(|w| w == b"secret".as_slice())
        );
        assert_eq!(
            cipher(1).open("calls.result:run_a:0", &sealed).unwrap(),
            b"secret result"
        );
        assert_eq!(
            cipher(1).open("calls.result:run_a:1", &sealed),
            Err(OpenError::Rejected)
        );
        assert_eq!(
            cipher(2).open("calls.result:run_a:0", &sealed),
            Err(OpenError::Rejected)
        );
    }

    #[test]
    fn tampered_truncated_and_plain_values_are_refused() {
        let mut sealed = cipher(1).seal("runs.code:run_a", b"return 1").unwrap();
        let last = sealed.len() - 1;
        sealed[last] ^= 1;
        assert_eq!(
            cipher(1).open("runs.code:run_a", &sealed),
            Err(OpenError::Rejected)
        );
        assert_eq!(
            cipher(1).open("runs.code:run_a", &sealed[..10]),
            Err(OpenError::Rejected)
        );
        assert_eq!(
            cipher(1).open("runs.code:run_a", b"return 1"),
            Err(OpenError::NotSealed)
        );
        assert_eq!(
            cipher(1).open("runs.code:run_a", b""),
            Err(OpenError::NotSealed)
        );
    }

    #[test]
    fn two_seals_of_one_value_differ_and_derived_keys_depend_on_purpose_and_key() {
        let a = cipher(1).seal("x", b"same").unwrap();
        let b = cipher(1).seal("x", b"same").unwrap();
        assert_ne!(a, b);
        assert_ne!(*cipher(1).derive("elicitation"), *cipher(1).derive("other"));
        assert_ne!(
            *cipher(1).derive("elicitation"),
            *cipher(2).derive("elicitation")
        );
        assert_eq!(
            *cipher(1).derive("elicitation"),
            *cipher(1).derive("elicitation")
        );
    }
}
