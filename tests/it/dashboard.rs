//! The dashboard in a real terminal: tmux runs `capabilities dashboard` while a run waits for a
//! decision; the test reads the screen with `capture-pane`, approves with `send-keys`, and the run
//! completes when resumed, with the decision recorded as the dashboard's. Without a terminal, the
//! command says what to use instead.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::approvals::{self, counter_config, envelope};
use crate::support::Home;

/// A private tmux server (its own socket in the test's home), killed when dropped.
pub(crate) struct Tmux {
    socket: PathBuf,
}

impl Tmux {
    /// Starts `script` (a shell command) in a detached `width`×`height` session.
    pub(crate) fn start(home: &Home, width: u16, height: u16, script: &str) -> Tmux {
        let tmux = Tmux {
            socket: home.path().join("tmux.sock"),
        };
        let (width, height) = (width.to_string(), height.to_string());
        let started = tmux
            .command(&[
                "new-session",
                "-d",
                "-s",
                "dashboard",
                "-x",
                &width,
                "-y",
                &height,
                "sh",
                "-c",
                script,
            ])
            .status();
        match started {
            Ok(status) => assert!(status.success(), "tmux new-session failed: {status}"),
            Err(e) => panic!("tmux is needed for this test (`.ci/run` installs it): {e}"),
        }
        tmux
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new("tmux");
        // tmux refuses to start a server without a terminal type to offer the panes.
        command
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .env("TERM", "xterm-256color")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }

    fn capture(&self) -> String {
        let output = self
            .command(&["capture-pane", "-p", "-t", "dashboard"])
            .output()
            .expect("tmux capture-pane");
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    pub(crate) fn send(&self, key: &str) {
        let status = self
            .command(&["send-keys", "-t", "dashboard", key])
            .status()
            .expect("tmux send-keys");
        assert!(status.success(), "send-keys {key}");
    }

    /// Polls the screen until it contains `needle`; a generous bound, since a cold start of the
    /// binary and the Python peer on a busy machine is slow.
    pub(crate) fn wait_for(&self, needle: &str) -> String {
        let mut screen = String::new();
        for _ in 0..600 {
            screen = self.capture();
            if screen.contains(needle) {
                return screen;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("the dashboard never showed `{needle}`; the screen:\n{screen}");
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.command(&["kill-server"]).status();
    }
}

pub(crate) fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// Runs `code` with `exec --json` and returns its envelope.
fn exec(home: &Home, code: &str) -> Value {
    envelope(&approvals::exec(home, &["exec", "-", "--json"], code))
}

#[test]
fn a_call_approved_in_the_dashboard_lets_the_run_complete() {
    let home = Home::new();
    let counts = counter_config(&home);
    let paused = exec(
        &home,
        "await counter.write({ key: \"a\" });\nreturn await counter.publish({ key: \"b\" });",
    );
    assert_eq!(paused["status"], "awaiting_approval", "{paused}");
    let run_id = paused["runId"].as_str().expect("runId").to_string();

    let script = format!(
        "CAPABILITIES_HOME={} NO_COLOR=1 {} dashboard; echo \"dashboard exited $?\"; sleep 60",
        quoted(&home.path().display().to_string()),
        quoted(env!("CARGO_BIN_EXE_capabilities")),
    );
    let tmux = Tmux::start(&home, 100, 30, &script);
    let screen = tmux.wait_for("counter.publish");
    assert!(
        screen.contains("Waiting for a decision (1)") && screen.contains("key: \"b\""),
        "{screen}"
    );

    tmux.send("a");
    tmux.wait_for("allow_once: counter.publish");
    let listed = home.run(&["hub", "runs", "--json"]).ok();
    let runs: Value = serde_json::from_str(&listed.stdout).expect("json");
    assert_eq!(
        runs[0]["approvals"][0]["decidedBy"], "dashboard",
        "{}",
        listed.stdout
    );
    tmux.wait_for("Waiting for a decision (0)");

    let resumed = home.run(&["exec", "--resume", &run_id, "--json"]).ok();
    let resumed: Value = serde_json::from_str(&resumed.stdout).expect("envelope");
    assert_eq!(resumed["status"], "completed", "{resumed}");
    assert_eq!(
        approvals::counts(&counts),
        serde_json::json!({ "write:a": 1, "publish:b": 1 })
    );
    // Another process finished the run: the dashboard shows it without being asked.
    tmux.wait_for("completed");

    tmux.send("q");
    tmux.wait_for("dashboard exited 0");
}

#[test]
fn without_a_terminal_the_dashboard_points_at_hub_runs() {
    let home = Home::new();
    for verb in ["dashboard", "tui"] {
        let run = home.run(&[verb]).fails();
        assert!(
            run.stderr.contains("the dashboard draws on a terminal"),
            "{}",
            run.stderr
        );
        assert!(run.stderr.contains("hub runs --json"), "{}", run.stderr);
    }
}
