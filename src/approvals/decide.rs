//! The one way a person's decision on a waiting call is recorded, whatever the channel — `hub
//! approve`, the `exec` prompt, an elicitation answer, the approval page or the dashboard. Each
//! channel shows the waiting calls its own way, then hands [`decide`] the calls the person saw
//! (each with the digest of the arguments its preview showed) and their choice. Everything else
//! happens here, all or nothing, in one store transaction: the calls must still wait, unexpired,
//! with exactly those arguments; an "always" rule is written to the config; the decision and its
//! audit line are recorded. A rule that cannot be written decides nothing, and a decision that
//! cannot be recorded takes its rule back.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::config::edit::{ConfigLock, add_rule, write_atomically};
use crate::policy::Action;
use crate::runs::{Approval, BeforeCommit, DecideError, Decision, Seen, Store};

/// Where a decision was made; recorded with it and in the audit trail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    /// `capabilities hub approve | deny`.
    Terminal,
    /// The prompt of `capabilities exec`.
    Exec,
    /// An MCP client's form, answered through the agent's own client.
    Elicitation,
    /// The local approval page in the browser.
    Page,
    /// `capabilities dashboard`.
    Dashboard,
}

impl Channel {
    pub fn as_str(self) -> &'static str {
        match self {
            Channel::Terminal => "terminal",
            Channel::Exec => "exec",
            Channel::Elicitation => "elicitation",
            Channel::Page => "page",
            Channel::Dashboard => "dashboard",
        }
    }
}

/// A person's choice on the calls they saw.
#[derive(Debug, Clone)]
pub struct DecisionRequest<'a> {
    pub run_id: &'a str,
    pub seen: Vec<Seen>,
    pub decision: Decision,
    pub channel: Channel,
}

/// The calls of `run_id` that wait for a decision now (only call `seq` when given), for a
/// channel to show; an error says why there is nothing to decide.
pub async fn waiting(
    store: &Store,
    run_id: &str,
    seq: Option<u64>,
) -> Result<Vec<Approval>, DecideError> {
    if store.runs().claim_record(run_id).await?.is_none() {
        return Err(DecideError::UnknownRun(run_id.to_string()));
    }
    let now = store.runs().clock_ms().await?;
    let undecided: Vec<Approval> = store
        .approvals()
        .of_run(run_id)
        .await?
        .into_iter()
        .filter(|a| a.decision.is_none() && seq.is_none_or(|s| s == a.seq))
        .collect();
    if let Some(expired) = undecided.iter().find(|a| a.is_expired_at(now)) {
        return Err(DecideError::Expired {
            run_id: run_id.to_string(),
            seq: expired.seq,
        });
    }
    if undecided.is_empty() {
        return Err(DecideError::NothingPending {
            run_id: run_id.to_string(),
            seq,
        });
    }
    Ok(undecided)
}

/// Records `request`; see the module docs. "Always" writes its rule to `config_file` (a channel
/// without one cannot decide "always"), among the rules of the profile the run was made under
/// (the top-level rules without one), so it applies where the run's policy came from. Returns
/// the approvals decided.
pub async fn decide(
    store: &Store,
    config_file: Option<&Path>,
    request: &DecisionRequest<'_>,
) -> Result<Vec<Approval>, DecideError> {
    // The config before and after this decision's rules, to put back if the decision is not
    // recorded after all.
    let written: Arc<Mutex<Option<Written>>> = Arc::new(Mutex::new(None));
    let decision = request.decision;
    let config_file = config_file.map(Path::to_path_buf);
    let record = written.clone();
    let before_commit: BeforeCommit<'static> = Box::new(move |waiting, profile| {
        if decision != Decision::AllowAlways {
            return Ok(());
        }
        let Some(config_file) = config_file.as_deref() else {
            return Err(DecideError::Rule(
                "\"always allow\" needs a config to write its rule to".into(),
            ));
        };
        // Held until the rules are written and the file read back, so no other edit lands in
        // between and an undo puts back only this decision's change.
        let lock = ConfigLock::acquire(config_file)
            .map_err(|e| DecideError::Rule(format!("the rule was not written: {e:#}")))?;
        let mut change = Written {
            config_file: config_file.to_path_buf(),
            before: std::fs::read_to_string(config_file).ok(),
            after: None,
        };
        // Each rule records the version of the tool the person saw, for the record of what
        // they trusted, and holds on the connection they saw it on: a source's other
        // connections (another account) keep their own rules, a deny among them.
        let named = sources_with_named_connections(config_file);
        let mut granted: Vec<(&str, Option<&str>, Option<&str>)> = waiting
            .iter()
            .map(|a| {
                let source = a.address.split('.').next().unwrap_or_default();
                let connection = a
                    .connection
                    .as_deref()
                    .filter(|_| named.iter().any(|s| s == source));
                (a.address.as_str(), connection, a.tool_version.as_deref())
            })
            .collect();
        granted.sort_unstable();
        granted.dedup_by(|a, b| (a.0, a.1) == (b.0, b.1));
        for (address, connection, version) in granted {
            let added = add_rule(&lock, profile, address, Action::Allow, connection, version);
            change.after = std::fs::read_to_string(config_file).ok();
            *record.lock().unwrap_or_else(|p| p.into_inner()) = Some(change.clone());
            added.map_err(|e| {
                DecideError::Rule(format!("the rule for `{address}` was not written: {e:#}"))
            })?;
        }
        Ok(())
    });
    let recorded = store
        .approvals()
        .decide(
            request.run_id,
            request.seen.clone(),
            request.decision,
            request.channel.as_str(),
            before_commit,
        )
        .await;
    if recorded.is_err()
        && let Some(change) = written.lock().unwrap_or_else(|p| p.into_inner()).take()
    {
        change.undo();
    }
    // "Always" trusts the version of each tool the person was shown: a tool that changed asks
    // no more once its new version is allowed for good. After the decision, so a crash in
    // between leaves the tool asking, never trusted without one.
    if let (Ok(decided), Decision::AllowAlways) = (&recorded, decision) {
        for approval in decided {
            if let Some(version) = &approval.tool_version
                && let Err(e) = store
                    .tool_versions()
                    .confirm(&approval.address, version, request.channel.as_str())
                    .await
            {
                tracing::warn!(
                    "`{}` was allowed for good, but its version is not confirmed: {e}",
                    approval.address
                );
            }
        }
    }
    recorded
}

/// The sources of the config at `config_file` whose connections it names. A source with only
/// its implicit connection gets rules without one: should the person name connections later,
/// the rule's implicit `default` would be a connection the config no longer has.
fn sources_with_named_connections(config_file: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(config_file) else {
        return Vec::new();
    };
    // A config that does not load is refused when the rule is written, with what to fix.
    crate::config::load::parse(config_file, &text)
        .map(|settings| {
            settings
                .sources
                .into_iter()
                .filter(|s| s.has_named_connections())
                .map(|s| s.name)
                .collect()
        })
        .unwrap_or_default()
}

/// The config as a decision found and left it.
#[derive(Clone)]
struct Written {
    config_file: PathBuf,
    before: Option<String>,
    after: Option<String>,
}

impl Written {
    /// Puts the config back as it was before a decision that did not happen, unless someone
    /// changed it since (putting it back would undo their edit too).
    fn undo(self) {
        let file = self.config_file.display();
        let _lock = match ConfigLock::acquire(&self.config_file) {
            Ok(lock) => lock,
            Err(e) => {
                tracing::warn!(
                    "an \"always allow\" rule was written to {file} but its decision was not recorded, and the file could not be locked to put it back: {e:#}; remove the rule by hand"
                );
                return;
            }
        };
        if std::fs::read_to_string(&self.config_file).ok() != self.after {
            tracing::warn!(
                "an \"always allow\" rule was written to {file} but its decision was not recorded, and the file changed since; remove the rule by hand"
            );
            return;
        }
        let restored = match &self.before {
            Some(text) => write_atomically(&self.config_file, text),
            None => std::fs::remove_file(&self.config_file).map_err(anyhow::Error::from),
        };
        if let Err(e) = restored {
            tracing::warn!(
                "an \"always allow\" rule was written to {file} but its decision was not recorded, and the file could not be put back: {e:#}; remove the rule by hand"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs::testing::{begin, pending, store_in};

    struct Fixture {
        _dir: tempfile::TempDir,
        store: Store,
        config_file: PathBuf,
    }

    async fn fixture() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let store = store_in(dir.path()).await;
        let owner = begin(&store, "run_a", "code").await;
        for (seq, address) in [(0, "gh.createIssue"), (1, "gh.deleteRepo")] {
            store
                .approvals()
                .record_pending("run_a", &owner, pending(seq, address, "d"))
                .await
                .unwrap();
        }
        let config_file = dir.path().join("config.toml");
        std::fs::write(&config_file, "[sources.gh]\ncommand = \"x\"\n").unwrap();
        Fixture {
            store,
            config_file,
            _dir: dir,
        }
    }

    fn request(seen: Vec<Seen>, decision: Decision) -> DecisionRequest<'static> {
        DecisionRequest {
            run_id: "run_a",
            seen,
            decision,
            channel: Channel::Elicitation,
        }
    }

    fn seen(seq: u64, digest: &str) -> Seen {
        Seen {
            seq,
            call_digest: digest.into(),
            tool_version: None,
        }
    }

    #[tokio::test]
    async fn always_writes_its_rule_and_records_the_decision_together() {
        let f = fixture().await;
        let seen = waiting(&f.store, "run_a", None)
            .await
            .unwrap()
            .iter()
            .map(Approval::seen)
            .collect();
        let decided = decide(
            &f.store,
            Some(f.config_file.as_path()),
            &request(seen, Decision::AllowAlways),
        )
        .await
        .unwrap();
        assert_eq!(decided.len(), 2);
        let text = std::fs::read_to_string(&f.config_file).unwrap();
        assert!(
            text.contains("gh.createIssue") && text.contains("gh.deleteRepo"),
            "{text}"
        );
        let approval = f.store.approvals().get("run_a", 0).await.unwrap().unwrap();
        assert_eq!(approval.decided_by.as_deref(), Some("elicitation"));
    }

    #[tokio::test]
    async fn a_decision_that_is_not_recorded_takes_its_rule_back() {
        let f = fixture().await;
        let original = std::fs::read_to_string(&f.config_file).unwrap();
        // The first call still waits as seen; the second was shown as another call.
        let seen = vec![seen(0, "d"), seen(1, "stale")];
        let err = decide(
            &f.store,
            Some(f.config_file.as_path()),
            &request(seen, Decision::AllowAlways),
        )
        .await
        .unwrap_err();
        assert!(matches!(err, DecideError::Changed { seq: 1, .. }), "{err}");
        assert_eq!(
            std::fs::read_to_string(&f.config_file).unwrap(),
            original,
            "no rule without a decision"
        );
        assert_eq!(f.store.approvals().pending().await.unwrap().len(), 2);
    }

    #[tokio::test]
    async fn a_rule_that_cannot_be_written_decides_nothing() {
        let f = fixture().await;
        std::fs::write(
            &f.config_file,
            "[sources.gh]\ncommand = \"x\"\n[policy]\nrules = 3\n",
        )
        .unwrap();
        let err = decide(
            &f.store,
            Some(f.config_file.as_path()),
            &request(vec![seen(0, "d")], Decision::AllowAlways),
        )
        .await
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("was not written") && err.ends_with("nothing was decided"),
            "{err}"
        );
        assert_eq!(f.store.approvals().pending().await.unwrap().len(), 2);
        let err = decide(
            &f.store,
            None,
            &request(vec![seen(0, "d")], Decision::AllowAlways),
        )
        .await
        .unwrap_err()
        .to_string();
        assert!(err.contains("needs a config"), "{err}");
    }

    #[tokio::test]
    async fn nothing_to_decide_is_named() {
        let f = fixture().await;
        let err = waiting(&f.store, "run_zzz", None)
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("no run `run_zzz`"), "{err}");
        let err = waiting(&f.store, "run_a", Some(7))
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("at call 7"), "{err}");
    }
}
