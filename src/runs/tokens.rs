//! Bearer tokens for `hub serve --http`: each is stored only as the SHA-256 of its secret, with
//! the profile and address patterns that narrow what its holder may call. The hub looks a token
//! up on every HTTP request and again on every call inside a script, so `token revoke` (another
//! process sharing the store) takes effect at once.

use rusqlite::{OptionalExtension, params};
use sha2::{Digest, Sha256};

use super::store::{RunsStore, StoreError, now_ms};
use crate::policy::glob_matches;

/// Every token secret starts with this, so a leaked one is recognisable (and greppable).
const PREFIX: &str = "cap_";

/// One token as stored (never its secret).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenRecord {
    pub name: String,
    /// The only profile a hub must serve for this token to work there; `None` means any.
    pub profile: Option<String>,
    /// Address patterns (`*` matches anything) the holder may call; empty means every address.
    pub allow: Vec<String>,
    pub created_at_ms: u64,
    pub expires_at_ms: Option<u64>,
    pub revoked_at_ms: Option<u64>,
}

impl TokenRecord {
    /// Whether the holder may call `address` (the hub's policy still decides after this).
    pub fn allows(&self, address: &str) -> bool {
        self.allow.is_empty() || self.allow.iter().any(|p| glob_matches(p, address))
    }

    /// Neither revoked nor expired at `now_ms`.
    pub fn is_active_at(&self, now_ms: u64) -> bool {
        self.revoked_at_ms.is_none() && self.expires_at_ms.is_none_or(|at| now_ms < at)
    }
}

/// Why a token cannot be created or revoked.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error(
        "a token named `{0}` already exists; revoke it first (`capabilities token revoke {0}`) or pick another name"
    )]
    Exists(String),
    #[error("there is no token named `{0}`; `capabilities token list` shows them")]
    Unknown(String),
    #[error("cannot read random bytes from the operating system for a token: {0}")]
    Random(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

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

fn record(row: &rusqlite::Row<'_>) -> rusqlite::Result<TokenRecord> {
    let allow: String = row.get(2)?;
    let millis = |value: Option<i64>| value.map(|v| v.max(0) as u64);
    Ok(TokenRecord {
        name: row.get(0)?,
        profile: row.get(1)?,
        // Written by `create_token` from a Vec<String>; unreadable means "allows nothing".
        allow: serde_json::from_str(&allow).unwrap_or_else(|_| vec![String::new()]),
        created_at_ms: row.get::<_, i64>(3)?.max(0) as u64,
        expires_at_ms: millis(row.get(4)?),
        revoked_at_ms: millis(row.get(5)?),
    })
}

const COLUMNS: &str = "name, profile, allow, created_at_ms, expires_at_ms, revoked_at_ms";

impl RunsStore {
    /// Stores a new token and returns its secret, which is never stored or shown again. A
    /// revoked token's name may be reused.
    pub fn create_token(
        &self,
        name: &str,
        profile: Option<&str>,
        expires_at_ms: Option<u64>,
        allow: &[String],
    ) -> Result<String, TokenError> {
        let secret = new_secret()?;
        let allow = serde_json::to_string(allow).unwrap_or_else(|_| "[]".into());
        let inserted = self.with(|c| {
            c.execute("DELETE FROM tokens WHERE name = ?1 AND revoked_at_ms IS NOT NULL", params![name])?;
            c.execute(
                "INSERT OR IGNORE INTO tokens (name, hash, profile, allow, created_at_ms, expires_at_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![name, hash(&secret), profile, allow, now_ms() as i64, expires_at_ms.map(|v| v as i64)],
            )
        })?;
        if inserted == 0 {
            return Err(TokenError::Exists(name.to_string()));
        }
        Ok(secret)
    }

    /// Every token, revoked and expired ones included, by name.
    pub fn tokens(&self) -> Result<Vec<TokenRecord>, StoreError> {
        self.with(|c| {
            let mut statement =
                c.prepare_cached(&format!("SELECT {COLUMNS} FROM tokens ORDER BY name"))?;
            let rows = statement.query_map([], record)?;
            rows.collect()
        })
    }

    /// Marks a token revoked; it stops working on the next request or call.
    pub fn revoke_token(&self, name: &str) -> Result<(), TokenError> {
        let changed = self.with(|c| {
            c.execute(
                "UPDATE tokens SET revoked_at_ms = ?2 WHERE name = ?1 AND revoked_at_ms IS NULL",
                params![name, now_ms() as i64],
            )
        })?;
        if changed == 0 {
            return Err(TokenError::Unknown(name.to_string()));
        }
        Ok(())
    }

    /// The active token whose secret is `secret`, if any.
    pub fn token_for_secret(&self, secret: &str) -> Result<Option<TokenRecord>, StoreError> {
        let found = self.with(|c| {
            c.query_row(
                &format!("SELECT {COLUMNS} FROM tokens WHERE hash = ?1"),
                params![hash(secret)],
                record,
            )
            .optional()
        })?;
        Ok(found.filter(|t| t.is_active_at(now_ms())))
    }

    /// The token named `name` if it is still active: the per-call check inside a script.
    pub fn active_token(&self, name: &str) -> Result<Option<TokenRecord>, StoreError> {
        let found = self.with(|c| {
            c.query_row(
                &format!("SELECT {COLUMNS} FROM tokens WHERE name = ?1"),
                params![name],
                record,
            )
            .optional()
        })?;
        Ok(found.filter(|t| t.is_active_at(now_ms())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_found_by_its_secret_until_revoked() {
        let dir = tempfile::tempdir().unwrap();
        let store = RunsStore::open(&dir.path().join("s.sqlite")).unwrap();
        let secret = store
            .create_token("ci", Some("work"), None, &["everything.*".into()])
            .unwrap();
        assert!(secret.starts_with(PREFIX) && secret.len() == PREFIX.len() + 64);
        let found = store.token_for_secret(&secret).unwrap().unwrap();
        assert_eq!(found.profile.as_deref(), Some("work"));
        assert!(found.allows("everything.echo") && !found.allows("time.now"));
        assert!(store.token_for_secret("cap_wrong").unwrap().is_none());
        let err = store.create_token("ci", None, None, &[]).unwrap_err();
        assert!(err.to_string().contains("already exists"), "{err}");
        store.revoke_token("ci").unwrap();
        assert!(store.token_for_secret(&secret).unwrap().is_none());
        assert!(store.active_token("ci").unwrap().is_none());
        let err = store.revoke_token("ci").unwrap_err();
        assert!(err.to_string().contains("no token named `ci`"), "{err}");
        // The name is free again, with a new secret.
        let again = store.create_token("ci", None, None, &[]).unwrap();
        assert_ne!(again, secret);
        assert!(
            store
                .token_for_secret(&again)
                .unwrap()
                .unwrap()
                .allows("time.now")
        );
    }

    #[test]
    fn an_expired_token_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let store = RunsStore::open(&dir.path().join("s.sqlite")).unwrap();
        let secret = store.create_token("old", None, Some(1), &[]).unwrap();
        assert!(store.token_for_secret(&secret).unwrap().is_none());
        assert_eq!(store.tokens().unwrap().len(), 1);
    }
}
