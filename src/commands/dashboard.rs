//! `capabilities dashboard` (alias `tui`): hands the terminal to the dashboard until the person
//! quits. Colour follows `NO_COLOR`.

use std::process::ExitCode;

use crate::app::App;
use crate::cli::DashboardArgs;
use crate::env_vars;
use crate::tui::{self, Options};

pub async fn run(app: &App, args: &DashboardArgs) -> anyhow::Result<ExitCode> {
    let color = std::env::var_os(env_vars::NO_COLOR).is_none();
    tui::run(
        &app.paths,
        Options {
            bell: args.bell,
            color,
        },
        app.credentials(),
    )
    .await?;
    Ok(ExitCode::SUCCESS)
}
