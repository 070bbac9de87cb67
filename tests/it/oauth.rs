//! OAuth connections against a real OAuth-protected MCP server with its own authorization server
//! (tests/peers/oauth_server.py: the Python `mcp` SDK's server-side auth), signed in through the
//! real browser flow in headless Chromium: discovery from the 401 challenge, dynamic client
//! registration, PKCE and the resource indicator, tokens in the encrypted file store and in
//! gnome-keyring, refresh before expiry and after a refused token, a refused refresh turning the
//! run into `awaiting_connection`, and a resume after the sign-in completing it. No token shows
//! in an envelope, a log, the config or the state store.

use std::io::{Read, Write};
use std::process::{Child, Stdio};
use std::time::Duration;

use fantoccini::Locator;
use serde_json::Value;
use tokio::io::AsyncBufReadExt;

use crate::approval_page::with_browser;
use crate::approvals::{envelope, exec};
use crate::common::{free_port, json_report, listening_within, python_peer};
use crate::credentials::SecretService;
use crate::support::{Home, Run};

const PASSPHRASE: &str = "oauth test passphrase";
const SCRIPT: &str = r#"return await peer.echo({ text: "hi" });"#;

/// tests/peers/oauth_server.py on a free port; killed when dropped.
struct OAuthPeer {
    port: u16,
    url: String,
    child: Child,
}

impl OAuthPeer {
    /// Access tokens live `ttl_secs`.
    fn start(ttl_secs: u64) -> OAuthPeer {
        OAuthPeer::with_app(ttl_secs, &[])
    }

    /// [`start`](Self::start), with `app` (a client ID and secret) registered beforehand.
    fn with_app(ttl_secs: u64, app: &[&str]) -> OAuthPeer {
        OAuthPeer::spawn(ttl_secs, app, &[])
    }

    /// [`start`](Self::start) as a server that supports client ID metadata documents and
    /// accepts `document` as one.
    fn with_metadata_document(document: &str) -> OAuthPeer {
        OAuthPeer::spawn(3600, &[], &[("OAUTH_PEER_CIMD_URL", document)])
    }

    /// [`start`](Self::start) as a server whose metadata names `page` as where to sign in.
    fn with_authorization_page(page: &str) -> OAuthPeer {
        OAuthPeer::spawn(3600, &[], &[("OAUTH_PEER_AUTHORIZE_URL", page)])
    }

    fn spawn(ttl_secs: u64, app: &[&str], env: &[(&str, &str)]) -> OAuthPeer {
        OAuthPeer::spawn_on(free_port(), ttl_secs, app, env)
    }

    /// [`spawn`](Self::spawn) on `port`: the same server, as it is after a restart.
    fn spawn_on(port: u16, ttl_secs: u64, app: &[&str], env: &[(&str, &str)]) -> OAuthPeer {
        let child = python_peer("oauth_server.py")
            .envs(env.iter().copied())
            .arg(port.to_string())
            .arg(ttl_secs.to_string())
            .args(app)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the test venv's python runs (tests/setup.sh)");
        let peer = OAuthPeer {
            port,
            url: format!("http://127.0.0.1:{port}/mcp"),
            child,
        };
        assert!(
            listening_within(port, Duration::from_secs(30)),
            "the OAuth peer did not listen on port {port}"
        );
        peer
    }

    /// A plain HTTP/1.0 request to the peer's admin routes; the body of the answer.
    fn admin(&self, method: &str, path: &str) -> String {
        http(method, self.port, path).1
    }

    /// What the peer saw: registrations, authorizations, token requests, tokens issued.
    fn log(&self) -> Value {
        serde_json::from_str(&self.admin("GET", "/admin/log")).expect("the peer's log is JSON")
    }

    /// Every token the peer ever issued, access and refresh.
    fn tokens(&self) -> Vec<String> {
        let log = self.log();
        ["issued_access_tokens", "issued_refresh_tokens"]
            .iter()
            .flat_map(|key| log[key].as_array().cloned().unwrap_or_default())
            .filter_map(|token| token.as_str().map(str::to_string))
            .collect()
    }

    fn grants(&self, grant: &str) -> usize {
        self.log()["token_requests"]
            .as_array()
            .map(|requests| requests.iter().filter(|r| r["grant"] == grant).count())
            .unwrap_or_default()
    }
}

impl Drop for OAuthPeer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A home with source `peer` at `peer`'s URL; `store` is `file` (the encrypted file, its
/// passphrase in the environment) or `keychain`.
fn home_for(peer: &OAuthPeer, store: &str) -> Home {
    let home = Home::new().with_env("CAPABILITIES_PASSPHRASE", PASSPHRASE);
    home.write_config(&format!(
        "[credentials]\nstore = \"{store}\"\n\n[sources.peer]\nurl = {}\nconnect_timeout_secs = 60\n",
        serde_json::to_string(&peer.url).expect("a TOML string")
    ));
    home
}

/// `source login peer --no-browser` with `env`: the page it prints is opened in headless
/// Chromium and allowed; returns what the command printed once it ended.
async fn sign_in(home: &Home, env: &[(&str, &str)]) -> Run {
    sign_in_to(home, "peer", env).await
}

/// [`sign_in`] to `source`.
async fn sign_in_to(home: &Home, source: &str, env: &[(&str, &str)]) -> Run {
    sign_in_after(home, source, env, |_| {}).await
}

/// [`sign_in_to`], with `before` given the sign-in page before the browser opens it.
async fn sign_in_after(
    home: &Home,
    source: &str,
    env: &[(&str, &str)],
    before: impl FnOnce(&str),
) -> Run {
    let mut command = home.command(&["source", "login", source, "--no-browser"]);
    command
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = tokio::process::Command::from(command)
        .kill_on_drop(true)
        .spawn()
        .expect("capabilities runs");
    let mut lines = tokio::io::BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut printed = String::new();
    let page = loop {
        let line = lines
            .next_line()
            .await
            .expect("read the login output")
            .unwrap_or_else(|| panic!("login printed no page to open:\n{printed}"));
        printed.push_str(&line);
        printed.push('\n');
        if let Some(page) = line.trim().strip_prefix("http") {
            break format!("http{page}");
        }
    };
    before(&page);
    with_browser(|browser| async move {
        browser.goto(&page).await.expect("the sign-in page opens");
        browser
            .find(Locator::Id("allow"))
            .await
            .expect("the consent page offers Allow")
            .click()
            .await
            .expect("click Allow");
        // The consent page redirects twice; a lookup made while one is under way fails with
        // "aborted by navigation", which only means not yet. Bounded against a hang, not timed.
        let signed_in = Locator::XPath("//*[contains(text(), 'Signed in')]");
        let mut tries = 0;
        while let Err(e) = browser.find(signed_in).await {
            tries += 1;
            assert!(
                tries < 300,
                "the redirect lands on the listener's page: {e}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
    while let Some(line) = lines.next_line().await.expect("read the login output") {
        printed.push_str(&line);
        printed.push('\n');
    }
    let output = child.wait_with_output().await.expect("login ends");
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: printed,
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// The run of `SCRIPT`, which must wait for the sign-in of `peer`; returns its id.
fn paused_for_sign_in(home: &Home) -> (String, Run) {
    let paused = exec(home, &["exec", "-", "--json"], SCRIPT);
    assert_eq!(
        paused.code, 3,
        "waits\n{}\n{}",
        paused.stdout, paused.stderr
    );
    let envelope = envelope(&paused);
    assert_eq!(envelope["status"], "awaiting_connection", "{envelope}");
    let pending = &envelope["pending"][0];
    assert_eq!(pending["kind"], "connection", "{envelope}");
    assert!(
        pending["message"]
            .as_str()
            .is_some_and(|m| m.contains("capabilities source login peer")),
        "{envelope}"
    );
    // The model is told what to ask for, never where to sign in.
    assert!(!paused.stdout.contains("/authorize"), "{}", paused.stdout);
    let run_id = envelope["runId"].as_str().expect("runId").to_string();
    (run_id, paused)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_waiting_on_a_named_connection_is_offered_that_ones_sign_in() {
    let peer = OAuthPeer::start(3600);
    let home = home_for(&peer, "file");
    let config = std::fs::read_to_string(home.config_path()).expect("the config");
    home.write_config(&format!(
        "{config}\n[sources.peer.connections.personal]\ndefault = true\n\n[sources.peer.connections.work]\n"
    ));
    // The default connection signed in, so the source lists its tools; `work` is not.
    let login = sign_in(&home, &[]).await;
    assert_eq!(login.code, 0, "{}\n{}", login.stdout, login.stderr);
    let on_work = r#"return await peer.echo({ text: "hi" }, { connection: "work" });"#;
    let paused = exec(&home, &["exec", "-", "--json"], on_work);
    assert_eq!(paused.code, 3, "{}\n{}", paused.stdout, paused.stderr);
    let waiting = envelope(&paused);
    assert_eq!(waiting["status"], "awaiting_connection", "{waiting}");
    assert_eq!(waiting["pending"][0]["connection"], "work", "{waiting}");
    assert!(
        waiting["pending"][0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("capabilities source login peer --connection work`")),
        "{waiting}"
    );
    // Through the hub, the sign-in page a 2026 client is sent is `work`'s, and once the person
    // signed in there the run goes on, on `work`.
    let report = json_report(sign_in_client(&home).env("SIGN_IN_SCRIPT", on_work));
    assert_eq!(report["result"]["status"], "completed", "{report}");
    let asked = &report["elicitations"][0];
    assert!(
        asked["message"]
            .as_str()
            .is_some_and(|m| m.contains("(connection `work`)")),
        "{report}"
    );
    assert_eq!(peer.grants("authorization_code"), 2, "{}", peer.log());
    // A server behind two accounts may answer one connection with the other's tokens: each
    // connection's answers are cleaned of every token the config's connections hold, even
    // one not used yet in this process.
    let session = exec(
        &home,
        &["exec", "-", "--json"],
        "return await peer.session({});",
    );
    assert_eq!(
        envelope(&session)["status"],
        "completed",
        "{}",
        session.stdout
    );
    assert!(
        session.stdout.contains(capabilities::credentials::MASK),
        "{}",
        session.stdout
    );
    assert_no_token(
        &peer.tokens(),
        &[("both connections' tokens", &session.stdout)],
        &home,
    );
}

fn completed(run: &Run) {
    assert_eq!(run.code, 0, "completes\n{}\n{}", run.stdout, run.stderr);
    let envelope = envelope(run);
    assert_eq!(envelope["status"], "completed", "{envelope}");
    assert!(
        envelope["result"].to_string().contains("echo: hi"),
        "{envelope}"
    );
}

/// Every file under `dir`, as bytes (the state store, its WAL, the config, logs).
fn every_file(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(next) = todo.pop() {
        for entry in std::fs::read_dir(&next).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                todo.push(path);
            } else if let Ok(bytes) = std::fs::read(&path) {
                out.push((path.display().to_string(), bytes));
            }
        }
    }
    out
}

fn assert_no_token(tokens: &[String], texts: &[(&str, &str)], home: &Home) {
    assert!(!tokens.is_empty(), "the peer issued tokens");
    for token in tokens {
        for (what, text) in texts {
            assert!(
                !text.contains(token.as_str()),
                "a token shows in {what}:\n{text}"
            );
        }
        for (path, bytes) in every_file(home.path()) {
            let found = bytes
                .windows(token.len())
                .any(|window| window == token.as_bytes());
            assert!(!found, "a token is in the clear in {path}");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_waits_for_sign_in_and_resumes_once_signed_in() {
    let peer = OAuthPeer::start(3600);
    let home = home_for(&peer, "file");
    let (run_id, paused) = paused_for_sign_in(&home);
    // Until the sign-in, a resume waits again and calls nothing.
    let again = home.run(&["exec", "--resume", &run_id, "--json"]);
    assert_eq!(again.code, 3, "{}\n{}", again.stdout, again.stderr);
    assert_eq!(envelope(&again)["status"], "awaiting_connection");

    let login = sign_in(&home, &[]).await;
    assert_eq!(
        login.code, 0,
        "signs in\n{}\n{}",
        login.stdout, login.stderr
    );
    assert!(
        login.stdout.contains("Signed in to `peer`"),
        "{}",
        login.stdout
    );
    assert!(
        login.stdout.contains("in the file store"),
        "{}",
        login.stdout
    );

    // Discovery from the challenge, dynamic registration, PKCE and the resource indicator.
    let log = peer.log();
    let registration = &log["registrations"][0];
    assert_eq!(registration["client_name"], "capabilities", "{log}");
    assert_eq!(registration["token_endpoint_auth_method"], "none", "{log}");
    assert!(
        registration["redirect_uris"][0]
            .as_str()
            .is_some_and(|uri| uri.starts_with("http://127.0.0.1:")),
        "{log}"
    );
    let authorization = &log["authorizations"][0];
    assert_eq!(authorization["code_challenge"], true, "{log}");
    assert_eq!(authorization["resource"], peer.url.as_str(), "{log}");
    assert_eq!(log["token_requests"][0]["grant"], "authorization_code");
    assert_eq!(log["token_requests"][0]["resource"], peer.url.as_str());

    let resumed = home.run(&["exec", "--resume", &run_id, "--json"]);
    completed(&resumed);
    let list = home.run(&["source", "list"]).ok();
    assert!(
        list.stdout
            .contains("peer (default): signed in; token expires in"),
        "{}",
        list.stdout
    );
    let doctor = home.run(&["doctor"]);
    assert!(
        doctor
            .stdout
            .contains("peer (default): signed in; token expires in"),
        "{}",
        doctor.stdout
    );
    let json = home.run(&["source", "list", "--json"]).ok();
    assert!(json.stdout.contains("\"signed_in\""), "{}", json.stdout);

    let logged = home
        .command(&["exec", "-", "--json"])
        .env("CAPABILITIES_LOG", "debug")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(SCRIPT.as_bytes())?;
            child.wait_with_output()
        })
        .map(Run::from)
        .expect("exec runs");
    completed(&logged);
    // An upstream that echoes its bearer token hands the script a blank, not the token.
    let echoed = exec(
        &home,
        &["exec", "-", "--json"],
        "return await peer.whoami({});",
    );
    assert_eq!(
        envelope(&echoed)["status"],
        "completed",
        "{}",
        echoed.stdout
    );
    assert!(
        echoed
            .stdout
            .contains(&format!("you are {}", capabilities::credentials::MASK)),
        "{}",
        echoed.stdout
    );
    assert_no_token(
        &peer.tokens(),
        &[
            ("the paused envelope", &paused.stdout),
            ("the resumed envelope", &resumed.stdout),
            ("the login output", &login.stdout),
            ("the login log", &login.stderr),
            ("the debug log", &logged.stderr),
            ("source list", &json.stdout),
            ("an echoed token", &echoed.stdout),
        ],
        &home,
    );

    let logout = home.run(&["source", "logout", "peer"]).ok();
    assert!(
        logout.stdout.contains("Signed out of `peer`"),
        "{}",
        logout.stdout
    );
    paused_for_sign_in(&home);
    let twice = home.run(&["source", "logout", "peer"]).ok();
    assert!(
        twice.stdout.contains("was not signed in"),
        "{}",
        twice.stdout
    );
}

/// The status line and body a bodiless `method` to `target` (path and query) on 127.0.0.1:`port`
/// answers, over plain HTTP/1.0.
fn http(method: &str, port: u16, target: &str) -> (String, String) {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).expect("it listens");
    write!(
        stream,
        "{method} {target} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 0\r\n\r\n"
    )
    .expect("send");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("read");
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let status = head.lines().next().unwrap_or_default().to_string();
    (status, body.to_string())
}

/// [`http`] `GET url`.
fn http_get(url: &str) -> (String, String) {
    let url = url::Url::parse(url).expect("a URL");
    let target = match url.query() {
        Some(query) => format!("{}?{query}", url.path()),
        None => url.path().to_string(),
    };
    http("GET", url.port().expect("a port"), &target)
}

#[tokio::test(flavor = "multi_thread")]
async fn requests_that_are_not_the_redirect_cannot_end_a_sign_in() {
    let peer = OAuthPeer::start(3600);
    let home = home_for(&peer, "file");
    let login = sign_in_after(&home, "peer", &[], |page| {
        let page = url::Url::parse(page).expect("the sign-in page is a URL");
        let redirect = page
            .query_pairs()
            .find(|(key, _)| key == "redirect_uri")
            .map(|(_, value)| value.into_owned())
            .expect("the page names its redirect");
        // What a web page open in the person's browser could send to a port on 127.0.0.1: a
        // refusal, a made-up code, a code with a guessed state, nothing at all.
        for forged in [
            format!("{redirect}?error=access_denied"),
            format!("{redirect}?code=forged"),
            format!("{redirect}?code=forged&state=guessed"),
            format!("{redirect}?error=access_denied&state=guessed"),
            redirect.clone(),
        ] {
            let (status, body) = http_get(&forged);
            assert!(status.contains(" 400 "), "{forged}: {status}\n{body}");
            assert!(body.contains("was ignored"), "{forged}: {body}");
        }
    })
    .await;
    assert_eq!(
        login.code, 0,
        "the real redirect still signs in\n{}\n{}",
        login.stdout, login.stderr
    );
    assert!(
        login.stdout.contains("Signed in to `peer`"),
        "{}",
        login.stdout
    );
    assert_eq!(
        peer.log()["token_requests"][0]["grant"],
        "authorization_code"
    );
    let run = exec(&home, &["exec", "-", "--json"], SCRIPT);
    completed(&run);
}

/// The redirect carries this sign-in's state but a code the server refuses: the browser's page
/// says the sign-in did not complete (not "Signed in"), as the terminal does.
#[test]
fn the_browser_page_says_signed_in_only_once_the_code_was_exchanged() {
    use std::io::BufRead;
    let peer = OAuthPeer::start(3600);
    let home = home_for(&peer, "file");
    let mut child = home
        .command(&["source", "login", "peer", "--no-browser"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("capabilities runs");
    let stdout = child.stdout.take().expect("stdout");
    let page = std::io::BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        .find_map(|line| {
            line.trim()
                .starts_with("http")
                .then(|| line.trim().to_string())
        })
        .expect("login printed the page to open");
    let page = url::Url::parse(&page).expect("the sign-in page is a URL");
    let named = |name: &str| {
        page.query_pairs()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.into_owned())
            .expect("the page names it")
    };
    let (redirect, state) = (named("redirect_uri"), named("state"));
    let (status, body) = http_get(&format!("{redirect}?code=forged&state={state}"));
    assert!(status.contains(" 200 "), "{status}\n{body}");
    assert!(
        body.contains("Sign-in was not completed") && !body.contains("Signed in."),
        "{body}"
    );
    let output = child.wait_with_output().expect("login ends");
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("signing in to source `peer` failed"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn tokens_refresh_before_expiry_and_a_refused_refresh_waits_for_sign_in() {
    // Tokens of eight seconds, refreshed when less than four are left: room for the encrypted
    // file store's key derivation on each save, on a busy machine.
    let peer = OAuthPeer::start(8);
    let home = home_for(&peer, "file");
    let login = sign_in(&home, &[]).await;
    assert_eq!(login.code, 0, "{}\n{}", login.stdout, login.stderr);
    // Lets the access token run out: the next run refreshes it before calling.
    std::thread::sleep(Duration::from_secs(9));
    completed(&exec(&home, &["exec", "-", "--json"], SCRIPT));
    assert!(peer.grants("refresh_token") >= 1, "{}", peer.log());

    peer.admin("POST", "/admin/revoke-refresh");
    std::thread::sleep(Duration::from_secs(9));
    let (run_id, _) = paused_for_sign_in(&home);
    let list = home.run(&["source", "list"]);
    assert!(
        list.stdout.contains("peer (default): needs sign-in"),
        "{}",
        list.stdout
    );
    let doctor = home.run(&["doctor"]);
    assert!(
        doctor.stdout.contains("peer (default): needs sign-in (the server refused to renew it); run `capabilities source login peer`"),
        "{}",
        doctor.stdout
    );

    let again = sign_in(&home, &[]).await;
    assert_eq!(again.code, 0, "{}\n{}", again.stdout, again.stderr);
    completed(&home.run(&["exec", "--resume", &run_id, "--json"]));
}

/// A server that names a plain-http token endpoint on another machine after the sign-in (a
/// changed or hijacked configuration) is never sent the refresh token: the stored sign-in is
/// refused with why, before any request to that endpoint.
#[tokio::test(flavor = "multi_thread")]
async fn a_token_endpoint_that_turns_plain_http_is_never_sent_the_refresh_token() {
    let peer = OAuthPeer::start(3600);
    let home = home_for(&peer, "file");
    let login = sign_in(&home, &[]).await;
    assert_eq!(login.code, 0, "{}\n{}", login.stdout, login.stderr);
    completed(&exec(&home, &["exec", "-", "--json"], SCRIPT));

    let port = peer.port;
    drop(peer);
    // TEST-NET-1: nothing answers there, and nothing is sent.
    let _restarted = OAuthPeer::spawn_on(
        port,
        3600,
        &[],
        &[("OAUTH_PEER_TOKEN_URL", "http://192.0.2.2:18850/token")],
    );
    let run = exec(&home, &["exec", "-", "--json"], SCRIPT);
    let said = format!("{}\n{}", run.stdout, run.stderr);
    assert_ne!(run.code, 0, "{said}");
    assert!(
        said.contains("its stored sign-in cannot be used")
            && said.contains("token endpoint at a `http:` address on `192.0.2.2`")
            && said.contains("must be https (or http on this machine)"),
        "{said}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_token_the_server_refuses_is_refreshed_once() {
    let peer = OAuthPeer::start(3600);
    let home = home_for(&peer, "file");
    let login = sign_in(&home, &[]).await;
    assert_eq!(login.code, 0, "{}\n{}", login.stdout, login.stderr);
    assert_eq!(peer.grants("refresh_token"), 0);
    // The server forgets every access token: the next request gets a 401.
    peer.admin("POST", "/admin/expire-access");
    completed(&exec(&home, &["exec", "-", "--json"], SCRIPT));
    assert_eq!(peer.grants("refresh_token"), 1, "{}", peer.log());
}

/// Signs `home`'s `source` in, then runs a script that makes the connection refresh (every
/// access token was refused first) and calls a careless upstream that echoes the bearer token
/// it got and every token the server issued; asserts that the script saw blanks in place of
/// all of them.
async fn held_tokens_blanked(peer: &OAuthPeer, home: &Home, source: &str) {
    let login = sign_in_to(home, source, &[]).await;
    assert_eq!(login.code, 0, "{}\n{}", login.stdout, login.stderr);
    peer.admin("POST", "/admin/expire-access");
    let script = format!(
        "return {{ seen: await {source}.whoami({{}}), session: await {source}.session({{}}) }};"
    );
    let run = exec(home, &["exec", "-", "--json"], &script);
    let envelope = completed_with(
        &run,
        &format!("you are {}", capabilities::credentials::MASK),
    );
    // The run refreshed: the tokens echoed are the ones it held before (still valid until
    // their expiry at a server that did not forget them), its refresh token, and the new ones.
    assert_eq!(peer.grants("refresh_token"), 1, "{}", peer.log());
    let tokens = peer.tokens();
    assert_eq!(tokens.len(), 4, "{}", peer.log());
    let masks = envelope["result"]
        .to_string()
        .matches(capabilities::credentials::MASK)
        .count();
    assert!(masks > tokens.len(), "{envelope}");
    assert_no_token(
        &tokens,
        &[
            ("the envelope", &run.stdout),
            ("the run's log", &run.stderr),
        ],
        home,
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_refresh_token_and_tokens_a_refresh_replaced_are_blanked_too() {
    let peer = OAuthPeer::start(3600);
    held_tokens_blanked(&peer, &home_for(&peer, "file"), "peer").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_api_echoing_its_refresh_token_and_replaced_tokens_hands_over_blanks() {
    let peer = OAuthPeer::start(3600);
    held_tokens_blanked(&peer, &openapi_home(&peer, ""), "notes").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_from_the_config_signs_in_and_refreshes_with_its_secret() {
    let peer = OAuthPeer::with_app(3600, &["app-1", "app-secret-value"]);
    let home = Home::new().with_env("CAPABILITIES_PASSPHRASE", PASSPHRASE);
    home.write_config(&format!(
        "[credentials]\nstore = \"file\"\n\n[sources.peer]\nurl = {}\noauth = {{ client_id = \"app-1\", client_secret = \"${{secret:peer-app}}\" }}\n",
        serde_json::to_string(&peer.url).expect("a TOML string")
    ));
    let mut set = home.command(&["credential", "set", "peer-app"]);
    Run::with_stdin(&mut set, "app-secret-value\n").ok();
    let login = sign_in(&home, &[]).await;
    assert_eq!(login.code, 0, "{}\n{}", login.stdout, login.stderr);
    // No registration: the configured client signed in, and refreshes as itself.
    peer.admin("POST", "/admin/expire-access");
    completed(&exec(&home, &["exec", "-", "--json"], SCRIPT));
    let log = peer.log();
    assert_eq!(log["registrations"], serde_json::json!([]), "{log}");
    let clients: Vec<&str> = log["token_requests"]
        .as_array()
        .expect("token requests")
        .iter()
        .filter_map(|r| r["client_id"].as_str())
        .collect();
    assert_eq!(clients, ["app-1", "app-1"], "{log}");
    assert_eq!(peer.grants("refresh_token"), 1, "{log}");
}

/// A server that makes every client registering itself confidential: the secret it issued is
/// kept with the sign-in, so a later process refreshes as that client, and it shows nowhere.
#[tokio::test(flavor = "multi_thread")]
async fn a_client_registered_with_a_secret_refreshes_with_it_from_another_process() {
    let peer = OAuthPeer::spawn(3600, &[], &[("OAUTH_PEER_DCR_SECRET", "1")]);
    let home = home_for(&peer, "file");
    let login = sign_in(&home, &[]).await;
    assert_eq!(login.code, 0, "{}\n{}", login.stdout, login.stderr);
    let log = peer.log();
    assert_eq!(
        log["registrations"][0]["token_endpoint_auth_method"], "client_secret_post",
        "{log}"
    );
    // Every access token refused: this process (not the sign-in's) must refresh.
    peer.admin("POST", "/admin/expire-access");
    let run = exec(&home, &["exec", "-", "--json"], SCRIPT);
    completed(&run);
    assert_eq!(peer.grants("refresh_token"), 1, "{}", peer.log());
    let list = home.run(&["source", "list"]);
    assert!(
        list.stdout.contains("peer (default): signed in"),
        "{}",
        list.stdout
    );
    let mut secrets = peer.tokens();
    secrets.extend(
        peer.log()["issued_client_secrets"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|secret| secret.as_str().map(str::to_string)),
    );
    assert_no_token(
        &secrets,
        &[
            ("the login", &login.stdout),
            ("the login's log", &login.stderr),
            ("the envelope", &run.stdout),
            ("the log", &run.stderr),
        ],
        &home,
    );
}

/// A client known by its metadata document: where the server supports such documents, the
/// document's URL is the client's ID and nothing registers; where it does not, the client
/// registers itself as before.
#[tokio::test(flavor = "multi_thread")]
async fn a_client_metadata_document_is_the_client_where_the_server_supports_it() {
    let document = "https://capabilities.example/oauth/client.json";
    for supported in [true, false] {
        let peer = if supported {
            OAuthPeer::with_metadata_document(document)
        } else {
            OAuthPeer::start(3600)
        };
        let home = Home::new().with_env("CAPABILITIES_PASSPHRASE", PASSPHRASE);
        home.write_config(&format!(
            "[credentials]\nstore = \"file\"\n\n[sources.peer]\nurl = {}\noauth = {{ client_metadata_url = {document:?} }}\n",
            serde_json::to_string(&peer.url).expect("a TOML string")
        ));
        let login = sign_in(&home, &[]).await;
        assert_eq!(login.code, 0, "{}\n{}", login.stdout, login.stderr);
        completed(&exec(&home, &["exec", "-", "--json"], SCRIPT));
        let log = peer.log();
        let authorized: Vec<&str> = log["authorizations"]
            .as_array()
            .expect("authorizations")
            .iter()
            .filter_map(|a| a["client_id"].as_str())
            .collect();
        let registrations = log["registrations"].as_array().map_or(0, Vec::len);
        if supported {
            assert_eq!(authorized, [document], "{log}");
            assert_eq!(registrations, 0, "{log}");
            assert!(log["metadata_document_clients"].as_u64() > Some(0), "{log}");
            // Another document is another client: the tokens of the first are not used.
            home.write_config(&format!(
                "[credentials]\nstore = \"file\"\n\n[sources.peer]\nurl = {}\noauth = {{ client_metadata_url = \"https://capabilities.example/other.json\" }}\n",
                serde_json::to_string(&peer.url).expect("a TOML string")
            ));
            let waits = exec(&home, &["exec", "-", "--json"], SCRIPT);
            assert_eq!(
                envelope(&waits)["status"],
                "awaiting_connection",
                "{}",
                waits.stdout
            );
        } else {
            assert_eq!(registrations, 1, "{log}");
            assert_ne!(authorized, [document], "{log}");
        }
    }
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread")]
async fn tokens_live_in_the_keychain() {
    let service = SecretService::start();
    let peer = OAuthPeer::start(3600);
    let home = home_for(&peer, "keychain");
    let env = service.env();
    let login = sign_in(&home, &env).await;
    assert_eq!(login.code, 0, "{}\n{}", login.stdout, login.stderr);
    assert!(
        login.stdout.contains("in the keychain store"),
        "{}",
        login.stdout
    );
    // An independent client (libsecret) finds them under the connection's name.
    let stored = service.lookup("oauth.peer.default");
    let tokens = peer.tokens();
    assert!(
        stored.contains(tokens[0].as_str()),
        "the keychain holds the access token"
    );
    let mut command = home.command(&["exec", "-", "--json"]);
    command.envs(env.iter().copied());
    completed(&Run::with_stdin(&mut command, SCRIPT));
    assert_no_token(&tokens, &[("the login output", &login.stdout)], &home);
}

#[test]
fn adding_a_source_that_asks_for_a_sign_in_says_how_to_give_it() {
    let peer = OAuthPeer::start(3600);
    let home = Home::new().with_env("CAPABILITIES_PASSPHRASE", PASSPHRASE);
    home.write_config("[credentials]\nstore = \"file\"\n");
    let added = home
        .run(&["source", "add", "peer", "--url", &peer.url])
        .ok();
    assert!(
        added
            .stdout
            .contains("`peer` asks you to sign in (OAuth); run `capabilities source login peer`"),
        "{}",
        added.stdout
    );
    // On a terminal the sign-in is offered; declined, the source is added and says how to sign
    // in later. (`script` gives the command a terminal of its own.)
    let offered = Home::new().with_env("CAPABILITIES_PASSPHRASE", PASSPHRASE);
    offered.write_config("[credentials]\nstore = \"file\"\n");
    let line = format!(
        "{} source add peer --url {}",
        env!("CARGO_BIN_EXE_capabilities"),
        peer.url
    );
    let mut on_terminal = std::process::Command::new("script");
    on_terminal
        .args(["-qec", &line, "/dev/null"])
        .env("CAPABILITIES_HOME", offered.path())
        .env("CAPABILITIES_PASSPHRASE", PASSPHRASE)
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .env_remove("CAPABILITIES_CONFIG")
        .env_remove("DISPLAY");
    let declined = Run::with_stdin(&mut on_terminal, "n\n");
    assert!(
        declined
            .stdout
            .contains("`peer` asks you to sign in (OAuth). Sign in now in your browser? [Y/n]")
            && declined
                .stdout
                .contains("run `capabilities source login peer`"),
        "{}\n{}",
        declined.stdout,
        declined.stderr
    );
    let written = std::fs::read_to_string(offered.config_path()).unwrap();
    assert!(written.contains("[sources.peer]"), "{written}");
    paused_for_sign_in(&home);
    // `doctor` names the connection that was never signed in, with what to run.
    let doctor = home.run(&["doctor"]);
    assert!(
        doctor.stdout.contains(
            "peer: not signed in (its server asks for a sign-in); run `capabilities source login peer`"
        ),
        "{}\n{}",
        doctor.stdout,
        doctor.stderr
    );
}

#[test]
fn login_refuses_what_cannot_sign_in() {
    let home = Home::new();
    home.write_config(
        "[sources.local]\ncommand = \"true\"\n\n[sources.web]\nurl = \"http://127.0.0.1:9/mcp\"\n",
    );
    let stdio = home.run(&["source", "login", "local"]).fails();
    assert!(
        stdio.stderr.contains("not a Streamable HTTP source"),
        "{}",
        stdio.stderr
    );
    let unknown = home.run(&["source", "login", "nope"]).fails();
    assert!(
        unknown.stderr.contains("there is no source `nope`")
            && unknown.stderr.contains("local, web"),
        "{}",
        unknown.stderr
    );
    let connection = home
        .run(&["source", "login", "web", "--connection", "work"])
        .fails();
    assert!(
        connection.stderr.contains("has no connection `work`"),
        "{}",
        connection.stderr
    );
    let unreachable = home.run(&["source", "login", "web"]).fails();
    assert!(
        unreachable.stderr.contains("cannot reach source `web`"),
        "{}",
        unreachable.stderr
    );
}

#[test]
fn a_sign_in_page_that_is_not_a_web_address_is_never_opened() {
    let peer = OAuthPeer::with_authorization_page("file:///tmp/evil.desktop");
    let home = home_for(&peer, "file");
    let run = home
        .run(&["source", "login", "peer", "--no-browser"])
        .fails();
    assert!(
        run.stderr.contains("a `file:` address")
            && run.stderr.contains("not opened")
            && run.stderr.contains("ask the server's operators"),
        "{}",
        run.stderr
    );
    assert!(!run.stdout.contains("file:"), "{}", run.stdout);
}

#[tokio::test(flavor = "multi_thread")]
async fn login_to_a_server_that_asks_for_none_says_so() {
    let everything = crate::common::HttpEverything::start().await;
    let home = Home::new();
    home.write_config(&format!(
        "[sources.open]\nurl = {}\n",
        serde_json::to_string(&everything.url).expect("a TOML string")
    ));
    let run = home.run(&["source", "login", "open"]).fails();
    assert!(
        run.stderr.contains("does not ask for a sign-in"),
        "{}",
        run.stderr
    );
}

/// The 2026-07-28 client of tests/peers/sign_in_client.py, on a stdio hub in `home` (no
/// keychain, no display: the page can only reach the person through the client).
fn sign_in_client(home: &Home) -> std::process::Command {
    let mut client = python_peer("sign_in_client.py");
    client
        .arg(env!("CARGO_BIN_EXE_capabilities"))
        .args(["hub", "serve"])
        .env("CAPABILITIES_HOME", home.path())
        .env("CAPABILITIES_PASSPHRASE", PASSPHRASE)
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .env_remove("CAPABILITIES_CONFIG")
        .env_remove("DISPLAY");
    client
}

#[test]
fn a_client_holding_a_bearer_token_is_not_sent_where_to_sign_in() {
    let peer = OAuthPeer::start(3600);
    let home = home_for(&peer, "file");
    let token = crate::hub_http::create_token(&home, &["remote"]);
    let port = free_port();
    let address = format!("127.0.0.1:{port}");
    let mut command = home.command(&["hub", "serve", "--http", address.as_str()]);
    // No display: the page for the person at the hub's machine opens nowhere.
    command.env_remove("DISPLAY").stderr(Stdio::null());
    let hub = crate::hub_http::HttpHub::spawn(command, port);
    let report = json_report(
        python_peer("sign_in_client.py")
            .arg(hub.url())
            .env("SIGN_IN_TOKEN", &token),
    );
    // Its holder may be someone else: signed in with their account, the hub's source would
    // act as them for everyone. The run waits for the person at the hub's machine.
    assert_eq!(report["elicitations"], serde_json::json!([]), "{report}");
    assert_eq!(
        report["result"]["status"], "awaiting_connection",
        "{report}"
    );
    assert!(!report.to_string().contains("/authorize"), "{report}");
}

#[test]
fn a_2026_client_is_sent_the_sign_in_page_and_the_run_completes() {
    let peer = OAuthPeer::start(3600);
    let home = home_for(&peer, "file");
    let report = json_report(&mut sign_in_client(&home));
    assert_eq!(report["result"]["status"], "completed", "{report}");
    assert!(
        report["result"]["result"].to_string().contains("echo: hi"),
        "{report}"
    );
    let asked = &report["elicitations"][0];
    assert_eq!(asked["mode"], "url", "{report}");
    let page = asked["url"].as_str().unwrap_or_default();
    assert!(
        page.starts_with(&format!("http://127.0.0.1:{}/authorize?", peer.port)),
        "{report}"
    );
    assert!(
        asked["landed"]
            .as_str()
            .is_some_and(|l| l.contains("Signed in")),
        "{report}"
    );
    // What the model sees names no page, and no token.
    assert!(
        !report["result"].to_string().contains("/authorize"),
        "{report}"
    );
    assert_no_token(
        &peer.tokens(),
        &[("the envelope", &report["result"].to_string())],
        &home,
    );
    assert_eq!(peer.grants("authorization_code"), 1, "{}", peer.log());
}

/// A home with source `notes`: the peer's REST API, described by its OpenAPI document (`query`
/// picks the document's scheme), whose writes are allowed without asking.
fn openapi_home(peer: &OAuthPeer, query: &str) -> Home {
    let home = Home::new().with_env("CAPABILITIES_PASSPHRASE", PASSPHRASE);
    let document = format!("http://127.0.0.1:{}/api/openapi.json{query}", peer.port);
    home.write_config(&format!(
        "[credentials]\nstore = \"file\"\n\n[sources.notes]\nopenapi = {}\n\n[[policy.rules]]\nmatch = \"notes.addNote\"\naction = \"allow\"\n",
        serde_json::to_string(&document).expect("a TOML string")
    ));
    home
}

/// Runs `script`, which must wait for the sign-in of `notes`; returns the run's id.
fn notes_paused(home: &Home, script: &str) -> (String, Run) {
    let paused = exec(home, &["exec", "-", "--json"], script);
    assert_eq!(
        paused.code, 3,
        "waits\n{}\n{}",
        paused.stdout, paused.stderr
    );
    let envelope = envelope(&paused);
    assert_eq!(envelope["status"], "awaiting_connection", "{envelope}");
    let pending = &envelope["pending"][0];
    assert_eq!(pending["kind"], "connection", "{envelope}");
    assert!(
        pending["message"]
            .as_str()
            .is_some_and(|m| m.contains("capabilities source login notes")),
        "{envelope}"
    );
    assert!(!paused.stdout.contains("/authorize"), "{}", paused.stdout);
    let run_id = envelope["runId"].as_str().expect("runId").to_string();
    (run_id, paused)
}

fn completed_with(run: &Run, expected: &str) -> Value {
    assert_eq!(run.code, 0, "completes\n{}\n{}", run.stdout, run.stderr);
    let envelope = envelope(run);
    assert_eq!(envelope["status"], "completed", "{envelope}");
    assert!(
        envelope["result"].to_string().contains(expected),
        "{envelope}"
    );
    envelope
}

const NOTES_SCRIPT: &str = r#"await notes.addNote({ body: { text: "second note" } });
return await notes.listNotes({});"#;

#[tokio::test(flavor = "multi_thread")]
async fn an_openapi_source_signs_in_through_its_documents_oauth_scheme() {
    let peer = OAuthPeer::start(3600);
    let home = openapi_home(&peer, "");
    // Its operations are listed without a sign-in, and one that needs none runs.
    completed_with(
        &exec(
            &home,
            &["exec", "-", "--json"],
            "return await notes.health({});",
        ),
        "ok",
    );
    let (run_id, paused) = notes_paused(&home, NOTES_SCRIPT);
    let login = sign_in_to(&home, "notes", &[]).await;
    assert_eq!(
        login.code, 0,
        "signs in\n{}\n{}",
        login.stdout, login.stderr
    );
    assert!(
        login.stdout.contains("Signed in to `notes`"),
        "{}",
        login.stdout
    );
    // The server's published metadata matched the document's endpoints: dynamic registration,
    // PKCE, the API as the resource, and the scopes the document's operations name.
    let log = peer.log();
    assert_eq!(
        log["registrations"][0]["client_name"], "capabilities",
        "{log}"
    );
    let authorization = &log["authorizations"][0];
    assert_eq!(authorization["code_challenge"], true, "{log}");
    let api = format!("http://127.0.0.1:{}/api", peer.port);
    assert_eq!(authorization["resource"], api.as_str(), "{log}");
    assert_eq!(
        authorization["scopes"],
        serde_json::json!(["notes:read", "notes:write"]),
        "{log}"
    );

    let resumed = home.run(&["exec", "--resume", &run_id, "--json"]);
    completed_with(&resumed, "second note");
    let list = home.run(&["source", "list"]).ok();
    assert!(
        list.stdout
            .contains("notes (default): signed in; token expires in"),
        "{}",
        list.stdout
    );
    // The API forgets every token: the refused call is sent again with a refreshed one.
    peer.admin("POST", "/admin/expire-access");
    let echoed = exec(
        &home,
        &["exec", "-", "--json"],
        "return await notes.whoami({});",
    );
    completed_with(
        &echoed,
        &format!("you are {}", capabilities::credentials::MASK),
    );
    assert_eq!(peer.grants("refresh_token"), 1, "{}", peer.log());
    assert_no_token(
        &peer.tokens(),
        &[
            ("the paused envelope", &paused.stdout),
            ("the resumed envelope", &resumed.stdout),
            ("the login output", &login.stdout),
            ("the login log", &login.stderr),
            ("an echoed token", &echoed.stdout),
            ("the run's log", &echoed.stderr),
        ],
        &home,
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_openapi_source_signs_in_through_openid_connect_discovery() {
    let peer = OAuthPeer::start(3600);
    let home = openapi_home(&peer, "?scheme=oidc");
    let (run_id, _) = notes_paused(&home, NOTES_SCRIPT);
    let login = sign_in_to(&home, "notes", &[]).await;
    assert_eq!(
        login.code, 0,
        "signs in\n{}\n{}",
        login.stdout, login.stderr
    );
    completed_with(
        &home.run(&["exec", "--resume", &run_id, "--json"]),
        "second note",
    );
}

#[test]
fn login_to_an_openapi_source_without_an_oauth_scheme_says_how_to_give_a_token() {
    let document = crate::common::repo().join("tests/fixtures/openapi/unnamed.yaml");
    let home = Home::new().with_env("CAPABILITIES_PASSPHRASE", PASSPHRASE);
    home.write_config(&format!(
        "[credentials]\nstore = \"file\"\n\n[sources.shop]\nopenapi = {}\nbase_url = \"http://127.0.0.1:9\"\n",
        serde_json::to_string(&document).expect("a TOML string")
    ));
    let run = home.run(&["source", "login", "shop"]).fails();
    assert!(
        run.stderr
            .contains("source `shop` has nothing to sign in to")
            && run.stderr.contains("--auth 'SCHEME=${secret:NAME}'"),
        "{}",
        run.stderr
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sign_in_lost_mid_run_pauses_the_call_and_a_resume_sends_it_once() {
    let peer = OAuthPeer::start(3600);
    let home = Home::new().with_env("CAPABILITIES_PASSPHRASE", PASSPHRASE);
    home.write_config(&format!(
        "[credentials]\nstore = \"file\"\n\n[sources.peer]\nurl = {}\n\n[sources.notes]\nopenapi = {}\n\n[[policy.rules]]\nmatch = \"notes.addNote\"\naction = \"allow\"\n",
        serde_json::to_string(&peer.url).expect("a TOML string"),
        serde_json::to_string(&format!("http://127.0.0.1:{}/api/openapi.json", peer.port))
            .expect("a TOML string"),
    ));
    for source in ["peer", "notes"] {
        let login = sign_in_to(&home, source, &[]).await;
        assert_eq!(login.code, 0, "{}\n{}", login.stdout, login.stderr);
    }
    // The write is sent after every token was revoked: the API refuses it (401), the refresh
    // is refused, and the write waits for the sign-in instead of failing the run.
    let script = r#"await peer.revokeEverything({});
return await notes.addNote({ body: { text: "second note" } });"#;
    let (run_id, paused) = notes_paused(&home, script);
    let again = sign_in_to(&home, "notes", &[]).await;
    assert_eq!(again.code, 0, "{}\n{}", again.stdout, again.stderr);
    let resumed = home.run(&["exec", "--resume", &run_id, "--json"]);
    let done = completed_with(&resumed, "second note");
    assert_eq!(
        done["result"].to_string().matches("second note").count(),
        1,
        "the write ran once: {done}"
    );
    // The calls before the pause answered from the journal.
    assert_eq!(peer.log()["revocations"], 1, "{}", peer.log());

    // An MCP source losing its sign-in halfway through a run: its call waits the same way.
    let signed = sign_in(&home, &[]).await;
    assert_eq!(signed.code, 0, "{}\n{}", signed.stdout, signed.stderr);
    let script = r#"await peer.revokeEverything({});
return await peer.echo({ text: "hi" });"#;
    let waiting = exec(&home, &["exec", "-", "--json"], script);
    assert_eq!(waiting.code, 3, "{}\n{}", waiting.stdout, waiting.stderr);
    let waiting = envelope(&waiting);
    assert_eq!(waiting["status"], "awaiting_connection", "{waiting}");
    assert_eq!(waiting["pending"][0]["address"], "peer.echo", "{waiting}");
    let run_id = waiting["runId"].as_str().expect("runId").to_string();
    let signed = sign_in(&home, &[]).await;
    assert_eq!(signed.code, 0, "{}\n{}", signed.stdout, signed.stderr);
    completed(&home.run(&["exec", "--resume", &run_id, "--json"]));
    assert_eq!(peer.log()["revocations"], 2, "{}", peer.log());
    assert_no_token(
        &peer.tokens(),
        &[
            ("the paused envelope", &paused.stdout),
            ("the resumed envelope", &resumed.stdout),
        ],
        &home,
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn processes_refreshing_one_connection_take_turns() {
    let peer = OAuthPeer::start(3600);
    let home = openapi_home(&peer, "");
    let login = sign_in_to(&home, "notes", &[]).await;
    assert_eq!(login.code, 0, "{}\n{}", login.stdout, login.stderr);
    let script = "return await notes.listNotes({});";
    // One run first, so the two below find the state store made (and keyed) already.
    completed_with(&exec(&home, &["exec", "-", "--json"], script), "first note");
    // Every access token is refused from now on and each refresh is slow: two runs started
    // together both refresh, and would overlap (the second refused for reusing the refresh
    // token, the connection signed out) unless the second waits for the first's new tokens.
    peer.admin("POST", "/admin/expire-access");
    peer.admin("POST", "/admin/slow-refresh");
    let runs: Vec<std::process::Child> = (0..2)
        .map(|_| {
            let mut child = home
                .command(&["exec", "-", "--json"])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("exec runs");
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(script.as_bytes())
                .expect("the script is written");
            child
        })
        .collect();
    for child in runs {
        let run = Run::from(child.wait_with_output().expect("exec ends"));
        completed_with(&run, "first note");
    }
    let log = peer.log();
    assert_eq!(log["most_refreshes_at_once"], 1, "{log}");
    assert_eq!(peer.grants("refresh_token"), 2, "{log}");
    let list = home.run(&["source", "list"]).ok();
    assert!(
        list.stdout.contains("notes (default): signed in"),
        "{}",
        list.stdout
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_refused_for_a_missing_scope_waits_for_a_sign_in_that_asks_for_it() {
    let peer = OAuthPeer::start(3600);
    let home = openapi_home(&peer, "");
    let login = sign_in_to(&home, "notes", &[]).await;
    assert_eq!(login.code, 0, "{}\n{}", login.stdout, login.stderr);
    let paused = exec(
        &home,
        &["exec", "-", "--json"],
        "return await notes.archive({});",
    );
    assert_eq!(paused.code, 3, "{}\n{}", paused.stdout, paused.stderr);
    let waiting = envelope(&paused);
    assert_eq!(waiting["status"], "awaiting_connection", "{waiting}");
    let pending = &waiting["pending"][0];
    assert_eq!(pending["kind"], "connection", "{waiting}");
    assert!(
        pending["summary"]
            .as_str()
            .is_some_and(|s| s.contains("needs the scope `notes:archive`")),
        "{waiting}"
    );
    let run_id = waiting["runId"].as_str().expect("runId").to_string();
    // The next sign-in asks for the scope on top of the document's.
    let again = sign_in_to(&home, "notes", &[]).await;
    assert_eq!(again.code, 0, "{}\n{}", again.stdout, again.stderr);
    let log = peer.log();
    assert_eq!(
        log["authorizations"][1]["scopes"],
        serde_json::json!(["notes:read", "notes:write", "notes:archive"]),
        "{log}"
    );
    completed_with(
        &home.run(&["exec", "--resume", &run_id, "--json"]),
        "the archived notes",
    );
    assert_no_token(
        &peer.tokens(),
        &[("the paused envelope", &paused.stdout)],
        &home,
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_mcp_call_refused_for_a_missing_scope_waits_for_a_sign_in_that_asks_for_it() {
    let peer = OAuthPeer::start(3600);
    let home = home_for(&peer, "file");
    let login = sign_in(&home, &[]).await;
    assert_eq!(login.code, 0, "{}\n{}", login.stdout, login.stderr);
    let paused = exec(
        &home,
        &["exec", "-", "--json"],
        "return await peer.archive({});",
    );
    assert_eq!(paused.code, 3, "{}\n{}", paused.stdout, paused.stderr);
    let waiting = envelope(&paused);
    assert_eq!(waiting["status"], "awaiting_connection", "{waiting}");
    assert!(
        waiting["pending"][0]["summary"]
            .as_str()
            .is_some_and(|s| s.contains("`mcp:archive`")),
        "{waiting}"
    );
    let run_id = waiting["runId"].as_str().expect("runId").to_string();
    let again = sign_in(&home, &[]).await;
    assert_eq!(again.code, 0, "{}\n{}", again.stdout, again.stderr);
    let log = peer.log();
    let asked = log["authorizations"][1]["scopes"].to_string();
    assert!(asked.contains("\"mcp:archive\""), "{log}");
    completed_with(
        &home.run(&["exec", "--resume", &run_id, "--json"]),
        "the archived messages",
    );
}
