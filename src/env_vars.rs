//! Every environment variable `capabilities` reads, in one place, so none is a surprise.

/// Overrides both the config and the data directory: config at `$CAPABILITIES_HOME/config.toml`,
/// data under `$CAPABILITIES_HOME/data`. Tests point it at a temporary directory.
pub const CAPABILITIES_HOME: &str = "CAPABILITIES_HOME";

/// Path of the config file, overriding the platform default (the `--config` flag wins over it).
pub const CAPABILITIES_CONFIG: &str = "CAPABILITIES_CONFIG";

/// A `tracing` filter for the logs on stderr, e.g. `debug` or `capabilities::sources=trace`.
pub const CAPABILITIES_LOG: &str = "CAPABILITIES_LOG";

/// `text` or `json`: the format of the logs on stderr (the `--log-format` flag wins over it).
pub const CAPABILITIES_LOG_FORMAT: &str = "CAPABILITIES_LOG_FORMAT";

/// The OpenTelemetry collector to export traces to, when `--otel-endpoint` is not given; the
/// standard variable, read only by builds with the `otel` feature (a build without it ignores it,
/// so a variable set for other programs cannot break this one).
#[cfg(feature = "otel")]
pub const OTEL_EXPORTER_OTLP_ENDPOINT: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";

/// The standard per-signal form of `OTEL_EXPORTER_OTLP_ENDPOINT` (a full URL, used as it is).
#[cfg(feature = "otel")]
pub const OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: &str = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT";

/// When set (to anything), output has no colour. <https://no-color.org>
pub const NO_COLOR: &str = "NO_COLOR";

/// The passphrase of the encrypted credential file (`[credentials] store = "file"`), for
/// machines where nobody is at a terminal to type it. Without it, commands prompt for it.
pub const CAPABILITIES_PASSPHRASE: &str = "CAPABILITIES_PASSPHRASE";

/// Where the Codex CLI keeps its config (default `~/.codex`); `install codex` writes there.
pub const CODEX_HOME: &str = "CODEX_HOME";

/// An X11 display; on Linux and the BSDs its absence (with no `WAYLAND_DISPLAY`) means no browser
/// can show the approval page, so the hub skips opening it.
pub const DISPLAY: &str = "DISPLAY";

/// A Wayland display; the other way a Linux desktop session announces itself (see `DISPLAY`).
pub const WAYLAND_DISPLAY: &str = "WAYLAND_DISPLAY";

/// A PEM file of the certificate authorities HTTPS sources (and the OTel exporter) trust, in
/// place of the system's store; read by the TLS verifier as OpenSSL reads it, and named in the
/// error when a server's certificate authority is unknown.
pub const SSL_CERT_FILE: &str = "SSL_CERT_FILE";

/// Directories of certificate authorities (`:`-separated), likewise in place of the system's
/// store.
pub const SSL_CERT_DIR: &str = "SSL_CERT_DIR";

/// The shared state store's URL (`postgres://…`); overrides `[store] url` in the config.
pub const CAPABILITIES_STORE_URL: &str = "CAPABILITIES_STORE_URL";

/// The key that encrypts runs at rest, as 32 bytes in base64 (or 64 hex digits): for replicas of
/// a hub that share one store, so each can hold the same key without a keychain.
pub const CAPABILITIES_STATE_KEY: &str = "CAPABILITIES_STATE_KEY";

/// The hub's own keys, which no source's process inherits: the passphrase opens every stored
/// secret, the state key every run, and the store's URL carries its password. A server that
/// needs one gets it only by naming it in its own `env`.
pub const WITHHELD_FROM_SOURCES: [&str; 3] = [
    CAPABILITIES_PASSPHRASE,
    CAPABILITIES_STATE_KEY,
    CAPABILITIES_STORE_URL,
];

/// The hub's own keys that are secrets as they are, blanked from whatever an upstream sends like
/// a stored secret. (The store's URL is not: most of it is a host and port that logs and
/// results name for other reasons, and a piece of it would blank those.)
pub const HUB_SECRETS: [&str; 2] = [CAPABILITIES_PASSPHRASE, CAPABILITIES_STATE_KEY];
