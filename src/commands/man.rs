//! `capabilities man [VERB]`: the manual page of the program or of one verb, shown with `man`
//! on a terminal (as roff otherwise, for `man -l -` or a file), and `--install DIR` to write
//! every page where `man` finds them.

use std::io::{IsTerminal, Write};
use std::process::{Command, ExitCode, Stdio};

use anyhow::{Context, bail};

use super::completions::man_page_set;
use super::output::print;
use crate::cli::ManArgs;

pub fn run(args: &ManArgs) -> anyhow::Result<ExitCode> {
    let pages = man_page_set()?;
    if let Some(dir) = &args.install {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        for (name, text) in &pages {
            let path = dir.join(name);
            std::fs::write(&path, text)
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
        print(&format!(
            "Wrote {} man pages to {}; `man capabilities` shows the first when that directory is on MANPATH (~/.local/share/man is by default)\n",
            pages.len(),
            dir.display()
        ))?;
        return Ok(ExitCode::SUCCESS);
    }
    let name = std::iter::once("capabilities")
        .chain(args.verb.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join("-");
    let file = format!("{name}.1");
    let Some((_, text)) = pages.iter().find(|(page, _)| *page == file) else {
        let verbs: Vec<String> = pages
            .iter()
            .map(|(page, _)| {
                page.trim_end_matches(".1")
                    .trim_start_matches("capabilities")
                    .trim_start_matches('-')
                    .replace('-', " ")
            })
            .filter(|verb| !verb.is_empty())
            .collect();
        bail!(
            "there is no page for `{}`; pages: {}",
            args.verb.join(" "),
            verbs.join(", ")
        );
    };
    if std::io::stdout().is_terminal() && show_with_man(text).is_ok() {
        return Ok(ExitCode::SUCCESS);
    }
    print(text)?;
    Ok(ExitCode::SUCCESS)
}

/// Hands the page to `man -l -`, which formats and pages it; an error when `man` is missing
/// or failed, so the roff is printed instead.
fn show_with_man(text: &str) -> anyhow::Result<()> {
    let mut child = crate::time_zone::give_back(&mut Command::new("man"))
        .args(["-l", "-"])
        .stdin(Stdio::piped())
        .spawn()?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(text.as_bytes())?;
    }
    let status = child.wait()?;
    if !status.success() {
        bail!("man exited with {status}");
    }
    Ok(())
}
