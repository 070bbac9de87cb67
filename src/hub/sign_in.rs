//! Sign-ins the hub offers when a run waits for a connection: it starts the sign-in itself (its
//! redirect listener on 127.0.0.1, so only a hub on the person's machine offers one) and hands the
//! page to the person, by a URL-mode elicitation to a 2026-07-28 client that declared it, or in
//! the browser. One sign-in per connection is in flight at a time; when it ends the source is
//! connected again, so a resume finds its tools. The model never sees the page's address.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;

use crate::catalog::live::LiveCatalog;
use crate::config::Settings;
use crate::oauth::SIGN_IN_WAIT;
use crate::sources::begin_sign_in;

/// How a sign-in ended: `None` while the person is still at it.
type Outcome = Option<Result<(), String>>;

/// The sign-ins in flight, by source and connection.
#[derive(Default, Clone)]
pub struct SignIns {
    flights: Arc<Mutex<HashMap<(String, String), Flight>>>,
}

#[derive(Clone)]
struct Flight {
    page: String,
    outcome: watch::Receiver<Outcome>,
}

impl SignIns {
    /// The page where the person signs `source`'s `connection` in (its default connection when
    /// `None`): the one already waiting for them, or a new sign-in's. Errors say why none can
    /// be offered.
    pub async fn page(
        &self,
        settings: &Settings,
        catalog: &Arc<LiveCatalog>,
        source: &str,
        connection: Option<&str>,
    ) -> Result<String, String> {
        let settings = settings
            .source(source)
            .ok_or_else(|| format!("there is no source `{source}`"))?;
        let connection = match connection {
            Some(named) => named.to_string(),
            None => settings.default_connection().name.clone(),
        };
        let key = (source.to_string(), connection.clone());
        if let Some(flight) = self.flight(&key)
            && flight.outcome.borrow().is_none()
        {
            return Ok(flight.page);
        }
        let secrets = catalog.sources().secrets().clone();
        let sign_in = begin_sign_in(settings, &connection, secrets).await?;
        let page = sign_in.url().to_string();
        let (sender, outcome) = watch::channel(None);
        self.flights
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(
                key,
                Flight {
                    page: page.clone(),
                    outcome,
                },
            );
        let catalog = catalog.clone();
        let source = source.to_string();
        tokio::spawn(async move {
            let finished = sign_in
                .finish(SIGN_IN_WAIT)
                .await
                .map_err(|e| e.to_string());
            match &finished {
                // Connects with the new tokens and lists the tools a resume will use.
                Ok(()) => catalog.relist(&source).await,
                Err(e) => tracing::warn!(
                    "the sign-in to `{source}` (connection `{connection}`) did not finish: {e}"
                ),
            }
            let _ = sender.send(Some(finished));
        });
        Ok(page)
    }

    /// Waits up to `wait` for the sign-in of `source`'s `connection` (its default when `None`)
    /// to end; true when it succeeded.
    pub async fn finished(
        &self,
        settings: &Settings,
        source: &str,
        connection: Option<&str>,
        wait: Duration,
    ) -> bool {
        let connection = match (connection, settings.source(source)) {
            (Some(named), _) => named.to_string(),
            (None, Some(source)) => source.default_connection().name.clone(),
            (None, None) => return false,
        };
        let Some(mut flight) = self.flight(&(source.to_string(), connection)) else {
            return false;
        };
        let ended = tokio::time::timeout(wait, flight.outcome.wait_for(Option::is_some)).await;
        matches!(ended, Ok(Ok(outcome)) if matches!(*outcome, Some(Ok(()))))
    }

    fn flight(&self, key: &(String, String)) -> Option<Flight> {
        self.flights
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(key)
            .cloned()
    }
}
