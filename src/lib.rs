//! `capabilities`: a terminal-first MCP hub. It connects to the user's MCP servers ("sources"),
//! keeps a catalogue of their tools, and serves an agent three tools: `search`, `describe` and
//! `execute`.
//!
//! Where things are:
//!
//! | module | owns |
//! |---|---|
//! | [`app`] | the application context (paths, credentials, settings) and the engine verbs share |
//! | [`approvals`] | the one `decide()` every approval channel uses, and the browser approval page |
//! | [`cli`] | the clap definitions (`*Args`) of every verb; no logic |
//! | [`commands`] | one function per verb; the only place (with the TUI) that prints |
//! | [`config`] | `config.toml`: paths, schema, references, validation; the policy that follows it |
//! | [`credentials`] | secrets: the OS keychain or an encrypted file; redaction; the state-store key |
//! | [`sources`] | upstreams: MCP clients (rmcp, stdio children and Streamable HTTP) and OpenAPI HTTP APIs; timeouts, restarts |
//! | [`oauth`] | OAuth connections: sign-in (discovery, registration, PKCE), tokens in the credential store |
//! | [`model`] | the shared vocabulary, depending on nothing: tool definitions, addresses, annotations |
//! | [`catalog`] | the namespaced tool index: the cache, BM25F search, TypeScript, describe |
//! | [`execute`] | one `execute` run: the sandbox's bridge to policy, sources and the journal |
//! | [`hub`] | the MCP server over stdio and Streamable HTTP: the three tools, or every tool in direct mode; skills |
//! | [`policy`] | pure allow / ask / deny decisions |
//! | [`runs`] | the state store: claims, journals, approvals, audit, bearer tokens; encrypted at rest |
//! | [`sandbox`] | the QuickJS runtime that runs `execute` scripts |
//! | [`skills`] | skills: local `SKILL.md` folders and the ones sources serve; loading, mistakes, describing them |
//! | [`tui`] | `capabilities dashboard`: live runs and the approval queue (ratatui) |
//! | [`token_count`] | o200k_base token counting for budgets |
//! | [`tls`] | the rustls crypto provider every HTTP client uses; TLS failures in plain words |
//! | [`time_zone`] | UTC for every script (replays match across hosts), the user's zone for every child process |
//! | [`error_text`] | an error and its causes as one line for the user |
//! | [`printable`] | outside text made safe to print: nothing in it can drive a terminal or hide text |
//! | [`env_vars`] | every environment variable read |
//! | [`logging`] | logs on stderr as text or JSON lines, request and run ids, OpenTelemetry export |
//!
//! A request flows `hub` (or `commands`, through `app`) → `catalog` (search, describe) or
//! `execute` → `sandbox` → back through `execute`'s bridge (`policy`, then the journal in `runs`)
//! → `sources` → the upstream server. A call that needs a person pauses the run in `runs`;
//! every channel (`approvals`' page, `tui`, `hub approve`, the `exec` prompt, an elicitation
//! answer in `hub`) records the decision through `approvals::decide`, and `execute` resumes the
//! run from its journal. Every module may use `model`; no import cycle runs between modules.

pub mod app;
pub mod approvals;
pub mod catalog;
pub mod cli;
pub mod commands;
pub mod config;
pub mod credentials;
pub mod env_vars;
pub mod error_text;
pub mod execute;
pub mod hub;
pub mod logging;
pub mod model;
pub mod oauth;
pub mod policy;
pub mod printable;
pub mod runs;
pub mod sandbox;
pub mod skills;
pub mod sources;
// Changes the environment once, before any thread starts (`std::env::set_var` is unsafe).
#[allow(unsafe_code)]
pub mod time_zone;
pub mod tls;
pub mod token_count;
pub mod tui;

use std::process::ExitCode;

/// Parses the command line, runs the verb, and maps the outcome to an exit code:
/// 0 success, 1 a failure the user can fix (bad input, config, unreachable source), 2 usage
/// errors (clap); `exec` adds 3 (waiting for approval), 4 (cancelled) and 5 (the run is being
/// run by another process), and a signal gives 128 + its number.
pub fn run() -> ExitCode {
    // First, while this is the only thread: the environment may be changed only now.
    time_zone::pin_utc();
    // Before any secret is read: from here on no other process of the user (an upstream among
    // them) can read this one's memory or environment.
    credentials::keep_private();
    commands::run(std::env::args_os())
}
