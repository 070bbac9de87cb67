//! Credentials end to end, through the real binary: the encrypted file store (round trip, wrong
//! passphrase, damaged file, concurrent writers), the real Secret Service on Linux (a private
//! D-Bus session with an unlocked gnome-keyring), the error where no keychain answers, and a
//! canary secret that must reach an HTTP upstream's `Authorization` header and a stdio
//! upstream's environment while showing up in no envelope, log, database or listing.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::common::{free_port, listening_within, python_peer, repo};
use crate::exec::OnTerminal;
use crate::support::{Home, Run};

const PASSPHRASE: &str = "correct horse battery staple";

/// A fresh random value no test output could contain by chance.
fn canary(prefix: &str) -> String {
    let mut bytes = [0u8; 12];
    getrandom::fill(&mut bytes).expect("random bytes");
    format!(
        "{prefix}-{}",
        bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()
    )
}

fn sha256(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Runs `capabilities ARGS…` with `stdin` and extra environment.
fn run_with(home: &Home, args: &[&str], stdin: &str, env: &[(&str, &str)]) -> Run {
    let mut command = home.command(args);
    command
        .env_remove("CAPABILITIES_PASSPHRASE")
        .envs(env.iter().copied());
    Run::with_stdin(&mut command, stdin)
}

/// A config with `sources`, its secrets in the file store and every tool allowed.
fn allowing_with_file_store(sources: &str) -> String {
    format!("[credentials]\nstore = \"file\"\n\n[policy]\ndefault = \"allow\"\n\n{sources}")
}

fn with_passphrase(passphrase: &str) -> Vec<(&'static str, &str)> {
    vec![
        ("CAPABILITIES_PASSPHRASE", passphrase),
        ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus"),
    ]
}

/// Every file under `dir` whose bytes contain `needle`.
fn files_containing(dir: &Path, needle: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if std::fs::read(&path)
                .is_ok_and(|bytes| bytes.windows(needle.len()).any(|w| w == needle.as_bytes()))
            {
                found.push(path);
            }
        }
    }
    found
}

#[test]
fn file_store_round_trip_keeps_nothing_in_clear() {
    let home = Home::new();
    let value = canary("roundtrip");
    let env = with_passphrase(PASSPHRASE);
    let set = run_with(
        &home,
        &["credential", "set", "github-personal", "--store", "file"],
        &format!("{value}\n"),
        &env,
    )
    .ok();
    assert!(
        set.stdout
            .contains("stored `github-personal` in the encrypted file store"),
        "{}",
        set.stdout
    );
    let list = run_with(&home, &["credential", "list"], "", &env).ok();
    assert!(
        list.stdout.contains("github-personal") && list.stdout.contains("file"),
        "{}",
        list.stdout
    );
    let test = run_with(&home, &["credential", "test", "github-personal"], "", &env).ok();
    assert!(test.stdout.contains("can be read"), "{}", test.stdout);
    assert_eq!(files_containing(home.path(), &value), Vec::<PathBuf>::new());
    // Sealed with a fixed scrypt work factor (2^17, 128 MiB to read), not one calibrated to
    // this machine, which reaches a GiB per command on a fast one.
    let sealed = std::fs::read(home.path().join("data/credentials.age")).expect("the file store");
    let header = String::from_utf8_lossy(&sealed[..sealed.len().min(200)]).into_owned();
    let stanza = header
        .lines()
        .find(|line| line.starts_with("-> scrypt "))
        .unwrap_or_else(|| panic!("no scrypt stanza in {header:?}"));
    assert_eq!(stanza.split(' ').nth(3), Some("17"), "{stanza}");
    let removed = run_with(
        &home,
        &["credential", "remove", "github-personal"],
        "",
        &env,
    )
    .ok();
    assert!(
        removed.stdout.contains("removed `github-personal`"),
        "{}",
        removed.stdout
    );
    let gone = run_with(&home, &["credential", "test", "github-personal"], "", &env).fails();
    assert!(
        gone.stderr.contains("is not stored")
            && gone.stderr.contains("credential set github-personal"),
        "{}",
        gone.stderr
    );
}

#[test]
fn wrong_passphrase_is_refused_by_name() {
    let home = Home::new();
    run_with(
        &home,
        &["credential", "set", "a", "--store", "file"],
        "value-a",
        &with_passphrase(PASSPHRASE),
    )
    .ok();
    let before = std::fs::read(home.path().join("data/credentials.age")).unwrap();
    let wrong = with_passphrase("not it");
    let read = run_with(&home, &["credential", "test", "a"], "", &wrong).fails();
    assert!(
        read.stderr.contains("wrong passphrase") && read.stderr.contains("CAPABILITIES_PASSPHRASE"),
        "{}",
        read.stderr
    );
    let write = run_with(
        &home,
        &["credential", "set", "b", "--store", "file"],
        "value-b",
        &wrong,
    )
    .fails();
    assert!(
        write.stderr.contains("wrong passphrase"),
        "{}",
        write.stderr
    );
    assert_eq!(
        std::fs::read(home.path().join("data/credentials.age")).unwrap(),
        before,
        "a failed write changed the file"
    );
}

#[test]
fn damaged_file_is_reported_with_the_fix() {
    let home = Home::new();
    let env = with_passphrase(PASSPHRASE);
    run_with(
        &home,
        &["credential", "set", "a", "--store", "file"],
        "value-a",
        &env,
    )
    .ok();
    let path = home.path().join("data/credentials.age");
    let mut bytes = std::fs::read(&path).unwrap();
    let at = bytes.len() - 3;
    bytes[at] ^= 0x55;
    std::fs::write(&path, &bytes).unwrap();
    let read = run_with(&home, &["credential", "test", "a"], "", &env).fails();
    assert!(
        read.stderr.contains("is damaged") && read.stderr.contains("move it away"),
        "{}",
        read.stderr
    );
}

#[test]
fn concurrent_writers_lose_no_secret() {
    let home = Home::new();
    let names: Vec<String> = (0..4).map(|i| format!("writer-{i}")).collect();
    let children: Vec<Child> = names
        .iter()
        .map(|name| {
            let mut command = home.command(&["credential", "set", name, "--store", "file"]);
            command
                .env("CAPABILITIES_PASSPHRASE", PASSPHRASE)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            let mut child = command.spawn().expect("spawn");
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(format!("value of {name}").as_bytes())
                .expect("write");
            child
        })
        .collect();
    for child in children {
        Run::from(child.wait_with_output().expect("wait")).ok();
    }
    let env = with_passphrase(PASSPHRASE);
    let list = run_with(&home, &["credential", "list", "--json"], "", &env).ok();
    let rows: serde_json::Value = serde_json::from_str(&list.stdout).expect("JSON");
    let listed: Vec<&str> = rows
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert_eq!(listed, names.iter().map(String::as_str).collect::<Vec<_>>());
    for name in &names {
        run_with(&home, &["credential", "test", name], "", &env).ok();
    }
}

#[test]
fn file_store_without_a_passphrase_says_how_to_give_one() {
    let home = Home::new();
    let run = run_with(
        &home,
        &["credential", "set", "a", "--store", "file"],
        "value",
        &[],
    )
    .fails();
    assert!(
        run.stderr.contains("needs its passphrase")
            && run.stderr.contains("CAPABILITIES_PASSPHRASE"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_signal_at_the_passphrase_prompt_stops_at_once_and_gives_the_echo_back() {
    let home = Home::new();
    home.write_config(
        "[credentials]\nstore = \"file\"\n\n[sources.api]\ncommand = \"sleep\"\nargs = [\"600\"]\nenv = { TOKEN = \"${secret:api_token}\" }\n",
    );
    run_with(
        &home,
        &["credential", "set", "api_token"],
        "a value",
        &with_passphrase(PASSPHRASE),
    )
    .ok();
    let script = home.path().join("call.js");
    std::fs::write(&script, "return await api.anything({})").expect("write the script");
    let script = script.display().to_string();
    // What the shell says once the command ended: its status, and the terminal's settings.
    let ended = |shown: &str, status: &str| {
        let exited = format!("exited {status}");
        let after = shown
            .find(&exited)
            .map(|at| &shown[at + exited.len()..])
            .unwrap_or_else(|| panic!("not {exited}:\n{shown}"));
        let settings: Vec<&str> = after.split_whitespace().collect();
        assert!(
            settings.contains(&"echo") && !settings.contains(&"-echo"),
            "the terminal echoes again:\n{shown}"
        );
    };
    // The shell survives the signals (`trap`) to say how the command ended and how it left
    // the terminal.
    let in_shell = |exec: &str| format!("trap : INT TERM; {exec}; echo \"exited $?\"; stty -a");

    // Ctrl-C: the prompt gives the terminal back itself.
    let mut asked = OnTerminal::start_in(&home, &["exec", &script], in_shell);
    asked.wait_for("Passphrase of ");
    asked.type_keys("\u{3}");
    let (_, shown) = asked.finish();
    ended(&shown, "130");

    // SIGTERM from elsewhere while the prompt holds the terminal without echo: the verb's
    // signal handler ends the process, and gives the terminal back on the way out.
    let mut asked = OnTerminal::start_in(&home, &["exec", &script], in_shell);
    asked.wait_for("Passphrase of ");
    // The prompt turns echo off just after it shows.
    std::thread::sleep(Duration::from_millis(300));
    let exact = format!("{} exec {script}", env!("CARGO_BIN_EXE_capabilities"));
    let killed = Command::new("pkill")
        .args(["-TERM", "-x", "-f", &exact])
        .status()
        .expect("run pkill");
    assert!(killed.success(), "no process matched {exact}");
    let (_, shown) = asked.finish();
    ended(&shown, "143");
}

#[test]
fn values_never_come_from_arguments_and_names_are_checked() {
    let home = Home::new();
    let env = with_passphrase(PASSPHRASE);
    let run = run_with(
        &home,
        &["credential", "set", "a", "s3cret-value", "--store", "file"],
        "",
        &env,
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    let empty = run_with(
        &home,
        &["credential", "set", "a", "--store", "file"],
        "\n",
        &env,
    )
    .fails();
    assert!(
        empty.stderr.contains("is empty; nothing was stored"),
        "{}",
        empty.stderr
    );
    let bad = run_with(
        &home,
        &["credential", "set", "a/b", "--store", "file"],
        "v",
        &env,
    )
    .fails();
    assert!(bad.stderr.contains("not a secret name"), "{}", bad.stderr);
    let reserved = run_with(
        &home,
        &[
            "credential",
            "set",
            "capabilities.state-key",
            "--store",
            "file",
        ],
        "v",
        &env,
    )
    .fails();
    assert!(
        reserved.stderr.contains("state-store key"),
        "{}",
        reserved.stderr
    );
    let missing = run_with(&home, &["credential", "remove", "never-stored"], "", &env).fails();
    assert!(
        missing.stderr.contains("`never-stored` is not stored"),
        "{}",
        missing.stderr
    );
    home.write_config("[credentials]\nstore = \"vault\"\n");
    let config = run_with(&home, &["credential", "list"], "", &env).fails();
    assert!(
        config.stderr.contains("`vault` is not a credential store"),
        "{}",
        config.stderr
    );
}

#[test]
fn every_credential_verb_has_an_example_in_its_help() {
    let home = Home::new();
    for verb in [
        ["credential", "set"],
        ["credential", "list"],
        ["credential", "remove"],
        ["credential", "test"],
    ] {
        let run = home.run(&[verb[0], verb[1], "--help"]).ok();
        assert!(
            run.stdout.contains("Example") && run.stdout.contains("capabilities credential"),
            "{}",
            run.stdout
        );
    }
    let doctor = home.run(&["doctor", "--help"]).ok();
    assert!(
        doctor.stdout.contains("Example") && doctor.stdout.contains("capabilities doctor"),
        "{}",
        doctor.stdout
    );
}

/// A machine without a keychain: no session bus at all, or a bus where nothing answers.
#[cfg(target_os = "linux")]
#[test]
fn no_keychain_names_the_file_store() {
    let home = Home::new();
    let runtime = tempfile::tempdir().unwrap();
    let runtime = runtime.path().to_str().unwrap();
    let env = [
        ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus"),
        ("XDG_RUNTIME_DIR", runtime),
    ];
    let set = run_with(
        &home,
        &["credential", "set", "github-personal"],
        "value",
        &env,
    )
    .fails();
    assert!(
        set.stderr.contains("OS keychain is not available here"),
        "{}",
        set.stderr
    );
    assert!(
        set.stderr
            .contains("`capabilities credential set github-personal --store file`")
            && set.stderr.contains("store = \"file\""),
        "the very command to run instead: {}",
        set.stderr
    );
    // Nothing is stored and nothing references a secret yet: a warning, not a failure.
    let doctor = run_with(&home, &["doctor"], "", &env).ok();
    assert!(
        doctor.stdout.contains("not usable here")
            && doctor.stdout.contains("warn ")
            && doctor.stdout.contains("--store file"),
        "{}",
        doctor.stdout
    );
    // The fix the message names works on the same machine.
    let mut env = env.to_vec();
    env.push(("CAPABILITIES_PASSPHRASE", PASSPHRASE));
    run_with(
        &home,
        &["credential", "set", "github-personal", "--store", "file"],
        "value",
        &env,
    )
    .ok();
    home.write_config("[credentials]\nstore = \"file\"\n");
    run_with(&home, &["credential", "set", "github-work"], "value", &env).ok();
    let doctor = run_with(&home, &["doctor"], "", &env).ok();
    assert!(
        doctor
            .stdout
            .contains("new secrets go to the encrypted file store"),
        "{}",
        doctor.stdout
    );
}

/// A private D-Bus session bus with gnome-keyring's Secret Service on it, its login keyring
/// unlocked with a known password: the real keychain path of a Linux desktop.
#[cfg(target_os = "linux")]
pub(crate) struct SecretService {
    /// Holds the bus socket and the keyring files until the test ends.
    _dir: tempfile::TempDir,
    address: String,
    runtime: String,
    bus: Child,
    keyring: Child,
}

#[cfg(target_os = "linux")]
impl SecretService {
    pub(crate) fn start() -> SecretService {
        let dir = tempfile::tempdir().unwrap();
        let runtime = dir.path().join("run");
        std::fs::create_dir_all(&runtime).unwrap();
        std::fs::set_permissions(
            &runtime,
            std::os::unix::fs::PermissionsExt::from_mode(0o700),
        )
        .unwrap();
        let mut bus = Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--print-address=1"])
            .arg(format!(
                "--address=unix:path={}",
                runtime.join("bus").display()
            ))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("dbus-daemon runs (apt-get install dbus; .ci/run installs it)");
        let mut address = String::new();
        BufReader::new(bus.stdout.take().expect("stdout"))
            .read_line(&mut address)
            .expect("bus address");
        let address = address.trim().to_string();
        let mut keyring = Command::new("gnome-keyring-daemon")
            .args(["--unlock", "--foreground", "--components=secrets"])
            .env("DBUS_SESSION_BUS_ADDRESS", &address)
            .env("XDG_RUNTIME_DIR", &runtime)
            .env("HOME", dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect(
                "gnome-keyring-daemon runs (apt-get install gnome-keyring; .ci/run installs it)",
            );
        keyring
            .stdin
            .take()
            .expect("stdin")
            .write_all(b"test keyring password")
            .expect("unlock password");
        let runtime = runtime.display().to_string();
        let service = SecretService {
            _dir: dir,
            address,
            runtime,
            bus,
            keyring,
        };
        // Wait until the daemon owns the Secret Service name; asking earlier would make the bus
        // start another, locked, daemon.
        for _ in 0..200 {
            let owned = Command::new("dbus-send")
                .args([
                    "--session",
                    "--print-reply",
                    "--dest=org.freedesktop.DBus",
                    "/org/freedesktop/DBus",
                    "org.freedesktop.DBus.NameHasOwner",
                    "string:org.freedesktop.secrets",
                ])
                .env("DBUS_SESSION_BUS_ADDRESS", &service.address)
                .output()
                .expect("dbus-send runs");
            if String::from_utf8_lossy(&owned.stdout).contains("boolean true") {
                return service;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("gnome-keyring-daemon never took the Secret Service name on the private bus");
    }

    pub(crate) fn env(&self) -> Vec<(&str, &str)> {
        vec![
            ("DBUS_SESSION_BUS_ADDRESS", self.address.as_str()),
            ("XDG_RUNTIME_DIR", self.runtime.as_str()),
        ]
    }

    /// What `secret-tool` (libsecret, an independent client) finds under our service name.
    pub(crate) fn lookup(&self, name: &str) -> String {
        let output = Command::new("secret-tool")
            .args(["lookup", "service", "capabilities", "username", name])
            .env("DBUS_SESSION_BUS_ADDRESS", &self.address)
            .output()
            .expect("secret-tool runs (apt-get install libsecret-tools)");
        String::from_utf8_lossy(&output.stdout).into_owned()
    }
}

#[cfg(target_os = "linux")]
impl Drop for SecretService {
    fn drop(&mut self) {
        for child in [&mut self.keyring, &mut self.bus] {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[cfg(target_os = "linux")]
#[test]
fn secret_service_stores_reads_and_removes() {
    let service = SecretService::start();
    let home = Home::new();
    let env = service.env();
    let value = canary("keychain");
    let set = run_with(
        &home,
        &["credential", "set", "github-personal"],
        &value,
        &env,
    )
    .ok();
    assert!(set.stdout.contains("in the OS keychain"), "{}", set.stdout);
    assert_eq!(
        service.lookup("github-personal"),
        value,
        "the Secret Service holds the value"
    );
    let list = run_with(&home, &["credential", "list", "--json"], "", &env).ok();
    assert!(
        list.stdout.contains("\"store\": \"keychain\""),
        "{}",
        list.stdout
    );
    assert!(!list.stdout.contains(&value));
    run_with(&home, &["credential", "test", "github-personal"], "", &env).ok();
    let doctor = run_with(&home, &["doctor"], "", &env).ok();
    assert!(
        doctor
            .stdout
            .contains("the Secret Service over D-Bus answers"),
        "{}",
        doctor.stdout
    );
    assert_eq!(files_containing(home.path(), &value), Vec::<PathBuf>::new());
    run_with(
        &home,
        &["credential", "remove", "github-personal"],
        "",
        &env,
    )
    .ok();
    assert_eq!(service.lookup("github-personal"), "");
    run_with(&home, &["credential", "test", "github-personal"], "", &env).fails();
}

/// The "done when" of the issue: one secret in the keychain, referenced from two connections,
/// both used from one script; policy can single out a connection, and an unknown one is an
/// error that lists the real ones.
#[cfg(target_os = "linux")]
#[test]
fn one_keychain_secret_serves_two_connections_in_one_script() {
    let service = SecretService::start();
    let home = Home::new();
    let env = service.env();
    let value = canary("github");
    home.write_config(&format!(
        r#"[policy]
default = "allow"

[[policy.rules]]
match = "canary.echo"
action = "deny"
connection = "work"

[sources.canary]
command = "{python}"
args = ["{server}"]
env = {{ CANARY_SHA256 = "{sha}" }}

[sources.canary.connections.personal]
default = true
env = {{ CANARY_TOKEN = "${{secret:github-personal}}" }}

[sources.canary.connections.work]
env = {{ CANARY_TOKEN = "${{secret:github-personal}}", TEAM = "work" }}
"#,
        python = repo().join(".venv/bin/python").display(),
        server = repo().join("tests/peers/canary_server.py").display(),
        sha = sha256(&value),
    ));
    run_with(
        &home,
        &["credential", "set", "github-personal"],
        &value,
        &env,
    )
    .ok();
    let list = run_with(&home, &["credential", "list"], "", &env).ok();
    assert!(
        list.stdout.contains("canary/personal, canary/work"),
        "{}",
        list.stdout
    );
    let test = run_with(&home, &["credential", "test", "github-personal"], "", &env).ok();
    assert!(
        test.stdout.contains("canary/personal: connected")
            && test.stdout.contains("canary/work: connected"),
        "{}",
        test.stdout
    );
    let script = r#"
        const out = [await canary.whoami({}), await canary.whoami({}, { connection: "work" })];
        out.push(await canary.echo({ text: "hi" }));
        try { await canary.echo({ text: "hi" }, { connection: "work" }) } catch (e) { out.push(e.code) }
        try { await canary.whoami({}, { connection: "nope" }) } catch (e) { out.push(e.name + ": " + e.message) }
        return out;
    "#;
    let run = run_with(&home, &["exec", "--json", "-"], script, &env).ok();
    let envelope: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON envelope");
    let result = &envelope["result"];
    assert_eq!(result[0]["result"], "authorized by env", "{envelope:#}");
    assert_eq!(result[1]["result"], "authorized by env", "{envelope:#}");
    assert_eq!(result[2]["result"], "hi", "{envelope:#}");
    assert_eq!(result[3], "policy_denied", "{envelope:#}");
    let unknown = result[4].as_str().unwrap_or_default();
    assert!(
        unknown.starts_with("ToolError")
            && unknown.contains("\"nope\"")
            && unknown.contains("personal, work"),
        "{unknown}"
    );
}

/// The HTTP canary server on a free port; killed when dropped.
struct HttpCanary {
    url: String,
    child: Child,
}

impl HttpCanary {
    fn start(sha: &str) -> HttpCanary {
        let port = free_port();
        let child = python_peer("canary_server.py")
            .args(["http", &port.to_string()])
            .env("CANARY_SHA256", sha)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the test venv's python runs (tests/setup.sh)");
        let server = HttpCanary {
            url: format!("http://127.0.0.1:{port}/mcp"),
            child,
        };
        assert!(
            listening_within(port, Duration::from_secs(30)),
            "the canary server did not listen on port {port}"
        );
        server
    }
}

impl Drop for HttpCanary {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn canary_reaches_upstreams_and_nothing_else() {
    let value = canary("canary");
    let sha = sha256(&value);
    let http = HttpCanary::start(&sha);
    let home = Home::new();
    home.write_config(&allowing_with_file_store(&format!(
        r#"[sources.web]
url = "{url}"
headers = {{ Authorization = "Bearer ${{secret:canary}}" }}

[sources.local]
command = "{python}"
args = ["{server}"]
env = {{ CANARY_TOKEN = "${{secret:canary}}", CANARY_SHA256 = "{sha}" }}
"#,
        url = http.url,
        python = repo().join(".venv/bin/python").display(),
        server = repo().join("tests/peers/canary_server.py").display(),
    )));
    let mut env = with_passphrase(PASSPHRASE);
    run_with(&home, &["credential", "set", "canary"], &value, &env).ok();
    // The script holds the value only in pieces, as a model that read it somewhere might.
    let (head, tail) = value.split_at(5);
    let script = format!(
        r#"
        const out = [await web.whoami({{}}), await local.whoami({{}})];
        for (const kind of ["tool", "protocol"]) {{
            try {{ await local.leak({{ kind }}) }} catch (e) {{ out.push(e.code + ": " + e.message) }}
        }}
        try {{ await local.echo({{ text: "token " + "{head}" + "{tail}" }}) }} catch (e) {{ out.push(e.code + ": " + e.message) }}
        return out;
        "#
    );
    env.push(("CAPABILITIES_LOG", "trace"));
    let run = run_with(&home, &["exec", "--json", "-"], &script, &env).ok();
    let envelope: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON envelope");
    let result = &envelope["result"];
    // It flowed: the header and the environment both carried it.
    assert_eq!(result[0]["result"], "authorized by header", "{envelope:#}");
    assert_eq!(result[1]["result"], "authorized by env", "{envelope:#}");
    // Echoes were blanked, and passing it as an argument was refused.
    let tool_leak = result[2].as_str().unwrap_or_default();
    assert!(
        tool_leak.starts_with("tool_error") && tool_leak.contains("rejected token •••"),
        "{tool_leak}"
    );
    let protocol_leak = result[3].as_str().unwrap_or_default();
    assert!(
        protocol_leak.starts_with("upstream_error") && protocol_leak.contains("rejected token •••"),
        "{protocol_leak}"
    );
    let refused = result[4].as_str().unwrap_or_default();
    assert!(
        refused.starts_with("policy_denied") && refused.contains("value of a stored secret"),
        "{refused}"
    );
    assert!(
        run.stderr.contains("TRACE"),
        "logs at trace level were produced"
    );
    let mut outputs = vec![
        ("envelope".to_string(), run.stdout),
        ("trace log".to_string(), run.stderr),
    ];
    let plain = run_with(&home, &["exec", "-"], &script, &with_passphrase(PASSPHRASE));
    outputs.push(("exec output".to_string(), plain.stdout + &plain.stderr));
    for args in [
        &["credential", "list"][..],
        &["credential", "list", "--json"],
        &["credential", "test", "canary"],
        &["doctor"],
        &["source", "list"],
    ] {
        let run = run_with(&home, args, "", &with_passphrase(PASSPHRASE));
        outputs.push((args.join(" "), run.stdout + &run.stderr));
    }
    for (what, text) in &outputs {
        assert!(
            !text.contains(&value),
            "the canary appears in the {what}:\n{text}"
        );
    }
    assert!(
        home.path().join("data/state.sqlite").exists(),
        "the run was stored"
    );
    assert_eq!(
        files_containing(home.path(), &value),
        Vec::<PathBuf>::new(),
        "the canary is in a file in clear"
    );
}

/// Where a keychain works, the key that encrypts runs at rest lives there, not in a file.
#[cfg(target_os = "linux")]
#[test]
fn the_state_key_lives_in_the_keychain_when_there_is_one() {
    let service = SecretService::start();
    let home = Home::new();
    crate::approvals::counter_config(&home);
    let env = service.env();
    let run = run_with(
        &home,
        &["exec", "-"],
        "return await counter.write({ key: \"k\" })",
        &env,
    )
    .ok();
    assert!(
        run.stdout.contains("\"result\": 1"),
        "{}{}",
        run.stdout,
        run.stderr
    );
    let key = service.lookup("capabilities.state-key");
    assert!(
        key.len() == 64 && key.chars().all(|c| c.is_ascii_hexdigit()),
        "the keychain holds the state key: {key:?}"
    );
    assert!(!home.path().join("data/state.key").exists());
    let doctor = run_with(&home, &["doctor"], "", &env).ok();
    assert!(
        doctor
            .stdout
            .contains("encrypted at rest with a key in the OS keychain"),
        "{}",
        doctor.stdout
    );
    // Without the keychain, the runs stay closed rather than being re-keyed.
    let without = run_with(
        &home,
        &["hub", "runs"],
        "",
        &[("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus")],
    )
    .fails();
    assert!(
        without.stderr.contains("the OS keychain")
            && without.stderr.contains("capabilities hub runs --clear"),
        "{}",
        without.stderr
    );
    // A key gone from the keychain is reported, never replaced by a new one.
    let cleared = Command::new("secret-tool")
        .args([
            "clear",
            "service",
            "capabilities",
            "username",
            "capabilities.state-key",
        ])
        .env("DBUS_SESSION_BUS_ADDRESS", &service.address)
        .status()
        .expect("secret-tool runs");
    assert!(cleared.success());
    let missing = run_with(&home, &["hub", "runs"], "", &env).fails();
    assert!(
        missing.stderr.contains("holds no `capabilities.state-key`"),
        "{}",
        missing.stderr
    );
    assert_eq!(
        service.lookup("capabilities.state-key"),
        "",
        "not re-created"
    );
}

/// On a machine where no keychain answers (no D-Bus session here), a secret that is not stored
/// is reported with the way to store it that works there.
#[test]
fn a_missing_secret_where_no_keychain_works_names_the_file_store() {
    let home = Home::new();
    home.write_config("");
    let missing = home.run(&["credential", "test", "nosuch"]).fails();
    assert!(
        missing.stderr.contains("`nosuch` is not stored")
            && missing.stderr.contains("add `--store file`"),
        "{}",
        missing.stderr
    );
}

/// The user a hub runs as when the tests run as root: root may read any process, so only an
/// unprivileged hub shows what its servers can read of it.
const UNPRIVILEGED: u32 = 65534;

/// `capabilities ARGS…` for `home`, run as [`UNPRIVILEGED`] (owning `home`) when the tests run as
/// root, else as the tests' user.
fn as_unprivileged(home: &Home, args: &[&str]) -> Command {
    let mut command = home.command(args);
    if !rustix::process::geteuid().is_root() {
        return command;
    }
    let owner = Some(UNPRIVILEGED);
    let mut stack = vec![home.path().to_path_buf()];
    while let Some(path) = stack.pop() {
        std::os::unix::fs::chown(&path, owner, owner).expect("chown the home");
        if path.is_dir() {
            stack.extend(
                std::fs::read_dir(&path)
                    .expect("read dir")
                    .flatten()
                    .map(|e| e.path()),
            );
        }
    }
    let mut wrapped = Command::new("setpriv");
    wrapped
        .args([
            format!("--reuid={UNPRIVILEGED}"),
            format!("--regid={UNPRIVILEGED}"),
            "--clear-groups".to_string(),
            "--".to_string(),
        ])
        .arg(command.get_program())
        .args(command.get_args());
    for (name, value) in command.get_envs() {
        match value {
            Some(value) => wrapped.env(name, value),
            None => wrapped.env_remove(name),
        };
    }
    command = wrapped;
    command.env("HOME", home.path());
    command
}

#[test]
fn a_server_reads_neither_the_hubs_memory_nor_its_passphrase() {
    let home = Home::new();
    let passphrase = canary("passphrase");
    // The server is given the passphrase by a config that names it (as a person might by
    // mistake); whatever it answers of it is blanked like a stored secret.
    home.write_config(&format!(
        r#"[policy]
default = "allow"

[sources.prying]
command = "/usr/bin/python3"
args = ["{server}"]
env = {{ LEAK = "the passphrase is {passphrase}" }}
"#,
        server = repo().join("tests/peers/prying_server.py").display(),
    ));
    let script = "return [await prying.pry({}), await prying.leak({})];";
    let mut exec = as_unprivileged(&home, &["exec", "--json", "-"]);
    exec.envs(with_passphrase(&passphrase));
    let run = Run::with_stdin(&mut exec, script).ok();
    let envelope: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON envelope");
    let pried = &envelope["result"][0];
    let hub = pried
        .as_array()
        .and_then(|ancestors| ancestors.iter().find(|a| a["comm"] == "capabilities"))
        .unwrap_or_else(|| panic!("the hub is among the server's ancestors: {pried:#}"));
    assert_eq!(hub["environ"], "PermissionError", "{pried:#}");
    assert_eq!(hub["mem"], "PermissionError", "{pried:#}");
    assert_eq!(hub["names_passphrase"], false, "{pried:#}");
    assert_eq!(
        envelope["result"][1], "the passphrase is •••",
        "{envelope:#}"
    );
    assert!(!run.stdout.contains(&passphrase) && !run.stderr.contains(&passphrase));
}

#[test]
fn a_script_cannot_test_guesses_at_a_secret_against_the_hubs_answers() {
    // A secret with a prefix every script knows, as real tokens have (`sk_live_`, `ghp_`).
    let secret = canary("sk_live");
    let sha = sha256(&secret);
    let home = Home::new();
    home.write_config(&allowing_with_file_store(&format!(
        r#"[sources.vault]
command = "{python}"
args = ["{server}"]
env = {{ CANARY_TOKEN = "${{secret:vault}}", CANARY_SHA256 = "{sha}" }}
"#,
        python = repo().join(".venv/bin/python").display(),
        server = repo().join("tests/peers/canary_server.py").display(),
    )));
    let env = with_passphrase(PASSPHRASE);
    run_with(&home, &["credential", "set", "vault"], &secret, &env).ok();
    // Nine characters known, the tenth tried in every way a piece could give it away: as an
    // argument (refused?), in the upstream's echo of it (blanked?), in what the script returns
    // (blanked?). The secret's hex digits are the candidates.
    let known = &secret[1..10];
    let script = format!(
        r#"
        const out = {{ refused: [], echoed: [], returned: [] }};
        for (const c of "0123456789abcdef") {{
            const guess = "{known}" + c;
            try {{ out.echoed.push((await vault.echo({{ text: guess }})).result) }}
            catch (e) {{ out.refused.push(c + ": " + e.code) }}
            out.returned.push(guess);
        }}
        try {{ await vault.echo({{ text: "{secret}" }}); out.whole = "sent" }}
        catch (e) {{ out.whole = e.code }}
        try {{ await vault.leak({{ kind: "tool" }}) }} catch (e) {{ out.leak = e.message }}
        return out;
        "#
    );
    let run = run_with(&home, &["exec", "--json", "-"], &script, &env).ok();
    let envelope: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON envelope");
    let out = &envelope["result"];
    let guesses: Vec<String> = "0123456789abcdef"
        .chars()
        .map(|c| format!("{known}{c}"))
        .collect();
    assert_eq!(out["refused"], serde_json::json!([]), "{envelope:#}");
    assert_eq!(out["echoed"], serde_json::json!(guesses), "{envelope:#}");
    assert_eq!(out["returned"], serde_json::json!(guesses), "{envelope:#}");
    // The whole value is still refused as an argument, and still blanked where it leaks.
    assert_eq!(out["whole"], "policy_denied", "{envelope:#}");
    assert!(
        out["leak"].as_str().is_some_and(|m| m.contains("•••")),
        "{envelope:#}"
    );
    assert!(!run.stdout.contains(&secret), "{}", run.stdout);
}
