//! The clap definitions of every verb (`*Args`). No logic lives here: `commands` acts on them,
//! and the completions and man page are generated from them.

use std::net::SocketAddr;
use std::path::PathBuf;

mod help;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "capabilities",
    version,
    about = "A terminal-first MCP hub: search, describe and script every tool of your MCP servers",
    long_about = "capabilities connects to your MCP servers (\"sources\"), keeps a catalogue of their tools, \
and lets you (or your agent) find them with `search`, read their exact TypeScript types with `describe`, \
and call them from one sandboxed script.",
    after_help = help::QUICK_START,
    propagate_version = true
)]
pub struct Cli {
    /// Config file to use instead of the default (also $CAPABILITIES_CONFIG).
    #[arg(long, global = true, value_name = "PATH", help_heading = GLOBAL)]
    pub config: Option<PathBuf>,

    /// When to colour log lines and the dashboard and show progress lines (results are plain
    /// text): auto (only on a terminal, and not with $NO_COLOR set), always or never.
    #[arg(
        long,
        global = true,
        value_enum,
        default_value_t = ColorChoice::Auto,
        value_name = "WHEN",
        help_heading = GLOBAL
    )]
    pub color: ColorChoice,

    /// How log lines on stderr look (also $CAPABILITIES_LOG_FORMAT); $CAPABILITIES_LOG picks
    /// which lines are written, e.g. `info` for an access log of the hub's requests.
    #[arg(
        long,
        global = true,
        value_enum,
        default_value_t = LogFormat::Text,
        env = crate::env_vars::CAPABILITIES_LOG_FORMAT,
        hide_env = true,
        value_name = "FORMAT",
        help_heading = GLOBAL
    )]
    pub log_format: LogFormat,

    /// Export traces (a span per hub request and per run) to this OpenTelemetry collector over
    /// OTLP/HTTP, e.g. http://localhost:4318 (also $OTEL_EXPORTER_OTLP_ENDPOINT). Needs a build
    /// with `--features otel`.
    // Hidden where it cannot work: a build without the feature only refuses it.
    #[arg(long, global = true, value_name = "URL", help_heading = GLOBAL, hide = !cfg!(feature = "otel"))]
    pub otel_endpoint: Option<String>,

    #[command(subcommand)]
    pub command: Command,
}

/// The help heading of the options every verb takes.
const GLOBAL: &str = "Global options";

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// Colour and progress on a terminal, unless $NO_COLOR is set.
    Auto,
    Always,
    Never,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Lines for people; a request's span (with its request id) comes before the message.
    Text,
    /// One JSON object per line, every one with a request_id: timestamp, level, target,
    /// request_id, run_id, message, fields, spans.
    Json,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Write a commented starter config.
    #[command(
        after_help = help::INIT
    )]
    Init(InitArgs),

    /// Add, list, test, enable, disable and remove sources (MCP servers).
    #[command(subcommand)]
    Source(SourceCommand),

    /// Find tools by what you want to do; prints one-line TypeScript signatures, best match first.
    #[command(
        after_help = help::SEARCH
    )]
    Search(SearchArgs),

    /// Print exact TypeScript declarations of tools, namespaces or named types.
    #[command(
        after_help = help::DESCRIBE
    )]
    Describe(DescribeArgs),

    /// Run a JavaScript (or TypeScript) script against your sources in the sandbox.
    #[command(
        after_help = help::EXEC
    )]
    Exec(ExecArgs),

    /// Call one tool with JSON arguments, under policy, and print its result (for shell scripts).
    #[command(after_help = help::CALL)]
    Call(CallArgs),

    /// Print a shell completion script.
    #[command(
        after_help = help::COMPLETIONS
    )]
    Completions(CompletionsArgs),

    /// Run the MCP hub that your agent talks to.
    #[command(subcommand)]
    Hub(HubCommand),

    /// Print the MCP client config that starts the hub, or write it into the client's config file.
    #[command(
        after_help = help::INSTALL
    )]
    Install(InstallArgs),

    /// Store, list, test and remove secrets: the values of `${secret:NAME}` in the config.
    #[command(subcommand)]
    Credential(CredentialCommand),

    /// Check this machine: the config, which credential store works here, and what the sources need.
    #[command(
        after_help = help::DOCTOR
    )]
    Doctor(DoctorArgs),

    /// Show, change and explain the allow / ask / deny policy.
    #[command(subcommand)]
    Policy(PolicyCommand),

    /// Watch every run on this machine and decide on waiting calls, live, in a terminal UI.
    #[command(
        alias = "tui",
        after_help = help::DASHBOARD
    )]
    Dashboard(DashboardArgs),

    /// Create, list and revoke the bearer tokens that `hub serve --http` accepts.
    #[command(subcommand)]
    Token(TokenCommand),

    /// List, show, add and remove skills (folders with a SKILL.md) the agent can describe.
    #[command(subcommand)]
    Skill(SkillCommand),

    /// Show the manual page of capabilities, or of one verb (`capabilities man hub serve`).
    #[command(after_help = help::MAN)]
    Man(ManArgs),
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// The verb whose page to show, e.g. `search` or `hub serve` (default: the main page).
    #[arg(value_name = "VERB")]
    pub verb: Vec<String>,
    /// Write every page into this directory (e.g. ~/.local/share/man/man1) instead of showing one.
    #[arg(long, value_name = "DIR", conflicts_with = "verb")]
    pub install: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Print the checks as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct CallArgs {
    /// The tool's address, e.g. `everything.echo`.
    #[arg(value_name = "ADDRESS")]
    pub address: String,
    /// The arguments as a JSON object (default `{}`); `-` reads them from standard input.
    #[arg(value_name = "JSON")]
    pub arguments: Option<String>,
    /// The connection to call through (default: the source's default).
    #[arg(long, value_name = "NAME")]
    pub connection: Option<String>,
    /// Print the whole envelope as JSON instead of the result.
    #[arg(long)]
    pub json: bool,
    /// Call under this profile's sources and policy.
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// Overwrite an existing config.
    #[arg(long)]
    pub force: bool,
    /// Print the starter config instead of writing it.
    #[arg(long, conflicts_with = "reference")]
    pub print: bool,
    /// Print the full commented reference of every key.
    #[arg(long)]
    pub reference: bool,
}

#[derive(Debug, Subcommand)]
pub enum SourceCommand {
    /// Add a source: a command started over stdio (after `--`), or a Streamable HTTP `--url`.
    #[command(
        after_help = help::SOURCE_ADD
    )]
    Add(SourceAddArgs),
    /// Connect to every source and list them with their live status and tool counts.
    #[command(
        after_help = help::SOURCE_LIST
    )]
    List(SourceListArgs),
    /// Remove a source from the config.
    #[command(after_help = help::SOURCE_REMOVE)]
    Remove(SourceNameArgs),
    /// Connect to one source, list its tools, and report what happened.
    #[command(after_help = help::SOURCE_TEST)]
    Test(SourceTestArgs),
    /// Turn a source back on: it is connected, searched and callable again.
    #[command(after_help = help::SOURCE_ENABLE)]
    Enable(SourceNameArgs),
    /// Turn a source off without removing it: it is not started, searched or callable.
    #[command(after_help = help::SOURCE_DISABLE)]
    Disable(SourceNameArgs),
    /// Import the MCP servers of a client config (the `mcpServers` JSON of Claude, Cursor and others).
    #[command(
        after_help = help::SOURCE_IMPORT
    )]
    Import(SourceImportArgs),
    /// List the tools of every source (or one) again now, and say which changed.
    #[command(after_help = help::SOURCE_REFRESH)]
    Refresh(SourceRefreshArgs),
    /// Show how each changed tool differs from the version you confirmed, and confirm it.
    #[command(after_help = help::SOURCE_REVIEW)]
    Review(SourceReviewArgs),
    /// Sign a connection of a Streamable HTTP source in with OAuth, in your browser.
    #[command(after_help = help::SOURCE_LOGIN)]
    Login(SourceLoginArgs),
    /// Forget a connection's OAuth sign-in (its tokens in the credential store).
    #[command(after_help = help::SOURCE_LOGOUT)]
    Logout(SourceLoginArgs),
}

#[derive(Debug, Args)]
pub struct SourceLoginArgs {
    /// The source's name, as in `source list`.
    pub name: String,
    /// The connection to sign in (default: the source's default connection).
    #[arg(long, value_name = "NAME")]
    pub connection: Option<String>,
    /// Print the sign-in page's address instead of opening a browser.
    #[arg(long)]
    pub no_browser: bool,
}

#[derive(Debug, Args)]
pub struct SourceRefreshArgs {
    /// Only this source (default: every enabled source).
    pub name: Option<String>,
}

#[derive(Debug, Args)]
pub struct SourceReviewArgs {
    /// Only this source's tools (default: every source).
    pub name: Option<String>,
    /// Confirm every change shown without asking.
    #[arg(long)]
    pub yes: bool,
}

#[derive(Debug, Args)]
pub struct SourceAddArgs {
    /// The source's name: the global object scripts use (letters, digits, `_`).
    pub name: String,
    /// Streamable HTTP endpoint of the server.
    #[arg(long, value_name = "URL", conflicts_with_all = ["command", "env", "cwd", "openapi"], required_unless_present_any = ["command", "openapi"])]
    pub url: Option<String>,
    /// An HTTP API's OpenAPI 3.x document (JSON or YAML), as a file or a URL: each operation
    /// becomes a tool.
    #[arg(long, value_name = "FILE|URL", conflicts_with_all = ["command", "env", "cwd"])]
    pub openapi: Option<String>,
    /// Where an OpenAPI source's requests go, instead of the document's `servers`.
    #[arg(long, value_name = "URL", requires = "openapi")]
    pub base_url: Option<String>,
    /// A header for an HTTP or OpenAPI source, as NAME=VALUE (repeatable).
    #[arg(long = "header", value_name = "NAME=VALUE")]
    pub headers: Vec<String>,
    /// An OpenAPI source's credential for one of its document's security schemes, as
    /// SCHEME=VALUE, e.g. `api_key=${secret:pets}` (repeatable).
    #[arg(long = "auth", value_name = "SCHEME=VALUE", requires = "openapi")]
    pub auth: Vec<String>,
    /// An environment variable for a stdio source, as KEY=VALUE (repeatable).
    #[arg(long = "env", value_name = "KEY=VALUE")]
    pub env: Vec<String>,
    /// Working directory of a stdio source.
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<String>,
    /// The command that starts the server, and its arguments (after `--`).
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
    /// Write the source without connecting to it first.
    #[arg(long)]
    pub no_test: bool,
}

#[derive(Debug, Args)]
pub struct SourceListArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// List only this profile's sources.
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
}

#[derive(Debug, Args)]
pub struct SourceNameArgs {
    /// The source's name, as in `source list`.
    pub name: String,
}

#[derive(Debug, Args)]
pub struct SourceTestArgs {
    /// The source's name, as in `source list`.
    pub name: String,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct SearchArgs {
    /// What you want to do, in a few words. May be empty with --namespace to list a source.
    pub query: String,
    /// Search (or list) only this source.
    #[arg(long, short = 'n', value_name = "NAMESPACE")]
    pub namespace: Option<String>,
    /// Show at most this many tools.
    #[arg(long, short = 'l', default_value_t = 10, value_parser = clap::value_parser!(u16).range(1..=200))]
    pub limit: u16,
    /// Re-list every source instead of using cached listings.
    #[arg(long)]
    pub refresh: bool,
    /// Search only this profile's sources, under its policy.
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// Print the matches as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct DescribeArgs {
    /// 1 to 10 targets: an address (everything.echo), a namespace (everything) or a named type.
    #[arg(required = true, num_args = 1..=10, value_name = "TARGET")]
    pub targets: Vec<String>,
    /// Token budget of the output (o200k_base tokens).
    // The hub's bounds: a declaration the CLI shows, an agent can be shown too.
    #[arg(long, default_value_t = 2500, value_parser = clap::value_parser!(u32).range(
        i64::from(crate::catalog::describe::MIN_BUDGET_TOKENS)..=i64::from(crate::catalog::describe::MAX_BUDGET_TOKENS)
    ))]
    pub budget: u32,
    /// Re-list every source instead of using cached listings.
    #[arg(long)]
    pub refresh: bool,
    /// Describe only this profile's tools, under its policy.
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// Print the declarations as JSON (`{ "targets": […], "declarations": "…" }`).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ExecArgs {
    /// The script file, or `-` to read it from standard input.
    #[arg(value_name = "SCRIPT", required_unless_present = "resume")]
    pub script: Option<String>,
    /// Continue a run that waited for approval (after `capabilities hub approve RUN_ID`); a
    /// unique prefix of the id is enough.
    #[arg(long, value_name = "RUN_ID", conflicts_with = "script")]
    pub resume: Option<String>,
    /// Print the whole envelope as JSON instead of the result.
    #[arg(long)]
    pub json: bool,
    /// Largest result to return, in bytes of JSON (1,024 to 65,536).
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(1024..=65536))]
    pub output_budget: Option<u64>,
    /// Run with only this profile's sources, under its policy; a run resumes only under the
    /// profile it started with.
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// The script itself, when a verb builds one (`capabilities call`) rather than naming a file.
    #[arg(skip)]
    pub code: Option<String>,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to print completions for.
    pub shell: Shell,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
    Elvish,
    Powershell,
}

#[derive(Debug, Args)]
pub struct SourceImportArgs {
    /// The client config file: JSON with `mcpServers` (or `servers`), or Codex's TOML.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Show what would be imported without changing the config.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Subcommand)]
pub enum HubCommand {
    /// Serve search, describe and execute to an MCP client over stdin/stdout, or over HTTP.
    #[command(
        after_help = help::HUB_SERVE
    )]
    Serve(HubServeArgs),
    /// Approve the pending calls of a paused run; the agent then resumes it.
    #[command(
        after_help = help::HUB_APPROVE
    )]
    Approve(HubApproveArgs),
    /// Deny the pending calls of a paused run.
    #[command(
        after_help = help::HUB_DENY
    )]
    Deny(HubDenyArgs),
    /// List recent runs, or only those waiting for a decision.
    #[command(
        after_help = help::HUB_RUNS
    )]
    Runs(HubRunsArgs),
}

#[derive(Debug, Args)]
pub struct HubApproveArgs {
    /// The run id an envelope or `hub runs --pending` shows, or a unique prefix of it; without
    /// one, the only run that waits.
    pub run_id: Option<String>,
    /// Decide only this call (its number in the run) instead of every pending one.
    #[arg(long, value_name = "SEQ")]
    pub call: Option<u64>,
    /// Also allow later calls of the same tool in this run without asking.
    #[arg(long, conflicts_with = "always")]
    pub for_run: bool,
    /// Also add a policy rule that always allows the tool (asks for confirmation on a terminal).
    #[arg(long)]
    pub always: bool,
    /// Decide without showing the calls and asking first on a terminal (needed for --always
    /// without one).
    #[arg(long, short = 'y')]
    pub yes: bool,
}

#[derive(Debug, Args)]
pub struct HubDenyArgs {
    /// The run id an envelope or `hub runs --pending` shows, or a unique prefix of it; without
    /// one, the only run that waits.
    pub run_id: Option<String>,
    /// Decide only this call instead of every pending one.
    #[arg(long, value_name = "SEQ")]
    pub call: Option<u64>,
}

#[derive(Debug, Args)]
pub struct HubRunsArgs {
    /// Only runs with calls waiting for a decision.
    #[arg(long)]
    pub pending: bool,
    /// Print JSON (with calls, approvals and the audit trail) instead of a table.
    #[arg(long)]
    pub json: bool,
    /// How many recent runs to show.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u16).range(1..=1000))]
    pub limit: u16,
    /// Delete every stored run (journals, approvals, audit) and the key they are encrypted
    /// with, to start a new run history, e.g. after that key was lost. Bearer tokens and
    /// settings are kept. Stop running hubs first. Asks first on a terminal.
    #[arg(long, conflicts_with_all = ["pending", "json"])]
    pub clear: bool,
    /// With --clear: delete without asking (needed when there is no terminal to ask on).
    #[arg(long, short = 'y', requires = "clear")]
    pub yes: bool,
}

#[derive(Debug, Args)]
pub struct HubServeArgs {
    /// Serve only this profile's sources, under its policy rules.
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// Serve every tool of the sources as its own MCP tool (`namespace_tool`) instead of
    /// search, describe and execute; a profile chooses this with `mode = "direct"`.
    #[arg(long)]
    pub direct: bool,
    /// Serve MCP Streamable HTTP at http://ADDRESS/mcp instead of stdio (e.g. 127.0.0.1:8931).
    #[arg(long, value_name = "ADDRESS", value_parser = listen_address)]
    pub http: Option<SocketAddr>,
    /// Allow --http on an address other machines can reach (put TLS termination in front).
    #[arg(long, requires = "http")]
    pub allow_remote: bool,
    /// A host name clients use to reach the hub, accepted in the `Host` header besides
    /// localhost (repeatable; the DNS-rebinding check refuses any other).
    #[arg(long = "allowed-host", value_name = "HOST", requires = "http")]
    pub allowed_hosts: Vec<String>,
    /// A web origin (`scheme://host[:port]`) whose pages may call the hub from a browser, besides
    /// the hub's own (repeatable). A request whose `Origin` header names any other is refused.
    #[arg(long = "allow-origin", value_name = "ORIGIN", requires = "http")]
    pub allowed_origins: Vec<String>,
    /// Seconds a client has to send the whole head of a request once its first byte arrived.
    #[arg(long, value_name = "SECONDS", requires = "http", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub header_timeout: u64,
    /// Seconds a connection may stay open with no request in progress and nothing received.
    #[arg(long, value_name = "SECONDS", requires = "http", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=86400))]
    pub idle_timeout: u64,
    /// Seconds a client has to send the whole body of a request once its head arrived.
    #[arg(long, value_name = "SECONDS", requires = "http", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub body_timeout: u64,
    /// The most connections served at once; one more is answered 503 and closed.
    #[arg(long, value_name = "N", requires = "http", default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1..=65536))]
    pub max_connections: u32,
}

#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Create a bearer token and print it once; only its hash is stored.
    #[command(
        after_help = help::TOKEN_CREATE
    )]
    Create(TokenCreateArgs),
    /// List tokens (never their values): profile, patterns, expiry, and whether revoked.
    #[command(
        after_help = help::TOKEN_LIST
    )]
    List(TokenListArgs),
    /// Revoke a token; the hub refuses it from the next request (or call) on.
    #[command(after_help = help::TOKEN_REVOKE)]
    Revoke(TokenNameArgs),
}

#[derive(Debug, Args)]
pub struct TokenCreateArgs {
    /// A name for the token (letters, digits, `-`, `_`), used by `token revoke`.
    pub name: String,
    /// Only a hub serving this profile accepts the token.
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// How long the token works: a number and a unit, s, m, h, d or w (e.g. 30d). Default: until revoked.
    #[arg(long, value_name = "DURATION")]
    pub expires: Option<String>,
    /// An address pattern the holder may call, e.g. `github.*` (repeatable). Default: every tool.
    #[arg(long = "allow", value_name = "PATTERN")]
    pub allow: Vec<String>,
}

#[derive(Debug, Args)]
pub struct TokenListArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum SkillCommand {
    /// List the skills (name and description), and every SKILL.md that could not be loaded.
    #[command(after_help = help::SKILL_LIST)]
    List(SkillListArgs),
    /// Show a skill as the agent sees it: its instructions and supporting files.
    #[command(after_help = help::SKILL_SHOW)]
    Show(SkillNameArgs),
    /// Copy a skill folder into the config directory's skills/, after checking its SKILL.md.
    #[command(after_help = help::SKILL_ADD)]
    Add(SkillAddArgs),
    /// Delete a skill from the config directory's skills/.
    #[command(after_help = help::SKILL_REMOVE)]
    Remove(SkillNameArgs),
}

#[derive(Debug, Args)]
pub struct SkillListArgs {
    /// Print JSON instead of lines.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct SkillNameArgs {
    /// The skill's name, as in `skill list`.
    pub name: String,
}

#[derive(Debug, Args)]
pub struct SkillAddArgs {
    /// A folder with a SKILL.md (and any supporting files).
    pub path: std::path::PathBuf,
}

#[derive(Debug, Args)]
pub struct TokenNameArgs {
    /// The token's name, as in `token list`.
    pub name: String,
}

#[derive(Debug, Args)]
pub struct InstallArgs {
    /// The MCP client to configure, or `print` for the generic snippet.
    pub client: InstallClient,
    /// Change the client's config file (after backing it up) instead of only showing the change.
    #[arg(long)]
    pub write: bool,
    /// Start the hub with this profile (`hub serve --profile NAME`); it must be in the config.
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// The server's name in the client's config.
    #[arg(long, default_value = "capabilities", value_name = "NAME")]
    pub name: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InstallClient {
    /// Claude Code (~/.claude.json, user scope).
    Claude,
    /// Claude Desktop (claude_desktop_config.json).
    ClaudeDesktop,
    /// Cursor (~/.cursor/mcp.json).
    Cursor,
    /// OpenAI Codex CLI (~/.codex/config.toml).
    Codex,
    /// Print the generic `mcpServers` JSON.
    Print,
}

#[derive(Debug, Subcommand)]
pub enum CredentialCommand {
    /// Store a secret, read from a hidden prompt (or standard input when it is not a terminal).
    #[command(
        after_help = help::CREDENTIAL_SET
    )]
    Set(CredentialSetArgs),
    /// List stored secrets: name, store, and the connections that reference each (never values).
    #[command(
        after_help = help::CREDENTIAL_LIST
    )]
    List(CredentialListArgs),
    /// Delete a secret from its store.
    #[command(after_help = help::CREDENTIAL_REMOVE)]
    Remove(CredentialNameArgs),
    /// Check that a secret can be read, then connect every connection that references it.
    #[command(after_help = help::CREDENTIAL_TEST)]
    Test(CredentialNameArgs),
}

#[derive(Debug, Args)]
pub struct CredentialSetArgs {
    /// The secret's name, as in `${secret:NAME}` (letters, digits, `_`, `-`, `.`).
    pub name: String,
    /// Where to keep it; default: `[credentials] store` in the config, else the keychain.
    #[arg(long, value_enum)]
    pub store: Option<CredentialStore>,
}

#[derive(Debug, Args)]
pub struct CredentialListArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct CredentialNameArgs {
    /// The secret's name, as in `${secret:NAME}`.
    pub name: String,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum CredentialStore {
    /// The OS keychain (macOS Keychain, Windows Credential Manager, Linux Secret Service).
    Keychain,
    /// A file in the data directory encrypted with a passphrase, for machines without a keychain.
    File,
}

#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// Print the defaults and rules, and warn about rules that match no tool.
    #[command(after_help = help::POLICY_SHOW)]
    Show(PolicyShowArgs),
    /// Add a rule (or change the action of the rule with the same pattern).
    #[command(
        after_help = help::POLICY_SET
    )]
    Set(PolicySetArgs),
    /// Say which rule decides a tool, and why.
    #[command(
        after_help = help::POLICY_EXPLAIN
    )]
    Explain(PolicyExplainArgs),
}

#[derive(Debug, Args)]
pub struct PolicyShowArgs {
    /// Show this profile's policy: the defaults with its own rules.
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// Print the policy as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct PolicySetArgs {
    /// An address pattern: `namespace.tool` with `*` as a wildcard.
    pub pattern: String,
    /// allow, ask or deny.
    pub action: PolicyAction,
    /// Apply only to calls through this connection.
    #[arg(long, value_name = "NAME")]
    pub connection: Option<String>,
    /// Add the rule to this profile's rules instead of the config's.
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum PolicyAction {
    Allow,
    Ask,
    Deny,
}

#[derive(Debug, Args)]
pub struct PolicyExplainArgs {
    /// A tool address, e.g. `everything.echo`.
    pub address: String,
    /// The connection the call would use (default: the source's default).
    #[arg(long, value_name = "NAME")]
    pub connection: Option<String>,
    /// Decide as this profile's policy would (the tool must be one of its sources').
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// Print the decision as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct DashboardArgs {
    /// Ring the terminal bell when a new call waits for a decision.
    #[arg(long)]
    pub bell: bool,
    /// Show only this profile's runs, waiting calls and sources.
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
}

/// `--http`'s address: IP:PORT, also as `localhost:PORT` or the URL the hub prints
/// (`http://127.0.0.1:8931/mcp`), which people paste back.
fn listen_address(text: &str) -> Result<SocketAddr, String> {
    let trimmed = text.trim();
    let bare = trimmed
        .strip_prefix("http://")
        .unwrap_or(trimmed)
        .trim_end_matches('/')
        .trim_end_matches("/mcp");
    let bare = match bare.strip_prefix("localhost:") {
        Some(port) => format!("127.0.0.1:{port}"),
        None => bare.to_string(),
    };
    bare.parse().map_err(|_| {
        "not an address to listen on; write IP:PORT, e.g. 127.0.0.1:8931 (this machine only) or 0.0.0.0:8931 (every interface, with tokens)".to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_http_address_is_taken_as_people_write_it() {
        let local: SocketAddr = "127.0.0.1:8931".parse().expect("an address");
        for written in [
            "127.0.0.1:8931",
            " localhost:8931 ",
            "http://127.0.0.1:8931/mcp",
            "http://localhost:8931/",
        ] {
            assert_eq!(listen_address(written), Ok(local), "{written}");
        }
        for wrong in ["localhost", "8931", "http://example.com/mcp", ""] {
            let error = listen_address(wrong).expect_err(wrong);
            assert!(error.contains("e.g. 127.0.0.1:8931"), "{error}");
        }
    }
}
