//! Test fixtures: a dashboard with two waiting calls, four runs and three sources, at a fixed
//! clock, so the state, key and screen tests share one realistic picture.

use crate::runs::{Approval, CallState, JournalEntry, RunRecord, RunSummary};
use crate::tui::snapshot::{RunDetail, Snapshot, SourceRow};
use crate::tui::state::State;

pub const NOW: u64 = 1_700_000_000_000;

pub fn approval(run_id: &str, seq: u64, address: &str, age_ms: u64) -> Approval {
    Approval {
        run_id: run_id.into(),
        seq,
        address: address.into(),
        connection: Some("default".into()),
        preview: format!("{{ key: \"{seq}\" }}"),
        whole: None,
        reason: format!("policy: ask for {address}"),
        created_at_ms: NOW - age_ms,
        expires_at_ms: NOW - age_ms + 30 * 60_000,
        decision: None,
        decided_at_ms: None,
        decided_by: None,
        call_digest: "d".into(),
        consumed_at_ms: None,
        tool_version: None,
    }
}

pub fn run(
    run_id: &str,
    status: &str,
    calls: u64,
    last_call: Option<&str>,
    age_ms: u64,
) -> RunSummary {
    RunSummary {
        run_id: run_id.into(),
        status: status.into(),
        created_at_ms: NOW - age_ms,
        updated_at_ms: NOW - age_ms + 1_250,
        calls,
        last_call: last_call.map(String::from),
        origin: "claude-code/work".into(),
        client: Some("claude-code".into()),
        profile: Some("work".into()),
    }
}

pub fn snapshot() -> Snapshot {
    Snapshot {
        approvals: vec![
            approval(
                "run_aaaaaaaaaaaaaaaaaaaaaaaaaa",
                1,
                "counter.publish",
                95_000,
            ),
            approval(
                "run_bbbbbbbbbbbbbbbbbbbbbbbbbb",
                0,
                "github.createIssue",
                12_000,
            ),
        ],
        runs: vec![
            run(
                "run_cccccccccccccccccccccccccc",
                "running",
                3,
                Some("time.getCurrentTime"),
                4_000,
            ),
            run(
                "run_bbbbbbbbbbbbbbbbbbbbbbbbbb",
                "awaiting_approval",
                0,
                None,
                12_500,
            ),
            run(
                "run_aaaaaaaaaaaaaaaaaaaaaaaaaa",
                "awaiting_approval",
                1,
                Some("counter.write"),
                96_000,
            ),
            run(
                "run_dddddddddddddddddddddddddd",
                "failed",
                2,
                Some("github.listIssues"),
                3_600_000,
            ),
        ],
        sources: vec![
            SourceRow {
                name: "counter".into(),
                status: "ready".into(),
                tool_count: Some(2),
                error: None,
                reported_at_ms: Some(NOW - 3_000),
                tools: vec!["counter.write".into(), "counter.publish".into()],
            },
            SourceRow {
                name: "github".into(),
                status: "failed".into(),
                tool_count: Some(0),
                error: Some("401 Unauthorized: check ${secret:github}".into()),
                reported_at_ms: Some(NOW - 60_000),
                tools: vec!["github.createIssue".into(), "github.listIssues".into()],
            },
            SourceRow {
                name: "time".into(),
                status: "configured".into(),
                tool_count: Some(2),
                error: None,
                reported_at_ms: None,
                tools: vec!["time.getCurrentTime".into()],
            },
        ],
        connections: Vec::new(),
        problems: Vec::new(),
    }
}

pub fn detail() -> RunDetail {
    let entry = |seq: u64, address: &str, ok: bool, ms: u64| JournalEntry {
        seq,
        address: address.into(),
        connection: Some("default".into()),
        call_digest: "d".into(),
        result: serde_json::json!({}),
        ok,
        ms,
        state: CallState::Answered,
        mutating: true,
    };
    RunDetail {
        run: RunRecord {
            run_id: "run_aaaaaaaaaaaaaaaaaaaaaaaaaa".into(),
            status: "awaiting_approval".into(),
            code: "const first = await counter.write({ key: \"a\" });\nconst published = await counter.publish({ key: \"b\" });\nconsole.log(\"published\", published);\nreturn { first, published };".into(),
            seed: 7,
            start_time_ms: NOW - 96_000,
            created_at_ms: NOW - 96_000,
            client: Some("claude-code".into()),
            envelope: Some(serde_json::json!({
                "runId": "run_aaaaaaaaaaaaaaaaaaaaaaaaaa",
                "status": "awaiting_approval",
                "logs": ["[log] wrote a"],
                "calls": [{ "address": "counter.write", "ok": true, "ms": 12 }],
                "pending": [{ "id": "run_aaaaaaaaaaaaaaaaaaaaaaaaaa/1", "kind": "approval", "address": "counter.publish", "summary": "counter.publish({ key: \"b\" })" }]
            })),
            output_budget_bytes: None,
            profile: None,
        },
        journal: vec![entry(0, "counter.write", true, 12)],
        approvals: vec![approval("run_aaaaaaaaaaaaaaaaaaaaaaaaaa", 1, "counter.publish", 95_000)],
        audit: Vec::new(),
    }
}

pub fn loaded() -> State {
    let mut state = State::new(false);
    state.apply_snapshot(snapshot(), NOW);
    state
}
