//! [`SourceError`]: why a request to a source did not produce an answer. Every message names the
//! source and says what to do; none contains a resolved secret.

use std::time::Duration;

pub(crate) use crate::error_text::chain;

use rmcp::ServiceError;
use rmcp::service::ClientInitializeError;
use rmcp::transport::streamable_http_client::StreamableHttpError;

#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("there is no source `{}`; the configured sources are: {known}", crate::error_text::echo(.name))]
    UnknownSource { name: String, known: String },

    #[error("source `{name}` has no connection `{}`; its connections are: {known}", crate::error_text::echo(.connection))]
    UnknownConnection {
        name: String,
        connection: String,
        known: String,
    },

    #[error(
        "source `{name}` is disabled in the config; enable it with `capabilities source enable {name}`"
    )]
    Disabled { name: String },

    /// The connection is not up: its first connect failed, or it is waiting to restart.
    #[error("source `{name}` is not available: {reason}")]
    Unavailable { name: String, reason: String },

    #[error(
        "source `{name}` gave no answer to {request} within {} s; the request was cancelled. If the tool is just slow, raise `request_timeout_secs` for this source in the config",
        .timeout.as_secs_f64()
    )]
    Timeout {
        name: String,
        request: String,
        timeout: Duration,
    },

    /// The upstream answered with a JSON-RPC error (unknown tool, invalid arguments, …).
    #[error("source `{name}` answered {request} with an error: {message}")]
    Upstream {
        name: String,
        request: String,
        message: String,
    },

    /// The connection broke while the request was in flight.
    #[error("lost the connection to source `{name}` during {request}: {message}")]
    Transport {
        name: String,
        request: String,
        message: String,
    },

    /// The connection signs in with OAuth and has no usable sign-in: never signed in, its
    /// refresh was refused, or the server turned its token down. Nothing was sent.
    #[error("{reason}")]
    NeedsSignIn {
        name: String,
        connection: String,
        reason: String,
    },

    /// The upstream now defines the tool otherwise than the definition the call was decided
    /// on (a server restarted with a new version, an OpenAPI document edited): nothing was
    /// sent.
    #[error(
        "nothing was sent: source `{name}` now defines `{tool}` otherwise than when the call was decided; the hub lists it again, and called again the tool asks first where its change needs a person. See what changed with `capabilities source review {name}`"
    )]
    Changed { name: String, tool: String },

    #[error("the connections to the sources are shutting down")]
    ShutDown,
}

impl SourceError {
    /// This error with `clean` applied to what an upstream may have written into it (its
    /// messages, and a failed connect's reason): an upstream can echo its token into an error
    /// as readily as into a result.
    pub(crate) fn blanked(mut self, clean: impl Fn(&str) -> String) -> SourceError {
        match &mut self {
            SourceError::Upstream { message, .. }
            | SourceError::Transport { message, .. }
            | SourceError::Unavailable {
                reason: message, ..
            } => *message = clean(message),
            _ => {}
        }
        self
    }
}

/// Why a connection needs a sign-in, with the command that gives it one.
pub(crate) fn sign_in_message(
    source: &str,
    connection: &str,
    is_default: bool,
    why: &str,
) -> String {
    let login = super::login_arguments(source, (!is_default).then_some(connection));
    format!("source `{source}` {SIGN_IN_MARK} ({why}): run `capabilities source login {login}`")
}

/// What every sign-in message says, so one kept as text (a held connect failure, a status) is
/// still recognised as one.
const SIGN_IN_MARK: &str = "needs you to sign in";

/// True for a message [`sign_in_message`] wrote.
pub fn is_sign_in_message(text: &str) -> bool {
    text.contains(SIGN_IN_MARK)
}

/// True when a request failed because the server answered 401: the token was refused, or none
/// could be sent.
pub(crate) fn is_auth_required(error: &(dyn std::error::Error + 'static)) -> bool {
    matches!(
        error.downcast_ref::<StreamableHttpError<reqwest::Error>>(),
        Some(StreamableHttpError::AuthRequired(_))
    )
}

/// When a request failed because the server answered 403 `insufficient_scope`: the scope it
/// named, if it named one.
pub(crate) fn missing_scope(error: &(dyn std::error::Error + 'static)) -> Option<Option<String>> {
    match error.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
        Some(StreamableHttpError::InsufficientScope(refusal)) => {
            Some(refusal.required_scope.clone())
        }
        _ => None,
    }
}

/// The error under rmcp's handshake wrappers: the transport's own error, or the legacy
/// fallback's when both handshakes failed. Their wrapper text names Rust types, not causes.
pub(crate) fn handshake_cause(error: &ClientInitializeError) -> &(dyn std::error::Error + 'static) {
    match error {
        ClientInitializeError::TransportError { error, .. } => unwrap_http(error.error.as_ref()),
        ClientInitializeError::LegacyFallbackFailed { fallback, .. } => handshake_cause(fallback),
        other => other,
    }
}

/// rmcp's HTTP client error keeps reqwest's error as a field, not as its `source()`, so the
/// chain down to "connection refused" would end there.
fn unwrap_http<'a>(
    error: &'a (dyn std::error::Error + 'static),
) -> &'a (dyn std::error::Error + 'static) {
    match error.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
        Some(StreamableHttpError::Client(client)) => client,
        _ => error,
    }
}

/// Like [`handshake_cause`], for an error of a request after the handshake.
pub(crate) fn request_cause(error: &ServiceError) -> &(dyn std::error::Error + 'static) {
    match error {
        ServiceError::TransportSend(error) => unwrap_http(error.error.as_ref()),
        other => other,
    }
}

/// serde_json's words for a message nested deeper than it decodes (128 levels).
const TOO_DEEP: &str = "recursion limit exceeded";

/// Why listing a source's tools failed, from the failure's `cause`. A listing nested too deep
/// for rmcp's decoder is said in words with what to do: the decoder's own message is a parse
/// error with 500 bytes of the listing, and it loses every tool of the server, not only the deep
/// one. Over stdio the hub cuts such messages before they are decoded (`stdio`); an HTTP reply
/// is decoded inside rmcp's client, before the hub sees it.
pub(crate) fn listing_failed(cause: &str) -> String {
    if cause.contains(TOO_DEEP) {
        return "connected, but its list of tools nests deeper than the 128 levels the HTTP client \
                reads (a tool's input schema, most likely), so none of its tools load. Ask its \
                authors to flatten that schema, or run the server as a stdio source (`command = \
                ...`), where the deeper parts are cut and every other tool loads"
            .to_string();
    }
    format!("connected, but listing its tools failed: {cause}")
}

/// Finds an I/O error anywhere in the chain, to recognise "connection refused" and friends.
pub(crate) fn io_kind(error: &(dyn std::error::Error + 'static)) -> Option<std::io::ErrorKind> {
    let mut next = Some(error);
    while let Some(current) = next {
        if let Some(io) = current.downcast_ref::<std::io::Error>() {
            return Some(io.kind());
        }
        next = current.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_too_deep_to_decode_says_why_and_what_to_do() {
        let deep = listing_failed(
            "could not parse JSON response as ServerJsonRpcMessage: recursion limit exceeded at line 1 column 5286: {\"jsonrpc\"",
        );
        assert!(deep.contains("deeper than the 128 levels"), "{deep}");
        assert!(deep.contains("stdio source"), "{deep}");
        assert!(!deep.contains("jsonrpc"), "{deep}");
        assert_eq!(
            listing_failed("timed out"),
            "connected, but listing its tools failed: timed out"
        );
    }

    #[test]
    fn sign_in_messages_name_the_command_and_are_recognised() {
        let default = sign_in_message("linear", "default", true, "it has not signed in yet");
        assert_eq!(
            default,
            "source `linear` needs you to sign in (it has not signed in yet): run `capabilities source login linear`"
        );
        let work = sign_in_message("github", "work", false, "why");
        assert!(
            work.ends_with("`capabilities source login github --connection work`"),
            "{work}"
        );
        assert!(is_sign_in_message(&default) && is_sign_in_message(&work));
        assert!(!is_sign_in_message(
            "cannot connect to http://x: connection refused"
        ));
    }

    #[test]
    fn what_an_upstream_wrote_into_an_error_is_blanked() {
        let clean = |text: &str| text.replace("at-live-token", "•••");
        let upstream = SourceError::Upstream {
            name: "peer".into(),
            request: "tools/call `whoami`".into(),
            message: "bad token at-live-token (JSON-RPC error -32000)".into(),
        };
        assert_eq!(
            upstream.blanked(clean).to_string(),
            "source `peer` answered tools/call `whoami` with an error: bad token ••• (JSON-RPC error -32000)"
        );
        let lost = SourceError::Transport {
            name: "peer".into(),
            request: "tools/list".into(),
            message: "500: at-live-token".into(),
        };
        assert!(!lost.blanked(clean).to_string().contains("at-live-token"));
    }
}
