//! The one way a person's decision on a waiting call is recorded, whatever the channel — `hub
//! approve`, the `exec` prompt, an elicitation answer, the approval page or the dashboard. Each
//! channel shows the waiting calls its own way, then hands [`decide`] the calls the person saw
//! (each with the digest of the arguments its preview showed) and their choice. Everything else
//! happens here, all or nothing, in one store transaction: the calls must still wait, unexpired,
//! with exactly those arguments; an "always" rule is written to the config; the decision and its
//! audit line are recorded. A rule that cannot be written decides nothing, and a decision that
//! cannot be recorded takes its rule back.

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use crate::config::edit::{add_rule, write_atomically};
use crate::policy::Action;
use crate::runs::{Approval, DecideError, Decision, RunsStore, Seen, now_ms};

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
pub fn waiting(
    store: &RunsStore,
    run_id: &str,
    seq: Option<u64>,
) -> Result<Vec<Approval>, DecideError> {
    if store.run_status(run_id)?.is_none() {
        return Err(DecideError::UnknownRun(run_id.to_string()));
    }
    let now = now_ms();
    let undecided: Vec<Approval> = store
        .approvals(run_id)?
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
pub fn decide(
    store: &RunsStore,
    config_file: Option<&Path>,
    request: &DecisionRequest<'_>,
) -> Result<Vec<Approval>, DecideError> {
    // The config before and after this decision's rules, to put back if the decision is not
    // recorded after all.
    let written: RefCell<Option<Written>> = RefCell::new(None);
    let recorded = store.record_decision(
        request.run_id,
        &request.seen,
        request.decision,
        request.channel.as_str(),
        |waiting, profile| {
            if request.decision != Decision::AllowAlways {
                return Ok(());
            }
            let Some(config_file) = config_file else {
                return Err(DecideError::Rule(
                    "\"always allow\" needs a config to write its rule to".into(),
                ));
            };
            let mut change = Written {
                config_file: config_file.to_path_buf(),
                before: std::fs::read_to_string(config_file).ok(),
                after: None,
            };
            let mut addresses: Vec<&str> = waiting.iter().map(|a| a.address.as_str()).collect();
            addresses.sort_unstable();
            addresses.dedup();
            for address in addresses {
                let added = add_rule(config_file, profile, address, Action::Allow, None);
                change.after = std::fs::read_to_string(config_file).ok();
                *written.borrow_mut() = Some(change.clone());
                added.map_err(|e| {
                    DecideError::Rule(format!("the rule for `{address}` was not written: {e:#}"))
                })?;
            }
            Ok(())
        },
    );
    if recorded.is_err()
        && let Some(change) = written.into_inner()
    {
        change.undo();
    }
    recorded
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
    use crate::runs::PendingCall;

    struct Fixture {
        _dir: tempfile::TempDir,
        store: RunsStore,
        config_file: PathBuf,
    }

    fn fixture() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let store = RunsStore::open(&dir.path().join("s.sqlite")).unwrap();
        let owner = store.begin_run("run_a", "code", 1, 2).unwrap();
        for (seq, address) in [(0, "gh.createIssue"), (1, "gh.deleteRepo")] {
            let call = PendingCall {
                seq,
                address,
                connection: None,
                preview: "{}",
                reason: "asks",
                call_digest: "d",
            };
            store.record_pending("run_a", &owner, &call).unwrap();
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

    #[test]
    fn always_writes_its_rule_and_records_the_decision_together() {
        let f = fixture();
        let seen = waiting(&f.store, "run_a", None)
            .unwrap()
            .iter()
            .map(Approval::seen)
            .collect();
        let decided = decide(
            &f.store,
            Some(f.config_file.as_path()),
            &request(seen, Decision::AllowAlways),
        )
        .unwrap();
        assert_eq!(decided.len(), 2);
        let text = std::fs::read_to_string(&f.config_file).unwrap();
        assert!(
            text.contains("gh.createIssue") && text.contains("gh.deleteRepo"),
            "{text}"
        );
        assert_eq!(
            f.store
                .approval("run_a", 0)
                .unwrap()
                .unwrap()
                .decided_by
                .as_deref(),
            Some("elicitation")
        );
    }

    #[test]
    fn a_decision_that_is_not_recorded_takes_its_rule_back() {
        let f = fixture();
        let original = std::fs::read_to_string(&f.config_file).unwrap();
        // The first call still waits as seen; the second was shown with other arguments.
        let seen = vec![
            Seen {
                seq: 0,
                call_digest: "d".into(),
            },
            Seen {
                seq: 1,
                call_digest: "stale".into(),
            },
        ];
        let err = decide(
            &f.store,
            Some(f.config_file.as_path()),
            &request(seen, Decision::AllowAlways),
        )
        .unwrap_err();
        assert!(matches!(err, DecideError::Changed { seq: 1, .. }), "{err}");
        assert_eq!(
            std::fs::read_to_string(&f.config_file).unwrap(),
            original,
            "no rule without a decision"
        );
        assert_eq!(f.store.pending_approvals().unwrap().len(), 2);
    }

    #[test]
    fn a_rule_that_cannot_be_written_decides_nothing() {
        let f = fixture();
        std::fs::write(
            &f.config_file,
            "[sources.gh]\ncommand = \"x\"\n[policy]\nrules = 3\n",
        )
        .unwrap();
        let seen = vec![Seen {
            seq: 0,
            call_digest: "d".into(),
        }];
        let err = decide(
            &f.store,
            Some(f.config_file.as_path()),
            &request(seen, Decision::AllowAlways),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("was not written") && err.ends_with("nothing was decided"),
            "{err}"
        );
        assert_eq!(f.store.pending_approvals().unwrap().len(), 2);
        let err = decide(
            &f.store,
            None,
            &request(
                vec![Seen {
                    seq: 0,
                    call_digest: "d".into(),
                }],
                Decision::AllowAlways,
            ),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("needs a config"), "{err}");
    }

    #[test]
    fn nothing_to_decide_is_named() {
        let f = fixture();
        let err = waiting(&f.store, "run_zzz", None).unwrap_err().to_string();
        assert!(err.contains("no run `run_zzz`"), "{err}");
        let err = waiting(&f.store, "run_a", Some(7)).unwrap_err().to_string();
        assert!(err.contains("at call 7"), "{err}");
    }
}
