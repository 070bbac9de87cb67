//! Driving the real `capabilities` binary with a private `CAPABILITIES_HOME` per test.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub use crate::common::repo as repo_root;

/// A temporary home for config and data; dropped with the test.
pub struct Home {
    dir: tempfile::TempDir,
    /// Set on every command of this home (a shared store's key, say).
    env: Vec<(String, String)>,
}

impl Home {
    pub fn new() -> Home {
        Home {
            dir: tempfile::tempdir().expect("temp dir"),
            env: Vec::new(),
        }
    }

    /// This home with `name=value` in the environment of every command it starts.
    pub fn with_env(mut self, name: &str, value: &str) -> Home {
        self.env.push((name.to_string(), value.to_string()));
        self
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn config_path(&self) -> PathBuf {
        self.dir.path().join("config.toml")
    }

    pub fn write_config(&self, text: &str) {
        std::fs::write(self.config_path(), text).expect("write config");
    }

    /// `capabilities ARGS…` with this home.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_capabilities"));
        cmd.args(args)
            .env("CAPABILITIES_HOME", self.dir.path())
            // Never the developer's own keychain (tests that want one start a private Secret
            // Service and set this again); the state store then keys itself with a key file.
            .env_remove("DBUS_SESSION_BUS_ADDRESS")
            .env_remove("CAPABILITIES_CONFIG")
            .env_remove("CAPABILITIES_LOG")
            .env_remove("CAPABILITIES_LOG_FORMAT")
            .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
            .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
            .env_remove("CAPABILITIES_STORE_URL")
            .env_remove("CAPABILITIES_STATE_KEY")
            .env("NO_COLOR", "1");
        for (name, value) in &self.env {
            cmd.env(name, value);
        }
        cmd
    }

    pub fn run(&self, args: &[&str]) -> Run {
        Run::of(&mut self.command(args))
    }
}

/// What one run of the binary printed.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for Run {
    fn from(output: Output) -> Run {
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }
}

impl Run {
    /// Runs `command` (from [`Home::command`], with whatever it adds) to its end.
    pub fn of(command: &mut Command) -> Run {
        Run::from(command.output().expect("run capabilities"))
    }

    /// Runs `command` with `input` on its stdin, then stdin closed.
    pub fn with_stdin(command: &mut Command, input: &str) -> Run {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run capabilities");
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(input.as_bytes()).expect("write stdin");
        drop(stdin);
        Run::from(child.wait_with_output().expect("wait for capabilities"))
    }

    /// Panics with both streams unless the run succeeded.
    pub fn ok(self) -> Run {
        assert_eq!(
            self.code, 0,
            "expected success\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }

    /// Panics unless the run failed with exit code 1; returns it for assertions on stderr.
    pub fn fails(self) -> Run {
        assert_eq!(
            self.code, 1,
            "expected exit 1\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }
}

/// Runs a future of the library (its state store is async) from a synchronous test.
pub fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(future)
}

/// The state store of `home`, opened as a process of its own would.
pub fn store_of(home: &Home) -> capabilities::runs::Store {
    block_on(capabilities::runs::Store::open(
        &home.path().join("data/state.sqlite"),
        None,
    ))
    .expect("the state store")
}

/// Sends signal `name` (`TERM`, `INT`, `HUP`, `KILL`) to `pid` with the system's `kill`, as a
/// person or a service manager would.
pub fn send_signal(pid: u32, name: &str) {
    let status = Command::new("kill")
        .args(["-s", name, &pid.to_string()])
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -s {name} {pid} failed");
}
