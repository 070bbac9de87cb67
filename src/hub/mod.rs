//! The MCP server (`capabilities hub serve`): the code-mode surface of three tools over stdio or
//! Streamable HTTP.
//! 2026-07-28 clients are served statelessly (`server/discover`, `_meta` on every request,
//! `resultType`); older clients (2025-03-26 to 2025-11-25) after `initialize`. rmcp does the
//! protocol; this module owns what is on top of it.
//!
//! | file | owns |
//! |---|---|
//! | `surface` | the three tool definitions and the server instructions (the fixed cost) |
//! | `fields` | the arguments of each tool, once: their schemas and their bounds |
//! | `args` | reading each tool's arguments against `fields`, with errors that name the field |
//! | `handler` | the `ServerHandler`: search, describe and execute on the live catalogue, or direct mode's tools; asking a person (approval page, sign-in, form answers) |
//! | `direct` | direct mode: each source's tool as its own MCP tool, each call a one-call run |
//! | `skills` | the Skills extension (SEP-2640) served natively: skills/list, skills/get, `skill://` resources |
//! | `stdio` | the transport: JSON-RPC lines, with errors for lines that are not messages |
//! | `streamable_http` | Streamable HTTP at `/mcp`: Origin and bearer-token checks, JSON-RPC bodies and batches, session recovery, connection limits |
//! | `trace` | a `request` span (request id, method, tool, run id) and the access log per request |
//!
//! ```text
//! let hub = Hub::new(catalog, settings, executor);
//! hub::serve(hub, stdin, stdout).await?;   // returns when the client closes stdin
//! ```

mod args;
pub mod direct;
mod elicit;
mod fields;
mod handler;
mod sign_in;
mod skills;
mod stdio;
mod streamable_http;
pub mod surface;
mod trace;

pub use handler::Hub;
pub use stdio::StdioTransport;
pub use streamable_http::{HttpLimits, HttpOptions, Origin, is_remote, serve_http};

use rmcp::ServiceExt;
use rmcp::service::ServerInitializeError;
use tokio::io::{AsyncRead, AsyncWrite};

/// Serves `hub` over a reader and a writer (stdin and stdout, or pipes in tests) until the
/// client closes its end. Runs in flight when that happens are cancelled.
pub async fn serve<R, W>(hub: Hub, reader: R, writer: W) -> anyhow::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    // The first `execute` should not pay for making a JavaScript runtime.
    crate::sandbox::warm_up();
    let running = match hub.serve(StdioTransport::new(reader, writer)).await {
        Ok(running) => running,
        // The client left before it ever initialized: nothing to serve.
        Err(ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
        Err(e) => {
            return Err(anyhow::anyhow!(
                "the MCP client's first messages were not a valid start: {e}"
            ));
        }
    };
    let reason = running.waiting().await?;
    tracing::debug!("the MCP client went away: {reason:?}");
    Ok(())
}
