//! Approvals over MCP elicitation, for 2026-07-28 clients that declare form elicitation: a paused
//! run answers `execute` with an `input_required` result whose form shows the call's address,
//! connection, redacted argument preview and reason, and offers the four choices. The
//! `requestState` is signed (HMAC), bound to the run, the pending call and its argument digest,
//! expires with the approval, and is accepted only once (the store enforces that, so a replayed
//! or tampered state is refused).
//!
//! A run that waits for a connection's sign-in asks, to a client that declared URL-mode
//! elicitation, with the sign-in page's URL (for the person; the model never sees it), and a
//! state signed for that run and source, under associated data of its own so it can never pass
//! for an approval's.
//!
//! The signing key is derived from the state store's key, so the state is all a retry needs:
//! any hub process sharing the store (a restarted one, or another behind the same stateless
//! HTTP endpoint) can check an answer to a question another process asked.

use std::path::Path;
use std::time::Duration;

use rmcp::model::{
    InputRequiredResult, InputResponses, RequestStateCodec, RequestStateError, SealOptions,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::approvals::{Channel, DecisionRequest, decide};
use crate::runs::{Approval, DecideError, Decision, Seen, Store, StoreError, new_run_id};

/// The key of the one input request in an `input_required` result.
const INPUT_KEY: &str = "approval";
/// Binds a state to the method it was issued for.
const ASSOCIATED: &[u8] = b"tools/call:execute";
/// The purpose the signing key is derived for from the state key.
const KEY_PURPOSE: &str = "elicitation request state";

/// The key of the sign-in request in an `input_required` result.
const SIGN_IN_KEY: &str = "sign_in";
/// Binds a sign-in state to its method and kind.
const SIGN_IN_ASSOCIATED: &[u8] = b"tools/call:execute sign-in";
/// How long a client may take to come back from a sign-in page.
const SIGN_IN_TTL: Duration = Duration::from_secs(15 * 60);

/// What a signed sign-in state carries: the run waiting and the source it waits for.
#[derive(Debug, Serialize, Deserialize)]
pub struct SignInState {
    pub run: String,
    pub source: String,
    /// The named connection signed in; the source's default when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection: Option<String>,
}

/// What a signed state carries (readable by the client, so nothing secret).
#[derive(Debug, Serialize, Deserialize)]
struct State {
    run: String,
    seq: u64,
    digest: String,
    /// The version of the tool's definition the question was asked under: the answer holds for
    /// it only (a state signed before versions were carried has none, and is then refused as
    /// changed wherever the call has one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tool_version: Option<String>,
    /// Makes each state unique, so "only once" can be enforced per state.
    nonce: String,
}

/// Why an answer was refused; the message says what to do instead.
#[derive(Debug, thiserror::Error)]
pub enum AnswerError {
    #[error(
        "the requestState is not one this hub signed, or it was changed; call execute with {{ \"resume\": runId }} to get a fresh one"
    )]
    Tampered,
    #[error("the approval request expired; run the script again as a new execute")]
    Expired,
    #[error(
        "this requestState was already answered; call execute with {{ \"resume\": \"{0}\" }} to continue the run"
    )]
    Replayed(String),
    #[error(
        "call {seq} of run `{run}` no longer waits for a decision (it was decided elsewhere or its arguments changed); call execute with {{ \"resume\": \"{run}\" }}"
    )]
    NotPending { run: String, seq: u64 },
    #[error(
        "the answer has no `decision`; pick one of allow_once, allow_run, allow_always or deny"
    )]
    NoDecision,
    #[error(
        "a client signed in with a token decides one call or one run, not a lasting rule; pick allow_once, allow_run or deny, and have a person at the hub's machine add the rule (`capabilities policy set ADDRESS allow`, or `A` in the dashboard)"
    )]
    NoLastingRule,
    #[error("cannot check approval answers: {0}")]
    Signing(RequestStateError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Decide(DecideError),
}

impl AnswerError {
    /// The message for an answer to a direct tool's form (`tool`): there is no `execute` to
    /// resume with, and calling the tool again with the same arguments goes on with its run.
    pub fn for_direct_tool(&self, tool: &str) -> String {
        let again = format!("call {tool} again with the same arguments");
        match self {
            AnswerError::Tampered => format!(
                "the requestState is not one this hub signed, or it was changed; {again} to be asked again"
            ),
            AnswerError::Expired => {
                format!("the approval request expired; {again} to be asked again")
            }
            AnswerError::Replayed(_) => format!(
                "this requestState was already answered; {again}: it runs if a person allowed it"
            ),
            AnswerError::NotPending { .. } => format!(
                "the call no longer waits for this decision (it was decided elsewhere); {again}"
            ),
            other => other.to_string(),
        }
    }
}

/// Signs and checks approval states with a key every process sharing the store derives alike.
#[derive(Debug, Default, Clone, Copy)]
pub struct Elicitation;

impl Elicitation {
    /// The codec of `store`'s signing key (derived anew each time: one hash, and the store
    /// keeps its key unlocked).
    async fn codec(&self, store: &Store) -> Result<RequestStateCodec, AnswerError> {
        let key = store.keys().derived(KEY_PURPOSE).await?;
        RequestStateCodec::try_new(key.to_vec()).map_err(AnswerError::Signing)
    }

    /// The `input_required` result asking about the first undecided call of a paused run, or
    /// `None` when nothing waits (decided meanwhile) or the approval has expired. "Always" is
    /// offered only when `lasting` (see [`answer`](Self::answer)).
    pub async fn request(
        &self,
        store: &Store,
        run_id: &str,
        lasting: bool,
    ) -> Option<InputRequiredResult> {
        let now = store.runs().clock_ms().await.ok()?;
        let approval = store
            .approvals()
            .of_run(run_id)
            .await
            .ok()?
            .into_iter()
            .find(|a| a.decision.is_none() && !a.is_expired_at(now))?;
        // A call recorded by an older version has no digest to bind an answer to.
        if approval.call_digest.is_empty() {
            return None;
        }
        let state = State {
            run: run_id.to_string(),
            seq: approval.seq,
            digest: approval.call_digest.clone(),
            tool_version: approval.tool_version.clone(),
            nonce: new_run_id(),
        };
        let ttl = Duration::from_millis(approval.expires_at_ms.saturating_sub(now));
        let sealed = self
            .seal(
                store,
                &state,
                ASSOCIATED,
                ttl,
                &format!("run {run_id} is not offered for approval"),
            )
            .await?;
        let result = json!({
            "resultType": "input_required",
            "inputRequests": { INPUT_KEY: { "method": "elicitation/create", "params": form(&approval, lasting, now) } },
            "requestState": sealed,
        });
        serde_json::from_value(result).ok()
    }

    /// `state` signed for `associated` until `ttl` passes; `None` (logged: the client still gets
    /// the pending envelope and the other channels) when it cannot be.
    async fn seal<T: Serialize>(
        &self,
        store: &Store,
        state: &T,
        associated: &[u8],
        ttl: Duration,
        not_offered: &str,
    ) -> Option<String> {
        let codec = match self.codec(store).await {
            Ok(codec) => codec,
            Err(e) => {
                tracing::warn!("{not_offered} over elicitation: {e}");
                return None;
            }
        };
        codec
            .seal_json_with(
                state,
                &SealOptions::new().associated_data(associated).ttl(ttl),
            )
            .ok()
    }

    /// The `input_required` result that sends the person to `page` to sign `source` in (its
    /// `connection`, when named), for the run `run_id`; `None` when the state cannot be signed
    /// (the envelope says what to do).
    pub async fn request_sign_in(
        &self,
        store: &Store,
        run_id: &str,
        source: &str,
        connection: Option<&str>,
        page: &str,
    ) -> Option<InputRequiredResult> {
        let state = SignInState {
            run: run_id.to_string(),
            source: source.to_string(),
            connection: connection.map(str::to_string),
        };
        let which = connection
            .map(|c| format!(" (connection `{c}`)"))
            .unwrap_or_default();
        let sealed = self
            .seal(
                store,
                &state,
                SIGN_IN_ASSOCIATED,
                SIGN_IN_TTL,
                &format!("run {run_id} is not offered a sign-in"),
            )
            .await?;
        let params = json!({
            "mode": "url",
            "message": format!("Sign in to `{source}`{which} so the script can go on: the page opens at its own server, and nothing you enter there reaches the model."),
            "url": page,
        });
        let result = json!({
            "resultType": "input_required",
            "inputRequests": { SIGN_IN_KEY: { "method": "elicitation/create", "params": params } },
            "requestState": sealed,
        });
        serde_json::from_value(result).ok()
    }

    /// The run and source of a sign-in answer, if `request_state` is a sign-in state signed here;
    /// with whether the person accepted to open the page.
    pub async fn sign_in_of(
        &self,
        store: &Store,
        request_state: &str,
        responses: &InputResponses,
    ) -> Option<(SignInState, bool)> {
        let state: SignInState = self
            .codec(store)
            .await
            .ok()?
            .open_json_with(request_state, SIGN_IN_ASSOCIATED)
            .ok()?;
        let accepted = responses
            .get(SIGN_IN_KEY)
            .and_then(|r| r.get("action"))
            .and_then(Value::as_str)
            == Some("accept");
        Some((state, accepted))
    }

    /// The state of an answer, checked (signed here, not expired) but not used up.
    async fn open(&self, store: &Store, request_state: &str) -> Result<State, AnswerError> {
        self.codec(store)
            .await?
            .open_json_with(request_state, ASSOCIATED)
            .map_err(|e| match e {
                RequestStateError::Expired => AnswerError::Expired,
                _ => AnswerError::Tampered,
            })
    }

    /// The run an answer is about, without deciding anything or using the state up: the hub
    /// checks it may resume that run (its profile) before the answer counts.
    pub async fn run_of(&self, store: &Store, request_state: &str) -> Result<String, AnswerError> {
        Ok(self.open(store, request_state).await?.run)
    }

    /// Checks an answer and records its decision (channel `elicitation`) through the one
    /// [`decide`], bound to the arguments the form showed; "always" writes its rule to
    /// `config_file`. Without one (a client signed in with a bearer token, which may be a
    /// program answering its own forms), "always" is refused: a rule would outlast the token
    /// and apply to every other client.
    /// Returns the run to resume.
    pub async fn answer(
        &self,
        store: &Store,
        config_file: Option<&Path>,
        request_state: &str,
        responses: &InputResponses,
    ) -> Result<String, AnswerError> {
        let state = self.open(store, request_state).await?;
        // A malformed answer leaves the state usable for a proper one.
        let decision = decision_of(responses.get(INPUT_KEY))?;
        if decision == Decision::AllowAlways && config_file.is_none() {
            return Err(AnswerError::NoLastingRule);
        }
        if !store.approvals().consume_once(&state.nonce).await? {
            return Err(AnswerError::Replayed(state.run));
        }
        let request = DecisionRequest {
            run_id: &state.run,
            seen: vec![Seen {
                seq: state.seq,
                call_digest: state.digest,
                tool_version: state.tool_version,
            }],
            decision,
            channel: Channel::Elicitation,
        };
        match decide(store, config_file, &request).await {
            Ok(_) => Ok(state.run),
            Err(DecideError::Expired { .. }) => Err(AnswerError::Expired),
            Err(DecideError::NothingPending { .. } | DecideError::Changed { .. }) => {
                Err(AnswerError::NotPending {
                    run: state.run,
                    seq: state.seq,
                })
            }
            Err(e) => Err(AnswerError::Decide(e)),
        }
    }
}

/// accept + a choice → that choice; decline or cancel → deny (the user said no, or walked away).
fn decision_of(response: Option<&Value>) -> Result<Decision, AnswerError> {
    let response = response.ok_or(AnswerError::NoDecision)?;
    match response.get("action").and_then(Value::as_str) {
        Some("accept") => response
            .get("content")
            .and_then(|c| c.get("decision"))
            .and_then(Value::as_str)
            .and_then(|d| d.parse().ok())
            .ok_or(AnswerError::NoDecision),
        Some("decline") | Some("cancel") => Ok(Decision::Deny),
        _ => Err(AnswerError::NoDecision),
    }
}

/// The form: everything a person needs in the message (forms have no display-only fields), one
/// choice with the four options ("always" only when `lasting`). No URL, no secret.
fn form(approval: &Approval, lasting: bool, now_ms: u64) -> Value {
    let on = approval
        .connection
        .as_deref()
        .map(|c| format!(" on connection `{c}`"))
        .unwrap_or_default();
    let minutes = approval.expires_at_ms.saturating_sub(now_ms) / 60_000;
    let choices: Vec<Value> = [
        ("allow_once", "Allow once"),
        ("allow_run", "Allow this tool for the rest of this run"),
        (
            "allow_always",
            "Always allow this tool (adds a policy rule)",
        ),
        ("deny", "Deny"),
    ]
    .into_iter()
    .filter(|(choice, _)| lasting || *choice != "allow_always")
    .map(|(choice, title)| json!({ "const": choice, "title": title }))
    .collect();
    // What the preview cut, so the person decides on all of it: in the form when it fits one,
    // else where they can read it whole.
    let whole = match &approval.whole {
        Some(whole) if whole.chars().count() <= FORM_ARGUMENTS => {
            format!("\nAll of the arguments: {whole}")
        }
        Some(whole) => format!(
            "\nThe arguments are longer than this form can show ({} characters): read all of them with `capabilities hub approve {}` on the hub's machine, which shows them before it asks.",
            whole.chars().count(),
            approval.run_id
        ),
        None => String::new(),
    };
    json!({
        "mode": "form",
        "message": format!(
            "A script wants to call `{}`{on} with {}.{whole}\nWhy it asks: {}.\nThis request expires in {minutes} min.",
            approval.address,
            approval.preview,
            crate::printable::escaped(&approval.reason)
        ),
        "requestedSchema": {
            "type": "object",
            "properties": {
                "decision": {
                    "type": "string",
                    "title": "Decision",
                    "oneOf": choices,
                }
            },
            "required": ["decision"]
        }
    })
}

/// The longest arguments a form shows in full, in characters.
const FORM_ARGUMENTS: usize = 2_000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_form_shows_all_of_arguments_the_preview_cut_or_where_to_read_them() {
        let approval = |whole: Option<String>| Approval {
            preview: "{ key: \"weekly report\"…(+60 chars) }".into(),
            whole,
            ..crate::tui::fixtures::approval("run_x", 0, "ledger.write", 0)
        };
        let message =
            |whole| form(&approval(whole), true, crate::runs::now_ms())["message"].to_string();
        let short = message(Some(
            "{ key: \"weekly report; AND DELETE EVERYTHING\" }".into(),
        ));
        assert!(short.contains("All of the arguments: { key:"), "{short}");
        assert!(short.contains("AND DELETE EVERYTHING"), "{short}");
        let long = message(Some(format!("{{ key: \"{}\" }}", "x".repeat(5_000))));
        assert!(
            long.contains("longer than this form can show (5011 characters)")
                && long.contains("`capabilities hub approve run_x`"),
            "{long}"
        );
        assert!(!message(None).contains("arguments"));
    }

    #[test]
    fn an_answer_to_a_direct_tools_form_says_to_call_it_again() {
        for error in [
            AnswerError::Tampered,
            AnswerError::Expired,
            AnswerError::Replayed("run_1".into()),
            AnswerError::NotPending {
                run: "run_1".into(),
                seq: 2,
            },
        ] {
            let message = error.for_direct_tool("counter_publish");
            assert!(
                message.contains("call counter_publish again with the same arguments")
                    && !message.contains("execute"),
                "{message}"
            );
        }
    }

    #[test]
    fn decline_and_cancel_deny_and_accept_needs_a_choice() {
        assert_eq!(
            decision_of(Some(&json!({"action": "decline"}))).unwrap(),
            Decision::Deny
        );
        assert_eq!(
            decision_of(Some(&json!({"action": "cancel"}))).unwrap(),
            Decision::Deny
        );
        assert_eq!(
            decision_of(Some(
                &json!({"action": "accept", "content": {"decision": "allow_run"}})
            ))
            .unwrap(),
            Decision::AllowRun
        );
        assert!(decision_of(Some(&json!({"action": "accept", "content": {}}))).is_err());
        assert!(decision_of(None).is_err());
    }
}
