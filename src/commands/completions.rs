//! `capabilities completions SHELL`, and the generated files kept in `completions/` and `man/`.

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
    let mut command = Cli::command();
    command.build();
    man_pages(&command, "capabilities", &mut files)?;
    Ok(files)
}

fn man_pages(
    command: &clap::Command,
    name: &str,
    files: &mut Vec<(String, String)>,
) -> anyhow::Result<()> {
    let mut buf = Vec::new();
    clap_mangen::Man::new(command.clone().name(name.to_string())).render(&mut buf)?;
    files.push((
        format!("man/{name}.1"),
        String::from_utf8_lossy(&buf).into_owned(),
    ));
    for sub in command
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
    {
        man_pages(sub, &format!("{name}-{}", sub.get_name()), files)?;
    }
    Ok(())
}
