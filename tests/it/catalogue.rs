//! `search`, `describe` and `source list` through the real binary, against real servers:
//! server-everything over stdio and over Streamable HTTP, and the Python `mcp-server-time`.

use std::time::Duration;

use serde_json::Value;

use crate::common::{
    HttpEverything, LocalServer, counted_source, everything_js, free_port, mcp_server_time,
    python_peer, starts,
};
use crate::support::Home;

fn toml_string(s: &str) -> String {
    serde_json::to_string(s).expect("string")
}

fn three_real_sources(home: &Home, http_url: &str) {
    home.write_config(&format!(
        "[sources.everything]\ncommand = \"node\"\nargs = [{}, \"stdio\"]\n\n[sources.web]\nurl = {}\n\n[sources.time]\ncommand = {}\n",
        toml_string(&everything_js()),
        toml_string(http_url),
        toml_string(&mcp_server_time()),
    ));
}

#[test]
fn a_new_user_lists_searches_and_describes_real_servers() {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let http = runtime.block_on(HttpEverything::start());
    let home = Home::new();
    three_real_sources(&home, &http.url);

    let list = home.run(&["source", "list", "--json"]).ok();
    let rows: Value = serde_json::from_str(&list.stdout).expect("source list --json is JSON");
    let rows = rows.as_array().expect("an array");
    assert_eq!(rows.len(), 3);
    for row in rows {
        assert_eq!(row["status"], "ready", "{row}");
        assert!(row["toolCount"].as_u64().unwrap_or(0) >= 2, "{row}");
    }
    let web = rows.iter().find(|r| r["name"] == "web").expect("web row");
    assert_eq!(web["transport"], "http");

    let search = home.run(&["search", "echo a message"]).ok();
    let lines: Vec<&str> = search.stdout.lines().collect();
    assert!(
        lines[0] == "everything" || lines[0] == "web",
        "a namespace header first:\n{}",
        search.stdout
    );
    let ns = lines[0];
    assert_eq!(
        lines[1],
        format!("  {ns}.echo(input: {{ message: string }}): Promise<unknown>"),
        "{}",
        search.stdout
    );
    assert_eq!(lines[2], "    Echoes back the input string");

    let time = home
        .run(&["search", "get the current time in a timezone"])
        .ok();
    assert!(
        time.stdout
            .starts_with("time\n  time.getCurrentTime(input: { timezone: string })"),
        "{}",
        time.stdout
    );

    let listing = home.run(&["search", "", "--namespace", "time"]).ok();
    assert!(
        listing.stdout.contains("time.convertTime(")
            && listing.stdout.contains("time.getCurrentTime("),
        "{}",
        listing.stdout
    );

    let describe = home.run(&["describe", "everything.echo"]).ok();
    assert!(
        describe.stdout.starts_with("declare const everything: {\n"),
        "{}",
        describe.stdout
    );
    assert!(describe.stdout.contains("\techo(input: {\n\t\t/** Message to echo */\n\t\tmessage: string;\n\t}, options?: CallOptions): Promise<unknown>;"), "{}", describe.stdout);

    let whole = home.run(&["describe", "web", "time"]).ok();
    assert!(
        whole.stdout.contains("declare const web: {")
            && whole.stdout.contains("declare const time: {"),
        "{}",
        whole.stdout
    );
}

#[test]
fn search_and_describe_errors_say_what_to_do() {
    let home = Home::new();
    let none = home.run(&["search", "echo"]).fails();
    assert!(
        none.stderr.contains("no sources are configured") && none.stderr.contains("source add"),
        "{}",
        none.stderr
    );

    home.write_config(&format!(
        "[sources.time]\ncommand = {}\n",
        toml_string(&mcp_server_time())
    ));
    let empty = home.run(&["search", ""]).fails();
    assert!(
        empty.stderr.contains("the query is empty") && empty.stderr.contains("time (2 tools)"),
        "{}",
        empty.stderr
    );
    let stop_words = home.run(&["search", "the of a"]).fails();
    assert!(
        stop_words.stderr.contains("no words to search by"),
        "{}",
        stop_words.stderr
    );
    let unknown_ns = home.run(&["search", "time", "--namespace", "tiem"]).fails();
    assert!(
        unknown_ns.stderr.contains("no source named `tiem`"),
        "{}",
        unknown_ns.stderr
    );
    // Like grep: no match exits 1, with nothing on stdout and the reason on stderr.
    let nonsense = home.run(&["search", "zzqxv flurble"]).fails();
    assert!(nonsense.stdout.is_empty(), "{}", nonsense.stdout);
    assert!(
        nonsense
            .stderr
            .starts_with("No tools match \"zzqxv flurble\""),
        "{}",
        nonsense.stderr
    );
    let unknown = home.run(&["describe", "time.getCurentTime"]).fails();
    assert!(
        unknown.stderr.contains("time.getCurrentTime"),
        "the closest address is named: {}",
        unknown.stderr
    );
    let too_many: Vec<String> = (0..11).map(|i| format!("time.t{i}")).collect();
    let mut args = vec!["describe"];
    args.extend(too_many.iter().map(String::as_str));
    let run = home.run(&args);
    assert_eq!(
        run.code, 2,
        "clap refuses more than 10 targets: {}",
        run.stderr
    );
}

#[test]
fn policy_marks_asks_and_hides_denied_tools() {
    let home = Home::new();
    home.write_config(&format!(
        "[sources.everything]\ncommand = \"node\"\nargs = [{}, \"stdio\"]\n\n[[policy.rules]]\nmatch = \"everything.getSum\"\naction = \"deny\"\n\n[[policy.rules]]\nmatch = \"everything.echo\"\naction = \"ask\"\n",
        toml_string(&everything_js())
    ));
    let run = home
        .run(&["search", "echo a message or add two numbers"])
        .ok();
    assert!(
        run.stdout
            .contains("everything.echo(input: { message: string }): Promise<unknown>   [asks]"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("everything.getSum"), "{}", run.stdout);
    assert!(
        run.stdout.contains("1 tool hidden by policy."),
        "{}",
        run.stdout
    );
    let hidden = home.run(&["describe", "everything.getSum"]).fails();
    assert!(
        hidden.stderr.contains("unknown target"),
        "{}",
        hidden.stderr
    );
}

#[test]
fn cached_listings_answer_without_the_server_and_say_when_they_are_old() {
    let home = Home::new();
    // A wrapper we can break later without changing the config (which would invalidate the cache).
    let wrapper = home.path().join("time-server.sh");
    std::fs::write(
        &wrapper,
        format!("#!/bin/sh\nexec {} \"$@\"\n", mcp_server_time()),
    )
    .unwrap();
    make_executable(&wrapper);
    home.write_config(&format!(
        "[sources.time]\ncommand = {}\n",
        toml_string(&wrapper.display().to_string())
    ));
    home.run(&["search", "current time"]).ok();
    assert!(home.path().join("data/catalog/time.json").exists());

    std::fs::write(
        &wrapper,
        "#!/bin/sh\necho 'time server is broken' >&2\nexit 3\n",
    )
    .unwrap();
    let cached = home.run(&["search", "current time"]).ok();
    assert!(
        cached.stdout.contains("time.getCurrentTime("),
        "answered from the cache: {}",
        cached.stdout
    );

    let refreshed = home.run(&["search", "current time", "--refresh"]).ok();
    assert!(
        refreshed.stdout.contains("time.getCurrentTime("),
        "the old listing is still used: {}",
        refreshed.stdout
    );
    // Notes about sources go to stderr, apart from the results.
    assert!(
        refreshed.stderr.contains("`time` did not answer")
            && refreshed.stderr.contains("older listing")
            && !refreshed.stdout.contains("did not answer"),
        "{}",
        refreshed.stderr
    );
    assert!(
        refreshed.stderr.contains("time server is broken"),
        "the server's own words are shown: {}",
        refreshed.stderr
    );
}

#[test]
fn source_list_shows_each_broken_source_beside_a_working_one() {
    let home = Home::new();
    home.write_config(&format!(
        "[sources.good]\ncommand = {}\n\n[sources.hangs]\ncommand = \"sleep\"\nargs = [\"600\"]\nconnect_timeout_secs = 3\n\n[sources.exits]\ncommand = \"sh\"\nargs = [\"-c\", \"echo 'cannot find config file' >&2; exit 2\"]\n\n[sources.garbage]\ncommand = \"sh\"\nargs = [\"-c\", \"while true; do echo 'this is not json'; sleep 0.1; done\"]\nconnect_timeout_secs = 3\n\n[sources.unreachable]\nurl = \"http://127.0.0.1:9/mcp\"\nconnect_timeout_secs = 3\n",
        toml_string(&mcp_server_time())
    ));
    let run = home.run(&["source", "list", "--json"]).ok();
    let rows: Value = serde_json::from_str(&run.stdout).expect("JSON");
    let by_name = |name: &str| {
        rows.as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .cloned()
            .unwrap()
    };
    assert_eq!(by_name("good")["status"], "ready");
    for name in ["hangs", "exits", "garbage", "unreachable"] {
        let row = by_name(name);
        assert_eq!(row["status"], "failed", "{row}");
        assert!(
            row["error"].as_str().is_some_and(|e| !e.is_empty()),
            "{row}"
        );
    }
    assert!(
        by_name("exits")["error"]
            .as_str()
            .unwrap()
            .contains("cannot find config file"),
        "{}",
        by_name("exits")
    );
    let table = home.run(&["source", "list"]).ok();
    assert!(
        table.stdout.contains("good") && table.stdout.contains("ready"),
        "{}",
        table.stdout
    );
    assert!(table.stdout.contains("\nunreachable: "), "{}", table.stdout);
}

fn make_executable(path: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    let mut permissions = std::fs::metadata(path).unwrap().permissions();
    permissions.set_mode(0o755);
    std::fs::set_permissions(path, permissions).unwrap();
}

#[test]
fn search_answers_from_the_cache_without_starting_a_cached_source() {
    let home = Home::new();
    let marker = home.path().join("everything-started");
    home.write_config(&counted_source(
        "everything",
        &marker,
        &format!("exec node {} stdio", toml_string(&everything_js())),
        "",
    ));
    home.run(&["source", "test", "everything"]).ok();
    assert_eq!(starts(&marker), 1);
    let found = home.run(&["search", "echo"]).ok();
    assert!(
        found.stdout.contains("everything.echo("),
        "{}",
        found.stdout
    );
    home.run(&["describe", "everything.echo"]).ok();
    assert_eq!(
        starts(&marker),
        1,
        "search or describe started a cached source"
    );
}

#[test]
fn a_source_that_never_answers_is_not_waited_for_again_until_tried() {
    let home = Home::new();
    let marker = home.path().join("hangs-started");
    home.write_config(&format!(
        "[sources.everything]\ncommand = \"node\"\nargs = [{}, \"stdio\"]\n\n{}",
        toml_string(&everything_js()),
        counted_source(
            "hangs",
            &marker,
            "exec sleep 600",
            "connect_timeout_secs = 2"
        )
    ));
    let first = home.run(&["search", "echo"]).ok();
    assert!(
        first.stdout.contains("everything.echo("),
        "{}",
        first.stdout
    );
    assert!(
        first.stderr.contains("Not searched: `hangs` (")
            && first.stderr.contains("did not answer within 2 s")
            && first.stderr.contains("says why")
            && first.stderr.contains(
                "To see everything it printed, run its command in a terminal: sh -c \"echo started"
            ),
        "{}",
        first.stderr
    );
    assert_eq!(starts(&marker), 1);

    // Remembered: the next search, in another process, does not start it again.
    let second = home.run(&["search", "echo"]).ok();
    assert!(
        second.stderr.contains("Not searched: `hangs` (failed ")
            && second.stderr.contains(" s ago: "),
        "{}",
        second.stderr
    );
    assert_eq!(
        starts(&marker),
        1,
        "a source that just failed was started again"
    );
    let listed = home.run(&["source", "list", "--json"]).ok();
    let rows: Value = serde_json::from_str(&listed.stdout).expect("JSON");
    let hangs = rows
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["name"] == "hangs"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(hangs["status"], "failed", "{hangs}");
    assert!(
        hangs["error"]
            .as_str()
            .is_some_and(|e| e.starts_with("failed ") && e.contains("source test hangs")),
        "{hangs}"
    );
    assert_eq!(starts(&marker), 1, "source list started it again");

    // `source test` and `--refresh` try it again at once.
    home.run(&["source", "test", "hangs"]).fails();
    assert_eq!(starts(&marker), 2);
    home.run(&["search", "echo", "--refresh"]).ok();
    assert_eq!(starts(&marker), 3);
}

/// A source that outlasts the first listing's wait (its connect timeout is longer) is remembered
/// as failed too: otherwise every later search would wait for it again.
#[test]
fn a_source_slower_than_the_listing_wait_is_not_waited_for_again() {
    let home = Home::new();
    let marker = home.path().join("slow-started");
    home.write_config(&format!(
        "[sources.everything]\ncommand = \"node\"\nargs = [{}, \"stdio\"]\n\n{}",
        toml_string(&everything_js()),
        counted_source(
            "slow",
            &marker,
            "exec sleep 600",
            "connect_timeout_secs = 120"
        )
    ));
    let first = home.run(&["search", "echo"]).ok();
    assert!(
        first.stderr.contains("Not searched: `slow` (")
            && first.stderr.contains("did not answer within 20 s"),
        "{}",
        first.stderr
    );
    let second = home.run(&["search", "echo"]).ok();
    assert!(
        second.stderr.contains("Not searched: `slow` (failed "),
        "{}",
        second.stderr
    );
    assert_eq!(starts(&marker), 1, "the second search waited for it again");
}

/// A server whose tools have hostile schemas (tests/peers/hostile_schema_server.py): one nests
/// 180 levels, past serde_json's decoding limit, which used to drop the whole tool list and leave
/// only a timeout; one branches combinatorially, which `describe` used to render in full whatever
/// the budget.
#[test]
fn hostile_schemas_neither_hide_a_servers_tools_nor_break_the_budget() {
    let home = Home::new().with_env("DEEP", "90");
    home.write_config(&format!(
        "[sources.hostile]\ncommand = {}\nargs = [{}]\n",
        toml_string(
            &crate::common::repo()
                .join(".venv/bin/python")
                .display()
                .to_string()
        ),
        toml_string(
            &crate::common::repo()
                .join("tests/peers/hostile_schema_server.py")
                .display()
                .to_string()
        ),
    ));
    let test = home.run(&["source", "test", "hostile"]).ok();
    for tool in ["hostile.branches", "hostile.deep", "hostile.echo"] {
        assert!(
            test.stdout.contains(tool),
            "{tool} missing:\n{}",
            test.stdout
        );
    }
    for budget in ["200", "2500"] {
        let described = home
            .run(&["describe", "hostile.branches", "--budget", budget])
            .ok();
        let tokens = capabilities::token_count::count(&described.stdout);
        assert!(
            tokens <= budget.parse().unwrap_or(0),
            "{tokens} tokens at a budget of {budget}"
        );
        assert!(
            described.stdout.contains("branches("),
            "{}",
            described.stdout
        );
    }
    let deep = home.run(&["describe", "hostile.deep"]).ok();
    assert!(deep.stdout.contains("nests deeper than"), "{}", deep.stdout);
}

/// The same server over Streamable HTTP: rmcp's HTTP client decodes each reply itself, before
/// the hub can cut it, and the 180-level tool takes the whole listing with it. The user is told
/// that in words, with what to do, rather than shown a parse error and 500 bytes of JSON.
#[test]
fn a_listing_too_deep_over_http_is_explained_with_what_to_do() {
    let port = free_port();
    let mut command = python_peer("hostile_schema_server.py");
    command.arg(port.to_string()).env("DEEP", "90");
    let server = LocalServer::start(command, port, Duration::from_secs(30), "the hostile server");
    let home = Home::new();
    home.write_config(&format!(
        "[sources.hostile]\nurl = \"{}/mcp\"\n",
        server.base
    ));
    let test = home.run(&["source", "test", "hostile"]);
    drop(server);
    let test = test.fails();
    assert!(
        test.stderr.contains("nests deeper than the 128 levels"),
        "{}",
        test.stderr
    );
    assert!(test.stderr.contains("stdio source"), "{}", test.stderr);
    assert!(!test.stderr.contains("\"jsonrpc\""), "{}", test.stderr);
}
