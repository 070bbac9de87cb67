//! `capabilities completions SHELL`, and the generated files kept in `completions/` and `man/`:
//! the man pages get the sections clap_mangen does not write (EXIT STATUS, ENVIRONMENT, FILES).

use std::process::ExitCode;

use clap::CommandFactory;
use clap_complete::Shell as CompleteShell;

use super::output::print;
use crate::cli::{Cli, CompletionsArgs, Shell};

pub fn run(args: &CompletionsArgs) -> anyhow::Result<ExitCode> {
    print(&completion_script(args.shell))?;
    Ok(ExitCode::SUCCESS)
}

/// The completion script for one shell, from the clap definitions.
pub fn completion_script(shell: Shell) -> String {
    let shell = match shell {
        Shell::Bash => CompleteShell::Bash,
        Shell::Zsh => CompleteShell::Zsh,
        Shell::Fish => CompleteShell::Fish,
        Shell::Elvish => CompleteShell::Elvish,
        Shell::Powershell => CompleteShell::PowerShell,
    };
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "capabilities", &mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}

/// Every file generated from the clap definitions, by path relative to the repository root:
/// completion scripts in `completions/` and man pages in `man/`. A test fails when the
/// committed copies drift from these.
pub fn generated_files() -> anyhow::Result<Vec<(String, String)>> {
    let mut files = vec![
        (
            "completions/capabilities.bash".to_string(),
            completion_script(Shell::Bash),
        ),
        (
            "completions/_capabilities".to_string(),
            completion_script(Shell::Zsh),
        ),
        (
            "completions/capabilities.fish".to_string(),
            completion_script(Shell::Fish),
        ),
    ];
    files.extend(
        man_page_set()?
            .into_iter()
            .map(|(name, text)| (format!("man/{name}"), text)),
    );
    Ok(files)
}

/// Every man page: `(file name, roff)`, for `capabilities` and each verb. The `help` verb has
/// no page, so no page lists it.
pub fn man_page_set() -> anyhow::Result<Vec<(String, String)>> {
    let mut command = without_help_verb(Cli::command());
    command.build();
    let mut files = Vec::new();
    man_pages(&command, "capabilities", &mut files)?;
    Ok(files
        .into_iter()
        .map(|(path, text)| (path.trim_start_matches("man/").to_string(), text))
        .collect())
}

/// `command` and every verb under it without clap's `help` verb (`--help` stays).
fn without_help_verb(command: clap::Command) -> clap::Command {
    command
        .disable_help_subcommand(true)
        .mut_subcommands(without_help_verb)
}

fn man_pages(
    command: &clap::Command,
    name: &str,
    files: &mut Vec<(String, String)>,
) -> anyhow::Result<()> {
    let mut buf = Vec::new();
    clap_mangen::Man::new(command.clone().name(name.to_string())).render(&mut buf)?;
    let page = finish_page(&String::from_utf8_lossy(&buf), name);
    files.push((format!("man/{name}.1"), page));
    for sub in command
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
    {
        man_pages(sub, &format!("{name}-{}", sub.get_name()), files)?;
    }
    Ok(())
}

/// Adds what clap_mangen leaves out: no hyphenation (a name split as `capa-bilities` could be
/// typed wrong), the examples under their usual heading, and the EXIT STATUS, ENVIRONMENT and
/// FILES sections.
fn finish_page(page: &str, name: &str) -> String {
    let mut out = String::new();
    let mut extra = Some(sections(name));
    for line in page.lines() {
        if line.starts_with(".SH VERSION")
            && let Some(extra) = extra.take()
        {
            out.push_str(&extra);
        }
        if line == ".SH EXTRA" {
            out.push_str(".SH EXAMPLES\n");
            continue;
        }
        out.push_str(line);
        out.push('\n');
        if line.starts_with(".TH ") {
            // No hyphenation, and lines not stretched to the margin (commands keep their spaces).
            out.push_str(".nh\n.ad l\n");
        }
    }
    if let Some(extra) = extra {
        out.push_str(&extra);
    }
    out
}

/// The EXIT STATUS, ENVIRONMENT and FILES sections of page `name` (`capabilities-search`).
fn sections(name: &str) -> String {
    let verb = name
        .trim_start_matches("capabilities")
        .trim_start_matches('-');
    let mut statuses = vec![("0", "Success.")];
    match verb {
        "search" => statuses.push(("1", "No tool matched, or the search could not run (no source could be listed, a bad config).")),
        "exec" | "call" => statuses.extend([
            ("1", "The run failed (the error says why), or it could not start."),
            ("3", "The run waits for an approval or a connection; decide, then `capabilities exec \\-\\-resume RUN_ID`."),
            ("4", "The run was cancelled."),
            ("5", "The run is being run by another process; resume again shortly."),
        ]),
        "doctor" => statuses.push(("1", "Something the config needs does not work here (warnings alone exit 0).")),
        "source-list" => statuses.push(("1", "Every enabled source failed, or the config could not be read.")),
        _ => statuses.push(("1", "A failure you can fix: bad input, a bad config, an unreachable source; the message says what to do.")),
    }
    statuses.push(("2", "A usage error: an unknown option, a missing argument."));
    statuses.push((
        "130, 143",
        "Interrupted by Ctrl\\-C or ended by SIGTERM (128 plus the signal's number).",
    ));
    let mut roff = String::from(".SH \"EXIT STATUS\"\n");
    for (code, meaning) in statuses {
        roff.push_str(&format!(".TP\n\\fB{code}\\fR\n{meaning}\n"));
    }
    roff.push_str(".SH ENVIRONMENT\n");
    for (variable, meaning) in ENVIRONMENT {
        roff.push_str(&format!(".TP\n\\fB{variable}\\fR\n{meaning}\n"));
    }
    roff.push_str(".SH FILES\n");
    for (file, meaning) in FILES {
        roff.push_str(&format!(".TP\n\\fI{file}\\fR\n{meaning}\n"));
    }
    roff
}

/// The environment every verb reads (`env_vars` has each one's details).
const ENVIRONMENT: &[(&str, &str)] = &[
    (
        "CAPABILITIES_HOME",
        "A directory for both the config (DIR/config.toml) and the data (DIR/data).",
    ),
    (
        "CAPABILITIES_CONFIG",
        "The config file, unless \\-\\-config names one.",
    ),
    (
        "CAPABILITIES_LOG",
        "Which log lines go to stderr, e.g. info or capabilities::sources=debug (default: warnings and errors).",
    ),
    (
        "CAPABILITIES_LOG_FORMAT",
        "text or json, unless \\-\\-log\\-format says.",
    ),
    (
        "CAPABILITIES_PASSPHRASE",
        "The passphrase of the encrypted credential file, where nobody can type it.",
    ),
    (
        "NO_COLOR",
        "When set, no colour (as \\-\\-color never does for colour).",
    ),
    (
        "SSL_CERT_FILE, SSL_CERT_DIR",
        "Certificate authorities for HTTPS sources, in place of the system's.",
    ),
    (
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "The OpenTelemetry collector, in builds with the otel feature.",
    ),
];

/// Where things are kept on Linux (other systems use their own config and data directories).
const FILES: &[(&str, &str)] = &[
    (
        "~/.config/capabilities/config.toml",
        "The config: sources, connections, policy, profiles, limits.",
    ),
    (
        "~/.local/share/capabilities/state.sqlite",
        "The state store: runs, their journals and approvals, tool versions, tokens (encrypted at rest).",
    ),
    (
        "~/.local/share/capabilities/catalog/",
        "Cached tool listings, one file per source.",
    ),
    (
        "~/.local/share/capabilities/credentials.age",
        "The encrypted credential file (\\-\\-store file).",
    ),
    (
        "~/.local/share/capabilities/state.key",
        "The key of the state store, on machines with neither a keychain nor a passphrase.",
    ),
];
