//! The state store's schema and its versioned migrations. The database records the version it
//! was migrated to (`PRAGMA user_version`); opening it applies the missing steps in order, in
//! one write transaction, so two processes opening an old store at once migrate it once. A
//! store written by a newer version is refused rather than guessed at.

use rusqlite::{Connection, TransactionBehavior};

/// Each step, in order: step `i` takes the store from version `i` to `i + 1`. Never edit a
/// step that shipped; add a new one.
const STEPS: &[&str] = &[
    // 1: runs, their journals, approvals and audit; source statuses; bearer tokens. Every
    // statement tolerates a store an unversioned release already created.
    "
CREATE TABLE IF NOT EXISTS runs (
    run_id        TEXT PRIMARY KEY,
    status        TEXT NOT NULL,
    code          TEXT NOT NULL,
    seed          INTEGER NOT NULL,
    start_time_ms INTEGER NOT NULL,
    created_at_ms INTEGER NOT NULL,
    updated_at_ms INTEGER NOT NULL,
    envelope      TEXT,
    output_budget_bytes INTEGER,
    client        TEXT,
    profile       TEXT
);
CREATE TABLE IF NOT EXISTS calls (
    run_id      TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,
    address     TEXT NOT NULL,
    connection  TEXT,
    args_digest TEXT NOT NULL,
    result      TEXT NOT NULL,
    ok          INTEGER NOT NULL,
    ms          INTEGER NOT NULL,
    recorded_at_ms INTEGER NOT NULL,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE IF NOT EXISTS approvals (
    run_id        TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    seq           INTEGER NOT NULL,
    address       TEXT NOT NULL,
    connection    TEXT,
    preview       TEXT NOT NULL,
    reason        TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL,
    expires_at_ms INTEGER NOT NULL,
    decision      TEXT,
    decided_at_ms INTEGER,
    decided_by    TEXT,
    args_digest   TEXT,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE IF NOT EXISTS consumed_states (
    nonce    TEXT PRIMARY KEY,
    at_ms    INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS run_grants (
    run_id  TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    address TEXT NOT NULL,
    PRIMARY KEY (run_id, address)
);
CREATE TABLE IF NOT EXISTS meta (
    name  TEXT PRIMARY KEY,
    value BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS audit (
    id     INTEGER PRIMARY KEY AUTOINCREMENT,
    at_ms  INTEGER NOT NULL,
    run_id TEXT,
    kind   TEXT NOT NULL,
    detail TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS source_status (
    name          TEXT PRIMARY KEY,
    status        TEXT NOT NULL,
    tool_count    INTEGER NOT NULL,
    error         TEXT,
    updated_at_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS tokens (
    name          TEXT PRIMARY KEY,
    hash          TEXT NOT NULL UNIQUE,
    profile       TEXT,
    allow         TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL,
    expires_at_ms INTEGER,
    revoked_at_ms INTEGER
);
",
    // 2: a run is claimed by one owner at a time, with a lease (`claims`); a call is journaled
    // as dispatched before it leaves and as answered when it comes back; an approval records
    // when the call it allowed was sent, so it is used once. A call's digest covers its tool and
    // connection as well as its arguments. Grants "for this run" are read off the approvals
    // whose call was sent, so their table goes. A run an older version left running journaled
    // its calls only once answered, so a write it had in flight left no trace: it cannot be
    // taken over safely, and is marked interrupted (a resume ends it with the outcome unknown).
    "
ALTER TABLE runs ADD COLUMN owner TEXT;
ALTER TABLE runs ADD COLUMN lease_until_ms INTEGER;
ALTER TABLE runs ADD COLUMN attempt INTEGER NOT NULL DEFAULT 1;
ALTER TABLE calls ADD COLUMN state TEXT NOT NULL DEFAULT 'answered';
ALTER TABLE calls ADD COLUMN mutating INTEGER;
ALTER TABLE approvals ADD COLUMN consumed_at_ms INTEGER;
ALTER TABLE calls RENAME COLUMN args_digest TO call_digest;
ALTER TABLE approvals RENAME COLUMN args_digest TO call_digest;
DROP TABLE IF EXISTS run_grants;
UPDATE runs SET status = 'interrupted' WHERE status = 'running';
",
    // 3: results too large to send, kept for `hub.read` for a few minutes, per scope (the
    // bearer token, or the local user) — not per run, so a later run of the same client reads
    // them.
    "
CREATE TABLE stored_results (
    result_ref    TEXT PRIMARY KEY,
    scope         TEXT NOT NULL,
    run_id        TEXT NOT NULL,
    bytes         INTEGER NOT NULL,
    value         BLOB NOT NULL,
    created_at_ms INTEGER NOT NULL,
    expires_at_ms INTEGER NOT NULL
);
CREATE INDEX stored_results_by_scope ON stored_results (scope, created_at_ms);
",
    // 4: every version of every tool's definition, when it was first seen and whether a person
    // confirmed it; a pending call records the version it asked about when it asked because
    // its tool changed.
    "
CREATE TABLE tool_versions (
    address         TEXT NOT NULL,
    version         TEXT NOT NULL,
    definition      TEXT NOT NULL,
    read_only       INTEGER NOT NULL,
    first_seen_ms   INTEGER NOT NULL,
    confirmed_at_ms INTEGER,
    confirmed_by    TEXT,
    PRIMARY KEY (address, version)
);
ALTER TABLE approvals ADD COLUMN tool_version TEXT;
",
    // 5: a version may carry an identity that outlives its address (a source's skill: its
    // source and the URI of its SKILL.md, as `catalog::changes::skill_identity` spells it),
    // so trust follows a skill that a same-named sibling re-keys. Skills recorded before get
    // theirs from the definition they were recorded with.
    "
ALTER TABLE tool_versions ADD COLUMN identity TEXT;
UPDATE tool_versions
   SET identity = 'skill:' || json_extract(definition, '$.source') || ' ' || json_extract(definition, '$.uri')
 WHERE address LIKE 'skill:%' AND json_valid(definition);
CREATE INDEX tool_versions_by_identity ON tool_versions (identity, version) WHERE identity IS NOT NULL;
",
    // 6: turns identical direct calls take across every process sharing the store, each held
    // by one owner with a lease, so replicas make one run for one call sent to both.
    "
CREATE TABLE turns (
    key      TEXT PRIMARY KEY,
    owner    TEXT NOT NULL,
    until_ms INTEGER NOT NULL
);
",
    // 7: all of a waiting call's arguments (sealed), when its preview had to cut them, for a
    // person who reads everything they decide on.
    "
ALTER TABLE approvals ADD COLUMN whole BLOB;
",
];

/// The version this build migrates to.
pub const VERSION: i64 = STEPS.len() as i64;

/// Why the schema could not be brought up to date.
#[derive(Debug, thiserror::Error)]
pub enum MigrateError {
    #[error(
        "it was written by a newer version of capabilities (schema {found}, this one knows {VERSION}); upgrade capabilities, or use another data directory"
    )]
    Newer { found: i64 },
    #[error(
        "it records schema version {found}, which no version of capabilities writes; it was changed by something else — restore it from a backup"
    )]
    Unknown { found: i64 },
    #[error(transparent)]
    Sql(#[from] rusqlite::Error),
}

/// Brings the store's schema to [`VERSION`].
pub fn migrate(connection: &mut Connection) -> Result<(), MigrateError> {
    // Reading the version outside a transaction lets an up-to-date store open without
    // taking the write lock that every other process would queue behind.
    if version(connection)? == VERSION {
        return Ok(());
    }
    let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let found = version(&transaction)?;
    if found > VERSION {
        return Err(MigrateError::Newer { found });
    }
    if found < 0 {
        return Err(MigrateError::Unknown { found });
    }
    for step in STEPS.iter().skip(usize::try_from(found).unwrap_or(0)) {
        transaction.execute_batch(step)?;
    }
    transaction.pragma_update(None, "user_version", VERSION)?;
    transaction.commit()?;
    Ok(())
}

fn version(connection: &Connection) -> rusqlite::Result<i64> {
    connection.pragma_query_value(None, "user_version", |row| row.get(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unversioned_store_is_migrated_in_place_and_keeps_its_rows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sqlite");
        let mut connection = Connection::open(&path).unwrap();
        // What the last unversioned release created, with a run in it.
        connection.execute_batch(STEPS[0]).unwrap();
        connection
            .execute_batch(
                "INSERT INTO runs (run_id, status, code, seed, start_time_ms, created_at_ms, updated_at_ms) VALUES ('run_a', 'completed', 'x', 1, 2, 3, 3);
                 INSERT INTO runs (run_id, status, code, seed, start_time_ms, created_at_ms, updated_at_ms) VALUES ('run_b', 'running', 'x', 1, 2, 3, 3);",
            )
            .unwrap();
        migrate(&mut connection).unwrap();
        migrate(&mut connection).unwrap();
        assert_eq!(version(&connection).unwrap(), VERSION);
        let rows: Vec<(String, String, i64)> = connection
            .prepare("SELECT run_id, status, attempt FROM runs ORDER BY run_id")
            .unwrap()
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(
            rows,
            [
                ("run_a".into(), "completed".into(), 1),
                // Its calls were journaled only once answered: it cannot be taken over.
                ("run_b".into(), "interrupted".into(), 1)
            ]
        );
    }

    #[test]
    fn skills_recorded_before_identities_get_theirs_from_their_definition() {
        let dir = tempfile::tempdir().unwrap();
        let mut connection = Connection::open(dir.path().join("s.sqlite")).unwrap();
        for step in &STEPS[..4] {
            connection.execute_batch(step).unwrap();
        }
        connection
            .execute_batch(
                r#"INSERT INTO tool_versions (address, version, definition, read_only, first_seen_ms) VALUES
                     ('skill:docs.notes', 'v1', '{"source":"docs","uri":"skill://team/notes/SKILL.md"}', 1, 1),
                     ('skill:docs.bad', 'v1', 'not json', 1, 1),
                     ('gh.createIssue', 'v1', '{"source":"x","uri":"y"}', 0, 1);
                   PRAGMA user_version = 4;"#,
            )
            .unwrap();
        migrate(&mut connection).unwrap();
        let identities: Vec<(String, Option<String>)> = connection
            .prepare("SELECT address, identity FROM tool_versions ORDER BY address")
            .unwrap()
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(
            identities,
            [
                ("gh.createIssue".into(), None),
                ("skill:docs.bad".into(), None),
                (
                    "skill:docs.notes".into(),
                    Some("skill:docs skill://team/notes/SKILL.md".into())
                ),
            ]
        );
    }

    #[test]
    fn a_store_from_a_newer_version_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut connection = Connection::open(dir.path().join("s.sqlite")).unwrap();
        connection
            .pragma_update(None, "user_version", VERSION + 1)
            .unwrap();
        let err = migrate(&mut connection).unwrap_err().to_string();
        assert!(err.contains("newer version"), "{err}");
    }
}
