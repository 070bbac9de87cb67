//! Starting, from the dashboard, the sign-in a waiting run needs: the page opens in the browser
//! and the sign-in finishes in the background; the run goes on when its client resumes it.

use std::path::Path;
use std::sync::Arc;

use crate::approvals::open_in_browser;
use crate::credentials::SecretLookup;
use crate::oauth::SIGN_IN_WAIT;
use crate::sources::begin_sign_in;

/// Opens the sign-in page of `source`'s default connection (the config at `config_file`); the
/// line to show, or why nothing opened.
pub async fn start(
    config_file: &Path,
    secrets: Arc<dyn SecretLookup>,
    source: &str,
) -> Result<String, String> {
    let fallback = format!("run `capabilities source login {source}` in a terminal");
    let settings = crate::config::load(config_file).map_err(|e| format!("{e}; {fallback}"))?;
    let Some(settings) = settings.source(source) else {
        return Err(format!(
            "source `{source}` is no longer in {}",
            config_file.display()
        ));
    };
    let connection = settings.default_connection().name.clone();
    let sign_in = begin_sign_in(settings, &connection, secrets)
        .await
        .map_err(|e| format!("{e}; {fallback}"))?;
    let page = url::Url::parse(sign_in.url()).map_err(|e| format!("{e}; {fallback}"))?;
    open_in_browser(&page).map_err(|e| format!("no browser opened ({e}); {fallback}"))?;
    let name = source.to_string();
    tokio::spawn(async move {
        if let Err(e) = sign_in.finish(SIGN_IN_WAIT).await {
            tracing::warn!("the sign-in to `{name}` did not finish: {e}");
        }
    });
    Ok(format!(
        "A sign-in page for `{source}` opened in your browser; once you have signed in, the run goes on when it is resumed."
    ))
}
