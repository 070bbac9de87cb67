//! `capabilities policy show|set|explain` against a real server's cached listing, and a rule
//! that matches nothing being reported.

use crate::common::mcp_server_time;
use crate::support::Home;

/// `mcp-server-time` as the only source. A Python server can take well over the default 30 s
/// to start on a loaded 2-core machine; the tests are about policy, not start-up time.
fn time_source(home: &Home) {
    home.write_config(&format!(
        "[sources.time]\ncommand = {}\nconnect_timeout_secs = 180\n",
        serde_json::to_string(&mcp_server_time()).unwrap()
    ));
}

#[test]
fn set_show_and_explain_a_policy() {
    let home = Home::new();
    time_source(&home);
    home.run(&["source", "test", "time"]).ok();

    let before = home.run(&["policy", "explain", "time.convertTime"]).ok();
    assert!(
        before
            .stdout
            .starts_with("time.convertTime through connection `default`: "),
        "{}",
        before.stdout
    );

    home.run(&["policy", "set", "time.convert*", "deny"]).ok();
    let explained = home.run(&["policy", "explain", "time.convertTime"]).ok();
    assert!(
        explained.stdout.contains(": deny") && explained.stdout.contains("rule `time.convert*`"),
        "{}",
        explained.stdout
    );

    home.run(&["policy", "set", "time.convert*", "allow"]).ok();
    let config = std::fs::read_to_string(home.config_path()).unwrap();
    assert_eq!(
        config.matches("time.convert*").count(),
        1,
        "setting the same pattern again changes it:\n{config}"
    );

    let typo = home
        .run(&["policy", "set", "time.convertTiem", "deny"])
        .ok();
    assert!(
        typo.stdout
            .contains("warning: `time.convertTiem` matches no tool"),
        "{}",
        typo.stdout
    );
    let shown = home.run(&["policy", "show"]).ok();
    assert!(
        shown.stdout.contains("allow  time.convert*"),
        "{}",
        shown.stdout
    );
    assert!(
        shown
            .stdout
            .contains("warning: rule `time.convertTiem` matches no tool"),
        "{}",
        shown.stdout
    );

    let visible = home.run(&["search", "convert time between timezones"]).ok();
    assert!(
        visible.stdout.contains("time.convertTime("),
        "{}",
        visible.stdout
    );
}

#[test]
fn policy_errors_say_what_to_do() {
    let home = Home::new();
    time_source(&home);
    home.run(&["source", "test", "time"]).ok();
    let unknown = home
        .run(&["policy", "explain", "time.getCurentTime"])
        .fails();
    assert!(
        unknown.stderr.contains("closest: time.getCurrentTime"),
        "{}",
        unknown.stderr
    );
    let bad_connection = home
        .run(&[
            "policy",
            "explain",
            "time.getCurrentTime",
            "--connection",
            "work",
        ])
        .fails();
    assert!(
        bad_connection.stderr.contains("no connection `work`"),
        "{}",
        bad_connection.stderr
    );
    let bad_source = home.run(&["policy", "set", "gitlab.*", "deny"]).fails();
    assert!(
        bad_source.stderr.contains("source `gitlab`"),
        "{}",
        bad_source.stderr
    );
    let bad_action = home.run(&["policy", "set", "time.*", "maybe"]);
    assert_eq!(bad_action.code, 2, "{}", bad_action.stderr);
    let before = std::fs::read_to_string(home.config_path()).unwrap();
    assert!(
        !before.contains("gitlab"),
        "a refused rule is not written:\n{before}"
    );
}

/// Sixteen `policy set` processes at once, each adding a rule of its own: every rule is in the
/// file afterwards. Without a lock around read-change-write, the last writer wins and the others'
/// rules (a deny among them) are gone while each said it wrote its own.
#[test]
fn rules_set_at_once_by_several_processes_all_land() {
    let home = Home::new();
    home.write_config("[sources.x]\ncommand = \"true\"\n");
    let children: Vec<_> = (0..16)
        .map(|i| {
            home.command(&["policy", "set", &format!("x.tool{i}"), "deny"])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .expect("capabilities runs")
        })
        .collect();
    for mut child in children {
        assert!(child.wait().expect("policy set ends").success());
    }
    let config = std::fs::read_to_string(home.config_path()).unwrap();
    for i in 0..16 {
        assert!(
            config.contains(&format!("\"x.tool{i}\"")),
            "rule {i} is missing:\n{config}"
        );
    }
}
