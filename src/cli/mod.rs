//! The clap definitions of every verb (`*Args`). No logic lives here: `commands` acts on them,
//! and the completions and man page are generated from them.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "capabilities",
    version,
    about = "A terminal-first MCP hub: search, describe and script every tool of your MCP servers",
    long_about = "capabilities connects to your MCP servers (\"sources\"), keeps a catalogue of their tools, \
and lets you (or your agent) find them with `search`, read their exact TypeScript types with `describe`, \
and call them from one sandboxed script.",
    after_help = "Quick start:\n  capabilities init\n  capabilities source add everything -- npx -y @modelcontextprotocol/server-everything\n  capabilities search \"echo a message\"\n  capabilities describe everything.echo",
    propagate_version = true
)]
pub struct Cli {
    /// Config file to use instead of the default (also $CAPABILITIES_CONFIG).
    #[arg(long, global = true, value_name = "PATH")]
    pub config: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Write a commented starter config.
    #[command(after_help = "Examples:\n  capabilities init\n  capabilities init --print > my-config.toml\n  capabilities init --reference | less")]
    Init(InitArgs),

    /// Add, list, test and remove sources (MCP servers).
    #[command(subcommand)]
    Source(SourceCommand),

    /// Find tools by what you want to do; prints one-line TypeScript signatures, best match first.
    #[command(after_help = "Examples:\n  capabilities search \"echo a message\"\n  capabilities search \"create issue\" --namespace github --limit 5\n  capabilities search \"\" --namespace everything   # list one source")]
    Search(SearchArgs),

    /// Print exact TypeScript declarations of tools, namespaces or named types.
    #[command(after_help = "Examples:\n  capabilities describe everything.echo\n  capabilities describe everything --budget 4000\n  capabilities describe github.createIssue github.Issue")]
    Describe(DescribeArgs),

    /// Run a JavaScript (or TypeScript) script against your sources in the sandbox.
    #[command(after_help = "Examples:\n  capabilities exec script.js\n  echo 'return await everything.echo({ message: \"hi\" })' | capabilities exec -\n  capabilities exec --json config-examples/multi-source.js | jq .calls\n\nThe script is the body of an async function: each source is a global object of async functions, and what it returns is the result.\nExit status: 0 completed, 1 failed, 3 waiting for an approval or a connection, 4 cancelled.")]
    Exec(ExecArgs),

    /// Print a shell completion script.
    #[command(after_help = "Examples:\n  capabilities completions bash > ~/.local/share/bash-completion/completions/capabilities\n  capabilities completions zsh > ~/.zfunc/_capabilities\n  capabilities completions fish > ~/.config/fish/completions/capabilities.fish")]
    Completions(CompletionsArgs),
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
    #[command(after_help = "Examples:\n  capabilities source add everything -- npx -y @modelcontextprotocol/server-everything\n  capabilities source add time --env TZ=Europe/Paris -- uvx mcp-server-time\n  capabilities source add github --url https://api.githubcopilot.com/mcp/ --header 'Authorization=Bearer ${secret:github}'\n\nValues of --env and --header may hold ${secret:NAME} or ${env:VAR} references; they are stored as written.")]
    Add(SourceAddArgs),
    /// Connect to every source and list them with their live status and tool counts.
    #[command(after_help = "Examples:\n  capabilities source list\n  capabilities source list --json | jq '.[] | select(.status != \"ready\")'")]
    List(SourceListArgs),
    /// Remove a source from the config.
    #[command(after_help = "Example:\n  capabilities source remove everything")]
    Remove(SourceNameArgs),
    /// Connect to one source, list its tools, and report what happened.
    #[command(after_help = "Example:\n  capabilities source test everything")]
    Test(SourceNameArgs),
}

#[derive(Debug, Args)]
pub struct SourceAddArgs {
    /// The source's name: the global object scripts use (letters, digits, `_`).
    pub name: String,
    /// Streamable HTTP endpoint of the server.
    #[arg(long, value_name = "URL", conflicts_with_all = ["command", "env", "cwd"], required_unless_present = "command")]
    pub url: Option<String>,
    /// A header for an HTTP source, as NAME=VALUE (repeatable).
    #[arg(long = "header", value_name = "NAME=VALUE", requires = "url")]
    pub headers: Vec<String>,
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
}

#[derive(Debug, Args)]
pub struct SourceNameArgs {
    /// The source's name, as in `source list`.
    pub name: String,
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
}

#[derive(Debug, Args)]
pub struct DescribeArgs {
    /// 1 to 10 targets: an address (everything.echo), a namespace (everything) or a named type.
    #[arg(required = true, num_args = 1..=10, value_name = "TARGET")]
    pub targets: Vec<String>,
    /// Token budget of the output (o200k_base tokens).
    #[arg(long, default_value_t = 2500, value_parser = clap::value_parser!(u32).range(200..=50000))]
    pub budget: u32,
    /// Re-list every source instead of using cached listings.
    #[arg(long)]
    pub refresh: bool,
}

#[derive(Debug, Args)]
pub struct ExecArgs {
    /// The script file, or `-` to read it from standard input.
    #[arg(value_name = "SCRIPT")]
    pub script: String,
    /// Print the whole envelope as JSON instead of the result.
    #[arg(long)]
    pub json: bool,
    /// Largest result to return, in bytes of JSON (1,024 to 65,536).
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(1024..=65536))]
    pub output_budget: Option<u64>,
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
