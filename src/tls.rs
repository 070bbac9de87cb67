//! TLS for every HTTP client in the process (HTTPS sources, the OpenTelemetry exporter): the
//! rustls crypto provider they share, and what a failed TLS handshake means in words a user can
//! act on.
//!
//! reqwest verifies servers with rustls-platform-verifier, against the OS trust store; on Linux
//! that is the system CA bundle, or only what `SSL_CERT_FILE` / `SSL_CERT_DIR` name when either
//! is set (read by rustls-native-certs, as OpenSSL reads them). Verification is never turned off.

use std::error::Error;
use std::sync::Once;

use rustls::CertificateError;

use crate::env_vars;

/// Makes `ring` the process's rustls crypto provider. reqwest is built without one of its own
/// (`rustls-no-provider`, which spares the build aws-lc-rs) and panics when it builds a client
/// before one is installed, so every place that builds a client calls this first. A program
/// that builds its own reqwest clients or rmcp HTTP transports beside this library calls it too.
/// Calls after the first do nothing.
pub fn install_crypto_provider() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        // An error means a provider was installed before (by a program embedding this
        // library); reqwest then uses that one, which serves as well.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// What failed when a TLS handshake failed, and what to do about it, when `error`'s chain holds
/// a rustls error; `None` for every other failure.
pub(crate) fn explain_handshake_failure(error: &(dyn Error + 'static)) -> Option<String> {
    let failure = rustls_error(error)?;
    Some(match failure {
        rustls::Error::InvalidCertificate(certificate) => explain_certificate(certificate),
        // Alerts, garbled records, no common cipher suite: the other end does not speak the
        // TLS this client speaks, most often because it is not a TLS server at all.
        other => format!(
            "the TLS handshake failed ({other}). Check that the server speaks HTTPS at this address; a plain-HTTP server needs an http:// URL"
        ),
    })
}

/// Why the server's certificate was refused.
fn explain_certificate(certificate: &CertificateError) -> String {
    match certificate {
        CertificateError::UnknownIssuer => format!(
            "the server's certificate is not signed by a certificate authority this machine trusts. {}",
            trust_store_hint()
        ),
        CertificateError::NotValidForNameContext {
            expected,
            presented,
        } => {
            let names: Vec<&str> = presented.iter().map(|name| plain_name(name)).collect();
            let names = if names.is_empty() {
                "no host name at all".to_string()
            } else {
                names.join(", ")
            };
            format!(
                "the server's certificate is for {names}, not for {}, so it does not prove the server is who the URL says. Put a host name the certificate covers in the source's URL, or ask the server's operator for a certificate that covers this one",
                expected.to_str()
            )
        }
        CertificateError::NotValidForName => "the server's certificate is for another host name than the URL's. Put a host name the certificate covers in the source's URL, or ask the server's operator for a certificate that covers this one".to_string(),
        CertificateError::Expired
        | CertificateError::ExpiredContext { .. }
        | CertificateError::NotValidYet
        | CertificateError::NotValidYetContext { .. } => format!(
            "the server's certificate is outside its validity period ({certificate}). Check this machine's clock; if it is right, the server's operator must renew the certificate"
        ),
        other => format!(
            "the server's certificate was refused ({other}). Ask the server's operator to check it"
        ),
    }
}

/// What to do about an unknown certificate authority, saying which trust store was used.
fn trust_store_hint() -> String {
    match named_trust_store() {
        None => "If your network uses its own certificate authority (a company proxy, a private server), point SSL_CERT_FILE at its bundle (PEM)".to_string(),
        // Either variable replaces the system store, so the authority must be in what they name.
        Some(named) => format!(
            "Only the certificate authorities in {named} are trusted, in place of the system's: check that the server's is there"
        ),
    }
}

/// Why no HTTP client could be built, from the innermost `cause`: the verifier found no
/// certificate authority to trust.
pub(crate) fn explain_setup_failure(cause: &str) -> String {
    match named_trust_store() {
        None => format!(
            "cannot set up TLS: {cause}. Install the system's CA certificates (the ca-certificates package) or point SSL_CERT_FILE at a bundle of trusted certificate authorities (PEM)"
        ),
        Some(named) => format!(
            "cannot set up TLS: {cause}. Check {named}: it must name readable PEM certificates of the authorities to trust"
        ),
    }
}

/// `SSL_CERT_FILE=…` and `SSL_CERT_DIR=…` as set, or `None` when the system's store is used.
fn named_trust_store() -> Option<String> {
    let named: Vec<String> = [env_vars::SSL_CERT_FILE, env_vars::SSL_CERT_DIR]
        .iter()
        .filter_map(|name| {
            let value = std::env::var_os(name)?;
            Some(format!("{name}={}", std::path::Path::new(&value).display()))
        })
        .collect();
    (!named.is_empty()).then(|| named.join(" and "))
}

/// webpki shows a name from the certificate as `DnsName("example.com")`; the user wants the
/// name. Anything in another shape is shown as it is.
fn plain_name(presented: &str) -> &str {
    match (presented.find('"'), presented.rfind('"')) {
        (Some(start), Some(end)) if start < end => &presented[start + 1..end],
        _ => presented,
    }
}

/// The rustls error in `error`'s chain. It comes up inside `io::Error`s (tokio-rustls wraps it
/// in one, reqwest's connector in another), whose `source()` skips the error they wrap, so an
/// I/O error is opened with `get_ref` instead.
fn rustls_error<'a>(error: &'a (dyn Error + 'static)) -> Option<&'a rustls::Error> {
    let mut next = Some(error);
    while let Some(current) = next {
        if let Some(found) = current.downcast_ref::<rustls::Error>() {
            return Some(found);
        }
        next = match current
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
        {
            Some(wrapped) => Some(wrapped as &(dyn Error + 'static)),
            None => current.source(),
        };
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As reqwest hands it up: an I/O error around tokio-rustls's I/O error around it.
    fn wrapped(error: rustls::Error) -> std::io::Error {
        std::io::Error::other(std::io::Error::new(std::io::ErrorKind::InvalidData, error))
    }

    #[test]
    fn finds_the_rustls_error_inside_an_io_error() {
        let io = wrapped(CertificateError::UnknownIssuer.into());
        let text = explain_handshake_failure(&io).expect("a TLS failure");
        assert!(
            text.contains("not signed by a certificate authority"),
            "{text}"
        );
        assert!(explain_handshake_failure(&std::io::Error::other("refused")).is_none());
    }

    #[test]
    fn a_name_mismatch_names_both_names() {
        let io = wrapped(
            CertificateError::NotValidForNameContext {
                expected: rustls::pki_types::ServerName::try_from("127.0.0.1")
                    .expect("an IP address")
                    .to_owned(),
                presented: vec!["DnsName(\"other.example\")".into()],
            }
            .into(),
        );
        let text = explain_handshake_failure(&io).expect("a TLS failure");
        assert!(
            text.contains("is for other.example, not for 127.0.0.1"),
            "{text}"
        );
    }

    #[test]
    fn a_peer_that_is_not_tls_is_a_handshake_failure() {
        let io = wrapped(rustls::Error::InvalidMessage(
            rustls::InvalidMessage::InvalidContentType,
        ));
        let text = explain_handshake_failure(&io).expect("a TLS failure");
        assert!(text.starts_with("the TLS handshake failed"), "{text}");
        assert!(text.contains("http:// URL"), "{text}");
    }
}
