//! The `bearer_tokens` handle: bearer tokens for `hub serve --http`, each kept only as the SHA-256 of
//! its secret, with the profile and address patterns that narrow what its holder may call. The
//! hub looks a token up on every HTTP request and again on every call inside a script, so
//! `token revoke` (another process sharing the store) takes effect at once.

use sha2::{Digest, Sha256};

use super::super::error::{StoreError, TokenError};
use super::super::records::TokenRecord;
use super::super::{Store, now_ms};

/// Every token secret starts with this, so a leaked one is recognisable (and greppable).
const PREFIX: &str = "cap_";

/// Bearer tokens.
pub struct BearerTokens<'a>(pub(in crate::runs) &'a Store);

/// The hex SHA-256 of a token secret: what the store keeps and looks up.
fn hash(secret: &str) -> String {
    Sha256::digest(secret.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// 256 random bits from the operating system, hex-encoded behind [`PREFIX`]. No fallback: a
/// guessable token is worse than none.
fn new_secret() -> Result<String, TokenError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| TokenError::Random(e.to_string()))?;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!("{PREFIX}{hex}"))
}

impl BearerTokens<'_> {
    /// Stores a new token and returns its secret, which is never stored or shown again. A
    /// revoked token's name may be reused.
    pub async fn create(
        &self,
        name: &str,
        profile: Option<&str>,
        expires_at_ms: Option<u64>,
        allow: &[String],
    ) -> Result<String, TokenError> {
        let secret = new_secret()?;
        let record = TokenRecord {
            name: name.to_string(),
            profile: profile.map(str::to_string),
            allow: allow.to_vec(),
            created_at_ms: now_ms(),
            expires_at_ms,
            revoked_at_ms: None,
        };
        let hashed = hash(&secret);
        let inserted = self
            .0
            .call(move |db, _| db.insert_token(&record, &hashed))
            .await?;
        if !inserted {
            return Err(TokenError::Exists(name.to_string()));
        }
        Ok(secret)
    }

    /// Every token, revoked and expired ones included, by name.
    pub async fn list(&self) -> Result<Vec<TokenRecord>, StoreError> {
        self.0.call(move |db, _| db.tokens()).await
    }

    /// Marks a token revoked; it stops working on the next request or call. `false` when it
    /// already was (revoking twice changes nothing); an error when no token had the name.
    pub async fn revoke(&self, name: &str) -> Result<bool, TokenError> {
        let owned = name.to_string();
        let revoked = self
            .0
            .call(move |db, _| db.revoke_token(&owned, now_ms()))
            .await?;
        if revoked {
            return Ok(true);
        }
        let listed = self.list().await?;
        if listed
            .iter()
            .any(|t| t.name == name && t.revoked_at_ms.is_some())
        {
            return Ok(false);
        }
        Err(TokenError::Unknown(name.to_string()))
    }

    /// The active token whose secret is `secret`, if any.
    pub async fn for_secret(&self, secret: &str) -> Result<Option<TokenRecord>, StoreError> {
        let hashed = hash(secret);
        let found = self.0.call(move |db, _| db.token_by_hash(&hashed)).await?;
        Ok(found.filter(|t| t.is_active_at(now_ms())))
    }

    /// The token named `name` if it is still active: the per-call check inside a script.
    pub async fn active(&self, name: &str) -> Result<Option<TokenRecord>, StoreError> {
        Ok(self.named(name).await?.filter(|t| t.is_active_at(now_ms())))
    }

    /// The token named `name`, revoked or expired too.
    pub async fn named(&self, name: &str) -> Result<Option<TokenRecord>, StoreError> {
        let name = name.to_string();
        self.0.call(move |db, _| db.token_by_name(&name)).await
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::testing::store_in;
    use super::*;

    #[tokio::test]
    async fn a_token_is_found_by_its_secret_until_revoked() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_in(dir.path()).await;
        let tokens = store.bearer_tokens();
        let secret = tokens
            .create("ci", Some("work"), None, &["everything.*".into()])
            .await
            .unwrap();
        assert!(secret.starts_with(PREFIX) && secret.len() == PREFIX.len() + 64);
        let found = tokens.for_secret(&secret).await.unwrap().unwrap();
        assert_eq!(found.profile.as_deref(), Some("work"));
        assert!(found.allows("everything.echo") && !found.allows("time.now"));
        assert!(tokens.for_secret("cap_wrong").await.unwrap().is_none());
        let err = tokens.create("ci", None, None, &[]).await.unwrap_err();
        assert!(err.to_string().contains("already exists"), "{err}");
        assert!(tokens.revoke("ci").await.unwrap());
        assert!(tokens.for_secret(&secret).await.unwrap().is_none());
        assert!(tokens.active("ci").await.unwrap().is_none());
        assert!(!tokens.revoke("ci").await.unwrap(), "already revoked");
        let err = tokens.revoke("nope").await.unwrap_err();
        assert!(err.to_string().contains("no token named `nope`"), "{err}");
        // The name is free again, with a new secret.
        let again = tokens.create("ci", None, None, &[]).await.unwrap();
        assert_ne!(again, secret);
        let found = tokens.for_secret(&again).await.unwrap().unwrap();
        assert!(found.allows("time.now"));
    }

    #[tokio::test]
    async fn an_expired_token_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_in(dir.path()).await;
        let secret = store
            .bearer_tokens()
            .create("old", None, Some(1), &[])
            .await
            .unwrap();
        assert!(
            store
                .bearer_tokens()
                .for_secret(&secret)
                .await
                .unwrap()
                .is_none()
        );
        assert_eq!(store.bearer_tokens().list().await.unwrap().len(), 1);
    }
}
