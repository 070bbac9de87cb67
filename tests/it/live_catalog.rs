//! The catalogue follows its sources: a real server that announces a changed tool list is listed
//! again, in memory, in the search index and in the on-disk cache.

use std::sync::Arc;
use std::time::{Duration, Instant};

use capabilities::catalog::cache::ListingCache;
use capabilities::catalog::live::LiveCatalog;
use capabilities::catalog::search::Ranking;
use capabilities::credentials::NoSecretStore;
use capabilities::sources::Sources;

use crate::support::{Home, repo_root};

async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let start = Instant::now();
    while !check() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "timed out waiting until {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_changed_notification_relists_the_source() {
    let home = Home::new();
    let python = repo_root().join(".venv/bin/python");
    let server = repo_root().join("tests/peers/changing_server.py");
    let text = format!(
        "[sources.changing]\ncommand = {}\nargs = [{}]\n",
        serde_json::to_string(&python.display().to_string()).unwrap(),
        serde_json::to_string(&server.display().to_string()).unwrap()
    );
    let settings = capabilities::config::parse(&home.config_path(), &text).expect("config");
    let cache_dir = home.path().join("catalog");
    let sources = Sources::start(settings.sources.clone(), Arc::new(NoSecretStore));
    let live = LiveCatalog::start(settings, ListingCache::new(&cache_dir), sources.clone());

    eventually("the source is listed", || {
        live.read(|c, _| c.tool("changing.addTool").is_some())
    })
    .await;
    let result = sources
        .call_tool(
            "changing",
            None,
            "add_tool",
            serde_json::json!({ "name": "fresh_tool" })
                .as_object()
                .cloned()
                .unwrap(),
        )
        .await
        .expect("add_tool runs");
    assert_ne!(result["isError"], serde_json::json!(true), "{result}");

    eventually("the new tool is catalogued", || {
        live.read(|c, _| c.tool("changing.freshTool").is_some())
    })
    .await;
    let found = live.read(
        |_, index| match index.search("fresh tool added at run time", None) {
            Ranking::Ranked(hits) => hits.first().map(|h| h.address.to_string()),
            Ranking::NoTerms => None,
        },
    );
    assert_eq!(found.as_deref(), Some("changing.freshTool"));
    let cached = std::fs::read_to_string(cache_dir.join("changing.json")).expect("cache written");
    assert!(cached.contains("fresh_tool"), "{cached}");
    sources.shutdown().await;
}
