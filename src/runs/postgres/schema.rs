//! The shared store's schema and its versioned migrations: the version is kept in a table of its
//! own, and a migration runs in one transaction under an advisory lock, so replicas starting at
//! once migrate it once. A schema written by a newer version is refused rather than guessed at.

use postgres::Client;

/// Each step, in order: step `i` takes the store from version `i` to `i + 1`. Never edit a step
/// that shipped; add a new one.
const STEPS: &[&str] = &[
    // 1: everything the SQLite store holds at its version 4, in PostgreSQL's types; `seq_no`
    // orders rows where SQLite orders by rowid.
    "
CREATE TABLE runs (
    run_id        TEXT PRIMARY KEY,
    status        TEXT NOT NULL,
    code          BYTEA NOT NULL,
    seed          BIGINT NOT NULL,
    start_time_ms BIGINT NOT NULL,
    created_at_ms BIGINT NOT NULL,
    updated_at_ms BIGINT NOT NULL,
    envelope      BYTEA,
    output_budget_bytes BIGINT,
    client        TEXT,
    profile       TEXT,
    owner         TEXT,
    lease_until_ms BIGINT,
    attempt       BIGINT NOT NULL DEFAULT 1,
    seq_no        BIGSERIAL
);
CREATE TABLE calls (
    run_id      TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    seq         BIGINT NOT NULL,
    address     TEXT NOT NULL,
    connection  TEXT,
    call_digest TEXT NOT NULL,
    result      BYTEA NOT NULL,
    ok          BOOLEAN NOT NULL,
    ms          BIGINT NOT NULL,
    recorded_at_ms BIGINT NOT NULL,
    state       TEXT NOT NULL DEFAULT 'answered',
    mutating    BOOLEAN,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE approvals (
    run_id        TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    seq           BIGINT NOT NULL,
    address       TEXT NOT NULL,
    connection    TEXT,
    preview       BYTEA NOT NULL,
    reason        TEXT NOT NULL,
    created_at_ms BIGINT NOT NULL,
    expires_at_ms BIGINT NOT NULL,
    decision      TEXT,
    decided_at_ms BIGINT,
    decided_by    TEXT,
    call_digest   TEXT,
    consumed_at_ms BIGINT,
    tool_version  TEXT,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE consumed_states (
    nonce TEXT PRIMARY KEY,
    at_ms BIGINT NOT NULL
);
CREATE TABLE meta (
    name  TEXT PRIMARY KEY,
    value BYTEA NOT NULL
);
CREATE TABLE audit (
    id     BIGSERIAL PRIMARY KEY,
    at_ms  BIGINT NOT NULL,
    run_id TEXT,
    kind   TEXT NOT NULL,
    detail TEXT NOT NULL
);
CREATE TABLE source_status (
    name          TEXT PRIMARY KEY,
    status        TEXT NOT NULL,
    tool_count    BIGINT NOT NULL,
    error         TEXT,
    updated_at_ms BIGINT NOT NULL
);
CREATE TABLE tokens (
    name          TEXT PRIMARY KEY,
    hash          TEXT NOT NULL UNIQUE,
    profile       TEXT,
    allow         TEXT NOT NULL,
    created_at_ms BIGINT NOT NULL,
    expires_at_ms BIGINT,
    revoked_at_ms BIGINT
);
CREATE TABLE stored_results (
    result_ref    TEXT PRIMARY KEY,
    scope         TEXT NOT NULL,
    run_id        TEXT NOT NULL,
    bytes         BIGINT NOT NULL,
    value         BYTEA NOT NULL,
    created_at_ms BIGINT NOT NULL,
    expires_at_ms BIGINT NOT NULL,
    seq_no        BIGSERIAL
);
CREATE INDEX stored_results_by_scope ON stored_results (scope, created_at_ms);
CREATE TABLE tool_versions (
    address         TEXT NOT NULL,
    version         TEXT NOT NULL,
    definition      TEXT NOT NULL,
    read_only       BOOLEAN NOT NULL,
    first_seen_ms   BIGINT NOT NULL,
    confirmed_at_ms BIGINT,
    confirmed_by    TEXT,
    seq_no          BIGSERIAL,
    PRIMARY KEY (address, version)
);
",
    // 2: as SQLite's step 5: a version may carry an identity that outlives its address (a
    // source's skill), taken for skills recorded before from their definition; one whose
    // definition is not JSON (changed by hand) keeps none rather than failing the migration.
    "
ALTER TABLE tool_versions ADD COLUMN identity TEXT;
CREATE FUNCTION pg_temp.capabilities_json_or_null(text) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    RETURN $1::jsonb;
EXCEPTION WHEN others THEN
    RETURN NULL;
END
$$;
UPDATE tool_versions
   SET identity = 'skill:' || (pg_temp.capabilities_json_or_null(definition) ->> 'source') || ' ' || (pg_temp.capabilities_json_or_null(definition) ->> 'uri')
 WHERE address LIKE 'skill:%';
CREATE INDEX tool_versions_by_identity ON tool_versions (identity, version) WHERE identity IS NOT NULL;
",
    // 3: as SQLite's step 6: turns identical direct calls take across replicas.
    "
CREATE TABLE turns (
    key      TEXT PRIMARY KEY,
    owner    TEXT NOT NULL,
    until_ms BIGINT NOT NULL
);
",
    // 4: as SQLite's step 7: all of a waiting call's arguments, when its preview cut them.
    "
ALTER TABLE approvals ADD COLUMN whole BYTEA;
",
];

/// The version this build migrates to.
const VERSION: i32 = STEPS.len() as i32;

/// The lock migrations take, apart from the write lock.
const MIGRATE_LOCK: i64 = 0x6361_7073_6d69_6772; // "capsmigr"

/// Brings the schema to [`VERSION`]; a newer schema is an error a caller turns into words.
pub fn migrate(client: &mut Client) -> Result<(), postgres::Error> {
    let mut transaction = client.transaction()?;
    transaction.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATE_LOCK])?;
    transaction.batch_execute(
        "CREATE TABLE IF NOT EXISTS capabilities_schema (version INTEGER NOT NULL)",
    )?;
    let found: i32 = match transaction.query_opt("SELECT version FROM capabilities_schema", &[])? {
        Some(row) => row.get(0),
        None => {
            transaction.execute("INSERT INTO capabilities_schema (version) VALUES (0)", &[])?;
            0
        }
    };
    if found > VERSION {
        // Raised in the database so the one error type carries it, with the words to act on.
        transaction.batch_execute(&format!(
            "DO $$ BEGIN RAISE EXCEPTION 'it was written by a newer version of capabilities (schema {found}, this one knows {VERSION}); upgrade capabilities, or use another database'; END $$"
        ))?;
    }
    for step in STEPS.iter().skip(usize::try_from(found).unwrap_or(0)) {
        transaction.batch_execute(step)?;
    }
    transaction.execute("UPDATE capabilities_schema SET version = $1", &[&VERSION])?;
    transaction.commit()
}
