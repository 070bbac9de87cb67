//! Logging: `tracing` to stderr, as text or as one JSON object per line (`--log-format`), with
//! every secret the process has read blanked ([`RedactingStderr`]) whatever the format; the ids
//! a reader groups lines by; and, with the `otel` cargo feature, span export over OTLP/HTTP.
//!
//! The ids come from spans that carry a `request_id` or `run_id` field: the hub opens a
//! `request` span per MCP request (`hub::trace`), the sandbox a `run` span per script. Such spans
//! are recorded whatever `CAPABILITIES_LOG` filters out, so a warning inside a request still
//! names its request. A JSON line has `request_id` at the top level, from the innermost span that
//! has one or else the process's own id (`<verb>-<pid>`, e.g. `hub-4242`: start-up, sources
//! connecting and restarting), and `run_id` when it belongs to a run. Text lines show the spans
//! (and so the ids) in front of the message.

use std::fmt;
use std::io::Write;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Map, Value};
use tracing::field::{Field, Visit};
use tracing::level_filters::LevelFilter;
use tracing::{Event, Level, Metadata, Subscriber};
use tracing_log::NormalizeEvent;
use tracing_subscriber::Layer;
use tracing_subscriber::field::MakeExt;
use tracing_subscriber::filter::{EnvFilter, FilterExt, filter_fn};
use tracing_subscriber::fmt::format::{JsonFields, Writer, debug_fn};
use tracing_subscriber::fmt::time::{FormatTime, SystemTime};
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormattedFields, MakeWriter};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::registry::{LookupSpan, Registry};
use tracing_subscriber::util::SubscriberInitExt;

use crate::cli::LogFormat;
use crate::credentials::RedactingStderr;
use crate::env_vars;

/// The fields that make a span one lines are grouped by.
const ID_FIELDS: [&str; 2] = ["request_id", "run_id"];

/// The format this process logs in, and its id for lines outside requests; set by [`init`].
static FORMAT: OnceLock<(LogFormat, String)> = OnceLock::new();

/// A layer of the process's subscriber.
type BoxedLayer = Box<dyn Layer<Registry> + Send + Sync>;

/// Why logging could not start as asked.
#[derive(Debug, thiserror::Error)]
pub enum LoggingError {
    #[cfg(not(feature = "otel"))]
    #[error(
        "--otel-endpoint needs OpenTelemetry export, and this binary was built without it (the `otel` cargo feature); build it with `cargo install --locked --path . --features otel`"
    )]
    OtelNotBuilt,
    #[cfg(feature = "otel")]
    #[error("cannot export traces to {endpoint}: {reason}")]
    Otel { endpoint: String, reason: String },
}

/// Keeps logging (and trace export) running; dropping it sends the spans still buffered.
pub struct Logging {
    #[cfg(feature = "otel")]
    otel: Option<otel::Export>,
}

impl Drop for Logging {
    fn drop(&mut self) {
        #[cfg(feature = "otel")]
        if let Some(export) = self.otel.take() {
            export.shutdown();
        }
    }
}

/// The filter when `$CAPABILITIES_LOG` sets none: warnings and errors, except rmcp's. rmcp logs
/// its transport's failures (`worker quit with fatal: … DnsError {…}`) as errors, and the
/// command's own one-line error already says what failed and what to do.
pub const DEFAULT_FILTER: &str = "warn,rmcp=off";

/// `CAPABILITIES_LOG=info` asks for the hub's access log; rmcp's own info lines (a session's
/// peer info dumped as a Rust struct, services starting and stopping) would bury it, so at a
/// bare `info` rmcp says only warnings. Naming rmcp (`info,rmcp=info`) or a finer level brings
/// them back.
fn quiet_rmcp_at_info(filter: EnvFilter) -> EnvFilter {
    let asked = std::env::var(env_vars::CAPABILITIES_LOG).unwrap_or_default();
    if !asked.trim().eq_ignore_ascii_case("info") {
        return filter;
    }
    match "rmcp=warn".parse() {
        Ok(directive) => filter.add_directive(directive),
        Err(_) => filter,
    }
}

/// Starts logging to stderr for this process, `verb` naming it in the id of lines that belong
/// to no request. The filter is `$CAPABILITIES_LOG` (default [`DEFAULT_FILTER`]); `ansi` colours
/// text lines (never on a stderr that is not a terminal, see `--color`). A second call (tests
/// that run verbs in one process) leaves the first subscriber in place.
pub fn init(
    format: LogFormat,
    otel_endpoint: Option<&str>,
    verb: &str,
    ansi: bool,
) -> Result<Logging, LoggingError> {
    let process_id = format!("{verb}-{}", std::process::id());
    let _ = FORMAT.set((format, process_id.clone()));
    let filter = EnvFilter::try_from_env(env_vars::CAPABILITIES_LOG)
        .map(quiet_rmcp_at_info)
        .unwrap_or_else(|_| EnvFilter::new(DEFAULT_FILTER));
    // Blanks any stored secret a dependency might log (rmcp logs raw messages at trace).
    let stderr = fmt_layer(format, process_id, filter, ansi, || RedactingStderr);
    #[cfg(not(feature = "otel"))]
    let export: Option<BoxedLayer> = match otel_endpoint {
        Some(_) => return Err(LoggingError::OtelNotBuilt),
        None => None,
    };
    #[cfg(feature = "otel")]
    let (otel, export) = match otel::Export::start(otel_endpoint)? {
        Some((otel, layer)) => (Some(otel), Some(layer)),
        None => (None, None),
    };
    let layers: Vec<_> = std::iter::once(stderr).chain(export).collect();
    let _ = tracing_subscriber::registry().with(layers).try_init();
    Ok(Logging {
        #[cfg(feature = "otel")]
        otel,
    })
}

/// Tells the person at the terminal something that is not a log event and must show whatever
/// `CAPABILITIES_LOG` says (the address the hub serves, the error that ended the command): a
/// plain line (`error: …`, `warning: …`, `capabilities: …`), or in the JSON format a line shaped
/// like the logs', so that stderr stays one JSON object per line.
pub fn notice(level: Level, message: &str) {
    // Nothing is left to tell the user about a failing stderr.
    let _ = write_notice(&mut RedactingStderr, FORMAT.get(), level, message);
}

/// Writes [`notice`]'s line for `format` (the format and process id [`init`] set) to `out` in
/// one write, as the log layers do: [`RedactingStderr`] blanks a secret only if it sees it whole,
/// and a line written in one piece cannot interleave with another thread's.
fn write_notice(
    out: &mut impl Write,
    format: Option<&(LogFormat, String)>,
    level: Level,
    message: &str,
) -> std::io::Result<()> {
    let line = match format {
        Some((LogFormat::Json, process_id)) => {
            let mut timestamp = String::new();
            let _ = SystemTime.format_time(&mut Writer::new(&mut timestamp));
            let object = serde_json::json!({
                "timestamp": timestamp,
                "level": level.as_str(),
                "target": "capabilities",
                "request_id": process_id,
                "message": message,
            });
            format!("{object}\n")
        }
        _ => {
            let prefix = match level {
                Level::ERROR => "error",
                Level::WARN => "warning",
                _ => "capabilities",
            };
            format!("{prefix}: {message}\n")
        }
    };
    // The message may carry an upstream's or a script's words (an error it answered with).
    out.write_all(crate::printable::escaped(&line).as_bytes())
}

/// A short random id for one request, e.g. `req_k3xq7m2a9c4e` (60 bits: unique enough to group
/// the lines of a process's requests, short enough to read).
pub fn new_request_id() -> String {
    const ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";
    let mut bytes = [0u8; 8];
    let value = match getrandom::fill(&mut bytes) {
        Ok(()) => u64::from_le_bytes(bytes),
        // Without the OS random source, a counter still keeps this process's ids apart.
        Err(_) => {
            static NEXT: AtomicU64 = AtomicU64::new(1);
            NEXT.fetch_add(1, Ordering::Relaxed)
        }
    };
    let mut id = String::from("req_");
    for i in 0..12 {
        id.push(ALPHABET[((value >> (i * 5)) & 31) as usize] as char);
    }
    id
}

/// The log layer in `format`, filtered by `filter` except that spans carrying an id are always
/// recorded.
fn fmt_layer<S, W>(
    format: LogFormat,
    process_id: String,
    filter: EnvFilter,
    ansi: bool,
    writer: W,
) -> Box<dyn Layer<S> + Send + Sync>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    let filter = filter.or(filter_fn(carries_an_id).with_max_level_hint(LevelFilter::INFO));
    match format {
        LogFormat::Text => tracing_subscriber::fmt::layer()
            .fmt_fields(debug_fn(text_field).delimited(" "))
            .with_writer(writer)
            .with_ansi(ansi)
            .with_filter(filter)
            .boxed(),
        LogFormat::Json => tracing_subscriber::fmt::layer()
            .fmt_fields(JsonFields::new())
            .event_format(JsonLines { process_id })
            .with_writer(writer)
            .with_filter(filter)
            .boxed(),
    }
}

/// One field of a text log line, as tracing's default writes it (`message` bare, the others
/// `name=value`, a `log` record's origin left out), with every character that could drive the
/// terminal escaped: values carry an upstream's words (its error, its stderr), and the default
/// leaves carriage returns, bidirectional overrides and `%`-formatted values raw. The colours
/// the formatter adds around fields are not in them, so they stay.
fn text_field(writer: &mut Writer<'_>, field: &Field, value: &dyn fmt::Debug) -> fmt::Result {
    if field.name().starts_with("log.") {
        return Ok(());
    }
    let text = format!("{value:?}");
    let text = crate::printable::escaped(&text);
    if field.name() == "message" {
        write!(writer, "{text}")
    } else {
        write!(writer, "{}={text}", field.name())
    }
}

/// A span of this crate that carries a request or run id (all of them are `info` spans).
fn carries_an_id(metadata: &Metadata<'_>) -> bool {
    metadata.is_span()
        && metadata.target().starts_with("capabilities::")
        && ID_FIELDS
            .iter()
            .any(|name| metadata.fields().field(name).is_some())
}

/// One JSON object per line: `timestamp`, `level`, `target`, `request_id`, `run_id` (inside a
/// run), `message`, the event's other `fields`, and the `spans` it is in, outermost first, each
/// with its name and fields. The fmt layer formats each event (in either format) into one buffer
/// and hands it to the writer in one `write_all`, so [`RedactingStderr`] sees a secret whole.
struct JsonLines {
    process_id: String,
}

impl<S> FormatEvent<S, JsonFields> for JsonLines
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, JsonFields>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        // A `log` record (reqwest and others log through `log`) gets its own target and level.
        let normalized = event.normalized_metadata();
        let metadata = normalized.as_ref().unwrap_or_else(|| event.metadata());
        let mut timestamp = String::new();
        SystemTime.format_time(&mut Writer::new(&mut timestamp))?;
        let mut fields = JsonVisitor::default();
        event.record(&mut fields);
        let mut fields = fields.0;
        let message = fields.remove("message");

        let mut request_id = None;
        let mut run_id = None;
        let mut spans = Vec::new();
        if let Some(scope) = ctx.event_scope() {
            for span in scope.from_root() {
                let extensions = span.extensions();
                let recorded: Map<String, Value> = extensions
                    .get::<FormattedFields<JsonFields>>()
                    .and_then(|fields| serde_json::from_str(fields).ok())
                    .unwrap_or_default();
                // Outermost first, so an inner span's id wins.
                if let Some(Value::String(id)) = recorded.get("request_id") {
                    request_id = Some(id.clone());
                }
                if let Some(Value::String(id)) = recorded.get("run_id") {
                    run_id = Some(id.clone());
                }
                let mut object = Map::new();
                object.insert("name".into(), span.name().into());
                object.extend(recorded);
                spans.push(Value::Object(object));
            }
        }

        let mut line = Map::new();
        line.insert("timestamp".into(), timestamp.into());
        line.insert("level".into(), metadata.level().as_str().into());
        line.insert("target".into(), metadata.target().into());
        line.insert(
            "request_id".into(),
            request_id.unwrap_or_else(|| self.process_id.clone()).into(),
        );
        if let Some(run_id) = run_id {
            line.insert("run_id".into(), run_id.into());
        }
        if let Some(message) = message {
            line.insert("message".into(), message);
        }
        if !fields.is_empty() {
            line.insert("fields".into(), Value::Object(fields));
        }
        if !spans.is_empty() {
            line.insert("spans".into(), Value::Array(spans));
        }
        // serde escapes the controls below U+0020; the C1 controls and bidirectional overrides
        // an upstream's message may carry are escaped too, which leaves the JSON equal.
        let line = Value::Object(line).to_string();
        writeln!(writer, "{}", crate::printable::escaped(&line))
    }
}

/// An event's fields as JSON values: numbers and booleans as such, everything else as text.
#[derive(Default)]
struct JsonVisitor(Map<String, Value>);

impl JsonVisitor {
    fn insert(&mut self, field: &Field, value: Value) {
        // `log` records carry their origin as fields; the line already has it.
        if !field.name().starts_with("log.") {
            self.0.insert(field.name().to_string(), value);
        }
    }
}

impl Visit for JsonVisitor {
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.insert(field, value.into());
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.insert(field, value.into());
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.insert(field, value.into());
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.insert(field, value.into());
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.insert(field, value.into());
    }
    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.insert(field, value.to_string().into());
    }
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.insert(field, format!("{value:?}").into());
    }
}

/// OpenTelemetry export: the `request` and `run` spans (their ids, method, tool, outcome and
/// timing) go to a collector over OTLP/HTTP with protobuf. Log events are not exported: their
/// messages can quote upstream text, which only the stderr writer redacts.
#[cfg(feature = "otel")]
mod otel {
    use opentelemetry::trace::TracerProvider as _;
    use opentelemetry_otlp::{Protocol, WithExportConfig};
    use opentelemetry_sdk::Resource;
    use opentelemetry_sdk::trace::SdkTracerProvider;
    use tracing::level_filters::LevelFilter;
    use tracing_subscriber::Layer;
    use tracing_subscriber::filter::filter_fn;

    use super::{BoxedLayer, LoggingError, carries_an_id};
    use crate::env_vars;

    /// Where OTLP/HTTP collectors take traces, under the endpoint's base URL.
    const TRACES_PATH: &str = "/v1/traces";

    pub(super) struct Export {
        provider: SdkTracerProvider,
    }

    impl Export {
        /// Starts exporting to `endpoint` (a base URL, like `OTEL_EXPORTER_OTLP_ENDPOINT`), or
        /// to what the standard variables say; `None` when neither names a collector.
        pub(super) fn start(
            endpoint: Option<&str>,
        ) -> Result<Option<(Export, BoxedLayer)>, LoggingError> {
            let from_env = [
                env_vars::OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
                env_vars::OTEL_EXPORTER_OTLP_ENDPOINT,
            ]
            .iter()
            .find_map(|name| std::env::var(name).ok().filter(|v| !v.is_empty()));
            let shown = match (endpoint, &from_env) {
                (Some(endpoint), _) => endpoint.to_string(),
                (None, Some(endpoint)) => endpoint.clone(),
                (None, None) => return Ok(None),
            };
            let failed = |reason: String| LoggingError::Otel {
                endpoint: shown.clone(),
                reason,
            };
            check_url(&shown).map_err(&failed)?;
            // The exporter builds its reqwest client in `build`, which needs the provider.
            crate::tls::install_crypto_provider();
            let mut builder = opentelemetry_otlp::SpanExporter::builder()
                .with_http()
                .with_protocol(Protocol::HttpBinary);
            // Without the flag the exporter reads the standard variables itself, per their rules.
            if let Some(endpoint) = endpoint {
                builder = builder.with_endpoint(traces_url(endpoint));
            }
            let exporter = builder.build().map_err(|e| failed(e.to_string()))?;
            let provider = SdkTracerProvider::builder()
                .with_batch_exporter(exporter)
                .with_resource(
                    Resource::builder()
                        .with_service_name("capabilities")
                        .with_attribute(opentelemetry::KeyValue::new(
                            "service.version",
                            env!("CARGO_PKG_VERSION"),
                        ))
                        .build(),
                )
                .build();
            let layer = tracing_opentelemetry::layer()
                .with_tracer(provider.tracer("capabilities"))
                .with_filter(filter_fn(carries_an_id).with_max_level_hint(LevelFilter::INFO))
                .boxed();
            Ok(Some((Export { provider }, layer)))
        }

        /// Sends the spans still buffered (bounded by the exporter's timeout).
        pub(super) fn shutdown(self) {
            if let Err(e) = self.provider.shutdown() {
                tracing::warn!("traces not exported at exit: {e}");
            }
        }
    }

    /// The collector's URL for traces: the base URL with `/v1/traces`, as the OTLP spec says.
    fn traces_url(endpoint: &str) -> String {
        format!("{}{TRACES_PATH}", endpoint.trim_end_matches('/'))
    }

    /// `http`, or `https` verified against the OS trust store like HTTPS sources
    /// ([`crate::tls`]).
    fn check_url(endpoint: &str) -> Result<(), String> {
        let url = url::Url::parse(endpoint).map_err(|e| format!("not a URL ({e})"))?;
        match url.scheme() {
            "http" | "https" => Ok(()),
            other => Err(format!(
                "`{other}` is not http or https; e.g. http://localhost:4318"
            )),
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn the_endpoint_is_a_base_url_over_http_or_https() {
            assert_eq!(
                traces_url("http://localhost:4318/"),
                "http://localhost:4318/v1/traces"
            );
            assert_eq!(
                traces_url("http://collector:4318/otlp"),
                "http://collector:4318/otlp/v1/traces"
            );
            assert!(check_url("http://localhost:4318").is_ok());
            assert!(check_url("https://collector.example:4318").is_ok());
            assert!(
                check_url("grpc://x")
                    .unwrap_err()
                    .contains("not http or https")
            );
            assert!(check_url("localhost:4318").is_err());
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use tracing::subscriber::with_default;

    use super::*;

    /// A writer that keeps what the layer wrote.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Captured {
        fn lines(&self) -> Vec<Value> {
            let bytes = self.0.lock().unwrap_or_else(|p| p.into_inner()).clone();
            String::from_utf8(bytes)
                .expect("UTF-8")
                .lines()
                .map(|line| serde_json::from_str(line).expect("each line is JSON"))
                .collect()
        }
    }

    /// Runs `body` with JSON logging at the default level (`warn`) into a buffer.
    fn json_lines(body: impl FnOnce()) -> Vec<Value> {
        let captured = Captured::default();
        let writer = captured.clone();
        let filter = EnvFilter::new("warn");
        let layer = fmt_layer(LogFormat::Json, "test-1".into(), filter, false, move || {
            writer.clone()
        });
        with_default(tracing_subscriber::registry().with(layer), body);
        captured.lines()
    }

    #[test]
    fn json_lines_carry_the_ids_of_their_spans_even_below_the_filter_level() {
        let lines = json_lines(|| {
            tracing::warn!(source = "time", "outside any request");
            let request = tracing::info_span!(
                "request",
                request_id = "req_a",
                method = "tools/call",
                run_id = tracing::field::Empty
            );
            let _in_request = request.enter();
            tracing::warn!(attempt = 2_u64, "inside the request");
            {
                let run = tracing::info_span!("run", run_id = "run_b");
                let _in_run = run.enter();
                tracing::error!("inside the run");
            }
            request.record("run_id", "run_b");
            tracing::info!("below the filter, so not written");
            tracing::warn!("after the run");
        });
        assert_eq!(lines.len(), 4, "{lines:#?}");

        assert_eq!(lines[0]["request_id"], "test-1");
        assert_eq!(lines[0]["level"], "WARN");
        assert_eq!(lines[0]["target"], "capabilities::logging::tests");
        assert_eq!(lines[0]["message"], "outside any request");
        assert_eq!(lines[0]["fields"]["source"], "time");
        assert!(lines[0].get("spans").is_none());
        assert!(
            lines[0]["timestamp"]
                .as_str()
                .is_some_and(|t| t.ends_with('Z'))
        );

        assert_eq!(lines[1]["request_id"], "req_a");
        assert!(lines[1].get("run_id").is_none());
        assert_eq!(lines[1]["fields"]["attempt"], 2);
        assert_eq!(lines[1]["spans"][0]["name"], "request");
        assert_eq!(lines[1]["spans"][0]["method"], "tools/call");

        assert_eq!(lines[2]["request_id"], "req_a");
        assert_eq!(lines[2]["run_id"], "run_b");
        assert_eq!(lines[2]["spans"][1]["name"], "run");

        // A field recorded on the span later shows on the lines after it.
        assert_eq!(lines[3]["run_id"], "run_b");
        assert_eq!(lines[3]["spans"][0]["run_id"], "run_b");
    }

    #[test]
    fn an_upstreams_words_in_a_log_line_cannot_drive_the_terminal() {
        let hostile = "refused\r[ok] all ready\u{1b}[2K\u{9b}1A\u{202e}";
        let log = || {
            let error = hostile.to_string();
            tracing::warn!(source = "x", %error, "listing failed: {hostile}");
        };
        for (format, ansi) in [
            (LogFormat::Text, false),
            (LogFormat::Text, true),
            (LogFormat::Json, false),
        ] {
            let captured = Captured::default();
            let writer = captured.clone();
            let layer = fmt_layer(
                format,
                "test-1".into(),
                EnvFilter::new("warn"),
                ansi,
                move || writer.clone(),
            );
            with_default(tracing_subscriber::registry().with(layer), log);
            let bytes = captured.0.lock().unwrap_or_else(|p| p.into_inner()).clone();
            let text = String::from_utf8(bytes).expect("UTF-8");
            // The formatter's own colours are the only escapes left.
            let without_colours = text.replace("\u{1b}[", "");
            assert!(
                !without_colours.contains(['\r', '\u{9b}', '\u{202e}'])
                    && !text.contains("\u{1b}[2K"),
                "{format:?} (ansi {ansi}): {text:?}"
            );
            if format == LogFormat::Json {
                // Escaped, the line still says what the upstream said.
                let line: Value = serde_json::from_str(text.trim_end()).expect("JSON");
                assert_eq!(line["fields"]["error"], hostile);
            } else {
                assert!(
                    text.contains(r"refused\u000d[ok] all ready\u001b[2K"),
                    "{text}"
                );
            }
        }
    }

    /// Each write as it came, with the secrets [`RedactingStderr`] would blank blanked in that
    /// write alone, as it does.
    struct Writes {
        redaction: crate::credentials::Redaction,
        writes: Vec<String>,
    }

    impl std::io::Write for Writes {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let text = String::from_utf8(buf.to_vec()).expect("UTF-8");
            self.writes.push(self.redaction.clean(&text));
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_notice_is_one_write_so_a_secret_in_it_is_blanked() {
        use crate::credentials::{MASK, Redaction, Secret};

        // A quote is escaped in JSON, so the line holds the secret in its escaped form, and a
        // writer that got the line in pieces (split at the escape) would never see it whole.
        let secret = "tok\"en-5e1c9a";
        let escaped = serde_json::to_string(secret).expect("JSON");
        let escaped = &escaped[1..escaped.len() - 1];
        let message = format!("the upstream refused {secret}");
        let json = (LogFormat::Json, "test-1".to_string());
        let text = (LogFormat::Text, "test-1".to_string());
        for format in [Some(&json), Some(&text), None] {
            let mut out = Writes {
                // The forms the credential store remembers for the log writer.
                redaction: Redaction::new([secret, escaped].map(|s| Secret::new(s.into()))),
                writes: Vec::new(),
            };
            write_notice(&mut out, format, Level::ERROR, &message).expect("written");
            assert_eq!(out.writes.len(), 1, "{:?}", out.writes);
            let line = &out.writes[0];
            assert!(!line.contains("5e1c9a"), "{line}");
            let Some(one_line) = line.strip_suffix('\n') else {
                panic!("no newline: {line}")
            };
            assert!(!one_line.contains('\n'), "{line}");
            if format == Some(&json) {
                let object: Value = serde_json::from_str(one_line).expect("a JSON line");
                assert_eq!(object["message"], format!("the upstream refused {MASK}"));
                assert_eq!(object["level"], "ERROR");
                assert_eq!(object["request_id"], "test-1");
            } else {
                assert_eq!(one_line, format!("error: the upstream refused {MASK}"));
            }
        }
    }

    #[test]
    fn request_ids_are_short_and_distinct() {
        let a = new_request_id();
        let b = new_request_id();
        assert_ne!(a, b);
        assert_eq!(a.len(), 16, "{a}");
        assert!(a.starts_with("req_"), "{a}");
    }
}
