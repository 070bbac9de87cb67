//! `capabilities init`: write (or print) a commented starter config.

use std::process::ExitCode;

use anyhow::bail;

use super::output::print;
use crate::app::App;
use crate::cli::InitArgs;
use crate::config::edit::write_atomically;
use crate::config::starter::{REFERENCE, STARTER};

pub fn run(app: &App, args: &InitArgs) -> anyhow::Result<ExitCode> {
    if args.reference {
        print(REFERENCE)?;
        return Ok(ExitCode::SUCCESS);
    }
    if args.print {
        print(STARTER)?;
        return Ok(ExitCode::SUCCESS);
    }
    let path = &app.paths.config_file;
    if path.exists() && !args.force {
        bail!(
            "{} already exists; keep it, or run `{}` to replace it with the starter (your sources would be lost)",
            path.display(),
            app.command("init --force")
        );
    }
    write_atomically(path, STARTER)?;
    print(&format!(
        "Wrote {}\nNext: add a server, e.g.\n  capabilities source add everything -- npx -y @modelcontextprotocol/server-everything\n",
        path.display()
    ))?;
    Ok(ExitCode::SUCCESS)
}
