//! Starting, from the dashboard, the sign-in a waiting run needs: the page opens in the browser
//! and the sign-in finishes in the background; the run goes on when its client resumes it.

use std::path::Path;
use std::sync::Arc;

use crate::approvals::open_in_browser;
use crate::credentials::SecretLookup;
use crate::oauth::SIGN_IN_WAIT;
use crate::sources::{begin_sign_in, login_arguments};

use super::snapshot::WaitingConnection;

/// Opens the sign-in page of the connection `waiting` waits for (the config at
/// `config_file`); the line to show, or why nothing opened.
pub async fn start(
    config_file: &Path,
    secrets: Arc<dyn SecretLookup>,
    waiting: &WaitingConnection,
) -> Result<String, String> {
    let source = &waiting.source;
    let fallback = format!(
        "run `capabilities source login {}` in a terminal",
        login_arguments(&waiting.source, waiting.connection.as_deref())
    );
    let settings = crate::config::load(config_file).map_err(|e| format!("{e}; {fallback}"))?;
    let Some(settings) = settings.source(source) else {
        return Err(format!(
            "source `{source}` is no longer in {}",
            config_file.display()
        ));
    };
    let connection = match &waiting.connection {
        Some(named) => named.clone(),
        None => settings.default_connection().name.clone(),
    };
    let sign_in = begin_sign_in(settings, &connection, secrets)
        .await
        .map_err(|e| format!("{e}; {fallback}"))?;
    let page = url::Url::parse(sign_in.url()).map_err(|e| format!("{e}; {fallback}"))?;
    open_in_browser(&page, &fallback)
        .map_err(|e| format!("no browser opened ({e}); {fallback}"))?;
    let label = waiting.label();
    let said = format!(
        "A sign-in page for `{label}` opened in your browser; once you have signed in, the run goes on when it is resumed."
    );
    tokio::spawn(async move {
        if let Err(e) = sign_in.finish(SIGN_IN_WAIT).await {
            tracing::warn!("the sign-in to `{label}` did not finish: {e}");
        }
    });
    Ok(said)
}
