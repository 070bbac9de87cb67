//! `capabilities source login|logout NAME [--connection C]`: sign a connection of a Streamable
//! HTTP source in with OAuth in the browser, or forget its sign-in. The sign-in page's address
//! is printed for the person at the terminal; the tokens never are.

use std::process::ExitCode;

use anyhow::{Context, bail};
use url::Url;

use super::output::print;
use crate::app::App;
use crate::approvals::open_in_browser;
use crate::catalog::cache::ListingCache;
use crate::cli::SourceLoginArgs;
use crate::config::SourceSettings;
use crate::oauth::{SIGN_IN_WAIT, TokenStore, token_name};
use crate::sources::begin_sign_in;

pub async fn login(app: &App, args: &SourceLoginArgs) -> anyhow::Result<ExitCode> {
    let settings = app.settings()?;
    let (source, connection) = target(&settings.sources, args)?;
    let sign_in = begin_sign_in(source, &connection, app.secrets())
        .await
        .map_err(anyhow::Error::msg)?;
    let page = sign_in.url().to_string();
    let opened = !args.no_browser
        && Url::parse(&page)
            .ok()
            .is_some_and(|page| open_in_browser(&page, "open the page printed below").is_ok());
    let how = if opened {
        "Your browser opened the sign-in page; if it did not, open"
    } else {
        "Open this page to sign in"
    };
    print(&format!(
        "Signing in to `{}` (connection `{connection}`).\n{how}:\n\n  {page}\n\nWaiting for the browser…\n",
        source.name
    ))?;
    sign_in.finish(SIGN_IN_WAIT).await?;
    // A connect that failed for want of this sign-in must not be shown, or held, any longer.
    ListingCache::new(app.paths.catalog_cache_dir()).clear_failure(&source.name);
    let kept = app
        .credentials()
        .store_of(&token_name(&source.name, &connection))
        .map(|store| format!(" in the {store} store"))
        .unwrap_or_default();
    print(&format!(
        "Signed in to `{}` (connection `{connection}`); its tokens are kept{kept} and refreshed before they expire.\n",
        source.name
    ))?;
    Ok(ExitCode::SUCCESS)
}

pub fn logout(app: &App, args: &SourceLoginArgs) -> anyhow::Result<ExitCode> {
    let settings = app.settings()?;
    let (source, connection) = target(&settings.sources, args)?;
    let store = TokenStore::new(app.secrets(), &source.name, &connection);
    let was = store
        .read()
        .map_err(anyhow::Error::msg)
        .context("cannot read the stored sign-in")?
        .is_some();
    store.erase().map_err(anyhow::Error::msg)?;
    let text = if was {
        format!(
            "Signed out of `{}` (connection `{connection}`): its tokens are gone from the credential store; calls to it wait for `capabilities source login {}` again.\n",
            source.name, source.name
        )
    } else {
        format!(
            "`{}` (connection `{connection}`) was not signed in; nothing changed.\n",
            source.name
        )
    };
    print(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// The source and connection the arguments name, or why there is none.
fn target<'a>(
    sources: &'a [SourceSettings],
    args: &SourceLoginArgs,
) -> anyhow::Result<(&'a SourceSettings, String)> {
    let Some(source) = sources.iter().find(|s| s.name == args.name) else {
        let known: Vec<&str> = sources.iter().map(|s| s.name.as_str()).collect();
        bail!(
            "there is no source `{}`; the configured sources are: {}",
            args.name,
            if known.is_empty() {
                "(none)".to_string()
            } else {
                known.join(", ")
            }
        );
    };
    let connection = match &args.connection {
        None => source.default_connection().name.clone(),
        Some(name) if source.connection(name).is_some() => name.clone(),
        Some(name) => {
            let known: Vec<&str> = source.connections.iter().map(|c| c.name.as_str()).collect();
            bail!(
                "source `{}` has no connection `{name}`; its connections are: {}",
                source.name,
                known.join(", ")
            );
        }
    };
    Ok((source, connection))
}
