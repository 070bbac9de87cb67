//! How the hub asks a person: the approval page for a paused run, the sign-in a run waits for
//! (a URL-mode elicitation to a client that declared one, else the page in the browser), and the
//! answers that come back on a client's retry of `execute` (or of a direct tool). The model is
//! told only that a page opened or a form was asked, never where; "always" from a client with a
//! bearer token writes no rule (see [`Hub::rule_file`]).

use std::path::Path;

use rmcp::model::{CallToolResponse, InputResponses, ProtocolVersion};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};

use super::{Answer, Hub, cancellable, token};
use crate::approvals::{ApprovalPage, PageLink, open_in_browser};
use crate::hub::elicit::{AnswerError, SignInState};
use crate::oauth::SIGN_IN_WAIT;
use crate::sandbox::{CancelToken, ExecuteEnvelope, PendingKind};
use crate::sources::login_arguments;

impl Hub {
    /// Opens the approval page for a paused run. The model is told only that a page opened,
    /// never its URL or token; without a display (or a browser) the hub says so in its log and
    /// the terminal (`hub approve`) remains the way to decide.
    pub(super) async fn offer_page(&self, envelope: &mut ExecuteEnvelope) {
        let Some(config_file) = &self.config_file else {
            return;
        };
        let store = self.executor.store().clone();
        let run_id = envelope.run_id.clone();
        let page = self
            .page
            .get_or_init(|| async move {
                match ApprovalPage::start(store, config_file.clone()).await {
                    Ok(page) => Some(page),
                    Err(e) => {
                        tracing::warn!("the approval page cannot start ({e}); decide with `capabilities hub approve {run_id}`");
                        None
                    }
                }
            })
            .await;
        let Some(page) = page else { return };
        let run_id = envelope.run_id.clone();
        let otherwise = format!("decide with `capabilities hub approve {run_id}` in a terminal");
        let url = match page.page_for(&run_id).await {
            Ok(PageLink::New(url)) => Ok(url),
            Ok(PageLink::StillOpen) => {
                return tell(
                    envelope,
                    format!(
                        "The approval page for this call is already open in the user's browser. Tell the user it waits for them, then call execute with {{ \"resume\": \"{run_id}\" }} once they have decided; `capabilities hub approve {run_id}` in a terminal works too."
                    ),
                );
            }
            Ok(PageLink::TooMany) => {
                tracing::warn!(
                    "no approval page opened for run {run_id}: as many as may wait at once are open; {otherwise}"
                );
                return tell(
                    envelope,
                    format!(
                        "Several approval pages already wait in the user's browser, so no other was opened. Tell the user this run waits for them: `capabilities hub approve {run_id}` in a terminal or the dashboard decides it; then call execute with {{ \"resume\": \"{run_id}\" }}."
                    ),
                );
            }
            Err(e) => Err(e.to_string()),
        };
        let link = url.as_ref().ok().cloned();
        let opened = open_page(envelope, url, "approval page", &otherwise, |run_id| {
            format!(
                "An approval page opened in the user's browser. Tell the user, then call execute with {{ \"resume\": \"{run_id}\" }} once they have decided; `capabilities hub approve {run_id}` in a terminal works too."
            )
        });
        // A link no browser opened is on nobody's screen: the next ask tries again.
        if let (false, Some(link)) = (opened, link) {
            page.withdraw(&link);
        }
    }

    /// Offers the person the sign-in a paused run waits for (a local hub only: the sign-in
    /// comes back to a listener on this machine): a URL-mode elicitation to a client that
    /// declared one and holds no bearer token, else the page in the browser, and the model is
    /// told only that. `None` leaves the envelope as the answer.
    pub(super) async fn offer_sign_in(
        &self,
        envelope: &mut ExecuteEnvelope,
        context: &RequestContext<RoleServer>,
    ) -> Option<CallToolResponse> {
        self.config_file.as_ref()?;
        let waiting = envelope
            .pending
            .iter()
            .find(|p| p.kind == PendingKind::Connection)?;
        let address = waiting.address.clone()?;
        let connection = waiting.connection.clone();
        let source = address.split('.').next().unwrap_or(&address).to_string();
        let page = match self
            .sign_ins
            .page(
                &self.settings,
                &self.catalog,
                &source,
                connection.as_deref(),
            )
            .await
        {
            Ok(page) => page,
            Err(e) => {
                tracing::warn!("no sign-in offered for run {}: {e}", envelope.run_id);
                return None;
            }
        };
        // Only the local user's own client is sent where to sign in: a bearer token's holder
        // may be someone else, whose account the hub's source would then act under for
        // everyone. The page opens at the hub's machine instead, for the person there.
        if can_elicit_url(context)
            && token(context).is_none()
            && let Some(request) = self
                .elicitation
                .request_sign_in(
                    self.executor.store(),
                    &envelope.run_id,
                    &source,
                    connection.as_deref(),
                    &page,
                )
                .await
        {
            return Some(CallToolResponse::InputRequired(request));
        }
        let login = login_arguments(&source, connection.as_deref());
        let url = url::Url::parse(&page).map_err(|e| e.to_string());
        let otherwise = format!("sign in with `capabilities source login {login}` in a terminal");
        open_page(envelope, url, "sign-in page", &otherwise, |run_id| {
            format!(
                "A sign-in page for `{source}` opened in the user's browser. Tell the user, then call execute with {{ \"resume\": \"{run_id}\" }} once they have signed in; `capabilities source login {login}` in a terminal works too."
            )
        });
        None
    }

    /// Whether this client may answer approval forms: the local user's always; one with a
    /// bearer token unless `[policy] token_clients_approve = false` leaves its calls to a
    /// person at the hub's machine.
    pub(super) fn may_answer_forms(&self, context: &RequestContext<RoleServer>) -> bool {
        token(context).is_none() || self.executor.policy().current().token_clients_approve
    }

    /// Where an elicitation answer's "always" writes its rule: the config, unless the client
    /// signed in with a bearer token (see [`Elicitation::answer`]).
    pub(super) fn rule_file(&self, context: &RequestContext<RoleServer>) -> Option<&Path> {
        match token(context) {
            Some(_) => None,
            None => self.config_file.as_deref(),
        }
    }

    /// A retry that answers a sign-in request: once the person accepted, wait for the sign-in
    /// to finish, then continue the run.
    pub(super) async fn answer_sign_in(
        &self,
        state: &SignInState,
        accepted: bool,
        context: &RequestContext<RoleServer>,
        answer: &Answer,
    ) -> Result<CallToolResponse, ErrorData> {
        let run_id = &state.run;
        let token = token(context);
        self.executor
            .check_resumable(run_id, token.as_ref())
            .await
            .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
        if accepted {
            self.sign_ins
                .finished(
                    &self.settings,
                    &state.source,
                    state.connection.as_deref(),
                    SIGN_IN_WAIT,
                )
                .await;
        }
        let cancel = CancelToken::new();
        let envelope = cancellable(
            self.executor.resume(run_id, cancel.clone(), token.as_ref()),
            &cancel,
            &context.ct,
        )
        .await
        .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
        Ok(self
            .respond_offering(envelope, context, answer, false)
            .await)
    }

    /// A retry that answers an approval form: record the decision, then continue the run.
    pub(super) async fn answer(
        &self,
        request_state: &str,
        responses: &InputResponses,
        context: &RequestContext<RoleServer>,
        answer: &Answer,
    ) -> Result<CallToolResponse, ErrorData> {
        if let Some((state, accepted)) = self
            .elicitation
            .sign_in_of(self.executor.store(), request_state, responses)
            .await
        {
            return self.answer_sign_in(&state, accepted, context, answer).await;
        }
        // A form given out before the policy turned them off decides nothing now.
        if !self.may_answer_forms(context) {
            return Err(ErrorData::invalid_params(
                "clients with a bearer token do not decide approvals here (`[policy] token_clients_approve = false`): nothing was decided; a person at the hub's machine decides with `capabilities hub approve`, the dashboard or the approval page, then resume the run",
                None,
            ));
        }
        let refused = |e: AnswerError| {
            let message = match answer {
                Answer::Envelope => e.to_string(),
                Answer::Direct { name, .. } => e.for_direct_tool(name),
            };
            ErrorData::invalid_params(message, None)
        };
        // A run of another profile, or another token's, is refused before its answer counts:
        // the decision and the one-time state stay for a hub (and a client) that may resume it.
        let run_id = self
            .elicitation
            .run_of(self.executor.store(), request_state)
            .await
            .map_err(refused)?;
        let token = token(context);
        self.executor
            .check_resumable(&run_id, token.as_ref())
            .await
            .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
        let run_id = self
            .elicitation
            .answer(
                self.executor.store(),
                self.rule_file(context),
                request_state,
                responses,
            )
            .await
            .map_err(refused)?;
        // As for `execute({ resume })`: the answer may reach a hub that has just started (any
        // process sharing the store may take it), so its sources may still be connecting.
        self.wait_for_connecting_sources(|_| true, &context.ct)
            .await;
        let cancel = CancelToken::new();
        let envelope = cancellable(
            self.executor
                .resume(&run_id, cancel.clone(), token.as_ref()),
            &cancel,
            &context.ct,
        )
        .await
        .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
        Ok(self.respond(envelope, context, answer).await)
    }
}

/// Opens `page` (the approval or sign-in page, `what`) in the user's browser; once it opened,
/// every pending item tells the model only `said(run_id)`: that a page opened, never where.
/// When it cannot, the log says why and `otherwise`, what the person can do instead.
fn open_page(
    envelope: &mut ExecuteEnvelope,
    page: Result<url::Url, String>,
    what: &str,
    otherwise: &str,
    said: impl Fn(&str) -> String,
) -> bool {
    match page.and_then(|url| open_in_browser(&url, otherwise).map_err(|e| e.to_string())) {
        Ok(()) => {
            let message = said(&envelope.run_id);
            tell(envelope, message);
            true
        }
        Err(e) => {
            tracing::warn!(
                "{what} not opened for run {}: {e}; {otherwise}",
                envelope.run_id
            );
            false
        }
    }
}

/// Tells the model `message` about every pending call of `envelope`.
fn tell(envelope: &mut ExecuteEnvelope, message: String) {
    for pending in &mut envelope.pending {
        pending.message = Some(message.clone());
    }
}

/// A 2026-07-28 client that declared URL-mode elicitation.
fn can_elicit_url(context: &RequestContext<RoleServer>) -> bool {
    let modern = context
        .protocol_version()
        .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
    let url = context
        .client_capabilities()
        .and_then(|c| c.elicitation)
        .is_some_and(|e| e.url.is_some());
    modern && url
}
