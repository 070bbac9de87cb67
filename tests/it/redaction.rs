//! A stored secret that a real upstream echoes back in every encoding it could plausibly use
//! (raw, JSON-escaped with and without `ensure_ascii`, percent-encoded, base64 and base64url at
//! each alignment, hex; and what an upstream set on slipping past a filter reaches for next:
//! base32, hex of UTF-16, spaced and escaped hex, `\u` escapes, HTML entities, base64 of UTF-16
//! and of base64, reversed, ROT13, another case, spelled out, a list of its characters or codes,
//! cut into lines of ten characters, dumped as `xxd` does; the whole secret and each of its lines;
//! or taken apart across the strings of one answer)
//! reaches neither the script (which tries to decode, parse, reverse and reassemble everything
//! it sees, and returns it all shifted past any redaction of its own result), nor the envelope, nor
//! the logs at trace level in either format, nor any file of the home (the state store and its
//! WAL, the catalogue cache). Random secrets, from proptest with a fixed seed; each case starts
//! the binary a few times, so there are few cases (`PROPTEST_CASES` asks for more,
//! `PROPTEST_RNG_SEED` for others). Also: `credential set` warns about values too short to scrub well.

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;

use aho_corasick::AhoCorasick;
use proptest::prelude::*;
use proptest::test_runner::{RngSeed, TestCaseError};
use serde_json::Value;

use crate::common::{free_port, listening_within, python_peer, repo};
use crate::support::{Home, Run};

const PASSPHRASE: &str = "correct horse battery staple";

/// What the script does: call every tool in every encoding, then try every way it knows to get
/// the secret back out of what it saw, and return all of it. All of it is more than one result
/// may hold, so it runs in [`PARTS`] parts (`PART`), each with every other encoding.
const SCRIPT: &str = r#"
const seen = [];
const kinds = await enc.kinds({});
const all = (kinds.result ?? kinds).filter((_, i) => i % PARTS === PART);
for (const kind of all) seen.push(await enc.echo({ kind }));
// Failures four encodings at a time, to stay under the run's call limit.
for (let i = 0; i < all.length; i += 4) {
  const kind = all.slice(i, i + 4).join("+");
  for (const how of ["tool", "protocol"]) {
    try { await enc.fail({ kind, how }) } catch (e) { seen.push(String(e.message)) }
  }
}
if (PART === 0) {
  seen.push(await enc.blobs({}), await enc.about({}), await enc.split({}));
  seen.push(await hub.search("describes itself with the credential"), await hub.describe("enc.about"));
}
const texts = [];
const walk = (v) => {
  if (typeof v === "string") texts.push(v);
  else if (Array.isArray(v) && v.length > 0 && v.every((x) => Number.isInteger(x) && x >= 0 && x < 0x110000))
    texts.push(String.fromCodePoint(...v));
  else if (v && typeof v === "object") {
    // What was taken apart, put back together: a list's characters, its blocks' texts.
    if (Array.isArray(v)) texts.push(v.map((x) => (typeof x === "string" ? x : x?.text ?? "")).join(""));
    for (const [k, x] of Object.entries(v)) { texts.push(k); walk(x) }
  }
};
walk(seen);
const out = new Set();
const utf8 = (bytes) => new TextDecoder().decode(new Uint8Array(bytes));
for (const t of texts) {
  out.add(t);
  out.add([...t].reverse().join(""));
  try { walk(JSON.parse(t)) } catch {}
  try { out.add(JSON.parse('"' + t + '"')) } catch {}
  try { out.add(decodeURIComponent(t)) } catch {}
  try { out.add(decodeURIComponent(t.replace(/\+/g, " "))) } catch {}
  for (const run of t.match(/[A-Za-z0-9+\/_-]{4,}={0,2}/g) || []) {
    for (const skip of [0, 1, 2, 3]) {
      let b = run.slice(skip).replace(/-/g, "+").replace(/_/g, "/").replace(/=+$/, "");
      b = b.slice(0, b.length - (b.length % 4 === 1 ? 1 : 0));
      try { out.add(utf8([...atob(b + "===".slice((b.length + 3) % 4))].map((c) => c.charCodeAt(0)))) } catch {}
    }
  }
  for (const run of t.match(/[0-9a-fA-F]{8,}/g) || []) {
    for (const skip of [0, 1]) {
      const pairs = run.slice(skip).match(/../g) || [];
      out.add(utf8(pairs.map((p) => parseInt(p, 16))));
    }
  }
}
// Everything seen, each character shifted by one: what no redaction of the envelope knows, so
// only what reached the script blanked stays blanked.
const shift = (t) => [...t].map((c) => String.fromCodePoint(c.codePointAt(0) + 1)).join("");
return { found: [...out].filter((s) => s.length > 0), shifted: shift(texts.join("")) };
"#;

/// How many runs [`SCRIPT`] takes to see every encoding.
const PARTS: usize = 2;

/// [`SCRIPT`] for one of its parts.
fn script(part: usize) -> String {
    format!("const PARTS = {PARTS}, PART = {part};\n{SCRIPT}")
}

/// The encoded strings the peer emits that carry the secret (or one of its lines), by kind.
fn needles(secret: &str) -> Vec<(String, String)> {
    let output = python_peer("echo_encodings_server.py")
        .arg("needles")
        .env("Y", secret)
        .output()
        .expect("the test venv's python runs (tests/setup.sh)");
    assert!(output.status.success(), "{output:?}");
    let pairs: Vec<(String, String)> =
        serde_json::from_slice(&output.stdout).expect("the peer prints its needles as JSON");
    let mut all = Vec::new();
    for (kind, needle) in pairs {
        // What the script's reversal would return, had anything survived.
        if kind == "raw" {
            all.push(("reversed".to_string(), needle.chars().rev().collect()));
        }
        // What the script returns shifted past every redaction, had anything reached it.
        all.push((format!("{kind} shifted"), shifted(&needle)));
        all.push((kind, needle));
    }
    all
}

/// `text` with each character's code one higher, as the script shifts what it saw.
fn shifted(text: &str) -> String {
    text.chars()
        .map(|c| char::from_u32(u32::from(c) + 1).unwrap_or(c))
        .collect()
}

/// `text` as the layers between an upstream and a log line or a file can escape it: JSON (the
/// envelope, the store, JSON log lines) and Rust's `{:?}` (debug-printed messages), stacked up
/// to three deep (a debug-printed JSON message inside a JSON log line).
fn escaped_forms(text: &str) -> Vec<String> {
    let json = |s: &str| {
        let quoted = serde_json::to_string(s).expect("JSON");
        quoted[1..quoted.len() - 1].to_string()
    };
    let debug = |s: &str| {
        let quoted = format!("{s:?}");
        quoted[1..quoted.len() - 1].to_string()
    };
    let mut forms = vec![text.to_string()];
    let mut layer = forms.clone();
    for _ in 0..3 {
        layer = layer
            .iter()
            .flat_map(|f| [json(f), debug(f)])
            .filter(|f| !forms.contains(f))
            .collect();
        layer.sort();
        layer.dedup();
        forms.extend(layer.iter().cloned());
    }
    forms
}

/// Fails the case if `haystack` holds any needle in any escaped form. One automaton for all of
/// them: logs at trace level run to megabytes, and a scan a form would take minutes unoptimised.
fn check(what: &str, haystack: &[u8], needles: &[(String, String)]) -> Result<(), TestCaseError> {
    let (mut exact, mut folded) = (Vec::new(), Vec::new());
    for (kind, needle) in needles {
        // Hex and base32 are written in either case.
        let ignore_case = kind.to_ascii_lowercase().starts_with("hex") || kind.starts_with("b32");
        let list = if ignore_case { &mut folded } else { &mut exact };
        list.extend(
            escaped_forms(needle)
                .into_iter()
                .filter(|form| !form.is_empty())
                .map(|form| (kind.clone(), form)),
        );
    }
    for (forms, ignore_case) in [(exact, false), (folded, true)] {
        let automaton = AhoCorasick::builder()
            .ascii_case_insensitive(ignore_case)
            .build(forms.iter().map(|(_, form)| form))
            .expect("an automaton of the needles");
        if let Some(found) = automaton.find(haystack) {
            let (kind, form) = &forms[found.pattern().as_usize()];
            prop_assert!(
                false,
                "the {kind} form {form:?} of the secret is in the {what}:\n{}",
                String::from_utf8_lossy(haystack)
            );
        }
    }
    Ok(())
}

/// Every file under `dir`.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                found.push(path);
            }
        }
    }
    found
}

fn run(home: &Home, args: &[&str], stdin: &str, env: &[(&str, &str)]) -> Run {
    let mut command = home.command(args);
    command
        .env("CAPABILITIES_PASSPHRASE", PASSPHRASE)
        .env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus")
        .envs(env.iter().copied());
    Run::with_stdin(&mut command, stdin)
}

/// Stores `secret`, runs the script at trace level in both log formats, and checks the
/// envelope, the logs, what search and describe print, and every file of the home.
fn echoes_leave_no_trace(home: &Home, secret: &str) -> Result<(), TestCaseError> {
    let needles = needles(secret);
    run(home, &["credential", "set", "y"], secret, &[]).ok();
    for (format, part) in ["text", "json"]
        .into_iter()
        .flat_map(|format| (0..PARTS).map(move |part| (format, part)))
    {
        let exec = run(
            home,
            &["exec", "--json", "--output-budget", "65536", "-"],
            &script(part),
            &[
                ("CAPABILITIES_LOG", "trace"),
                ("CAPABILITIES_LOG_FORMAT", format),
            ],
        )
        .ok();
        let envelope: Value = serde_json::from_str(&exec.stdout).expect("a JSON envelope");
        prop_assert_eq!(&envelope["status"], "completed", "{:#}", envelope);
        prop_assert!(
            envelope["truncated"] != true && envelope.get("stored").is_none(),
            "the result was cut or stored, so it cannot be checked whole: add a part"
        );
        // The upstream did echo (the blanks are there), and tracing did log.
        let result = envelope["result"].to_string();
        prop_assert!(result.contains("token=•••"), "{}", result);
        prop_assert!(exec.stderr.contains("TRACE"), "no trace lines");
        check("envelope", exec.stdout.as_bytes(), &needles)?;
        check(
            &format!("{format} trace log"),
            exec.stderr.as_bytes(),
            &needles,
        )?;
    }
    for args in [
        &["search", "describes itself with the credential"][..],
        &["describe", "enc.about"],
    ] {
        let shown = run(home, args, "", &[]).ok();
        check(&args.join(" "), shown.stdout.as_bytes(), &needles)?;
    }
    for file in files(home.path()) {
        let bytes = std::fs::read(&file).expect("read a file of the home");
        check(&file.display().to_string(), &bytes, &needles)?;
    }
    Ok(())
}

fn config(cases: u32) -> ProptestConfig {
    let mut config = ProptestConfig::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        config.cases = cases;
    }
    if std::env::var_os("PROPTEST_RNG_SEED").is_none() {
        config.rng_seed = RngSeed::Fixed(0x13_0004);
    }
    // Each case starts processes: shrink a little, and reproduce by seed, not regression files.
    config.max_shrink_iters = 16;
    config.failure_persistence = None;
    config
}

/// One line of a secret: letters and digits with what breaks naive matching mixed in.
fn segment(specials: &'static str) -> impl Strategy<Value = String> {
    let special: Vec<char> = specials.chars().collect();
    let char = prop_oneof![
        6 => proptest::char::range('a', 'z'),
        2 => proptest::char::range('A', 'Z'),
        2 => proptest::char::range('0', '9'),
        4 => proptest::sample::select(special),
    ];
    // At least 8 characters, so no encoding of a line is short enough to turn up in a large
    // trace log by chance.
    proptest::collection::vec(char, 8..16).prop_map(|chars| chars.into_iter().collect())
}

/// Secrets of one to three lines with quotes, backslashes, slashes, spaces, `+`, `%`, non-ASCII
/// (astral too) and control characters; never a NUL (it cannot be in an environment variable)
/// nor a line break at the end (`credential set` drops one, as `echo` adds it).
fn secrets() -> impl Strategy<Value = String> {
    let specials = "\"\\/ +%&<'=é€中😀\u{1}\u{8}\t\u{c}\u{1b}\u{7f}\u{2028}";
    let separator = proptest::sample::select(vec!["\n", "\r\n"]);
    (
        segment(specials),
        proptest::collection::vec((separator, segment(specials)), 0..3),
    )
        .prop_map(|(first, rest)| {
            rest.into_iter().fold(first, |mut s, (separator, line)| {
                s.push_str(separator);
                s.push_str(&line);
                s
            })
        })
}

fn stdio_config(home: &Home) {
    home.write_config(&format!(
        r#"[credentials]
store = "file"

[policy]
default = "allow"

[sources.enc]
command = "{python}"
args = ["{server}"]
env = {{ Y = "${{secret:y}}" }}
"#,
        python = repo().join(".venv/bin/python").display(),
        server = repo()
            .join("tests/peers/echo_encodings_server.py")
            .display(),
    ));
}

proptest! {
    #![proptest_config(config(8))]

    /// The secret reaches the upstream in its environment, as `--env 'Y=${secret:y}'` does.
    #[test]
    fn a_secret_echoed_in_any_encoding_reaches_no_output_log_or_file(secret in secrets()) {
        let home = Home::new();
        stdio_config(&home);
        echoes_leave_no_trace(&home, &secret)?;
    }
}

/// The echo server over Streamable HTTP on a free port, expecting `Bearer <secret>`.
struct HttpEcho {
    url: String,
    child: Child,
}

impl HttpEcho {
    fn start(secret: &str) -> HttpEcho {
        let port = free_port();
        let child = python_peer("echo_encodings_server.py")
            .args(["http", &port.to_string()])
            .env("Y", secret)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the test venv's python runs (tests/setup.sh)");
        let server = HttpEcho {
            url: format!("http://127.0.0.1:{port}/mcp"),
            child,
        };
        assert!(
            listening_within(port, Duration::from_secs(30)),
            "the echo server did not listen on port {port}"
        );
        server
    }
}

impl Drop for HttpEcho {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

proptest! {
    #![proptest_config(config(4))]

    /// The secret travels as `Authorization: Bearer …` (so only printable ASCII, as a header
    /// value must be), where reqwest's and hyper's trace lines could show it too.
    #[test]
    fn a_secret_sent_as_a_header_and_echoed_reaches_no_output_log_or_file(
        secret in segment("\"\\/ +%&<'=!~#"),
    ) {
        let server = HttpEcho::start(&secret);
        let home = Home::new();
        home.write_config(&format!(
            r#"[credentials]
store = "file"

[policy]
default = "allow"

[sources.enc]
url = "{url}"
headers = {{ Authorization = "Bearer ${{secret:y}}" }}
"#,
            url = server.url,
        ));
        echoes_leave_no_trace(&home, &secret)?;
    }
}

/// A value too short to scrub is stored with a warning that says so and what to do; a weak
/// one is scrubbed, with a warning; a long one gets no warning.
#[test]
fn credential_set_warns_about_values_too_short_to_scrub() {
    let home = Home::new();
    home.write_config("[credentials]\nstore = \"file\"\n");
    let tiny = run(&home, &["credential", "set", "pin"], "abc", &[]).ok();
    assert!(
        tiny.stderr.contains("warning:")
            && tiny.stderr.contains("not blanked")
            && tiny.stderr.contains("`pin`"),
        "{}",
        tiny.stderr
    );
    let weak = run(&home, &["credential", "set", "short"], "abc123", &[]).ok();
    assert!(
        weak.stderr.contains("warning:")
            && weak.stderr.contains("`short`")
            && weak.stderr.contains("at least 8"),
        "{}",
        weak.stderr
    );
    for run in [&tiny, &weak] {
        assert!(!run.stderr.contains("abc"), "the value is never shown");
    }
    let fine = run(&home, &["credential", "set", "long"], "abcdefgh-1234", &[]).ok();
    assert!(!fine.stderr.contains("warning"), "{}", fine.stderr);
    assert!(fine.stdout.contains("stored `long`"), "{}", fine.stdout);
}

/// A value a source gets from the hub's own environment (`${env:VAR}`) is a credential as much
/// as a stored one: echoed back in any encoding, it reaches neither the script nor the model.
#[test]
fn a_value_from_the_environment_is_blanked_like_a_stored_secret() {
    let secret = "env-token/\"quoted\" + 123";
    let home = Home::new();
    stdio_config(&home);
    let config = std::fs::read_to_string(home.config_path()).expect("the config");
    home.write_config(&config.replace("${secret:y}", "${env:ECHO_TOKEN}"));
    let needles = needles(secret);
    for part in 0..PARTS {
        let exec = run(
            &home,
            &["exec", "--json", "--output-budget", "65536", "-"],
            &script(part),
            &[("ECHO_TOKEN", secret)],
        )
        .ok();
        let envelope: Value = serde_json::from_str(&exec.stdout).expect("a JSON envelope");
        assert_eq!(envelope["status"], "completed", "{envelope:#}");
        assert!(
            envelope["result"].to_string().contains("token=•••"),
            "{envelope:#}"
        );
        let found = check("envelope", exec.stdout.as_bytes(), &needles);
        assert!(found.is_ok(), "{found:?}");
    }
}

/// Every stdio server inherits the hub's environment, so a credential one source reads from it
/// (`${env:VAR}`) is kept from the others' processes, as are the hub's own keys; and should
/// another server come by it anyway (here: from a file, as a token left on disk), it is blanked
/// from that server's listing (search, describe, the cache on disk), its stderr when it fails to
/// start, and every log line.
/// Panics if a file of `home` other than the echo servers' `token-on-disk` holds a needle.
fn assert_no_file_holds(home: &Home, needles: &[(String, String)]) {
    for file in files(home.path()) {
        if file.ends_with("token-on-disk") {
            continue;
        }
        let bytes = std::fs::read(&file).expect("read a file of the home");
        let found = check(&file.display().to_string(), &bytes, needles);
        assert!(found.is_ok(), "{found:?}");
    }
}

/// A config of echo servers: `owner` sends `secret` (its `env` entry says how), `reader` and
/// `crashy` (which fails at start) read it from a file beside the config (`token-on-disk`) and
/// echo it everywhere they can, and `more` are further sources (name, mode, env).
fn owner_and_readers(home: &Home, secret: &str, owner_env: &str, more: &[(&str, &str, &str)]) {
    let leaked = home.path().join("token-on-disk");
    std::fs::write(&leaked, secret).unwrap();
    let python = repo().join(".venv/bin/python");
    let server = repo().join("tests/peers/echo_encodings_server.py");
    let source = |name: &str, mode: &str, env: &str| {
        format!(
            "[sources.{name}]\ncommand = {python:?}\nargs = [{server:?}, {mode:?}]\nenv = {{ {env} }}\n\n",
            python = python.display().to_string(),
            server = server.display().to_string(),
        )
    };
    let leaked = leaked.display().to_string();
    let mut config =
        String::from("[credentials]\nstore = \"file\"\n\n[policy]\ndefault = \"allow\"\n\n");
    config.push_str(&source("owner", "stdio", owner_env));
    for (name, mode, env) in more {
        config.push_str(&source(name, mode, env));
    }
    config.push_str(&source(
        "reader",
        "stdio",
        &format!("ECHO_FILE = {leaked:?}"),
    ));
    config.push_str(&source(
        "crashy",
        "crash",
        &format!("ECHO_FILE = {leaked:?}"),
    ));
    home.write_config(&config);
}

#[test]
fn a_credential_from_the_environment_reaches_no_other_source_nor_the_model() {
    let secret = "owner-env-token-5150 / \"quoted\"";
    let home = Home::new();
    owner_and_readers(
        &home,
        secret,
        "Y = \"${env:OWNER_TOKEN}\"",
        &[("prober", "stdio", "")],
    );
    let env = [
        ("OWNER_TOKEN", secret),
        (
            "CAPABILITIES_STATE_KEY",
            "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
        ),
        ("CAPABILITIES_LOG", "trace"),
    ];
    let needles = needles(secret);

    let probe = run(
        &home,
        &["exec", "--json", "-"],
        r#"const has = async (name) => (await prober.inherited({ name })).result;
return { owner: await has("OWNER_TOKEN"), passphrase: await has("CAPABILITIES_PASSPHRASE"),
  stateKey: await has("CAPABILITIES_STATE_KEY"), path: await has("PATH"),
  ownerGotIt: JSON.stringify(await owner.echo({ kind: "raw" })) };"#,
        &env,
    )
    .ok();
    let envelope: Value = serde_json::from_str(&probe.stdout).expect("a JSON envelope");
    assert_eq!(envelope["status"], "completed", "{envelope:#}");
    let result = &envelope["result"];
    assert_eq!(
        result["path"], true,
        "the rest of the environment is inherited: {result}"
    );
    for withheld in ["owner", "passphrase", "stateKey"] {
        assert_eq!(
            result[withheld], false,
            "`{withheld}` reached another source: {result}"
        );
    }
    assert!(
        result["ownerGotIt"]
            .as_str()
            .is_some_and(|t| t.contains("•••")),
        "the source that names the variable still gets it: {result}"
    );
    let found = check(
        "exec",
        format!("{}{}", probe.stdout, probe.stderr).as_bytes(),
        &needles,
    );
    assert!(found.is_ok(), "{found:?}");

    let search = run(
        &home,
        &["search", "describes itself with the credential"],
        "",
        &env,
    );
    assert!(search.stdout.contains("reader.about"), "{}", search.stdout);
    assert!(
        search.stderr.contains("crashy"),
        "the failed source is named: {}",
        search.stderr
    );
    let describe = run(&home, &["describe", "reader.about"], "", &env).ok();
    assert!(describe.stdout.contains("•••"), "{}", describe.stdout);
    for (what, run) in [("search", &search), ("describe", &describe)] {
        let found = check(
            what,
            format!("{}{}", run.stdout, run.stderr).as_bytes(),
            &needles,
        );
        assert!(found.is_ok(), "{found:?}");
    }
    assert_no_file_holds(&home, &needles);
}

/// A stdio source that prints its token after a long run of text, on stdout (where only
/// JSON-RPC belongs) and on stderr: each line is cut for the error message and the log, and
/// the cut must not fall inside a secret that is blanked only afterwards. The paddings put the
/// token across the 300-character cut of stdout noise and the 4096-byte cut of a logged
/// stderr line.
#[test]
fn a_secret_across_the_cut_of_a_long_stdio_line_leaves_no_prefix() {
    let secret = "xoxb-Sl4ckT0kenValue-1234567890abcd";
    let home = Home::new();
    let script = "pad=$(printf '%0266d' 0 | tr 0 .); echo \"starting with config: $pad token=$TOKEN\"; \
                  pad=$(printf '%04069d' 0 | tr 0 -); echo \"debug: $pad$TOKEN\" >&2; sleep 0.5; exit 1";
    home.write_config(&format!(
        "[credentials]\nstore = \"file\"\n\n[sources.noisy]\ncommand = \"sh\"\nargs = [\"-c\", {}]\nenv = {{ TOKEN = \"${{secret:tok}}\" }}\n",
        serde_json::to_string(script).unwrap()
    ));
    run(&home, &["credential", "set", "tok"], secret, &[]).ok();
    let tested = run(
        &home,
        &["source", "test", "noisy"],
        "",
        &[("CAPABILITIES_LOG", "debug")],
    )
    .fails();
    let searched = run(
        &home,
        &["exec", "-"],
        "return await hub.search(\"anything\")",
        &[],
    );
    for (what, text) in [
        ("source test", &tested.stdout),
        ("source test's log", &tested.stderr),
        ("search", &searched.stdout),
        ("search's errors", &searched.stderr),
    ] {
        assert!(
            !text.contains("xoxb"),
            "{what} shows the start of the secret: {text}"
        );
    }
    // The lines are there, blanked rather than dropped.
    assert!(
        tested.stderr.contains("token=•••") || tested.stdout.contains("token=•••"),
        "{}\n{}",
        tested.stdout,
        tested.stderr
    );
    assert!(tested.stderr.contains("-----•••"), "{}", tested.stderr);
}

/// A secret made of digits (a PIN, a numeric key or account number) that an upstream parsed
/// and echoes as a JSON number, an integer or a float, in its result and as a default in its
/// listing, reaches neither the script, nor the envelope, nor describe, nor any file of the
/// home; and a script that writes the number into a call's arguments is refused, as it is when
/// it writes the string.
#[test]
fn a_numeric_secret_echoed_as_a_number_is_blanked_and_refused_as_an_argument() {
    let secret = "73194628501937";
    let home = Home::new();
    stdio_config(&home);
    run(&home, &["credential", "set", "y"], secret, &[]).ok();
    // The script spells the number in two halves, so that the secret is in no file of the
    // home because the script was kept.
    let (first, last) = secret.split_at(7);
    let script = format!(
        r#"
const r = await enc.number({{}});
let sent = "sent";
try {{ await enc.number({{ pin: Number("{first}" + "{last}") }}) }} catch (e) {{ sent = e.code }}
return {{ r, sent }};
"#
    );
    let exec = run(&home, &["exec", "--json", "-"], &script, &[]).ok();
    let envelope: Value = serde_json::from_str(&exec.stdout).expect("a JSON envelope");
    assert_eq!(envelope["status"], "completed", "{envelope:#}");
    let result = &envelope["result"];
    assert_eq!(
        result["r"],
        serde_json::json!({ "pin": "•••", "as_float": "•••", "list": ["•••"] }),
        "{envelope:#}"
    );
    assert_eq!(result["sent"], "policy_denied", "{envelope:#}");
    let described = run(&home, &["describe", "enc.number"], "", &[]).ok();
    for (what, text) in [("envelope", &exec.stdout), ("describe", &described.stdout)] {
        assert!(
            !text.contains(secret),
            "the {what} shows the secret: {text}"
        );
    }
    for file in files(home.path()) {
        let bytes = std::fs::read(&file).expect("read a file of the home");
        assert!(
            !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
            "{} holds the secret",
            file.display()
        );
    }
}

/// The stored secret one source sends reaches no other source's answers: a server that reads
/// it from somewhere shared (here a file) puts it in its descriptions, its results and its
/// crash message, and search, describe, exec, the hub's own `search` and every file of the
/// home show blanks. Each connection's answers are cleaned of every secret of the config, not
/// only of what it sent itself.
#[test]
fn a_stored_secret_of_one_source_is_blanked_from_every_other_source() {
    let secret = "stored-Secret-9f3kQz7Lw2";
    let home = Home::new();
    owner_and_readers(&home, secret, "Y = \"${secret:ownertok}\"", &[]);
    run(&home, &["credential", "set", "ownertok"], secret, &[]).ok();
    let needles = needles(secret);
    let shown = |what: &str, run: &Run| {
        let found = check(
            what,
            format!("{}{}", run.stdout, run.stderr).as_bytes(),
            &needles,
        );
        assert!(found.is_ok(), "{found:?}");
    };

    let exec = run(
        &home,
        &["exec", "--json", "-"],
        r#"return JSON.stringify(await reader.echo({ kind: "raw" }));"#,
        &[("CAPABILITIES_LOG", "trace")],
    )
    .ok();
    let envelope: Value = serde_json::from_str(&exec.stdout).expect("a JSON envelope");
    assert!(
        envelope["result"]
            .as_str()
            .is_some_and(|t| t.contains("•••")),
        "the reader did echo the secret: {envelope}"
    );
    shown("exec", &exec);
    let search = run(
        &home,
        &["search", "describes itself with the credential"],
        "",
        &[],
    );
    assert!(search.stdout.contains("reader.about"), "{}", search.stdout);
    assert!(search.stderr.contains("crashy"), "{}", search.stderr);
    shown("search", &search);
    let describe = run(&home, &["describe", "reader.about"], "", &[]).ok();
    assert!(describe.stdout.contains("•••"), "{}", describe.stdout);
    shown("describe", &describe);

    // The hub's `search` tool, as an agent gets it, names the failed source with its reason.
    let mut hub = home.command(&["hub", "serve"]);
    hub.env("CAPABILITIES_PASSPHRASE", PASSPHRASE)
        .env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus");
    let mut raw = crate::raw::Raw::spawn(hub);
    raw.initialize("2025-11-25");
    let answer = raw.call(
        1,
        "search",
        serde_json::json!({ "query": "describes itself with the credential" }),
    );
    raw.close();
    let text = answer.to_string();
    assert!(text.contains("reader.about"), "{text}");
    let found = check("the hub's search", text.as_bytes(), &needles);
    assert!(found.is_ok(), "{found:?}");

    assert_no_file_holds(&home, &needles);
}

/// Regression (review 7): a secret stored anew (`credential set`) while a hub ran reached the
/// model, the logs and the catalogue cache from a source that had it some other way: the hub
/// had read the config's secrets once, at its first run. Now both values are blanked, from a
/// source connected before the change and from one connected after.
#[test]
fn a_secret_stored_anew_while_a_hub_runs_is_blanked_with_the_old_one() {
    let (old, new) = ("rotated-Old-Value-4kQ9", "rotated-New-Value-7pX2");
    let home = Home::new();
    // `second` reads the token from disk, as `reader` does, but starts only after the change.
    let on_disk = home.path().join("token-on-disk").display().to_string();
    let second = format!("ECHO_FILE = {on_disk:?}");
    owner_and_readers(
        &home,
        old,
        "Y = \"${secret:ownertok}\"",
        &[("second", "stdio", &second)],
    );
    run(&home, &["credential", "set", "ownertok"], old, &[]).ok();
    // With every listing cached, the hub starts a source only when a run calls it.
    let listed = run(&home, &["search", "echo"], "", &[]);
    assert!(listed.stdout.contains("second.echo"), "{}", listed.stdout);
    let mut hub = home.command(&["hub", "serve"]);
    hub.env("CAPABILITIES_PASSPHRASE", PASSPHRASE)
        .env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus")
        .env("CAPABILITIES_LOG", "trace")
        .stderr(Stdio::null());
    let mut raw = crate::raw::Raw::spawn(hub);
    raw.initialize("2025-11-25");
    let mut id = 0;
    let mut echo = |raw: &mut crate::raw::Raw, source: &str| {
        id += 1;
        let code = format!(
            r#"const kinds = ["raw", "b64std_1", "hex"]; return await Promise.all(kinds.map(async (kind) => JSON.stringify(await {source}.echo({{ kind }}))));"#
        );
        let answer = raw.call(id, "execute", serde_json::json!({ "code": code }));
        let envelope = answer["result"]["structuredContent"].clone();
        assert_eq!(envelope["status"], "completed", "{answer}");
        envelope.to_string()
    };
    // Before the change: the reader is connected, and echoes the old value, blanked.
    let before = echo(&mut raw, "reader");
    assert!(before.contains("•••") && !before.contains(old), "{before}");

    run(&home, &["credential", "set", "ownertok"], new, &[]).ok();
    std::fs::write(home.path().join("token-on-disk"), new).unwrap();
    // `second`, started after the change, echoes the new value: blanked, and the old value
    // still is, from the sources connected before.
    let (needles_old, needles_new) = (needles(old), needles(new));
    for source in ["reader", "second", "owner"] {
        let text = echo(&mut raw, source);
        assert!(text.contains("•••"), "{source}: {text}");
        for needles in [&needles_old, &needles_new] {
            let found = check(source, text.as_bytes(), needles);
            assert!(found.is_ok(), "{found:?}");
        }
    }
    // The hub's own search reads the listings of sources connected after the change.
    let answer = raw.call(
        99,
        "search",
        serde_json::json!({ "query": "describes itself with the credential" }),
    );
    raw.close();
    let text = answer.to_string();
    assert!(text.contains("reader.about"), "{text}");
    for needles in [&needles_old, &needles_new] {
        let found = check("the hub's search", text.as_bytes(), needles);
        assert!(found.is_ok(), "{found:?}");
        assert_no_file_holds(&home, needles);
    }
}
