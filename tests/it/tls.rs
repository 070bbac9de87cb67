//! HTTPS sources through the real binary, against a real MCP server over TLS
//! (tests/peers/tls_server.py: the Python `mcp` SDK under uvicorn) whose certificate comes from a
//! certificate authority made at test time. Trusted through SSL_CERT_FILE, `source test`,
//! `search` and `exec` reach it; untrusted, or with a certificate for another host name, it is
//! refused with a message that says what failed and what to do (a refusal, not a connect
//! timeout, which would name no certificate). Each test sets the trust store variables itself,
//! since a developer's or CI's environment may set them too.

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::common::{HttpEverything, free_port, listening_within, python_peer};
use crate::support::{Home, Run};

/// tests/peers/tls_server.py on a free port; killed when dropped.
struct TlsServer {
    url: String,
    /// The PEM certificate of the authority that signed the server's certificate.
    ca: PathBuf,
    child: Child,
    _dir: tempfile::TempDir,
}

impl TlsServer {
    /// Serves with a certificate for `names` (host names or IP addresses).
    fn start(names: &[&str]) -> TlsServer {
        let dir = tempfile::tempdir().expect("temp dir");
        let ca = dir.path().join("ca.pem");
        let port = free_port();
        let child = python_peer("tls_server.py")
            .arg(port.to_string())
            .arg(&ca)
            .args(names)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the test venv's python runs (tests/setup.sh)");
        let server = TlsServer {
            url: format!("https://127.0.0.1:{port}/mcp"),
            ca,
            child,
            _dir: dir,
        };
        // The server writes the authority's certificate before it listens.
        assert!(
            listening_within(port, Duration::from_secs(30)),
            "the TLS server did not listen on port {port}"
        );
        server
    }
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A home whose one source, `secure`, is at `url`.
fn home_with_source(url: &str) -> Home {
    let home = Home::new();
    home.write_config(&format!(
        "[sources.secure]\nurl = {}\nconnect_timeout_secs = 60\n",
        serde_json::to_string(url).expect("a TOML string")
    ));
    home
}

/// Runs `capabilities ARGS…` trusting only the certificate authorities in `ca_file`, or, with
/// `None`, the system's store.
fn run_trusting(home: &Home, ca_file: Option<&Path>, args: &[&str]) -> Run {
    let mut command = home.command(args);
    command.env_remove("SSL_CERT_DIR");
    match ca_file {
        Some(file) => command.env("SSL_CERT_FILE", file),
        None => command.env_remove("SSL_CERT_FILE"),
    };
    Run::of(&mut command)
}

/// Writes `script` into the home and returns its path, for `exec`.
fn script(home: &Home, text: &str) -> String {
    let path = home.path().join("script.js");
    std::fs::write(&path, text).expect("write the script");
    path.display().to_string()
}

#[test]
fn an_https_source_whose_authority_is_trusted_connects_searches_and_runs_a_tool() {
    let server = TlsServer::start(&["127.0.0.1"]);
    let home = home_with_source(&server.url);
    let ca = Some(server.ca.as_path());

    let test = run_trusting(&home, ca, &["source", "test", "secure"]).ok();
    assert!(
        test.stdout.contains("`secure` is ready: 1 tools"),
        "{}",
        test.stdout
    );
    assert!(test.stdout.contains("secure.shout"), "{}", test.stdout);

    let search = run_trusting(&home, ca, &["search", "capital letters"]).ok();
    assert!(
        search
            .stdout
            .contains("secure.shout(input: { text: string })"),
        "{}",
        search.stdout
    );

    let script = script(&home, r#"return await secure.shout({ text: "over tls" });"#);
    let exec = run_trusting(&home, ca, &["exec", "--json", &script]).ok();
    let envelope: Value = serde_json::from_str(&exec.stdout).expect("a JSON envelope");
    assert_eq!(envelope["status"], "completed", "{envelope:#}");
    assert_eq!(envelope["result"]["result"], "OVER TLS", "{envelope:#}");
}

#[test]
fn an_https_source_whose_authority_is_unknown_is_refused_with_the_fix() {
    let server = TlsServer::start(&["127.0.0.1"]);
    let home = home_with_source(&server.url);

    // The system's store does not hold the test's authority.
    let test = run_trusting(&home, None, &["source", "test", "secure"]).fails();
    assert!(
        test.stderr.contains(&format!(
            "cannot connect securely to {}: the server's certificate is not signed by a certificate authority this machine trusts",
            server.url
        )),
        "{}",
        test.stderr
    );
    assert!(
        test.stderr
            .contains("point SSL_CERT_FILE at its bundle (PEM)"),
        "{}",
        test.stderr
    );

    // `search` says which source it could not search, and why (the failure `source test` just
    // met, remembered rather than met again); with no source listed at all, that is an error.
    let search = run_trusting(&home, None, &["search", "capital letters"]).fails();
    assert!(
        search
            .stderr
            .contains("no source could be listed:\n  secure: failed ")
            && search.stderr.contains(" s ago: cannot connect securely"),
        "{}",
        search.stderr
    );

    // A script cannot reach it: the run fails without calling it.
    let script = script(&home, r#"return await secure.shout({ text: "over tls" });"#);
    let exec = run_trusting(&home, None, &["exec", "--json", &script]).fails();
    let envelope: Value = serde_json::from_str(&exec.stdout).expect("a JSON envelope");
    assert_eq!(envelope["status"], "failed", "{envelope:#}");
    assert_eq!(envelope["calls"], serde_json::json!([]), "{envelope:#}");

    // Trusting another authority through SSL_CERT_FILE says that only it is trusted.
    let other = TlsServer::start(&["127.0.0.1"]);
    let test = run_trusting(&home, Some(&other.ca), &["source", "test", "secure"]).fails();
    assert!(
        test.stderr.contains(&format!(
            "Only the certificate authorities in SSL_CERT_FILE={} are trusted",
            other.ca.display()
        )),
        "{}",
        test.stderr
    );
}

#[test]
fn an_https_certificate_for_another_host_name_is_refused() {
    let server = TlsServer::start(&["other.example"]);
    let home = home_with_source(&server.url);

    // The authority is trusted; only the name is wrong.
    let test = run_trusting(&home, Some(&server.ca), &["source", "test", "secure"]).fails();
    assert!(
        test.stderr
            .contains("the server's certificate is for other.example, not for 127.0.0.1"),
        "{}",
        test.stderr
    );
}

#[test]
fn a_trust_store_with_no_certificate_stops_https_sources_only() {
    let missing = Path::new("/nonexistent/capabilities-test-ca.pem");
    let server = TlsServer::start(&["127.0.0.1"]);
    let home = home_with_source(&server.url);
    // Exit 1 with a reason, not a panic (101) in the HTTP client's construction.
    let test = run_trusting(&home, Some(missing), &["source", "test", "secure"]).fails();
    assert!(
        test.stderr.contains("cannot set up TLS: ")
            && test.stderr.contains(&format!(
                "Check SSL_CERT_FILE={}: it must name readable PEM certificates",
                missing.display()
            )),
        "{}",
        test.stderr
    );

    // A plain-HTTP source never needs the trust store.
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let plain = runtime.block_on(HttpEverything::start());
    let home = home_with_source(&plain.url);
    let test = run_trusting(&home, Some(missing), &["source", "test", "secure"]).ok();
    assert!(test.stdout.contains("`secure` is ready"), "{}", test.stdout);
}
