//! Keys and sealing, apart from the records. What a run says (its script, the results of its
//! calls, its envelope, the preview of a pending call) is sealed here before a backend writes
//! it and opened here after a backend reads it, so backends keep opaque [`Sealed`] values and
//! the store's handles deal only in plain ones. The state key is unlocked once per process,
//! on first need, from wherever the store recorded it (see `keys`).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use zeroize::Zeroizing;

use super::backend::Backend;
use super::error::StoreError;
use super::keys::{self, KeySource, StateKeys};
use super::seal::{OpenError, StateCipher};

/// Where a sealed value is kept; each value is bound to its place, so one moved to another row
/// no longer opens.
#[derive(Debug, Clone, Copy)]
pub enum Place<'a> {
    Script {
        run_id: &'a str,
    },
    Envelope {
        run_id: &'a str,
    },
    Result {
        run_id: &'a str,
        seq: u64,
    },
    Preview {
        run_id: &'a str,
        seq: u64,
    },
    /// All of a waiting call's arguments, when its preview cut them.
    Whole {
        run_id: &'a str,
        seq: u64,
    },
    /// A stored result, bound to whoever may read it: moved to another scope, it does not open.
    StoredResult {
        scope: &'a str,
        result_ref: &'a str,
    },
}

impl Place<'_> {
    /// The associated data the value is sealed with (`calls.result:run_x:3`): the format the
    /// first encrypting version wrote, so its values still open.
    fn context(&self) -> String {
        match self {
            Place::Script { run_id } => format!("runs.code:{run_id}"),
            Place::Envelope { run_id } => format!("runs.envelope:{run_id}"),
            Place::Result { run_id, seq } => format!("calls.result:{run_id}:{seq}"),
            Place::Preview { run_id, seq } => format!("approvals.preview:{run_id}:{seq}"),
            Place::Whole { run_id, seq } => format!("approvals.whole:{run_id}:{seq}"),
            Place::StoredResult { scope, result_ref } => {
                format!("stored_results.value:{scope}:{result_ref}")
            }
        }
    }

    /// What the value is, for an error message.
    fn describe(&self) -> String {
        match self {
            Place::Script { run_id } => format!("the script of run {run_id}"),
            Place::Envelope { run_id } => format!("the envelope of run {run_id}"),
            Place::Result { run_id, seq } => format!("the result of call {seq} of run {run_id}"),
            Place::Preview { run_id, seq } => {
                format!("the argument preview of call {seq} of run {run_id}")
            }
            Place::Whole { run_id, seq } => {
                format!("the arguments of call {seq} of run {run_id}")
            }
            Place::StoredResult { result_ref, .. } => format!("the stored result {result_ref}"),
        }
    }
}

/// A sealed value as a backend keeps it: bytes nobody but the vault reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sealed(Vec<u8>);

impl Sealed {
    /// What a backend read back. Text an older, unencrypting version wrote is passed on too,
    /// so opening it says so.
    pub fn stored(bytes: Vec<u8>) -> Sealed {
        Sealed(bytes)
    }

    /// The bytes to write.
    pub fn bytes(&self) -> &[u8] {
        &self.0
    }
}

/// The state key's cipher, unlocked once, and where the key may be kept.
pub struct Vault {
    keys: StateKeys,
    /// The store's location, for messages.
    location: PathBuf,
    /// Whether other hubs share the store (its errors say so: they may hold the key).
    shared: bool,
    /// Unlocked on first need, so commands that never touch a run's content never reach for
    /// the keychain.
    cipher: Mutex<Option<Arc<StateCipher>>>,
}

impl Vault {
    pub fn new(keys: StateKeys, location: PathBuf, shared: bool) -> Vault {
        Vault {
            keys,
            location,
            shared,
            cipher: Mutex::new(None),
        }
    }

    pub fn key_file_path(&self) -> &Path {
        self.keys.key_file_path()
    }

    /// Where the store's key is kept, once its first run recorded it.
    pub fn key_source(&self, backend: &dyn Backend) -> Result<Option<KeySource>, StoreError> {
        Ok(backend
            .key_record()?
            .and_then(|(source, _)| KeySource::parse(&source)))
    }

    /// `text` sealed for `place`.
    pub fn seal(
        &self,
        backend: &dyn Backend,
        place: Place<'_>,
        text: &str,
    ) -> Result<Sealed, StoreError> {
        self.cipher(backend)?
            .seal(&place.context(), text.as_bytes())
            .map(Sealed)
            .map_err(|source| self.sealed_error(place, source))
    }

    /// What [`seal`](Self::seal) wrote for `place`.
    pub fn open(
        &self,
        backend: &dyn Backend,
        place: Place<'_>,
        sealed: &Sealed,
    ) -> Result<String, StoreError> {
        let opened = self
            .cipher(backend)?
            .open(&place.context(), &sealed.0)
            .map_err(|source| self.sealed_error(place, source))?;
        String::from_utf8(opened).map_err(|_| self.sealed_error(place, OpenError::Rejected))
    }

    /// What was sealed for `place`, as JSON.
    pub fn open_json(
        &self,
        backend: &dyn Backend,
        place: Place<'_>,
        sealed: &Sealed,
    ) -> Result<serde_json::Value, StoreError> {
        serde_json::from_str(&self.open(backend, place, sealed)?)
            .map_err(|_| self.sealed_error(place, OpenError::Rejected))
    }

    /// A key for `purpose` derived from the state key: the same in every process that shares
    /// the store (the elicitation signing key is one).
    pub fn derive(
        &self,
        backend: &dyn Backend,
        purpose: &str,
    ) -> Result<Zeroizing<[u8; 32]>, StoreError> {
        Ok(self.cipher(backend)?.derive(purpose))
    }

    /// Unlocks the key now (`doctor` checks it this way).
    pub fn unlock(&self, backend: &dyn Backend) -> Result<(), StoreError> {
        self.cipher(backend).map(|_| ())
    }

    /// Forgets the key after the runs were cleared, and deletes the key file, so the next run
    /// starts a new history with a new key.
    pub fn forget(&self) -> Result<(), StoreError> {
        *self.cipher.lock().unwrap_or_else(|p| p.into_inner()) = None;
        match std::fs::remove_file(self.keys.key_file_path()) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(StoreError::Key {
                path: self.location.clone(),
                shared: self.shared,
                reason: format!(
                    "the runs are deleted, but {} could not be: {e}",
                    self.keys.key_file_path().display()
                ),
            }),
            _ => Ok(()),
        }
    }

    fn sealed_error(&self, place: Place<'_>, source: OpenError) -> StoreError {
        StoreError::Sealed {
            path: self.location.clone(),
            shared: self.shared,
            what: place.describe(),
            source,
        }
    }

    /// The cipher of the state key, unlocked once per process; the first time, the values an
    /// older version stored in the clear are sealed too.
    fn cipher(&self, backend: &dyn Backend) -> Result<Arc<StateCipher>, StoreError> {
        let mut cached = self.cipher.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(cipher) = cached.as_ref() {
            return Ok(cipher.clone());
        }
        let key_error = |reason| StoreError::Key {
            path: self.location.clone(),
            shared: self.shared,
            reason,
        };
        let cipher = Arc::new(self.unlock_key(backend).map_err(key_error)?);
        let sealer = |place: Place<'_>, text: &str| {
            cipher.seal(&place.context(), text.as_bytes()).map(Sealed)
        };
        backend.seal_clear_values(&sealer)?;
        *cached = Some(cipher.clone());
        Ok(cipher)
    }

    /// The key recorded for this store, or a first one, recorded now; checked against the
    /// store's check value either way.
    fn unlock_key(&self, backend: &dyn Backend) -> Result<StateCipher, String> {
        let recorded = backend.key_record().map_err(|e| e.to_string())?;
        let (source, key) = match &recorded {
            // A key given in the environment serves whatever the store recorded: the replicas
            // of a shared store each hold it there. The check value proves it is the right one.
            Some((name, _)) if keys::environment_key().is_some() => {
                let source = KeySource::parse(name).unwrap_or(KeySource::Environment);
                let key = keys::environment_key()
                    .unwrap_or_else(|| Err("the environment key went away".into()))?;
                (source, key)
            }
            Some((name, _)) => {
                let source = KeySource::parse(name).ok_or_else(|| {
                    format!("its key is kept in `{name}`, which this version does not know")
                })?;
                let key = self
                    .keys
                    .recorded(source)
                    .map_err(|e| format!("it is kept in {source}, which cannot be read: {e}"))?;
                (source, key)
            }
            None => self.keys.first()?,
        };
        let cipher = StateCipher::new(key);
        let check = match recorded {
            Some((_, check)) => check,
            None => {
                let (winner, check) = backend
                    .record_key(source.as_str(), &keys::check_value(&cipher)?)
                    .map_err(|e| e.to_string())?;
                if winner != source.as_str() {
                    // Another process keyed the store at the same moment, elsewhere: use its key.
                    return self.unlock_key(backend);
                }
                check
            }
        };
        if !keys::check_matches(&cipher, &check) {
            let from = if keys::environment_key().is_some() {
                KeySource::Environment
            } else {
                source
            };
            return Err(format!(
                "the key in {from} is not the one these runs were encrypted with"
            ));
        }
        Ok(cipher)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::runs::testing::{
        begin, journal_call, pending, raw_column, shared, store_in, tamper,
    };
    use crate::runs::{CallState, JournalEntry, KEY_FILE_NAME, KeySource, Store};

    /// Every byte SQLite wrote for the store, the write-ahead log included.
    fn stored_bytes_on_disk(path: &std::path::Path) -> Vec<u8> {
        let mut bytes = std::fs::read(path).unwrap();
        if let Ok(wal) = std::fs::read(path.with_extension("sqlite-wal")) {
            bytes.extend(wal);
        }
        bytes
    }

    fn contains(haystack: &[u8], needle: &str) -> bool {
        haystack
            .windows(needle.len())
            .any(|w| w == needle.as_bytes())
    }

    fn entry(seq: u64, result: serde_json::Value) -> JournalEntry {
        JournalEntry {
            seq,
            address: "counter.write".into(),
            connection: None,
            call_digest: "d".into(),
            result,
            ok: true,
            ms: 1,
            state: CallState::Answered,
            mutating: true,
        }
    }

    #[tokio::test]
    async fn scripts_results_envelopes_and_previews_are_encrypted_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_in(dir.path()).await;
        let owner = begin(&store, "run_a", "return 'SCRIPT-MARKER'").await;
        journal_call(
            &store,
            "run_a",
            &owner,
            &entry(0, json!({"text": "RESULT-MARKER"})),
        )
        .await;
        let mut waiting = pending(1, "counter.publish", "d");
        waiting.preview = "{ key: \"PREVIEW-MARKER\" }".into();
        store
            .approvals()
            .record_pending("run_a", &owner, waiting)
            .await
            .unwrap();
        store
            .runs()
            .finish(
                "run_a",
                &owner,
                "completed",
                &json!({"result": "ENVELOPE-MARKER"}),
            )
            .await
            .unwrap();
        // Every sealed column as the database holds it (SQLite's file, or PostgreSQL's rows).
        let on_disk = if shared() {
            [
                "SELECT code FROM runs",
                "SELECT envelope FROM runs",
                "SELECT result FROM calls",
                "SELECT preview FROM approvals",
                "SELECT convert_to(address, 'UTF8') FROM calls",
            ]
            .iter()
            .flat_map(|sql| raw_column(&store, sql))
            .flatten()
            .collect()
        } else {
            stored_bytes_on_disk(store.location())
        };
        for marker in [
            "SCRIPT-MARKER",
            "RESULT-MARKER",
            "PREVIEW-MARKER",
            "ENVELOPE-MARKER",
        ] {
            assert!(
                !contains(&on_disk, marker),
                "{marker} is stored in the clear"
            );
        }
        assert!(
            contains(&on_disk, "counter.write"),
            "addresses stay readable"
        );

        let reopened = store_in(dir.path()).await;
        let run = reopened.runs().get("run_a").await.unwrap().unwrap();
        assert_eq!(run.code, "return 'SCRIPT-MARKER'");
        assert_eq!(run.envelope.unwrap()["result"], "ENVELOPE-MARKER");
        let journal = reopened.journal().entries("run_a").await.unwrap();
        assert_eq!(journal[0].result["text"], "RESULT-MARKER");
        let approvals = reopened.approvals().of_run("run_a").await.unwrap();
        assert!(approvals[0].preview.contains("PREVIEW-MARKER"));
        assert_eq!(
            reopened.keys().source().await.unwrap(),
            Some(KeySource::KeyFile)
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join(KEY_FILE_NAME))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[tokio::test]
    async fn another_or_a_missing_key_is_named_and_nothing_is_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        begin(&store_in(dir.path()).await, "run_a", "return 1").await;
        let key_file = dir.path().join(KEY_FILE_NAME);
        let original = std::fs::read(&key_file).unwrap();

        std::fs::write(&key_file, "ab".repeat(32)).unwrap();
        let store = store_in(dir.path()).await;
        let err = store.runs().get("run_a").await.unwrap_err().to_string();
        assert!(
            err.contains("not the one these runs were encrypted with"),
            "{err}"
        );
        let location = if shared() {
            "postgres://"
        } else {
            "state.sqlite"
        };
        assert!(
            err.contains("capabilities hub runs --clear") && err.contains(location),
            "{err}"
        );
        let run = crate::runs::NewRun {
            run_id: "run_b".into(),
            ..crate::runs::NewRun::default()
        };
        let err = store_in(dir.path())
            .await
            .runs()
            .begin(run)
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("not the one"),
            "a wrong key writes nothing: {err}"
        );

        std::fs::remove_file(&key_file).unwrap();
        let err = store_in(dir.path())
            .await
            .runs()
            .get("run_a")
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains(KEY_FILE_NAME), "{err}");
        assert!(
            !key_file.exists(),
            "a missing key is not replaced by a new one"
        );

        std::fs::write(&key_file, original).unwrap();
        let store = store_in(dir.path()).await;
        assert_eq!(
            store.runs().get("run_a").await.unwrap().unwrap().code,
            "return 1"
        );
        assert!(store.runs().get("run_b").await.unwrap().is_none());
    }

    #[tokio::test]
    async fn a_moved_or_unencrypted_value_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_in(dir.path()).await;
        let owner = begin(&store, "run_a", "return 1").await;
        journal_call(&store, "run_a", &owner, &entry(0, json!(0))).await;
        journal_call(&store, "run_a", &owner, &entry(1, json!(1))).await;
        tamper(
            &store,
            "UPDATE calls SET result = (SELECT result FROM calls WHERE seq = 0) WHERE seq = 1",
        );
        let err = store
            .journal()
            .entries("run_a")
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("the result of call 1 of run run_a"), "{err}");
        assert!(
            err.contains("changed, moved, or encrypted with another key"),
            "{err}"
        );

        tamper(&store, "UPDATE runs SET code = 'return 1'");
        let err = store.runs().get("run_a").await.unwrap_err().to_string();
        assert!(err.contains("the script of run run_a"), "{err}");
        assert!(err.contains("older version"), "{err}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn two_stores_keyed_at_once_share_one_key() {
        let dir = tempfile::tempdir().unwrap();
        let first = store_in(dir.path()).await;
        let second = store_in(dir.path()).await;
        let (a, b) = tokio::join!(
            begin(&first, "run_a", "return 'a'"),
            begin(&second, "run_b", "return 'b'")
        );
        assert!(!a.is_empty() && !b.is_empty());
        let third = store_in(dir.path()).await;
        assert_eq!(
            third.runs().get("run_a").await.unwrap().unwrap().code,
            "return 'a'"
        );
        assert_eq!(
            third.runs().get("run_b").await.unwrap().unwrap().code,
            "return 'b'"
        );
        assert_eq!(
            *first.keys().derived("x").await.unwrap(),
            *second.keys().derived("x").await.unwrap()
        );
    }

    #[tokio::test]
    async fn what_an_older_version_stored_in_the_clear_is_sealed_on_first_use() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.sqlite");
        drop(Store::open(&path, None).await.unwrap());
        let connection = rusqlite::Connection::open(&path).unwrap();
        connection
            .execute_batch(
                "INSERT INTO runs (run_id, status, code, seed, start_time_ms, created_at_ms, updated_at_ms, envelope) VALUES ('run_old', 'awaiting_approval', 'OLD-SCRIPT', 1, 2, 3, 3, '{\"result\":\"OLD-ENVELOPE\"}');
                 INSERT INTO calls (run_id, seq, address, call_digest, result, ok, ms, recorded_at_ms) VALUES ('run_old', 0, 'counter.write', 'd', '{\"text\":\"OLD-RESULT\"}', 1, 1, 3);
                 INSERT INTO approvals (run_id, seq, address, preview, reason, created_at_ms, expires_at_ms) VALUES ('run_old', 1, 'counter.publish', 'OLD-PREVIEW', 'asks', 3, 4);",
            )
            .unwrap();
        drop(connection);
        let store = Store::open(&path, None).await.unwrap();
        let run = store.runs().get("run_old").await.unwrap().unwrap();
        assert_eq!(run.code, "OLD-SCRIPT");
        assert_eq!(run.envelope.unwrap()["result"], "OLD-ENVELOPE");
        let journal = store.journal().entries("run_old").await.unwrap();
        assert_eq!(journal[0].result["text"], "OLD-RESULT");
        let approvals = store.approvals().of_run("run_old").await.unwrap();
        assert_eq!(approvals[0].preview, "OLD-PREVIEW");
        drop(store);
        let on_disk = stored_bytes_on_disk(&path);
        for marker in ["OLD-SCRIPT", "OLD-ENVELOPE", "OLD-RESULT", "OLD-PREVIEW"] {
            assert!(
                !contains(&on_disk, marker),
                "{marker} is still in the clear"
            );
        }
        let reopened = Store::open(&path, None).await.unwrap();
        let run = reopened.runs().get("run_old").await.unwrap().unwrap();
        assert_eq!(run.code, "OLD-SCRIPT");
    }
}
