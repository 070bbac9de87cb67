//! The `keys` handle: where the state key is kept, unlocking it (`doctor`), and keys derived
//! from it for other purposes (the elicitation signing key).

use std::path::PathBuf;

use zeroize::Zeroizing;

use super::super::Store;
use super::super::error::StoreError;
use super::super::keys::KeySource;

/// The state key.
pub struct Keys<'a>(pub(in crate::runs) &'a Store);

impl Keys<'_> {
    /// Where the store's key is kept, once its first run recorded it.
    pub async fn source(&self) -> Result<Option<KeySource>, StoreError> {
        self.0.call(move |db, vault| vault.key_source(db)).await
    }

    /// The key file beside the database (used when no credential store can hold the key).
    pub fn file_path(&self) -> PathBuf {
        self.0.inner.worker.vault.key_file_path().to_path_buf()
    }

    /// Unlocks the key now, keying a new store; an error says why it cannot be used.
    pub async fn unlock(&self) -> Result<(), StoreError> {
        self.0.call(move |db, vault| vault.unlock(db)).await
    }

    /// A key for `purpose` derived from the state key: the same in every process that shares
    /// the store.
    pub async fn derived(&self, purpose: &str) -> Result<Zeroizing<[u8; 32]>, StoreError> {
        let purpose = purpose.to_string();
        self.0
            .call(move |db, vault| vault.derive(db, &purpose))
            .await
    }
}
