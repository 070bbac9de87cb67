//! Nothing an upstream writes reaches a person's terminal raw: a real server
//! (tests/peers/escapes_server.py) puts terminal escapes, carriage returns, C1 controls and
//! right-to-left overrides in its descriptions, results and errors, and every command that shows
//! them (`search`, `describe`, `call`, `exec`, and the error lines on stderr) prints them as
//! visible `\u` escapes instead, and so do the hub's `search` and `describe` answers, which
//! clients show on a terminal too.

use serde_json::json;

use crate::common::repo;
use crate::raw::Raw;
use crate::support::{Home, Run};

fn escapes_home() -> Home {
    let home = Home::new();
    home.write_config(&format!(
        "[sources.escapes]\ncommand = {}\nargs = [{}]\n",
        json!(repo().join(".venv/bin/python").display().to_string()),
        json!(
            repo()
                .join("tests/peers/escapes_server.py")
                .display()
                .to_string()
        ),
    ));
    home
}

/// Characters a terminal obeys, that reorder text, or that it draws as nothing; written out
/// here rather than taken from the code under test.
fn drives_a_terminal(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200B}'..='\u{200F}'
            | '\u{E0000}'..='\u{E007F}' | '\u{FE00}'..='\u{FE0F}' | '\u{3164}')
}

/// Panics unless neither stream of `run` holds a character that drives a terminal.
fn assert_inert(what: &str, run: &Run) {
    for (stream, text) in [("stdout", &run.stdout), ("stderr", &run.stderr)] {
        if let Some(c) = text.chars().find(|&c| drives_a_terminal(c)) {
            panic!("`{what}` printed {c:?} raw on {stream}:\n{text:?}");
        }
    }
}

#[test]
fn search_and_describe_show_a_hostile_description_as_visible_escapes() {
    let home = escapes_home();
    let search = home.run(&["search", "files of a folder"]).ok();
    assert_inert("search", &search);
    assert!(
        search
            .stdout
            .contains(r"List the files\u001b[2J\u001b[H\u001b]0;pwned\u0007"),
        "{}",
        search.stdout
    );

    let wipe = home.run(&["search", "delete everything"]).ok();
    assert_inert("search", &wipe);
    // The mark a person relies on is still there, and the line that tried to erase it is
    // shown for what it is.
    assert!(
        wipe.stdout.contains("[asks]") && wipe.stdout.contains(r"\u000d\u001b[1A\u001b[2K"),
        "{}",
        wipe.stdout
    );

    let describe = home
        .run(&["describe", "escapes.files", "escapes.wipe"])
        .ok();
    assert_inert("describe", &describe);
    assert!(
        describe
            .stdout
            .contains(r"The folder\u000d\u001b[1A\u001b[2Kto list")
            && describe.stdout.contains(r"\u009b31m")
            && describe
                .stdout
                .contains(r"\u202eexe.txt\udb40\udc20\udb40\udc66"),
        "{}",
        describe.stdout
    );
}

#[test]
fn call_and_exec_show_a_hostile_result_and_error_as_visible_escapes() {
    let home = escapes_home();
    let call = home
        .run(&["call", "escapes.shout", r#"{"text":"hello"}"#])
        .ok();
    assert_inert("call", &call);
    // Structured content, printed as JSON: serde writes the carriage return as `\r`.
    assert!(
        call.stdout.contains(r"\u001b[2J\u001b[Hhello\r\u001b[1A"),
        "{}",
        call.stdout
    );

    let failed = home.run(&["call", "escapes.fail", "{}"]).fails();
    assert_inert("call (failing)", &failed);
    assert!(
        failed
            .stderr
            .contains(r"denied\u000d\u001b[1A\u001b[2Kall good"),
        "{}",
        failed.stderr
    );

    let script = r#"
        // The Python SDK answers a `str` tool with structured content `{ result }`.
        const { result: text } = await escapes.shout({ text: "hello" });
        console.log(text);
        return text;
    "#;
    let exec = Run::with_stdin(&mut home.command(&["exec", "-"]), script).ok();
    assert_inert("exec", &exec);
    assert!(
        exec.stdout.contains(r"hello\u000d\u001b[1A"),
        "{}",
        exec.stdout
    );
    assert!(exec.stderr.contains(r"log: \u001b[2J"), "{}", exec.stderr);

    let json = Run::with_stdin(&mut home.command(&["exec", "-", "--json"]), script).ok();
    assert_inert("exec --json", &json);
    let envelope: serde_json::Value =
        serde_json::from_str(&json.stdout).expect("the envelope is still JSON");
    // Escaped for the terminal, the JSON still means what the upstream sent.
    assert_eq!(
        envelope["result"],
        json!("\u{1b}[2J\u{1b}[Hhello\r\u{1b}[1A\u{1b}[2K\u{1b}]0;pwned\u{7}\u{9b}31m\u{202e}")
    );

    let thrown =
        Run::with_stdin(&mut home.command(&["exec", "-"]), "await escapes.fail({});").fails();
    assert_inert("exec (failing)", &thrown);
    assert!(thrown.stderr.contains(r"denied\u000d"), "{}", thrown.stderr);
}

#[test]
fn the_hub_answers_search_and_describe_with_visible_escapes() {
    let home = escapes_home();
    let mut hub = Raw::hub(&home);
    hub.initialize("2025-11-25");
    let text_of = |answer: &serde_json::Value| {
        answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    let mut search = String::new();
    // The source connects in the background; search answers without it until then.
    for id in 1..200 {
        search = text_of(&hub.call(id, "search", json!({ "query": "files of a folder" })));
        if search.contains("escapes.files") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let describe = text_of(&hub.call(
        300,
        "describe",
        json!({ "targets": ["escapes.files", "escapes.wipe"] }),
    ));
    hub.close();
    for (what, text) in [("search", &search), ("describe", &describe)] {
        if let Some(c) = text.chars().find(|&c| drives_a_terminal(c)) {
            panic!("the hub's `{what}` answered with {c:?} raw:\n{text:?}");
        }
    }
    assert!(search.contains(r"List the files\u001b[2J"), "{search}");
    assert!(
        describe.contains(r"\u202eexe.txt\udb40\udc20\udb40\udc66"),
        "{describe}"
    );
}
