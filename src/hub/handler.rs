//! The hub's `ServerHandler`: answers `tools/list` with the three tools at once (sources connect
//! in the background), and `tools/call` by searching the live catalogue, describing it, or running
//! a script through the [`Executor`]. A client's `notifications/cancelled` (or its going away)
//! cancels the run and the upstream calls it is waiting on. In direct mode (`direct`) the tools
//! are the sources' own, each call a one-call run. What needs a person (the approval page, a
//! sign-in, the answers to forms) is in `asking`.

mod asking;
mod direct;

use crate::error_text::echo;
use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::SubscriptionFilter;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest,
    CustomResult, DiscoverResult, ErrorCode, GetSkillRequestParams, GetSkillResult, Implementation,
    InitializeRequestParams, InitializeResult, ListResourcesResult, ListSkillsResult,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams,
    ReadResourceResponse, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Map, Value};
use tokio::sync::OnceCell;
use tokio_util::sync::CancellationToken;

use crate::approvals::ApprovalPage;

use super::args::{DescribeArgs, ExecuteArgs, SearchArgs};
use super::elicit::Elicitation;
use super::sign_in::SignIns;
use super::surface::{self, DESCRIBE, EXECUTE, INSTRUCTIONS, SEARCH};
use super::trace::{self, request_span, traced};
use crate::catalog::Origin;
use crate::catalog::describe::describe;
use crate::catalog::live::LiveCatalog;
use crate::catalog::results::{SearchRequest, render_search};
use crate::config::{ServeMode, Settings, settle_time};
use crate::execute::Executor;
use crate::execute::mentions::mentions;
use crate::model::{Permits, Reader};
use crate::printable;
use crate::runs::TokenRecord;
use crate::sandbox::{CancelToken, ExecuteEnvelope, Status};
use crate::skills::Skills;
use crate::skills::index::SkillCache;
use crate::skills::upstream::UpstreamSkill;

/// The protocol versions served: 2026-07-28 statelessly, the older ones after `initialize`.
const VERSIONS: &[ProtocolVersion] = &[
    ProtocolVersion::V_2025_03_26,
    ProtocolVersion::V_2025_06_18,
    ProtocolVersion::V_2025_11_25,
    ProtocolVersion::V_2026_07_28,
];

/// How often a request waiting for a connecting source looks again.
const CONNECTING_POLL: Duration = Duration::from_millis(50);

/// The methods this server answers; a malformed request for one of them is a params error, for
/// any other method "not found".
const SERVED_METHODS: &[&str] = &[
    "initialize",
    "server/discover",
    "ping",
    "tools/list",
    "tools/call",
    "skills/list",
    "skills/get",
    "resources/list",
    "resources/read",
];

#[derive(Clone)]
pub struct Hub {
    catalog: Arc<LiveCatalog>,
    settings: Arc<Settings>,
    executor: Arc<Executor>,
    tools: Arc<[Tool]>,
    /// How long describe and execute wait for sources that are still connecting.
    settle_timeout: Duration,
    /// The config "always allow" (on the approval page or a form) writes its rule to; `None`
    /// turns the page off and refuses "always" from a form.
    config_file: Option<PathBuf>,
    /// Started the first time a run pauses; `None` inside when it could not start.
    page: Arc<OnceCell<Option<ApprovalPage>>>,
    /// Signs approval forms for clients that elicit, and checks the answers.
    elicitation: Elicitation,
    /// The sign-ins this hub offered to runs waiting for a connection.
    sign_ins: SignIns,
    /// The three tools, or each source's tools as its own.
    mode: ServeMode,
    /// The skills search finds beside the tools.
    skills: Arc<SkillCache>,
}

/// How a run's envelope goes back to the client: as `execute`'s envelope, or as the answer of
/// the direct tool `name` (with the output schema it declares, if any).
enum Answer {
    Envelope,
    Direct {
        name: String,
        output_schema: Option<Arc<rmcp::model::JsonObject>>,
    },
}

impl Hub {
    pub fn new(catalog: Arc<LiveCatalog>, settings: Arc<Settings>, executor: Arc<Executor>) -> Hub {
        let settle_timeout = settle_time(&settings.sources);
        let mode = settings.mode;
        let skills = Arc::new(SkillCache::new(settings.skill_dirs.clone()));
        Hub {
            mode,
            skills,
            catalog,
            settings,
            executor,
            tools: surface::tools().into(),
            settle_timeout,
            config_file: None,
            page: Arc::new(OnceCell::new()),
            elicitation: Elicitation,
            sign_ins: SignIns::default(),
        }
    }

    /// Opens the approval page in the user's browser when a run pauses; "always allow" (there, or
    /// in a form from a client without a bearer token) writes its rule to `config_file`.
    pub fn with_approval_page(mut self, config_file: PathBuf) -> Hub {
        self.config_file = Some(config_file);
        self
    }

    async fn search(
        &self,
        arguments: &Map<String, Value>,
        token: Option<&TokenRecord>,
    ) -> CallToolResult {
        let args = match SearchArgs::parse(arguments) {
            Ok(args) => args,
            Err(e) => return tool_error(e.0),
        };
        let permits = token.map_or(Permits::ALL, TokenRecord::permits);
        let changed = self.executor.changed_tools().await;
        let skills = self.reachable(self.skills_now(), token);
        let request = SearchRequest {
            query: &args.query,
            namespace: args.namespace.as_deref(),
            limit: args.limit,
            permits,
            changed: Some(&*changed),
            reader: &Reader::Agent,
            skills: Some(&skills),
        };
        // The policy as the config says now: a rule written since the hub started applies.
        let policy = self.executor.policy().current();
        let answer = self.catalog.read(|catalog, index| {
            let header = self
                .settings
                .profile_header_showing(|name| catalog.shows_source(name, request.permits));
            render_search(catalog, index, &policy, &request).map(|text| (header, text))
        });
        match answer {
            // Under a profile the model is told which one, and which sources it spans: a tool
            // it knows from elsewhere may simply not be in it.
            Ok((header, text)) => match header {
                Some(header) => {
                    CallToolResult::success(vec![ContentBlock::text(format!("{header}\n\n{text}"))])
                }
                None => CallToolResult::success(vec![ContentBlock::text(text)]),
            },
            Err(e) => tool_error(e.0),
        }
    }

    /// Like search, describe shows only what the client's token lets it call.
    async fn describe(
        &self,
        arguments: &Map<String, Value>,
        token: Option<&TokenRecord>,
        ct: &CancellationToken,
    ) -> CallToolResult {
        let mut args = match DescribeArgs::parse(arguments) {
            Ok(args) => args,
            Err(e) => return tool_error(e.0),
        };
        let permits = token.map_or(Permits::ALL, TokenRecord::permits);
        let withheld = self.withheld_skills().await;
        let policy = self.executor.policy().current();
        let split = self.catalog.describe_skills(
            &self.settings.skill_dirs,
            &policy,
            permits,
            &withheld,
            &args.targets,
            args.budget,
        );
        let (skills, others) = match split.await {
            Ok(split) => split,
            Err(e) => return tool_error(e),
        };
        if others.is_empty() {
            return CallToolResult::success(vec![ContentBlock::text(skills)]);
        }
        args.targets = others;
        let named = |namespace: &str| {
            args.targets
                .iter()
                .any(|t| t.trim().split('.').next() == Some(namespace))
        };
        self.wait_for_connecting_sources(named, ct).await;
        let policy = self.executor.policy().current();
        let described = self.catalog.read(|catalog, _| {
            describe(
                &catalog.visible_tools(&policy, permits),
                &args.targets,
                args.budget,
            )
        });
        match described {
            Ok(text) if skills.is_empty() => {
                CallToolResult::success(vec![ContentBlock::text(text)])
            }
            Ok(text) => {
                CallToolResult::success(vec![ContentBlock::text(format!("{skills}\n{text}"))])
            }
            Err(e) => tool_error(e.to_string()),
        }
    }

    async fn execute(
        &self,
        arguments: &Map<String, Value>,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResponse {
        let ct = &context.ct;
        let args = match ExecuteArgs::parse(arguments, self.settings.limits.code_bytes) {
            Ok(args) => args,
            Err(e) => return CallToolResponse::Complete(tool_error(e.0)),
        };
        match &args {
            ExecuteArgs::Run { code, .. } => {
                self.wait_for_connecting_sources(|namespace| mentions(code, namespace), ct)
                    .await
            }
            // The stored script is not at hand here; a resume waits for every source.
            ExecuteArgs::Resume { .. } => self.wait_for_connecting_sources(|_| true, ct).await,
        }
        let cancel = CancelToken::new();
        let envelope = match args {
            ExecuteArgs::Run {
                code,
                output_budget_bytes,
            } => {
                let client = context.client_info().map(|info| info.name);
                cancellable(
                    self.executor.execute_for(
                        client.as_deref(),
                        code,
                        output_budget_bytes,
                        cancel.clone(),
                        token(context).as_ref(),
                    ),
                    &cancel,
                    ct,
                )
                .await
            }
            ExecuteArgs::Resume { run_id } => {
                let token = token(context);
                let resumed = self
                    .executor
                    .resume(&run_id, cancel.clone(), token.as_ref());
                match cancellable(resumed, &cancel, ct).await {
                    Ok(envelope) => envelope,
                    Err(e) => return CallToolResponse::Complete(tool_error(e.to_string())),
                }
            }
        };
        self.respond(envelope, context, &Answer::Envelope).await
    }

    /// A finished run's envelope; for a paused one, an approval form to a client that can show
    /// one, else the approval page (and the envelope).
    async fn respond(
        &self,
        envelope: ExecuteEnvelope,
        context: &RequestContext<RoleServer>,
        answer: &Answer,
    ) -> CallToolResponse {
        self.respond_offering(envelope, context, answer, true).await
    }

    /// [`respond`](Self::respond); without `offer_sign_in`, a run that waits for a connection
    /// is answered with its envelope alone (the person just answered a sign-in request).
    async fn respond_offering(
        &self,
        mut envelope: ExecuteEnvelope,
        context: &RequestContext<RoleServer>,
        answer: &Answer,
        offer_sign_in: bool,
    ) -> CallToolResponse {
        trace::record_run(&envelope);
        if envelope.status == Status::AwaitingConnection
            && offer_sign_in
            && let Some(request) = self.offer_sign_in(&mut envelope, context).await
        {
            return request;
        }
        if envelope.status == Status::AwaitingApproval {
            if can_elicit(context)
                && self.may_answer_forms(context)
                && let Some(form) = self
                    .elicitation
                    .request(
                        self.executor.store(),
                        &envelope.run_id,
                        self.rule_file(context).is_some(),
                    )
                    .await
            {
                return CallToolResponse::InputRequired(form);
            }
            self.offer_page(&mut envelope).await;
        }
        CallToolResponse::Complete(match answer {
            Answer::Envelope => envelope_result(&envelope),
            Answer::Direct {
                name,
                output_schema,
            } => super::direct::result(&envelope, name, output_schema.as_deref()),
        })
    }

    /// Which sources' skills are withheld from the model now: changed since a person confirmed
    /// them (see `ChangedTools::withholds`).
    async fn withheld_skills(&self) -> impl Fn(&UpstreamSkill) -> bool + Send + Sync + use<> {
        let changed = self.executor.changed_tools().await;
        let confirm = self.executor.policy().current().confirm_changes;
        move |skill: &UpstreamSkill| changed.withholds(skill, confirm)
    }

    /// `skills` as `token`'s holder may see them: a source's only while the policy and the
    /// token leave one of that source's tools visible (see `Catalog::reachable_skills`).
    pub(super) fn reachable(
        &self,
        skills: Arc<Skills>,
        token: Option<&TokenRecord>,
    ) -> Arc<Skills> {
        if !skills.skills.iter().any(|s| s.upstream.is_some()) {
            return skills;
        }
        let policy = self.executor.policy().current();
        let permits = token.map_or(Permits::ALL, TokenRecord::permits);
        let reachable: Vec<String> = self.catalog.read(|catalog, _| {
            catalog
                .reachable_skills(&policy, permits)
                .iter()
                .map(UpstreamSkill::address_name)
                .collect()
        });
        let mut visible = Skills::clone(&skills);
        visible
            .skills
            .retain(|s| s.upstream.is_none() || reachable.contains(&s.name));
        Arc::new(visible)
    }

    /// The skills a skill-aware client is served: those its token reaches, but not the
    /// sources' skills whose text is withheld, which it could not verify against anything a
    /// person confirmed.
    async fn native_skills(&self, context: &RequestContext<RoleServer>) -> Arc<Skills> {
        let skills = self.reachable(self.skills_now(), token(context).as_ref());
        let withheld = self.withheld_skills().await;
        if !skills
            .skills
            .iter()
            .any(|s| s.upstream.as_deref().is_some_and(&withheld))
        {
            return skills;
        }
        let mut served = Skills::clone(&skills);
        served
            .skills
            .retain(|s| !s.upstream.as_deref().is_some_and(&withheld));
        Arc::new(served)
    }

    /// The skills now; when they changed, the search index gets their documents.
    fn skills_now(&self) -> Arc<Skills> {
        let generation = self.catalog.generation();
        let (skills, documents) = self.skills.current(generation, || {
            self.catalog.read(|catalog, _| catalog.upstream_skills())
        });
        if let Some(documents) = documents {
            self.catalog.set_skills(&documents);
        }
        skills
    }

    /// Waits (bounded by the longest connect timeout) while a source the request names is
    /// still connecting for the first time, so a call sent right after start-up finds its tools.
    /// Sources the request does not name never hold it up.
    async fn wait_for_connecting_sources(
        &self,
        named: impl Fn(&str) -> bool,
        ct: &CancellationToken,
    ) {
        let deadline = Instant::now() + self.settle_timeout;
        loop {
            let waiting = self.catalog.read(|catalog, _| {
                catalog
                    .namespaces
                    .iter()
                    .any(|n| n.origin == Origin::Connecting && named(&n.name))
            });
            if !waiting || Instant::now() >= deadline {
                return;
            }
            // The catalogue has no change notification; a short poll costs nothing next to a
            // server's start-up.
            tokio::select! {
                () = tokio::time::sleep(CONNECTING_POLL) => {}
                () = ct.cancelled() => return,
            }
        }
    }
}

/// A 2026-07-28 client that declared form elicitation for this request (`elicitation: {}` means
/// form); older clients and URL-only ones get the page and the envelope instead.
fn can_elicit(context: &RequestContext<RoleServer>) -> bool {
    let modern = context
        .protocol_version()
        .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
    let form = context
        .client_capabilities()
        .and_then(|c| c.elicitation)
        .is_some_and(|e| e.form.is_some() || e.url.is_none());
    modern && form
}

/// The bearer token the HTTP transport accepted for this request (it rides in the request's
/// HTTP parts); `None` over stdio, where the client is the user's own process.
fn token(context: &RequestContext<RoleServer>) -> Option<TokenRecord> {
    context
        .extensions
        .get::<http::request::Parts>()?
        .extensions
        .get::<TokenRecord>()
        .cloned()
}

/// Runs `run` until it ends; the client's cancellation cancels it through `cancel`, and the run
/// still finishes (as cancelled) so its record in the store is complete.
async fn cancellable<T>(
    run: impl Future<Output = T>,
    cancel: &CancelToken,
    ct: &CancellationToken,
) -> T {
    tokio::pin!(run);
    tokio::select! {
        out = &mut run => out,
        () = ct.cancelled() => {
            cancel.cancel();
            run.await
        }
    }
}

/// The envelope as structured content plus the same JSON on one line of text, for clients that
/// only read text. A failed or cancelled run is marked as an error.
fn envelope_result(envelope: &ExecuteEnvelope) -> CallToolResult {
    let value = match serde_json::to_value(envelope) {
        Ok(value) => value,
        Err(e) => {
            return tool_error(format!(
                "internal error: the run's result cannot be encoded: {e}"
            ));
        }
    };
    match envelope.status {
        Status::Failed | Status::Cancelled => CallToolResult::structured_error(value),
        Status::Completed
        | Status::AwaitingApproval
        | Status::AwaitingConnection
        | Status::Running => CallToolResult::structured(value),
    }
}

/// `search`'s and `describe`'s text with every character that could drive a terminal or hide
/// text escaped ([`printable::escaped`]): the descriptions in it are an upstream's words, and
/// clients show answers on a terminal too. Line breaks and tabs stay.
fn inert(mut result: CallToolResult) -> CallToolResult {
    for block in &mut result.content {
        if let ContentBlock::Text(content) = block
            && let Cow::Owned(text) = printable::escaped(&content.text)
        {
            content.text = text;
        }
    }
    result
}

fn tool_error(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

impl ServerHandler for Hub {
    fn get_info(&self) -> ServerConfig {
        // Skills are served to clients that know the extension (SEP-2640) as resources.
        let (capabilities, instructions) = match self.mode {
            ServeMode::Code => (
                ServerCapabilities::builder()
                    .enable_tools()
                    .enable_resources()
                    .enable_skills()
                    .build(),
                INSTRUCTIONS,
            ),
            ServeMode::Direct => (
                ServerCapabilities::builder()
                    .enable_tools()
                    .enable_tool_list_changed()
                    .enable_resources()
                    .enable_skills()
                    .build(),
                surface::DIRECT_INSTRUCTIONS,
            ),
        };
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new(
                "capabilities",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(instructions)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        if self.mode == ServeMode::Direct {
            self.follow_for_legacy(&context);
        }
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        (self.mode == ServeMode::Direct && requested.tools_list_changed == Some(true))
            .then(|| SubscriptionFilter::builder().tools_list_changed().build())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        self.follow_subscription(context).await;
        Ok(())
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(VERSIONS)
    }

    // initialize, server/discover and ping do what rmcp's defaults do, inside a request span.
    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        let span = request_span("initialize", None, &context);
        traced(span, async { self.negotiate_initialize(&request) }).await
    }

    async fn discover(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, ErrorData> {
        let span = request_span("server/discover", None, &context);
        let versions = self.supported_protocol_versions().into_owned();
        traced(span, async {
            Ok(DiscoverResult::from_server_info(versions, self.get_info()))
        })
        .await
    }

    async fn ping(&self, context: RequestContext<RoleServer>) -> Result<(), ErrorData> {
        traced(request_span("ping", None, &context), async { Ok(()) }).await
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let span = request_span("tools/list", None, &context);
        traced(span, async {
            let tools = match self.mode {
                ServeMode::Code => self.tools.to_vec(),
                ServeMode::Direct => self.direct_tools(&context).await,
            };
            Ok(ListToolsResult::with_all_items(tools))
        })
        .await
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        match self.mode {
            ServeMode::Code => self.tools.iter().find(|t| t.name == name).cloned(),
            // Only header validation asks, before any token is known: the tool as listed to
            // a client that may call everything.
            ServeMode::Direct => self
                .direct_listing(None)
                .into_iter()
                .map(|t| t.tool)
                .find(|t| t.name == name),
        }
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let span = request_span("tools/call", Some(&request.name), &context);
        traced(span, async move {
            let arguments = request.arguments.unwrap_or_default();
            if self.mode == ServeMode::Direct {
                let responses = request.input_responses.clone().unwrap_or_default();
                let answered = request
                    .request_state
                    .as_deref()
                    .map(|state| (state, &responses));
                // Boxed, as the answers below: a run's, an answer's and a response's futures
                // together outgrow a runtime worker's 2 MiB stack in a debug build.
                return Box::pin(self.direct_call(&request.name, &arguments, answered, &context))
                    .await;
            }
            let result = match request.name.as_ref() {
                SEARCH => self.search(&arguments, token(&context).as_ref()).await,
                DESCRIBE => {
                    self.describe(&arguments, token(&context).as_ref(), &context.ct)
                        .await
                }
                EXECUTE => {
                    return match &request.request_state {
                        Some(state) => {
                            Box::pin(self.answer(
                                state,
                                &request.input_responses.clone().unwrap_or_default(),
                                &context,
                                &Answer::Envelope,
                            ))
                            .await
                        }
                        None => Ok(Box::pin(self.execute(&arguments, &context)).await),
                    };
                }
                other => {
                    return Err(ErrorData::invalid_params(
                        format!(
                            "there is no tool `{}`; this server has `search`, `describe` and `execute`",
                            echo(other)
                        ),
                        None,
                    ));
                }
            };
            Ok(CallToolResponse::Complete(inert(result)))
        })
        .await
    }

    async fn list_skills(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        let span = request_span("skills/list", None, &context);
        traced(span, async {
            Ok(super::skills::list(&*self.native_skills(&context).await))
        })
        .await
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        let span = request_span("skills/get", None, &context);
        traced(span, async {
            super::skills::get(&*self.native_skills(&context).await, &request.uri)
        })
        .await
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let span = request_span("resources/list", None, &context);
        traced(span, async {
            Ok(super::skills::resources(
                &*self.native_skills(&context).await,
            ))
        })
        .await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let span = request_span("resources/read", None, &context);
        traced(span, async {
            super::skills::read(
                &*self.native_skills(&context).await,
                self.catalog.sources(),
                &request.uri,
            )
            .await
            .map(Into::into)
        })
        .await
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let CustomRequest { method, params, .. } = request;
        let span = request_span(&method, None, &context);
        traced(span, async move {
            // rmcp hands a request for a known method here when its params do not parse.
            if SERVED_METHODS.contains(&method.as_str()) {
                return Err(ErrorData::invalid_params(
                    format!(
                        "invalid params for `{method}`: {}",
                        params_problem(&method, params)
                    ),
                    None,
                ));
            }
            Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!(
                    "unknown method `{method}`; this server answers {}",
                    SERVED_METHODS.join(", ")
                ),
                None,
            ))
        })
        .await
    }
}

/// Why `params` do not fit `method`, in serde's words where it has some.
fn params_problem(method: &str, params: Option<Value>) -> String {
    let params = params.unwrap_or(Value::Null);
    let error = match method {
        "tools/call" => serde_json::from_value::<CallToolRequestParams>(params).err(),
        "initialize" => serde_json::from_value::<InitializeRequestParams>(params).err(),
        "tools/list" => serde_json::from_value::<Option<PaginatedRequestParams>>(params).err(),
        _ => None,
    };
    match error {
        Some(error) => error.to_string(),
        None => "they do not match the MCP schema".into(),
    }
}
