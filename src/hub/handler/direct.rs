//! The hub's answers in direct mode: `tools/list` as every tool the client may call, and
//! `tools/call` of one as an `execute` run of its one-call script (see `hub::direct`); a
//! repeated call that waited for a person goes on with the run that waited. Also the watches
//! that send `notifications/tools/list_changed`: after `initialize` for older clients, over
//! `subscriptions/listen` for 2026-07-28 ones.

use crate::error_text::echo;
use rmcp::model::{CallToolResponse, InputResponses, Tool};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer};
use serde_json::{Map, Value};

use super::{Answer, Hub, cancellable, token, tool_error};
use crate::execute::caller;
use crate::hub::direct::{self, DirectTool, Target};
use crate::model::Permits;
use crate::runs::TokenRecord;
use crate::sandbox::CancelToken;

impl Hub {
    /// What `token`'s holder is listed now.
    pub(super) fn direct_listing(&self, token: Option<&TokenRecord>) -> Vec<DirectTool> {
        let permits = token.map_or(Permits::ALL, TokenRecord::permits);
        let policy = self.executor.policy().current();
        let skills = self.reachable(self.skills_now(), token);
        self.catalog
            .read(|catalog, _| direct::listing(catalog, &policy, permits, &skills))
    }

    /// `tools/list`: waits (bounded) for sources still connecting for the first time, since
    /// their tools are the list.
    pub(super) async fn direct_tools(&self, context: &RequestContext<RoleServer>) -> Vec<Tool> {
        self.wait_for_connecting_sources(|_| true, &context.ct)
            .await;
        self.direct_listing(token(context).as_ref())
            .into_iter()
            .map(|t| t.tool)
            .collect()
    }

    /// `tools/call` of the direct tool `name`. A tool the client may not see is unknown to
    /// it, whatever the reason (denied, outside its token): its name says nothing more.
    pub(super) async fn direct_call(
        &self,
        name: &str,
        arguments: &Map<String, Value>,
        answered: Option<(&str, &InputResponses)>,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let token = token(context);
        let find = || {
            self.direct_listing(token.as_ref())
                .into_iter()
                .find(|t| t.tool.name == name)
        };
        let found = match find() {
            Some(found) => found,
            None => {
                // Sent right after start-up, before its source was listed.
                self.wait_for_connecting_sources(|_| true, &context.ct)
                    .await;
                find().ok_or_else(|| {
                    ErrorData::invalid_params(
                        format!("there is no tool `{}`; list the tools again (tools/list) for the current names", echo(name)),
                        None,
                    )
                })?
            }
        };
        let answer = Answer::Direct {
            name: name.to_string(),
            output_schema: found.tool.output_schema.clone(),
        };
        let client = context.client_info().map(|info| info.name);
        let caller = caller(client.as_deref(), token.as_ref());
        if let Some((state, responses)) = answered {
            // A state that names no run (a sign-in's, a tampered one) is for `answer` to judge.
            if let Ok(run_id) = self.elicitation.run_of(self.executor.store(), state).await {
                self.check_answerer(&run_id, &found.target, caller.as_deref(), name)
                    .await?;
            }
            // Boxed: this future also holds a run's, and both would outgrow a runtime worker's
            // stack in a debug build.
            return Box::pin(self.answer(state, responses, context, &answer)).await;
        }
        let code = match direct::script(&found.target, arguments) {
            Ok(code) => code,
            Err(e) => return Ok(CallToolResponse::Complete(tool_error(e))),
        };
        if let Target::Tool { address } = &found.target {
            let namespace = address.split('.').next().unwrap_or_default();
            self.wait_for_connecting_sources(|n| n == namespace, &context.ct)
                .await;
        }
        let cancel = CancelToken::new();
        let turn = self.executor.twin_turn(caller.as_deref(), &code).await;
        let envelope = match self
            .executor
            .paused_twin(&code, caller.as_deref(), token.as_ref())
            .await
        {
            Some(run_id) => {
                let resumed = Box::pin(self.executor.resume(
                    &run_id,
                    cancel.clone(),
                    token.as_ref(),
                ));
                match cancellable(resumed, &cancel, &context.ct).await {
                    Ok(envelope) => envelope,
                    Err(e) => return Ok(CallToolResponse::Complete(tool_error(e.to_string()))),
                }
            }
            None => {
                let run = Box::pin(self.executor.execute_for(
                    client.as_deref(),
                    code,
                    None,
                    cancel.clone(),
                    token.as_ref(),
                ));
                cancellable(run, &cancel, &context.ct).await
            }
        };
        drop(turn);
        Ok(Box::pin(self.respond(envelope, context, &answer)).await)
    }

    /// Refuses an answer to a form of `run_id` sent by another caller than the one whose call
    /// asked, or through another tool: a requestState seen elsewhere must not decide, or spend,
    /// someone else's call.
    async fn check_answerer(
        &self,
        run_id: &str,
        target: &Target,
        caller: Option<&str>,
        name: &str,
    ) -> Result<(), ErrorData> {
        let record = self
            .executor
            .store()
            .runs()
            .get(run_id)
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let same_call = match (record, target) {
            (Some(record), Target::Tool { address }) => {
                record.client.as_deref() == caller
                    && record.code.starts_with(&format!("return await {address}("))
            }
            _ => false,
        };
        if same_call {
            return Ok(());
        }
        Err(ErrorData::invalid_params(
            format!(
                "this approval form was sent for another client's or another tool's call, so it cannot be answered here; call {name} again with the same arguments to be asked yourself"
            ),
            None,
        ))
    }

    /// The digest of what `token`'s holder would be listed now.
    fn direct_fingerprint(&self, token: Option<&TokenRecord>) -> String {
        direct::fingerprint(&self.direct_listing(token))
    }

    /// After an older client's `initialize`: tells it whenever its list changes, until it
    /// goes away.
    pub(super) fn follow_for_legacy(&self, context: &NotificationContext<RoleServer>) {
        let hub = self.clone();
        let peer = context.peer.clone();
        let token = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<TokenRecord>())
            .cloned();
        let stop = tokio_util::sync::CancellationToken::new();
        tokio::spawn(async move {
            let watch = direct::follow(
                || hub.direct_fingerprint(token.as_ref()),
                || {
                    let peer = peer.clone();
                    async move {
                        !peer.is_transport_closed() && peer.notify_tool_list_changed().await.is_ok()
                    }
                },
                || peer.is_transport_closed(),
                stop,
            );
            watch.await;
        });
    }

    /// A 2026-07-28 client's `subscriptions/listen` for tool list changes: runs until the
    /// client cancels it.
    pub(super) async fn follow_subscription(&self, context: SubscriptionContext) {
        let token = token(context.request_context());
        let sink = context.sink().clone();
        let stop = context.request_context().ct.clone();
        direct::follow(
            || self.direct_fingerprint(token.as_ref()),
            || {
                let sink = sink.clone();
                async move { sink.notify_tool_list_changed().await.is_ok() }
            },
            || false,
            stop,
        )
        .await;
    }
}
