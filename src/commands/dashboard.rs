//! `capabilities dashboard` (alias `tui`): hands the terminal to the dashboard until the person
//! quits. Colour follows `NO_COLOR`.

use std::process::ExitCode;

use crate::cli::DashboardArgs;
use crate::config::Paths;
use crate::env_vars;
use crate::tui::{self, Options};

pub async fn run(paths: &Paths, args: &DashboardArgs) -> anyhow::Result<ExitCode> {
    let color = std::env::var_os(env_vars::NO_COLOR).is_none();
    tui::run(
        paths,
        Options {
            bell: args.bell,
            color,
        },
        super::credentials(paths),
    )
    .await?;
    Ok(ExitCode::SUCCESS)
}
