//! The approval page in a real browser: headless Chromium (Debian's `chromium`) driven through
//! chromedriver (Debian's `chromium-driver`) with fantoccini. Runs are paused the real way, by
//! `capabilities exec` against the counting Python MCP server; a person decides on the page; the
//! store records the decision with channel `page`; `exec --resume` then finishes the run.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::process::Stdio;
use std::time::Duration;

use capabilities::approvals::ApprovalPage;
use capabilities::runs::{Decision, Store};
use fantoccini::{Client, ClientBuilder, Locator};
use futures::FutureExt;
use serde_json::json;

use crate::approvals::{SCRIPT, counter_config, counts, envelope, exec};
use crate::common::free_port;
use crate::support::Home;

/// Flags for a quiet, private, headless Chromium that reaches nothing but the page under test.
const CHROMIUM_FLAGS: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
];

/// Runs `test` against a fresh headless Chromium with its own profile, and closes the browser
/// afterwards even when the test panics (a killed chromedriver would leave Chromium behind).
pub(crate) async fn with_browser<F, Fut>(test: F)
where
    F: FnOnce(Client) -> Fut,
    Fut: Future<Output = ()>,
{
    let port = free_port();
    let driver = tokio::process::Command::new("chromedriver")
        .arg(format!("--port={port}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("chromedriver runs (Debian: apt-get install chromium chromium-driver)");
    // A bound on waiting for it to listen, not a timing assertion: a cold start on a busy machine is slow.
    let mut listening = false;
    for _ in 0..300 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            listening = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(listening, "chromedriver did not listen on port {port}");
    let profile = tempfile::tempdir().expect("a profile directory");
    let mut args: Vec<String> = CHROMIUM_FLAGS.iter().map(|f| f.to_string()).collect();
    args.push(format!("--user-data-dir={}", profile.path().display()));
    let mut capabilities = serde_json::Map::new();
    capabilities.insert(
        "goog:chromeOptions".into(),
        json!({ "binary": "/usr/bin/chromium", "args": args }),
    );
    let client = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(capabilities)
        .connect(&format!("http://127.0.0.1:{port}"))
        .await
        .expect("a Chromium session through chromedriver");
    let outcome = AssertUnwindSafe(test(client.clone())).catch_unwind().await;
    let closed = client.close().await;
    drop(driver);
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
    closed.expect("Chromium closes");
}

/// Pauses a run with `code` through `capabilities exec`; returns its id.
fn pause(home: &Home, code: &str) -> String {
    let paused = exec(home, &["exec", "-", "--json"], code);
    assert_eq!(
        paused.code, 3,
        "the run waits for approval\n{}\n{}",
        paused.stdout, paused.stderr
    );
    let paused = envelope(&paused);
    assert_eq!(paused["status"], "awaiting_approval", "{paused}");
    paused["runId"].as_str().expect("runId").to_string()
}

async fn store(home: &Home) -> Store {
    Store::open(&home.path().join("data/state.sqlite"), None)
        .await
        .expect("the state store")
}

async fn text(browser: &Client, css: &str) -> String {
    browser
        .find(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("no `{css}` on the page: {e}"))
        .text()
        .await
        .expect("text")
}

/// Clicks a choice and waits for the page the server answers with.
async fn choose(browser: &Client, decision: &str) {
    browser
        .find(Locator::Css(&format!("button[value={decision}]")))
        .await
        .expect("the choice is offered")
        .click()
        .await
        .expect("click");
    browser
        .wait()
        .for_element(Locator::Id("outcome"))
        .await
        .expect("the decision's answer");
}

#[tokio::test(flavor = "multi_thread")]
async fn approving_on_the_page_lets_the_run_resume_and_complete() {
    let home = Home::new();
    let counts_file = counter_config(&home);
    let run_id = pause(&home, SCRIPT);
    let store = store(&home).await;
    let page = ApprovalPage::start(store.clone(), home.config_path())
        .await
        .expect("the page starts");
    let url = page.url_for(&run_id).await.expect("a link");
    with_browser(|browser| async move {
        browser.goto(url.as_str()).await.expect("the page opens");
        assert_eq!(text(&browser, ".address").await, "counter.publish");
        assert!(text(&browser, ".preview").await.contains("key: \"b\""));
        assert!(text(&browser, ".state").await.starts_with("expires in"));
        assert!(!text(&browser, ".reason").await.is_empty());
        choose(&browser, "allow_once").await;
        assert!(
            text(&browser, "#continue")
                .await
                .contains("The agent can continue")
        );
    })
    .await;

    let approval = store
        .approvals()
        .of_run(&run_id)
        .await
        .expect("approvals")
        .pop()
        .expect("one approval");
    assert_eq!(
        (approval.decision, approval.decided_by.as_deref()),
        (Some(Decision::AllowOnce), Some("page"))
    );
    let resumed = envelope(&home.run(&["exec", "--resume", &run_id, "--json"]).ok());
    assert_eq!(resumed["status"], "completed", "{resumed}");
    assert_eq!(
        counts(&counts_file),
        json!({ "write:a": 1, "publish:b": 1, "write:c": 1 }),
        "every call ran exactly once"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wrong_or_reused_link_is_refused() {
    let home = Home::new();
    counter_config(&home);
    let run_id = pause(&home, SCRIPT);
    let store = store(&home).await;
    let page = ApprovalPage::start(store.clone(), home.config_path())
        .await
        .expect("the page starts");
    let url = page.url_for(&run_id).await.expect("a link");
    with_browser(|browser| async move {
        let mut wrong = url.clone();
        wrong.set_path("/approve/0000000000000000000000000000000000000000000000000000000000000000");
        browser.goto(wrong.as_str()).await.expect("goto");
        assert_eq!(
            text(&browser, "#outcome").await,
            "This approval link is not valid"
        );
        assert!(
            browser
                .find_all(Locator::Css("form"))
                .await
                .expect("find")
                .is_empty(),
            "no choices on a refusal"
        );

        // Two tabs hold the same page; the first decision spends the link, so the second tab's
        // form (a replay of the same token and CSRF value) decides nothing.
        browser.goto(url.as_str()).await.expect("goto");
        let first = browser.window().await.expect("window");
        let second = browser.new_window(true).await.expect("a second tab").handle;
        browser.switch_to_window(second).await.expect("switch");
        browser.goto(url.as_str()).await.expect("goto");
        choose(&browser, "allow_run").await;
        browser.switch_to_window(first).await.expect("switch");
        choose(&browser, "deny").await;
        assert_eq!(
            text(&browser, "#outcome").await,
            "This approval link was already used"
        );
        browser.goto(url.as_str()).await.expect("goto");
        assert_eq!(
            text(&browser, "#outcome").await,
            "This approval link was already used"
        );
    })
    .await;

    let approval = store
        .approvals()
        .of_run(&run_id)
        .await
        .expect("approvals")
        .pop()
        .expect("one approval");
    assert_eq!(
        approval.decision,
        Some(Decision::AllowRun),
        "the replayed deny changed nothing"
    );
    let audit = store.approvals().audit_log(&run_id).await.expect("audit");
    assert_eq!(
        audit.iter().filter(|line| line.kind == "decision").count(),
        1,
        "{audit:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn markup_in_arguments_shows_as_text_and_secrets_stay_hidden() {
    let home = Home::new();
    counter_config(&home);
    // Short enough (under 80 characters) that the preview shows it whole.
    let attack = "<img src=x onerror=alert(1)><script>document.title='pwned'</script><b>bold</b>";
    let code = format!(
        "let denied = null;\ntry {{ await counter.publish({{ key: {}, apiToken: \"sk-live-do-not-show\" }}); }} catch (e) {{ denied = e.code; }}\nreturn denied;",
        serde_json::to_string(attack).expect("json")
    );
    let run_id = pause(&home, &code);
    let store = store(&home).await;
    let page = ApprovalPage::start(store.clone(), home.config_path())
        .await
        .expect("the page starts");
    let url = page.url_for(&run_id).await.expect("a link");
    with_browser(|browser| async move {
        browser.goto(url.as_str()).await.expect("goto");
        let preview = text(&browser, ".preview").await;
        assert!(
            preview.contains("<img src=x onerror=alert(1)>")
                && preview.contains("<script>document.title")
                && preview.contains("<b>bold</b>"),
            "{preview}"
        );
        for element in ["img", "script", "b"] {
            assert!(
                browser
                    .find_all(Locator::Css(element))
                    .await
                    .expect("find")
                    .is_empty(),
                "a <{element}> element was injected"
            );
        }
        assert_ne!(browser.title().await.expect("title"), "pwned");
        let source = browser.source().await.expect("source");
        assert!(
            !source.contains("sk-live-do-not-show"),
            "the page shows a credential-like argument"
        );
        choose(&browser, "deny").await;
        assert!(text(&browser, "#continue").await.contains("policy_denied"));
    })
    .await;

    let resumed = envelope(&home.run(&["exec", "--resume", &run_id, "--json"]).ok());
    assert_eq!(resumed["result"], "policy_denied", "{resumed}");
}

#[tokio::test(flavor = "multi_thread")]
async fn always_allow_is_confirmed_on_the_page_and_becomes_a_policy_rule() {
    let home = Home::new();
    let counts_file = counter_config(&home);
    let run_id = pause(&home, SCRIPT);
    let store = store(&home).await;
    let page = ApprovalPage::start(store.clone(), home.config_path())
        .await
        .expect("the page starts");
    let url = page.url_for(&run_id).await.expect("a link");
    let config_file = home.config_path();
    with_browser(|browser| async move {
        browser.goto(url.as_str()).await.expect("goto");
        browser
            .find(Locator::Css("button[value=allow_always]"))
            .await
            .expect("offered")
            .click()
            .await
            .expect("click");
        let confirm = browser
            .wait()
            .for_element(Locator::Css("input[name=confirm]"))
            .await;
        assert!(confirm.is_ok(), "a confirmation step");
        assert!(
            !std::fs::read_to_string(&config_file)
                .expect("config")
                .contains("match = \"counter.publish\""),
            "no rule before confirming"
        );
        choose(&browser, "allow_always").await;
        assert!(
            text(&browser, "#continue")
                .await
                .contains("The agent can continue")
        );
    })
    .await;

    let config = std::fs::read_to_string(home.config_path()).expect("config");
    assert!(config.contains("match = \"counter.publish\""), "{config}");
    assert_eq!(
        store.approvals().of_run(&run_id).await.expect("approvals")[0].decision,
        Some(Decision::AllowAlways)
    );
    envelope(&home.run(&["exec", "--resume", &run_id, "--json"]).ok());
    assert_eq!(
        counts(&counts_file),
        json!({ "write:a": 1, "publish:b": 1, "write:c": 1 })
    );
    // The rule holds for the next run: it no longer asks.
    let next = envelope(
        &exec(
            &home,
            &["exec", "-", "--json"],
            "return await counter.publish({ key: 'z' });",
        )
        .ok(),
    );
    assert_eq!(next["status"], "completed", "{next}");
}
