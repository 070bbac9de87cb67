//! `capabilities exec` against real servers: several tools of two sources in one run, structured
//! results, tool failures a script can catch, the journal in the SQLite store, and the errors a
//! user meets.

use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{
    LocalServer, counted_source, everything_js, free_port, mcp_server_time, python_peer, repo,
    starts,
};
use crate::support::{Home, Run};

fn two_sources(home: &Home, extra: &str) {
    home.write_config(&format!(
        "[sources.everything]\ncommand = \"node\"\nargs = [{}, \"stdio\"]\n\n[sources.time]\ncommand = {}\n{extra}",
        serde_json::to_string(&everything_js()).unwrap(),
        serde_json::to_string(&mcp_server_time()).unwrap(),
    ));
}

fn exec_stdin(home: &Home, code: &str, extra_args: &[&str]) -> Run {
    let mut args = vec!["exec", "-"];
    args.extend_from_slice(extra_args);
    crate::approvals::exec(home, &args, code)
}

fn envelope(run: &Run) -> Value {
    serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("not an envelope ({e}):\n{}\n{}", run.stdout, run.stderr))
}

#[test]
fn the_readme_example_runs_two_sources_in_one_script() {
    let home = Home::new();
    let output = home
        .command(&[
            "--config",
            "config-examples/multi-source.toml",
            "exec",
            "--json",
            "config-examples/multi-source.js",
        ])
        .current_dir(repo())
        .output()
        .expect("run");
    let run = Run::from(output).ok();
    let envelope = envelope(&run);
    assert_eq!(envelope["status"], "completed", "{envelope}");
    let result = &envelope["result"];
    assert!(
        result["tokyo"]
            .as_str()
            .is_some_and(|t| t.ends_with("+09:00")),
        "{result}"
    );
    assert_eq!(result["echo"], "Echo: hello from a sandboxed script");
    assert_eq!(result["sum"], "The sum of 19 and 23 is 42.");
    assert_eq!(result["failure"]["name"], "ToolError");
    assert_eq!(result["failure"]["address"], "time.getCurrentTime");
    let calls: Vec<(&str, bool)> = envelope["calls"]
        .as_array()
        .expect("calls")
        .iter()
        .map(|c| {
            (
                c["address"].as_str().unwrap_or(""),
                c["ok"].as_bool().unwrap_or(true),
            )
        })
        .collect();
    assert_eq!(
        calls,
        vec![
            ("time.getCurrentTime", true),
            ("time.getCurrentTime", true),
            ("everything.echo", true),
            ("everything.getSum", true),
            ("time.getCurrentTime", false),
        ]
    );
    assert_eq!(
        envelope["logs"][0]
            .as_str()
            .map(|l| l.starts_with("Tokyo is ")),
        Some(true),
        "{envelope}"
    );

    // Every call is in the journal, in order, under the envelope's run id.
    let store = crate::support::store_of(&home);
    let run_id = envelope["runId"].as_str().expect("runId");
    let journal = crate::support::block_on(store.journal().entries(run_id)).expect("journal");
    let journaled: Vec<&str> = journal.iter().map(|e| e.address.as_str()).collect();
    assert_eq!(journaled, calls.iter().map(|(a, _)| *a).collect::<Vec<_>>());
    assert!(journal.iter().all(|e| e.call_digest.len() == 64));
    let stored = crate::support::block_on(store.runs().get(run_id))
        .expect("run")
        .expect("stored");
    assert_eq!(stored.status, "completed");
    assert!(stored.code.contains("Promise.all"));
}

#[test]
fn structured_results_and_images_come_back_as_values() {
    let home = Home::new();
    two_sources(&home, "");
    let code = r#"
        const weather = await everything.getStructuredContent({ location: "Chicago" });
        const image = await everything.getTinyImage({});
        return { temperature: typeof weather.temperature, conditions: weather.conditions, image };
    "#;
    let run = exec_stdin(&home, code, &["--json"]).ok();
    let envelope = envelope(&run);
    assert_eq!(envelope["status"], "completed", "{envelope}");
    assert_eq!(envelope["result"]["temperature"], "number", "{envelope}");
    assert!(envelope["result"]["conditions"].is_string(), "{envelope}");
    let image = &envelope["result"]["image"];
    assert!(
        image.to_string().contains("image/png"),
        "images are typed objects: {image}"
    );
}

#[test]
fn policy_decides_every_call() {
    let home = Home::new();
    two_sources(
        &home,
        "\n[[policy.rules]]\nmatch = \"everything.getSum\"\naction = \"deny\"\n\n[[policy.rules]]\nmatch = \"time.*\"\naction = \"ask\"\n",
    );
    // A denied tool is not one to the script (see the test below).
    let denied = exec_stdin(
        &home,
        "try { await everything['getSum']({ a: 1, b: 2 }); } catch (e) { return e.code; }",
        &["--json"],
    )
    .ok();
    assert_eq!(envelope(&denied)["result"], "unknown_tool");

    let asks = exec_stdin(
        &home,
        "await everything.echo({ message: 'first' }); return await time.getCurrentTime({ timezone: 'UTC' });",
        &[],
    );
    assert_eq!(asks.code, 3, "awaiting approval exits 3: {}", asks.stderr);
    assert!(
        asks.stderr.contains("is waiting") && asks.stderr.contains("time.getCurrentTime"),
        "{}",
        asks.stderr
    );
}

/// Regression (review 5, F1): a tool the policy denies was hidden from search, but a script saw
/// it among its source's keys, was offered it for a typo, and had its arguments checked before
/// the policy, so an invalid call quoted its signature.
#[test]
fn a_denied_tool_is_as_unknown_to_a_script_as_a_name_that_does_not_exist() {
    let home = Home::new();
    home.write_config(&format!(
        "[sources.everything]\ncommand = \"node\"\nargs = [{}, \"stdio\"]\n\n[policy]\ndefault = \"allow\"\n\n[[policy.rules]]\nmatch = \"everything.getSum\"\naction = \"deny\"\n",
        serde_json::to_string(&everything_js()).unwrap(),
    ));
    let run = exec_stdin(
        &home,
        r#"
        const attempt = (f) => {
          try { f(); return "no error"; }
          catch (e) { return { code: e.code, message: e.message, hint: e.hint ?? null }; }
        };
        return {
          listed: Object.keys(everything).includes("getSum"),
          echo: Object.keys(everything).includes("echo"),
          denied: attempt(() => everything["getSum"]({ a: "x" })),
          missing: attempt(() => everything["getSumz"]({ a: "x" })),
        };
        "#,
        &["--json"],
    )
    .ok();
    let result = &envelope(&run)["result"];
    assert_eq!(result["listed"], false, "{result}");
    assert_eq!(result["echo"], true, "{result}");
    // A denied tool and a missing one fail alike, and neither is offered the denied one.
    for (attempt, name) in [("denied", "getSum"), ("missing", "getSumz")] {
        assert_eq!(result[attempt]["code"], "unknown_tool", "{result}");
        assert_eq!(result[attempt]["hint"], Value::Null, "{result}");
        let message = result[attempt]["message"].as_str().unwrap_or_default();
        let address = format!("everything.{name} is not a tool; ");
        assert!(
            message.starts_with(&address) && !message[address.len()..].contains("getSum"),
            "{result}"
        );
    }

    // Checked before the run: a typo is not offered the denied tool, and the exact name fails
    // as a missing one, with the advice that covers both.
    for code in [
        "return await everything.getSumm({ a: 1, b: 2 })",
        "return await everything.getSum({ a: 'x' })",
    ] {
        let run = exec_stdin(&home, code, &["--json"]);
        assert_eq!(run.code, 1, "{}", run.stderr);
        let error = &envelope(&run)["error"];
        assert_eq!(error["code"], "unknown_tool", "{error}");
        let message = error["message"].as_str().unwrap_or_default();
        assert!(
            !message.contains("everything.getSum,")
                && !message.contains("everything.getSum?")
                && !message.contains("Call it as"),
            "{error}"
        );
        let hint = error["hint"].as_str().unwrap_or_default();
        assert!(hint.contains("the policy denies it"), "{error}");
    }
    // The person at the terminal still learns why from the policy.
    let explained = home.run(&["policy", "explain", "everything.getSum"]).ok();
    assert!(explained.stdout.contains(": deny"), "{}", explained.stdout);
}

#[test]
fn exec_errors_say_what_to_do() {
    let home = Home::new();
    two_sources(&home, "");
    let missing = home.run(&["exec", "no-such-script.js"]).fails();
    assert!(
        missing
            .stderr
            .contains("there is no script at `no-such-script.js`"),
        "{}",
        missing.stderr
    );

    let syntax = exec_stdin(&home, "const x = ;\nreturn x;", &[]).fails();
    assert!(
        syntax.stderr.contains("error[syntax_error]")
            && syntax.stderr.contains("line 1, column 11"),
        "{}",
        syntax.stderr
    );

    let unknown = exec_stdin(
        &home,
        "return await everything.ecoh({ message: 'x' });",
        &["--json"],
    );
    assert_eq!(unknown.code, 1);
    let unknown = envelope(&unknown);
    assert_eq!(unknown["error"]["code"], "unknown_tool", "{unknown}");
    assert!(
        unknown["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("everything.echo"),
        "{unknown}"
    );

    let bad_args = exec_stdin(
        &home,
        "return await everything.echo({ msg: 'x' });",
        &["--json"],
    );
    let bad_args = envelope(&bad_args);
    assert_eq!(bad_args["error"]["code"], "invalid_arguments", "{bad_args}");
    assert!(
        bad_args["error"]["hint"]
            .as_str()
            .unwrap_or("")
            .contains("message: string"),
        "the hint carries the signature: {bad_args}"
    );

    let budget = home.run(&["exec", "-", "--output-budget", "10"]);
    assert_eq!(budget.code, 2, "{}", budget.stderr);
}

/// A source whose command leaves `marker` behind when it starts, then never answers (`hang`)
/// or exits at once.
fn marking_source(name: &str, marker: &std::path::Path, hang: bool) -> String {
    let then = if hang { "exec sleep 600" } else { "exit 1" };
    counted_source(name, marker, then, "")
}

#[test]
fn a_script_that_names_no_source_starts_none() {
    let home = Home::new();
    let hanging = home.path().join("hanging-started");
    let broken = home.path().join("broken-started");
    home.write_config(&format!(
        "{}{}",
        marking_source("hanging", &hanging, true),
        marking_source("broken", &broken, false)
    ));
    let run = exec_stdin(&home, "return 1", &[]).ok();
    assert_eq!(run.stdout.trim(), "1", "{}", run.stderr);
    assert!(!hanging.exists(), "the hanging source was started");
    assert!(!broken.exists(), "the broken source was started");

    // Naming one starts that one only.
    exec_stdin(&home, "return typeof broken", &[]);
    assert!(broken.exists(), "a source the script names was not started");
    assert!(!hanging.exists(), "the hanging source was started");
}

#[test]
fn a_resumed_run_starts_only_the_sources_its_script_and_journal_name() {
    let home = Home::new();
    crate::approvals::counter_config(&home);
    let hanging = home.path().join("hanging-started");
    let config = std::fs::read_to_string(home.config_path()).expect("config");
    home.write_config(&format!(
        "{config}\n{}",
        marking_source("hanging", &hanging, true)
    ));
    let paused = exec_stdin(&home, crate::approvals::SCRIPT, &["--json"]);
    assert_eq!(paused.code, 3, "{}", paused.stderr);
    let run_id = envelope(&paused)["runId"]
        .as_str()
        .expect("runId")
        .to_string();
    home.run(&["hub", "approve", &run_id]).ok();
    let resumed = home.run(&["exec", "--resume", &run_id, "--json"]).ok();
    assert_eq!(
        envelope(&resumed)["status"],
        "completed",
        "{}",
        resumed.stdout
    );
    assert!(
        !hanging.exists(),
        "a source the run never names was started"
    );
}

#[test]
fn a_script_naming_a_source_that_just_failed_says_so_without_starting_it_again() {
    let home = Home::new();
    let broken = home.path().join("broken-started");
    home.write_config(&marking_source("broken", &broken, false));
    let first = exec_stdin(&home, "return await broken.anything()", &[]).fails();
    assert!(
        first.stderr.contains("could not connect"),
        "{}",
        first.stderr
    );
    assert_eq!(starts(&broken), 1);

    let second = exec_stdin(&home, "return await broken.anything()", &[]).fails();
    assert!(
        second.stderr.contains("could not connect: failed ")
            && second.stderr.contains("`capabilities source test broken`"),
        "{}",
        second.stderr
    );
    assert_eq!(
        starts(&broken),
        1,
        "a source that just failed was started again"
    );
}

/// A server that starts after rmcp's 10 s `server/discover` probe gave up (a loaded machine)
/// answers the probe late, after the `initialize` that followed it: the source is connected
/// again with `server/discover` alone, and the run completes.
#[test]
fn a_server_that_answers_the_discover_probe_late_still_connects() {
    let home = Home::new();
    let python = repo().join(".venv/bin/python");
    let server = repo().join("tests/peers/counter_server.py");
    let late = format!(
        "sleep 11 && exec '{}' '{}'",
        python.display(),
        server.display()
    );
    home.write_config(&format!(
        "[sources.late]\ncommand = \"sh\"\nargs = [\"-c\", {}]\nconnect_timeout_secs = 90\nenv = {{ COUNTER_FILE = {} }}\n",
        serde_json::to_string(&late).unwrap_or_default(),
        serde_json::to_string(&home.path().join("counts.json").display().to_string())
            .unwrap_or_default(),
    ));
    let run = Run::with_stdin(
        &mut home.command(&["exec", "-", "--json"]),
        "return await late.counts({});",
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let envelope: Value = serde_json::from_str(&run.stdout).unwrap_or_default();
    assert_eq!(envelope["status"], "completed", "{envelope}");
}

/// The same over Streamable HTTP: a server (the Python SDK's, its first probe held 11 s by
/// tests/peers/late_http_server.py) answers rmcp's probe after the `initialize` that followed
/// it, and is asked again with `server/discover` alone on a fresh transport.
#[test]
fn an_http_server_that_answers_the_discover_probe_late_still_connects() {
    let port = free_port();
    let mut command = python_peer("late_http_server.py");
    command.args([port.to_string().as_str(), "11"]);
    let server = LocalServer::start(command, port, Duration::from_secs(30), "the late server");
    let home = Home::new();
    home.write_config(&format!(
        "[sources.late]\nurl = \"{}/mcp\"\nconnect_timeout_secs = 90\n",
        server.base
    ));
    let run = Run::with_stdin(
        &mut home.command(&["exec", "-", "--json"]),
        "return await late.shout({ text: 'hi' });",
    );
    drop(server);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let envelope: Value = serde_json::from_str(&run.stdout).unwrap_or_default();
    assert_eq!(envelope["status"], "completed", "{envelope}");
    assert_eq!(envelope["result"]["result"], "HI", "{envelope}");
}

/// `capabilities ARGS…` of `home` on a terminal of its own (`script` gives it one), with its
/// standard input written by the test and its output read as it comes.
pub(crate) struct OnTerminal {
    child: std::process::Child,
    output: std::sync::mpsc::Receiver<Vec<u8>>,
    seen: String,
}

impl OnTerminal {
    pub(crate) fn start(home: &Home, args: &[&str]) -> OnTerminal {
        OnTerminal::start_in(home, args, str::to_string)
    }

    /// [`OnTerminal::start`] with the command placed in the shell line `line` makes of it.
    pub(crate) fn start_in(
        home: &Home,
        args: &[&str],
        line: impl FnOnce(&str) -> String,
    ) -> OnTerminal {
        let inner = home.command(args);
        let command_line = std::iter::once(inner.get_program())
            .chain(inner.get_args())
            .map(|word| format!("'{}'", word.to_string_lossy()))
            .collect::<Vec<_>>()
            .join(" ");
        let line = line(&command_line);
        let mut command = std::process::Command::new("script");
        command.args(["-qec", &line, "/dev/null"]);
        for (name, value) in inner.get_envs() {
            match value {
                Some(value) => command.env(name, value),
                None => command.env_remove(name),
            };
        }
        let mut child = command
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("run script");
        let mut stdout = child.stdout.take().expect("stdout");
        let (send, output) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            while let Ok(n @ 1..) = std::io::Read::read(&mut stdout, &mut buffer) {
                if send.send(buffer[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        OnTerminal {
            child,
            output,
            seen: String::new(),
        }
    }

    /// Reads until the terminal shows `text` (panics with what it showed after a minute).
    pub(crate) fn wait_for(&mut self, text: &str) {
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while !self.seen.contains(text) {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.output.recv_timeout(left) {
                Ok(bytes) => self.seen.push_str(&String::from_utf8_lossy(&bytes)),
                Err(_) => panic!("the terminal never showed {text:?}:\n{}", self.seen),
            }
        }
    }

    pub(crate) fn type_keys(&mut self, keys: &str) {
        let stdin = self.child.stdin.as_mut().expect("stdin");
        std::io::Write::write_all(stdin, keys.as_bytes()).expect("type");
        std::io::Write::flush(stdin).expect("type");
    }

    /// The exit status once the command ends (panics if it has not within a minute), and all
    /// the terminal showed.
    pub(crate) fn finish(mut self) -> (Option<i32>, String) {
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                break status;
            }
            if std::time::Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("the command did not end:\n{}", self.seen);
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        while let Ok(bytes) = self.output.recv_timeout(Duration::from_secs(5)) {
            self.seen.push_str(&String::from_utf8_lossy(&bytes));
        }
        (status.code(), self.seen)
    }
}

#[test]
fn on_a_terminal_exec_asks_inline_and_ctrl_c_at_a_question_stops_at_once() {
    let home = Home::new();
    home.write_config(&format!(
        "[sources.everything]\ncommand = \"node\"\nargs = [{}, \"stdio\"]\n\n[[policy.rules]]\nmatch = \"everything.echo\"\naction = \"ask\"\n",
        serde_json::to_string(&everything_js()).unwrap(),
    ));
    let script = home.path().join("echo.js");
    std::fs::write(&script, "return await everything.echo({ message: 'hi' })").unwrap();
    let script = script.display().to_string();
    const PROMPT: &str = "[q] stop asking: ";

    // Answered at the prompt, the run goes on in the same process.
    let mut allowed = OnTerminal::start(&home, &["exec", &script]);
    allowed.wait_for(PROMPT);
    allowed.type_keys("a\n");
    let (status, shown) = allowed.finish();
    assert_eq!(status, Some(0), "{shown}");
    assert!(shown.contains("Echo: hi"), "{shown}");

    // Ctrl-C at the prompt stops at once (the read does not hold the process until Enter),
    // decides nothing, and says how to go on; the run then resumes once approved.
    let mut stopped = OnTerminal::start(&home, &["exec", &script]);
    stopped.wait_for(PROMPT);
    stopped.type_keys("\u{3}");
    let (status, shown) = stopped.finish();
    assert_eq!(status, Some(130), "{shown}");
    let note = shown
        .lines()
        .find(|line| line.starts_with("Stopped; run "))
        .unwrap_or_else(|| panic!("no note of the waiting run:\n{shown}"));
    let run_id = note["Stopped; run ".len()..]
        .split_whitespace()
        .next()
        .expect("a run id");
    assert!(
        note.contains(&format!("capabilities hub approve {run_id}"))
            && note.contains(&format!("capabilities exec --resume {run_id}")),
        "{note}"
    );
    // So does Ctrl-C at any other question (here: whether to delete every run), deleting
    // nothing.
    let mut clearing = OnTerminal::start(&home, &["hub", "runs", "--clear"]);
    clearing.wait_for("[y/N] ");
    clearing.type_keys("\u{3}");
    let (status, shown) = clearing.finish();
    assert_eq!(status, Some(130), "{shown}");
    let runs = home.run(&["hub", "runs", "--json"]).ok();
    let listed: Value = serde_json::from_str(&runs.stdout).expect("runs as JSON");
    let waiting = listed
        .as_array()
        .and_then(|runs| runs.iter().find(|r| r["runId"] == run_id))
        .unwrap_or_else(|| panic!("{run_id} is not listed: {listed}"));
    assert_eq!(waiting["status"], "awaiting_approval", "{waiting}");
    home.run(&["hub", "approve", run_id]).ok();
    let resumed = home.run(&["exec", "--resume", run_id, "--json"]).ok();
    assert_eq!(
        envelope(&resumed)["result"],
        "Echo: hi",
        "{}",
        resumed.stdout
    );
}

/// What a script reads of local time; every value is what UTC gives, wherever the host is.
const LOCAL_TIME: &str = r#"
    const seen = {
        offset: new Date(0).getTimezoneOffset(),
        hours: new Date(0).getHours(),
        text: new Date(0).toString(),
        components: new Date(2024, 0, 15, 10, 30).getTime(),
        parsed: Date.parse("2024-01-15T10:30"),
    };
    await ledger.write({ key: JSON.stringify(seen) });
    return seen;
"#;

#[test]
fn scripts_run_in_utc_and_replay_the_same_in_any_time_zone() {
    let home = Home::new();
    let ledger = crate::guarantees::ledger_config(&home, "");
    // POSIX zones, which need no tz database: nine hours east, then five hours west.
    let in_zone = |tz: &str, args: &[&str], code: &str| {
        let run = Run::with_stdin(home.command(args).env("TZ", tz), code);
        let envelope = envelope(&run);
        (run, envelope)
    };
    let (paused, first) = in_zone("JST-9", &["exec", "-", "--json"], LOCAL_TIME);
    assert_eq!(paused.code, 3, "{first}");
    let run_id = crate::guarantees::run_id(&first);
    home.run(&["hub", "approve", &run_id]).ok();
    // Resumed elsewhere, the script computes the same arguments, so the decision holds.
    let (done, second) = in_zone("EST+5", &["exec", "--resume", &run_id, "--json"], "");
    assert_eq!(done.code, 0, "{second}");
    // 2024-01-15T10:30:00Z, in milliseconds since the epoch.
    let utc = 1_705_314_600_000_i64;
    let seen = &second["result"];
    assert_eq!(seen["offset"], 0, "{second}");
    assert_eq!(seen["hours"], 0, "{second}");
    assert_eq!(seen["components"], utc, "{second}");
    assert_eq!(seen["parsed"], utc, "{second}");
    let text = seen["text"].as_str().unwrap_or_default();
    assert!(
        text.starts_with("Thu Jan 01 1970 00:00:00 GMT+0000"),
        "{text}"
    );
    assert_eq!(
        crate::guarantees::writes(&ledger).len(),
        1,
        "one decision, one write"
    );
}

#[test]
fn sources_keep_the_users_time_zone() {
    let home = Home::new();
    // `${env:TZ}` in the config is the user's zone too.
    home.write_config(&format!(
        "[sources.everything]\ncommand = \"node\"\nargs = [{}, \"stdio\"]\nenv = {{ PASSED_TZ = \"${{env:TZ}}\" }}\n",
        serde_json::to_string(&everything_js()).unwrap(),
    ));
    // The tool's text is JSON, which the sandbox hands over parsed.
    let code =
        r#"const env = await everything.getEnv(); return [env.TZ ?? "unset", env.PASSED_TZ];"#;
    let mut command = home.command(&["exec", "-", "--json"]);
    let run = Run::with_stdin(command.env("TZ", "JST-9"), code);
    assert_eq!(
        envelope(&run)["result"],
        json!(["JST-9", "JST-9"]),
        "{}",
        run.stdout
    );
    // Unset, it stays unset: the child does not inherit our UTC.
    two_sources(&home, "");
    let code = r#"return (await everything.getEnv()).TZ ?? "unset";"#;
    let mut command = home.command(&["exec", "-", "--json"]);
    let run = Run::with_stdin(command.env_remove("TZ"), code);
    assert_eq!(envelope(&run)["result"], "unset", "{}", run.stdout);
}

/// Regression (review 7): a result within the largest output budget but too large for the
/// envelope with the rest of the report was stored with a notice that blamed the budget.
#[test]
fn a_result_stored_for_the_envelope_says_so_not_the_budget() {
    let home = Home::new();
    home.write_config("");
    // 10,922 × 6 bytes of `\u0001` escapes, and two quotes: 65,534 bytes of JSON.
    let args = ["exec", "--json", "--output-budget", "65536", "-"];
    let run = Run::with_stdin(
        &mut home.command(&args),
        r#"return "\u0001".repeat(10922);"#,
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let envelope: serde_json::Value = serde_json::from_str(&run.stdout).expect("an envelope");
    assert_eq!(envelope["stored"]["bytes"], 65_534, "{envelope}");
    let notices = envelope["notices"].to_string();
    assert!(
        notices.contains("fits the output budget (65536 bytes) but not the envelope")
            && !notices.contains("is over the output budget"),
        "{notices}"
    );
}
