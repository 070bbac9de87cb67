//! The approval page server: HTTP/1 on 127.0.0.1 at a port the OS picks, started once per hub
//! process. `GET /approve/{token}` shows the calls a one-time link was made for; `POST` to the
//! same path decides them (channel `page`), exactly as `capabilities hub approve` would.
//!
//! What keeps other parties out, in order: the `Host` must be this server's own (a DNS-rebinding
//! page cannot pose as it); a post must come from this origin (`Origin`); the token must be one
//! this process issued, unspent and unexpired; the form's CSRF value must be the one the token's
//! page carried. Responses forbid framing, scripts, caching and cross-site referrers.

use std::path::PathBuf;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tokio_util::sync::{CancellationToken, DropGuard};
use url::Url;

use super::decide::{self, Channel, DecisionRequest};
use super::html;
use super::links::{Grant, Issued, MOST_OPEN, Refusal, Tokens};
use crate::runs::{Approval, DecideError, Decision, Store, StoreError};

/// Why no link could be made.
#[derive(Debug, thiserror::Error)]
pub enum PageError {
    #[error(
        "run `{0}` has no call waiting for a decision, so there is nothing to show on the approval page"
    )]
    NothingPending(String),
    #[error(
        "the operating system gave no randomness for an approval link; decide with `capabilities hub approve RUN_ID` instead"
    )]
    NoRandomness,
    #[error(
        "the approval page for the calls run `{0}` waits on is already open; decide there, or with `capabilities hub approve {0}`"
    )]
    AlreadyOpen(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the approval page's address is not a URL: {0}")]
    Url(#[from] url::ParseError),
}

/// What [`ApprovalPage::page_for`] gave.
#[derive(Debug)]
pub enum PageLink {
    /// A new one-time link, to open.
    New(Url),
    /// The page for exactly these calls is open already.
    StillOpen,
    /// As many pages as may wait at once are open already.
    TooMany,
}

struct Shared {
    store: Store,
    /// The config "always allow" writes its rule to.
    config_file: PathBuf,
    tokens: Tokens,
    /// `127.0.0.1:PORT`: the only `Host` this server answers.
    host: String,
    /// `http://127.0.0.1:PORT`: the only `Origin` a decision may come from.
    origin: String,
}

/// The running page server; it stops when this is dropped.
pub struct ApprovalPage {
    shared: Arc<Shared>,
    base: Url,
    _stop: DropGuard,
}

/// The time by the store's clock, which approvals expire by (another hub on a shared store may
/// have recorded them).
async fn now_ms(shared: &Shared) -> u64 {
    shared.store.runs().clock_or_local_ms().await
}

impl ApprovalPage {
    /// Binds 127.0.0.1 on a free port and serves the page on the current tokio runtime.
    /// `config_file` is where "always allow" writes its policy rule.
    pub async fn start(store: Store, config_file: PathBuf) -> std::io::Result<ApprovalPage> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let address = listener.local_addr()?;
        let host = format!("127.0.0.1:{}", address.port());
        let origin = format!("http://{host}");
        let base = Url::parse(&format!("{origin}/")).map_err(std::io::Error::other)?;
        let shared = Arc::new(Shared {
            store,
            config_file,
            tokens: Tokens::default(),
            host,
            origin,
        });
        let router = Router::new()
            .route("/approve/{token}", get(show).post(decide))
            .fallback(not_found)
            .with_state(shared.clone());
        let stop = CancellationToken::new();
        let serve =
            axum::serve(listener, router).with_graceful_shutdown(stop.clone().cancelled_owned());
        tokio::spawn(async move {
            if let Err(e) = serve.await {
                tracing::warn!("the approval page stopped: {e}");
            }
        });
        tracing::debug!("the approval page listens on {}", shared.origin);
        Ok(ApprovalPage {
            shared,
            base,
            _stop: stop.drop_guard(),
        })
    }

    /// A one-time link to decide the calls of `run_id` that wait now, unless one for exactly
    /// these calls is still open; it stops working after one decision, or when those approvals
    /// expire.
    pub async fn url_for(&self, run_id: &str) -> Result<Url, PageError> {
        match self.link_for(run_id, usize::MAX).await? {
            PageLink::New(url) => Ok(url),
            PageLink::StillOpen | PageLink::TooMany => {
                Err(PageError::AlreadyOpen(run_id.to_string()))
            }
        }
    }

    /// A page to open for the calls of `run_id` that wait now: a new link, unless one for
    /// exactly these calls is still open (a client asking again, or polling `resume`, while the
    /// person decides) or [`MOST_OPEN`] wait already, so no client can fill the screen.
    pub async fn page_for(&self, run_id: &str) -> Result<PageLink, PageError> {
        self.link_for(run_id, MOST_OPEN).await
    }

    /// Forgets the link `url` of [`page_for`](Self::page_for), which no browser opened: it is
    /// on nobody's screen, so it neither counts as open nor decides anything.
    pub fn withdraw(&self, url: &Url) {
        if let Some(token) = url.path().strip_prefix("/approve/") {
            self.shared.tokens.forget(token);
        }
    }

    async fn link_for(&self, run_id: &str, most: usize) -> Result<PageLink, PageError> {
        let now = now_ms(&self.shared).await;
        let waiting: Vec<Approval> = self
            .shared
            .store
            .approvals()
            .of_run(run_id)
            .await?
            .into_iter()
            .filter(|a| a.decision.is_none() && !a.is_expired_at(now))
            .collect();
        let Some(expires_at_ms) = waiting.iter().map(|a| a.expires_at_ms).max() else {
            return Err(PageError::NothingPending(run_id.to_string()));
        };
        let calls = waiting.iter().map(Approval::seen).collect();
        let issued = self
            .shared
            .tokens
            .issue_unless_open(run_id, calls, expires_at_ms, now, most)
            .ok_or(PageError::NoRandomness)?;
        Ok(match issued {
            Issued::New(token) => PageLink::New(self.base.join(&format!("approve/{token}"))?),
            Issued::StillOpen => PageLink::StillOpen,
            Issued::TooMany => PageLink::TooMany,
        })
    }
}

/// An HTML response with the headers every page of this server carries.
fn respond(status: StatusCode, body: String) -> Response {
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    let fixed = [
        (header::CONTENT_TYPE, "text/html; charset=utf-8"),
        // No script may run and nothing may load from elsewhere; forms only post back here.
        (
            header::CONTENT_SECURITY_POLICY,
            "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        ),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        // The token is in the path: never let it leave in a Referer. `same-origin` (not
        // `no-referrer`) so the browser still sends a real `Origin` with the form post.
        (header::REFERRER_POLICY, "same-origin"),
        (header::CACHE_CONTROL, "no-store"),
    ];
    for (name, value) in fixed {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

fn refused(refusal: Refusal) -> Response {
    let (title, message) = match refusal {
        Refusal::Unknown => (
            "This approval link is not valid",
            "The link is wrong, or it belongs to a hub that has since stopped.",
        ),
        Refusal::Used => (
            "This approval link was already used",
            "Each link decides once. If the agent asks again, a new page opens.",
        ),
        Refusal::Expired => (
            "This approval link expired",
            "Approvals wait 30 minutes; ask the agent to run the script again.",
        ),
        Refusal::BadCsrf => (
            "This form is not from this page",
            "The form did not carry this page's own check value, so nothing was decided. Reload the page and choose again.",
        ),
    };
    respond(StatusCode::FORBIDDEN, html::problem(title, message))
}

/// The `Host` check that keeps a DNS-rebinding site (evil.example resolving to 127.0.0.1) out.
/// Exactly one: of two, a proxy in front could read the other.
fn wrong_host(shared: &Shared, headers: &HeaderMap) -> Option<Response> {
    let mut hosts = headers.get_all(header::HOST).iter();
    let host = hosts.next().and_then(|h| h.to_str().ok());
    (host != Some(shared.host.as_str()) || hosts.next().is_some()).then(|| {
        respond(
            StatusCode::FORBIDDEN,
            html::problem("Wrong address", &format!("The approval page only answers at {}; open the link exactly as the hub made it.", shared.origin)),
        )
    })
}

/// Browsers send `Origin` with every form post; one from another site (or none) is refused
/// before the form is even read.
fn cross_site(shared: &Shared, headers: &HeaderMap) -> Option<Response> {
    let origin = headers.get(header::ORIGIN).and_then(|h| h.to_str().ok());
    (origin != Some(shared.origin.as_str())).then(|| {
        respond(
            StatusCode::FORBIDDEN,
            html::problem(
                "Request from another site refused",
                "Decisions are only taken from the approval page itself; nothing was decided.",
            ),
        )
    })
}

async fn not_found(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    if let Some(response) = wrong_host(&shared, &headers) {
        return response;
    }
    respond(
        StatusCode::NOT_FOUND,
        html::problem(
            "Nothing here",
            "Approval pages are opened by the hub with a link of their own.",
        ),
    )
}

/// The calls a grant covers, as stored now and still with the arguments the link was made
/// for (a call that came back with others is not this link's to show or decide).
async fn granted_calls(shared: &Shared, grant: &Grant) -> Result<Vec<Approval>, Response> {
    match shared.store.approvals().of_run(&grant.run_id).await {
        Ok(all) => Ok(all
            .into_iter()
            .filter(|a| grant.calls.contains(&a.seen()))
            .collect()),
        Err(e) => Err(internal(&e.to_string())),
    }
}

fn internal(message: &str) -> Response {
    tracing::warn!("the approval page failed: {message}");
    respond(
        StatusCode::INTERNAL_SERVER_ERROR,
        html::problem("The approval page failed", message),
    )
}

async fn show(
    State(shared): State<Arc<Shared>>,
    Path(token): Path<String>,
    headers: HeaderMap,
) -> Response {
    if let Some(response) = wrong_host(&shared, &headers) {
        return response;
    }
    let grant = match shared.tokens.check(&token, None, now_ms(&shared).await) {
        Ok(grant) => grant,
        Err(refusal) => return refused(refusal),
    };
    let calls = match granted_calls(&shared, &grant).await {
        Ok(calls) => calls,
        Err(response) => return response,
    };
    let waiting: Vec<Approval> = calls
        .iter()
        .filter(|a| a.decision.is_none())
        .cloned()
        .collect();
    if waiting.is_empty() {
        return respond(
            StatusCode::OK,
            html::already_decided(&grant.run_id, &calls, now_ms(&shared).await),
        );
    }
    // Who asked: a client's name, and the bearer token it called with (which it cannot choose).
    let started_by = match shared.store.runs().get(&grant.run_id).await {
        Ok(run) => run.and_then(|run| run.client),
        Err(e) => return internal(&e.to_string()),
    };
    let now = now_ms(&shared).await;
    let page = html::ask(
        &grant.run_id,
        started_by.as_deref(),
        &waiting,
        &grant.csrf,
        now,
    );
    respond(StatusCode::OK, page)
}

/// The fields of the decision form.
struct Form {
    csrf: String,
    decision: Result<Decision, String>,
    confirmed: bool,
}

fn read_form(body: &[u8]) -> Form {
    let mut form = Form {
        csrf: String::new(),
        decision: Err("the form chose no decision".into()),
        confirmed: false,
    };
    for (key, value) in url::form_urlencoded::parse(body) {
        match key.as_ref() {
            "csrf" => form.csrf = value.into_owned(),
            "decision" => form.decision = value.parse(),
            "confirm" => form.confirmed = value == "yes",
            _ => {}
        }
    }
    form
}

/// What recording a decision came to.
enum Outcome {
    Decided(Vec<Approval>),
    /// Another channel decided every call of the link first.
    AlreadyDecided(Vec<Approval>),
    /// Nothing was decided: the person may choose again.
    Retry(Response),
    /// Nothing was decided, and the link can no longer decide anything.
    Final(Response),
}

async fn decide(
    State(shared): State<Arc<Shared>>,
    Path(token): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Some(response) = wrong_host(&shared, &headers).or_else(|| cross_site(&shared, &headers))
    {
        return response;
    }
    let form = read_form(&body);
    let decision = match form.decision {
        Ok(decision) => decision,
        Err(message) => {
            return respond(
                StatusCode::BAD_REQUEST,
                html::problem("No valid choice", &message),
            );
        }
    };
    if decision == Decision::AllowAlways && !form.confirmed {
        // A policy change for every later run: show what it does and ask once more. The token
        // stays unspent until the confirmed post.
        let grant = match shared
            .tokens
            .check(&token, Some(&form.csrf), now_ms(&shared).await)
        {
            Ok(grant) => grant,
            Err(refusal) => return refused(refusal),
        };
        return match granted_calls(&shared, &grant).await {
            Ok(calls) => {
                let waiting: Vec<Approval> =
                    calls.into_iter().filter(|a| a.decision.is_none()).collect();
                let config = shared.config_file.display().to_string();
                respond(
                    StatusCode::OK,
                    html::confirm_always(&grant.run_id, &waiting, &grant.csrf, &config),
                )
            }
            Err(response) => response,
        };
    }
    let grant = match shared
        .tokens
        .claim(&token, &form.csrf, now_ms(&shared).await)
    {
        Ok(grant) => grant,
        Err(refusal) => return refused(refusal),
    };
    match record(&shared, &grant, decision).await {
        Outcome::Retry(response) => {
            shared.tokens.release(&token);
            response
        }
        Outcome::Final(response) => {
            shared.tokens.spend(&token);
            response
        }
        Outcome::AlreadyDecided(calls) => {
            shared.tokens.spend(&token);
            respond(
                StatusCode::CONFLICT,
                html::already_decided(&grant.run_id, &calls, now_ms(&shared).await),
            )
        }
        Outcome::Decided(decided) => {
            shared.tokens.spend(&token);
            tracing::info!("run {}: {decision} from the approval page", grant.run_id);
            respond(
                StatusCode::OK,
                html::decided(&grant.run_id, &decided, decision, now_ms(&shared).await),
            )
        }
    }
}

/// Writes the decision on the grant's still-undecided calls through the one
/// [`decide`](decide::decide): an
/// "always" rule goes into the config with it, and a config that refuses it leaves the run
/// waiting.
async fn record(shared: &Shared, grant: &Grant, decision: Decision) -> Outcome {
    let calls = match granted_calls(shared, grant).await {
        Ok(calls) => calls,
        Err(response) => return Outcome::Retry(response),
    };
    let waiting: Vec<&Approval> = calls.iter().filter(|a| a.decision.is_none()).collect();
    if waiting.is_empty() {
        return Outcome::AlreadyDecided(calls);
    }
    let request = DecisionRequest {
        run_id: &grant.run_id,
        seen: waiting.iter().map(|a| a.seen()).collect(),
        decision,
        channel: Channel::Page,
    };
    match decide::decide(&shared.store, Some(&shared.config_file), &request).await {
        Ok(decided) => Outcome::Decided(decided),
        // Another channel got there between the read above and this write.
        Err(DecideError::NothingPending { .. } | DecideError::Changed { .. }) => {
            Outcome::AlreadyDecided(calls)
        }
        Err(DecideError::Expired { .. }) => Outcome::Final(refused(Refusal::Expired)),
        Err(e @ DecideError::Rule(_)) => Outcome::Retry(respond(
            StatusCode::CONFLICT,
            html::problem(
                "The policy rule was not written",
                &format!("{e}. Fix the config, or choose another option."),
            ),
        )),
        Err(e @ (DecideError::UnknownRun(_) | DecideError::Store(_))) => {
            Outcome::Retry(internal(&e.to_string()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs::testing::{begin, store_in};
    use crate::runs::{PendingCall, Seen};

    fn pending(seq: u64, address: &str, digest: &str) -> PendingCall {
        PendingCall {
            seq,
            address: address.to_string(),
            connection: Some("work".into()),
            preview: "{ title: \"x\" }".into(),
            whole: None,
            reason: "the default action asks".into(),
            call_digest: digest.to_string(),
            tool_version: None,
        }
    }

    struct Fixture {
        _dir: tempfile::TempDir,
        /// The claim on `run_a`, which records its pending calls.
        owner: String,
        config: PathBuf,
        store: Store,
        page: ApprovalPage,
        http: reqwest::Client,
    }

    async fn fixture() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let store = store_in(dir.path()).await;
        let owner = begin(&store, "run_a", "code").await;
        store
            .approvals()
            .record_pending("run_a", &owner, pending(1, "gh.createIssue", "d1"))
            .await
            .unwrap();
        let config = dir.path().join("config.toml");
        std::fs::write(&config, "[sources.gh]\ncommand = \"gh-mcp\"\n").unwrap();
        let page = ApprovalPage::start(store.clone(), config.clone())
            .await
            .unwrap();
        Fixture {
            _dir: dir,
            owner,
            config,
            store,
            page,
            http: {
                crate::tls::install_crypto_provider();
                reqwest::Client::new()
            },
        }
    }

    impl Fixture {
        fn origin(&self) -> &str {
            &self.page.shared.origin
        }

        /// Loads the page the way a browser would and returns its link and CSRF value.
        async fn open(&self) -> (Url, String) {
            let url = self.page.url_for("run_a").await.unwrap();
            let (status, body) = self.get(&url).await;
            assert_eq!(status, 200, "{body}");
            let csrf = body
                .split("name=\"csrf\" value=\"")
                .nth(1)
                .and_then(|rest| rest.split('"').next())
                .expect("a csrf field")
                .to_string();
            (url, csrf)
        }

        async fn get(&self, url: &Url) -> (u16, String) {
            let response = self.http.get(url.clone()).send().await.unwrap();
            (response.status().as_u16(), response.text().await.unwrap())
        }

        async fn post(&self, url: &Url, origin: Option<&str>, form: &str) -> (u16, String) {
            let mut request = self
                .http
                .post(url.clone())
                .header("content-type", "application/x-www-form-urlencoded")
                .body(form.to_string());
            if let Some(origin) = origin {
                request = request.header("origin", origin);
            }
            let response = request.send().await.unwrap();
            (response.status().as_u16(), response.text().await.unwrap())
        }

        /// A decision from another channel, on the call as the fixture made it.
        async fn decide_elsewhere(&self, decision: Decision) {
            let seen = vec![Seen {
                seq: 1,
                call_digest: "d1".into(),
                tool_version: None,
            }];
            self.store
                .approvals()
                .decide("run_a", seen, decision, "terminal", Box::new(|_, _| Ok(())))
                .await
                .unwrap();
        }

        async fn approval(&self, seq: u64) -> Approval {
            self.store
                .approvals()
                .get("run_a", seq)
                .await
                .unwrap()
                .unwrap()
        }

        async fn decided_by(&self) -> Option<String> {
            self.approval(1).await.decided_by
        }
    }

    #[tokio::test]
    async fn a_decision_from_the_page_is_recorded_once_with_channel_page() {
        let f = fixture().await;
        let (url, csrf) = f.open().await;
        let (status, body) = f
            .post(
                &url,
                Some(f.origin()),
                &format!("csrf={csrf}&decision=allow_run"),
            )
            .await;
        assert_eq!(status, 200, "{body}");
        assert!(body.contains("The agent can continue"), "{body}");
        let approval = f.approval(1).await;
        assert_eq!(
            (approval.decision, approval.decided_by.as_deref()),
            (Some(Decision::AllowRun), Some(Channel::Page.as_str()))
        );
        let (status, body) = f
            .post(
                &url,
                Some(f.origin()),
                &format!("csrf={csrf}&decision=deny"),
            )
            .await;
        assert_eq!(status, 403);
        assert!(body.contains("already used"), "{body}");
        assert_eq!(
            f.get(&url).await.0,
            403,
            "a spent link does not even show the page"
        );
        assert!(
            matches!(
                f.page.url_for("run_a").await,
                Err(PageError::NothingPending(_))
            ),
            "no link for a run with nothing waiting"
        );
    }

    #[tokio::test]
    async fn cross_site_posts_and_foreign_hosts_are_refused() {
        let f = fixture().await;
        let (url, csrf) = f.open().await;
        let form = format!("csrf={csrf}&decision=allow_once");
        for origin in [Some("http://evil.example"), Some("null"), None] {
            let (status, body) = f.post(&url, origin, &form).await;
            assert_eq!(status, 403, "{origin:?}");
            assert!(body.contains("another site"), "{body}");
        }
        // A DNS-rebinding page reaches 127.0.0.1 under its own name.
        let response = f
            .http
            .get(url.clone())
            .header("host", "evil.example")
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 403);
        assert!(response.text().await.unwrap().contains("only answers at"));
        // Its own name and another: a proxy in front might read the other.
        let address = format!("{}:{}", url.host_str().unwrap(), url.port().unwrap());
        let mut stream = tokio::net::TcpStream::connect(&address).await.unwrap();
        let request = format!(
            "GET {} HTTP/1.1\r\nHost: {address}\r\nHost: evil.example\r\nConnection: close\r\n\r\n",
            url.path()
        );
        tokio::io::AsyncWriteExt::write_all(&mut stream, request.as_bytes())
            .await
            .unwrap();
        let mut answer = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut stream, &mut answer)
            .await
            .unwrap();
        assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
        assert_eq!(f.decided_by().await, None, "nothing was decided");
        let (status, _) = f.post(&url, Some(f.origin()), &form).await;
        assert_eq!(status, 200, "the refusals did not spend the link");
    }

    #[tokio::test]
    async fn a_wrong_csrf_value_or_choice_decides_nothing() {
        let f = fixture().await;
        let (url, csrf) = f.open().await;
        let (status, body) = f
            .post(&url, Some(f.origin()), "csrf=0000&decision=allow_once")
            .await;
        assert_eq!(status, 403);
        assert!(body.contains("not from this page"), "{body}");
        let (status, _) = f.post(&url, Some(f.origin()), "decision=allow_once").await;
        assert_eq!(status, 403, "a form without a CSRF value");
        let (status, body) = f
            .post(
                &url,
                Some(f.origin()),
                &format!("csrf={csrf}&decision=yolo"),
            )
            .await;
        assert_eq!(status, 400);
        assert!(body.contains("`yolo` is not a decision"), "{body}");
        let (status, body) = f
            .post(&url, Some(f.origin()), &format!("csrf={csrf}"))
            .await;
        assert_eq!(status, 400);
        assert!(body.contains("no decision"), "{body}");
        assert_eq!(f.decided_by().await, None);
    }

    #[tokio::test]
    async fn unknown_links_and_paths_show_a_clear_page() {
        let f = fixture().await;
        let (status, body) = f.get(&f.page.base.join("approve/0123abcd").unwrap()).await;
        assert_eq!(status, 403);
        assert!(
            body.contains("not valid") && body.contains("hub approve"),
            "{body}"
        );
        let (status, _) = f.get(&f.page.base.join("elsewhere").unwrap()).await;
        assert_eq!(status, 404);
        let (status, _) = f
            .post(
                &f.page.base.join("approve/0123abcd").unwrap(),
                Some(f.origin()),
                "csrf=x&decision=deny",
            )
            .await;
        assert_eq!(status, 403);
    }

    #[tokio::test]
    async fn always_allow_asks_for_confirmation_then_writes_a_rule() {
        let f = fixture().await;
        let (url, csrf) = f.open().await;
        let (status, body) = f
            .post(
                &url,
                Some(f.origin()),
                &format!("csrf={csrf}&decision=allow_always"),
            )
            .await;
        assert_eq!(status, 200);
        assert!(
            body.contains("Always allow") && body.contains("name=\"confirm\" value=\"yes\""),
            "{body}"
        );
        assert_eq!(
            f.decided_by().await,
            None,
            "nothing is decided before the confirmation"
        );
        assert!(
            !std::fs::read_to_string(&f.config)
                .unwrap()
                .contains("policy")
        );
        let (status, body) = f
            .post(
                &url,
                Some(f.origin()),
                &format!("csrf={csrf}&decision=allow_always&confirm=yes"),
            )
            .await;
        assert_eq!(status, 200, "{body}");
        let config = std::fs::read_to_string(&f.config).unwrap();
        assert!(
            config.contains("[[policy.rules]]")
                && config.contains("match = \"gh.createIssue\"")
                && config.contains("action = \"allow\""),
            "{config}"
        );
        assert_eq!(f.approval(1).await.decision, Some(Decision::AllowAlways));
    }

    #[tokio::test]
    async fn a_config_that_refuses_the_rule_leaves_the_run_waiting() {
        let f = fixture().await;
        std::fs::write(&f.config, "this is = not [valid toml\n").unwrap();
        let (url, csrf) = f.open().await;
        let (status, body) = f
            .post(
                &url,
                Some(f.origin()),
                &format!("csrf={csrf}&decision=allow_always&confirm=yes"),
            )
            .await;
        assert_eq!(status, 409);
        assert!(body.contains("nothing was decided"), "{body}");
        assert_eq!(f.decided_by().await, None);
        let (status, _) = f
            .post(
                &url,
                Some(f.origin()),
                &format!("csrf={csrf}&decision=allow_once"),
            )
            .await;
        assert_eq!(status, 200, "the link can still decide another way");
    }

    #[tokio::test]
    async fn a_call_decided_in_the_terminal_first_is_not_decided_again() {
        let f = fixture().await;
        let (url, csrf) = f.open().await;
        f.decide_elsewhere(Decision::Deny).await;
        let (status, body) = f.get(&url).await;
        assert_eq!(status, 200);
        assert!(
            body.contains("Already decided") && body.contains("terminal"),
            "{body}"
        );
        let (status, _) = f
            .post(
                &url,
                Some(f.origin()),
                &format!("csrf={csrf}&decision=allow_once"),
            )
            .await;
        assert_eq!(status, 409);
        assert_eq!(f.approval(1).await.decision, Some(Decision::Deny));
    }

    #[tokio::test]
    async fn a_link_only_covers_the_calls_that_waited_when_it_was_made() {
        let f = fixture().await;
        let (url, csrf) = f.open().await;
        f.decide_elsewhere(Decision::AllowOnce).await;
        // The run resumed and paused again at a later call the page's reader never saw.
        f.store
            .approvals()
            .record_pending("run_a", &f.owner, pending(4, "gh.deleteRepo", "d4"))
            .await
            .unwrap();
        let (status, body) = f
            .post(
                &url,
                Some(f.origin()),
                &format!("csrf={csrf}&decision=allow_once"),
            )
            .await;
        assert_eq!(status, 409, "{body}");
        assert_eq!(f.approval(4).await.decision, None);
    }

    #[tokio::test]
    async fn a_link_decides_nothing_once_its_call_waits_with_other_arguments() {
        let f = fixture().await;
        let (url, csrf) = f.open().await;
        // A replay reached the call with other arguments than the page shows.
        f.store
            .approvals()
            .record_pending("run_a", &f.owner, pending(1, "gh.createIssue", "other"))
            .await
            .unwrap();
        let (status, body) = f
            .post(
                &url,
                Some(f.origin()),
                &format!("csrf={csrf}&decision=allow_once"),
            )
            .await;
        assert_eq!(status, 409, "{body}");
        let approval = f.approval(1).await;
        assert_eq!(
            (approval.decision, approval.call_digest.as_str()),
            (None, "other")
        );
    }

    #[tokio::test]
    async fn an_expired_approval_gets_no_link_and_an_expired_link_decides_nothing() {
        let f = fixture().await;
        let (url, csrf) = f.open().await;
        crate::runs::testing::tamper(&f.store, "UPDATE approvals SET expires_at_ms = 1");
        let (status, body) = f
            .post(
                &url,
                Some(f.origin()),
                &format!("csrf={csrf}&decision=allow_once"),
            )
            .await;
        assert_eq!(status, 403);
        assert!(body.contains("expired"), "{body}");
        assert!(matches!(
            f.page.url_for("run_a").await,
            Err(PageError::NothingPending(_))
        ));
    }
}
