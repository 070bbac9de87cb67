//! `capabilities dashboard` (alias `tui`): hands the terminal to the dashboard until the person
//! quits; `--profile` shows only that profile's runs, waiting calls and sources. Colour follows
//! `--color` and `NO_COLOR`.

use std::process::ExitCode;

use crate::app::App;
use crate::cli::DashboardArgs;
use crate::tui::{self, Options};

pub async fn run(app: &App, args: &DashboardArgs) -> anyhow::Result<ExitCode> {
    let color = app.color;
    // An unknown profile is refused before the screen is taken; once running, a profile that
    // disappears from the config is a problem line.
    if args.profile.is_some() {
        app.settings_for(args.profile.as_deref())?;
    }
    tui::run(
        &app.paths,
        Options {
            bell: args.bell,
            color,
            profile: args.profile.clone(),
            store_url: app.store_url()?,
        },
        app.credentials(),
    )
    .await?;
    Ok(ExitCode::SUCCESS)
}
