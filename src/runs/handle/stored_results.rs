//! The `stored_results` handle: a run's result too large to send, kept sealed for a few minutes
//! so `hub.read` can page it without the run's calls running again. Results belong to a scope —
//! the bearer token of an HTTP client, or the local user of a stdio hub and `exec` — not to a
//! run or a connection, so a stateless request, another hub process on the same store or a
//! later `exec` can read them, and another token cannot.

use super::super::error::StoreError;
use super::super::ids::new_result_ref;
use super::super::records::{Retention, StoredResult, TokenRecord};
use super::super::vault::Place;
use super::super::{Store, now_ms};

/// The scope of everything the local user runs (a stdio hub, `exec`).
pub const LOCAL_SCOPE: &str = "local";

/// The scope whose results `token`'s holder may read: its name and when it was made, so a new
/// token given a revoked one's name does not inherit its results.
pub fn scope_of(token: Option<&TokenRecord>) -> String {
    match token {
        Some(token) => format!("token:{}:{}", token.name, token.created_at_ms),
        None => LOCAL_SCOPE.to_string(),
    }
}

/// Stored results.
pub struct StoredResults<'a>(pub(in crate::runs) &'a Store);

/// A result just kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    pub result_ref: String,
    pub expires_at_ms: u64,
    /// How many of the scope's older results made room for it.
    pub evicted: u64,
}

impl StoredResults<'_> {
    /// Keeps `json` (the run's result) for `scope`, dropping the scope's oldest results to
    /// stay within `retention`. `None` when the result alone is over the retention's bytes.
    pub async fn keep(
        &self,
        scope: &str,
        run_id: &str,
        json: String,
        retention: Retention,
    ) -> Result<Option<Kept>, StoreError> {
        let bytes = json.len() as u64;
        if bytes > retention.max_bytes || retention.max_results == 0 {
            return Ok(None);
        }
        let created_at_ms = now_ms();
        let ttl_ms = u64::try_from(retention.ttl.as_millis()).unwrap_or(u64::MAX);
        let stored = StoredResult {
            result_ref: new_result_ref(),
            scope: scope.to_string(),
            run_id: run_id.to_string(),
            bytes,
            created_at_ms,
            expires_at_ms: created_at_ms.saturating_add(ttl_ms),
        };
        self.0
            .call(move |db, vault| {
                let place = Place::StoredResult {
                    scope: &stored.scope,
                    result_ref: &stored.result_ref,
                };
                let sealed = vault.seal(db, place, &json)?;
                let evicted = db.keep_result(&stored, &sealed, &retention, created_at_ms)?;
                Ok(Some(Kept {
                    result_ref: stored.result_ref,
                    expires_at_ms: stored.expires_at_ms,
                    evicted,
                }))
            })
            .await
    }

    /// The JSON of `result_ref` if `scope` made it and it is still kept; `None` when it expired,
    /// was evicted, never existed, or is another scope's (the caller cannot tell which, and
    /// must not be able to).
    pub async fn read(&self, scope: &str, result_ref: &str) -> Result<Option<String>, StoreError> {
        let (scope, result_ref) = (scope.to_string(), result_ref.to_string());
        self.0
            .call(move |db, vault| {
                let Some(sealed) = db.stored_result(&scope, &result_ref, now_ms())? else {
                    return Ok(None);
                };
                let place = Place::StoredResult {
                    scope: &scope,
                    result_ref: &result_ref,
                };
                vault.open(db, place, &sealed).map(Some)
            })
            .await
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::super::testing::{raw_column, store_in, tamper};
    use super::*;

    fn retention(max_results: u64, max_bytes: u64) -> Retention {
        Retention {
            max_results,
            max_bytes,
            ttl: Duration::from_secs(300),
        }
    }

    #[tokio::test]
    async fn a_result_is_read_back_by_its_scope_only() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_in(dir.path()).await;
        let results = store.stored_results();
        let kept = results
            .keep("local", "run_a", "[1,2,3]".into(), Retention::default())
            .await
            .unwrap()
            .unwrap();
        assert!(kept.result_ref.starts_with("res_"));
        assert_eq!(kept.evicted, 0);
        let read = results.read("local", &kept.result_ref).await.unwrap();
        assert_eq!(read.as_deref(), Some("[1,2,3]"));
        assert_eq!(
            results.read("token:ci:1", &kept.result_ref).await.unwrap(),
            None
        );
        assert_eq!(results.read("local", "res_unknown").await.unwrap(), None);
        // Sealed where it lies: the ciphertext is not the JSON.
        let raw = raw_column(&store, "SELECT value FROM stored_results");
        assert_eq!(raw.len(), 1);
        assert!(!raw[0].windows(7).any(|w| w == b"[1,2,3]"));
    }

    #[tokio::test]
    async fn a_row_moved_to_another_scope_does_not_open() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_in(dir.path()).await;
        let results = store.stored_results();
        let kept = results
            .keep("token:a:1", "run_a", "{}".into(), Retention::default())
            .await
            .unwrap()
            .unwrap();
        tamper(&store, "UPDATE stored_results SET scope = 'token:b:2'");
        let err = results
            .read("token:b:2", &kept.result_ref)
            .await
            .unwrap_err();
        assert!(err.to_string().contains("stored result"), "{err}");
    }

    #[tokio::test]
    async fn the_oldest_go_first_by_count_and_by_bytes_per_scope() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_in(dir.path()).await;
        let results = store.stored_results();
        let limits = retention(3, 100);
        let mut refs = Vec::new();
        for i in 0..4 {
            let kept = results
                .keep("local", "run", format!("[{i}]"), limits)
                .await
                .unwrap()
                .unwrap();
            refs.push(kept.result_ref);
        }
        // Another scope's results neither count nor go.
        let other = results
            .keep("token:x:1", "run", "[9]".into(), limits)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(results.read("local", &refs[0]).await.unwrap(), None);
        for r in &refs[1..] {
            assert!(results.read("local", r).await.unwrap().is_some());
        }
        // 95 bytes more push the total over 100: the two oldest go.
        let big = format!("\"{}\"", "x".repeat(93));
        let kept = results
            .keep("local", "run", big, limits)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(kept.evicted, 2);
        assert_eq!(results.read("local", &refs[1]).await.unwrap(), None);
        assert_eq!(results.read("local", &refs[2]).await.unwrap(), None);
        assert!(results.read("local", &refs[3]).await.unwrap().is_some());
        assert!(
            results
                .read("token:x:1", &other.result_ref)
                .await
                .unwrap()
                .is_some()
        );
        // One larger than the scope may hold is not kept at all.
        let too_big = "y".repeat(101);
        assert_eq!(
            results.keep("local", "run", too_big, limits).await.unwrap(),
            None
        );
    }

    #[tokio::test]
    async fn an_expired_result_is_gone_and_reads_do_not_extend_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_in(dir.path()).await;
        let results = store.stored_results();
        let kept = results
            .keep("local", "run", "1".into(), Retention::default())
            .await
            .unwrap()
            .unwrap();
        assert!(
            results
                .read("local", &kept.result_ref)
                .await
                .unwrap()
                .is_some()
        );
        tamper(&store, "UPDATE stored_results SET expires_at_ms = 1");
        assert_eq!(results.read("local", &kept.result_ref).await.unwrap(), None);
        // Keeping another clears expired rows out.
        results
            .keep("local", "run", "2".into(), Retention::default())
            .await
            .unwrap();
        let count = raw_column(&store, "SELECT count(*) FROM stored_results");
        assert_eq!(count, [b"1".to_vec()]);
    }

    #[test]
    fn a_reused_token_name_is_another_scope() {
        let token = |created_at_ms| TokenRecord {
            name: "ci".into(),
            profile: None,
            allow: Vec::new(),
            created_at_ms,
            expires_at_ms: None,
            revoked_at_ms: None,
        };
        assert_ne!(scope_of(Some(&token(1))), scope_of(Some(&token(2))));
        assert_eq!(scope_of(None), LOCAL_SCOPE);
    }
}
