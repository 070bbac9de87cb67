//! The connections of `hub serve --http`: the accept loop, and what bounds the time and the
//! number of connections a client can hold (`axum::serve` bounds neither: a client sending a
//! header byte every 2 s, or 200 connections that send nothing, were kept open for good).
//!
//! - At most `max_connections` are served at once. One more is answered 503 with
//!   `Retry-After` and closed; a few such answers are given at a time, and past those a
//!   connection is closed unanswered, so a flood costs no more than the cap.
//! - `idle_timeout`: a connection with no request in progress that receives nothing (a new one
//!   that never sends, a kept-alive one between requests, a peer that vanished) is closed.
//! - `header_timeout`: once the first byte of a request arrives, its whole head must arrive in
//!   time; a client trickling bytes would otherwise keep resetting the idle clock.
//! - A request in progress is never cut by either, however long its response streams (a run
//!   waiting for an approval, a session's GET stream): it ends when the response does. How
//!   long its body may take is the handler's deadline.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};
use http::{Request, Response};
use http_body::{Frame, SizeHint};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

/// How many connections past the cap are answered 503 at once; the rest are closed unanswered.
const BUSY_ANSWERS: usize = 32;

/// The bounds on each connection (`hub serve --http` flags).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub header_timeout: Duration,
    pub idle_timeout: Duration,
    pub max_connections: usize,
}

/// Accepts connections on `listener` until the process ends, serving each request with
/// `handle`, and those past the cap with `busy`.
pub async fn serve<H, F, B>(
    listener: TcpListener,
    limits: Limits,
    handle: H,
    busy: B,
) -> io::Result<()>
where
    H: Fn(Request<Incoming>) -> F + Clone + Send + Sync + 'static,
    F: Future<Output = Response<Body>> + Send + 'static,
    B: Fn() -> Response<Body> + Copy + Send + Sync + 'static,
{
    let served = Arc::new(Semaphore::new(limits.max_connections));
    let answered_busy = Arc::new(Semaphore::new(BUSY_ANSWERS));
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) if is_connection_error(&e) => continue,
            Err(e) => {
                // Out of file descriptors, most often: wait for some to be freed.
                tracing::warn!("cannot accept an HTTP connection: {e}");
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        if let Ok(permit) = served.clone().try_acquire_owned() {
            let handle = handle.clone();
            tokio::spawn(connection(stream, limits, true, handle, permit));
        } else if let Ok(permit) = answered_busy.clone().try_acquire_owned() {
            tracing::debug!(
                "answering 503: {} connections are open",
                limits.max_connections
            );
            let busy = move |_: Request<Incoming>| async move { busy() };
            tokio::spawn(connection(stream, limits, false, busy, permit));
        }
        // Past both: the stream is dropped, which closes it.
    }
}

/// Errors of one connection that leave the listener fine.
fn is_connection_error(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}

/// Serves one connection until the client closes it, hyper ends it, or a timeout does.
async fn connection<H, F>(
    stream: TcpStream,
    limits: Limits,
    keep_alive: bool,
    handle: H,
    _permit: OwnedSemaphorePermit,
) where
    H: Fn(Request<Incoming>) -> F + Send + Sync + 'static,
    F: Future<Output = Response<Body>> + Send + 'static,
{
    let clock = Arc::new(Clock::new());
    let io = TokioIo::new(Watched {
        stream,
        clock: clock.clone(),
    });
    let service = {
        let clock = clock.clone();
        hyper::service::service_fn(move |request| {
            let in_flight = InFlight::start(clock.clone());
            let response = handle(request);
            async move {
                let response = response.await;
                Ok::<_, Infallible>(response.map(|body| Tracked {
                    body,
                    _in_flight: in_flight,
                }))
            }
        })
    };
    let served = http1::Builder::new()
        .keep_alive(keep_alive)
        .serve_connection(io, service);
    tokio::pin!(served);
    loop {
        let changed = clock.changed.notified();
        let deadline = clock.deadline(&limits);
        tokio::select! {
            result = served.as_mut() => {
                if let Err(e) = result {
                    tracing::debug!("an HTTP connection ended: {e}");
                }
                return;
            }
            () = changed => {}
            () = sleep_until(deadline) => {
                if clock.deadline(&limits).is_some_and(|d| d <= Instant::now()) {
                    // No request is in progress, so dropping the connection cuts no answer.
                    tracing::debug!("closing an HTTP connection that sent no complete request in time");
                    return;
                }
            }
        }
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

/// Where a connection stands, for its timeouts.
struct Clock {
    state: Mutex<Phase>,
    /// Woken whenever the phase changes, so the deadline is computed anew.
    changed: Notify,
}

struct Phase {
    /// Requests whose answer has not been sent in full.
    in_flight: usize,
    /// Whether a byte of the next request's head has arrived.
    head_started: bool,
    /// When the connection went idle, or when that first byte arrived.
    since: Instant,
}

impl Clock {
    fn new() -> Clock {
        Clock {
            state: Mutex::new(Phase {
                in_flight: 0,
                head_started: false,
                since: Instant::now(),
            }),
            changed: Notify::new(),
        }
    }

    fn phase(&self) -> MutexGuard<'_, Phase> {
        // The phase is three plain fields and stays consistent even if a holder panicked.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// When the connection is to be closed if nothing changes; none while a request is served.
    fn deadline(&self, limits: &Limits) -> Option<Instant> {
        let phase = self.phase();
        match (phase.in_flight, phase.head_started) {
            (0, false) => Some(phase.since + limits.idle_timeout),
            (0, true) => Some(phase.since + limits.header_timeout),
            _ => None,
        }
    }

    fn received(&self) {
        let mut phase = self.phase();
        if phase.in_flight == 0 && !phase.head_started {
            phase.head_started = true;
            phase.since = Instant::now();
            drop(phase);
            self.changed.notify_one();
        }
    }
}

/// A request being served: counted from its head until its response is sent or dropped.
struct InFlight(Arc<Clock>);

impl InFlight {
    fn start(clock: Arc<Clock>) -> InFlight {
        clock.phase().in_flight += 1;
        clock.changed.notify_one();
        InFlight(clock)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut phase = self.0.phase();
        phase.in_flight = phase.in_flight.saturating_sub(1);
        if phase.in_flight == 0 {
            phase.head_started = false;
            phase.since = Instant::now();
        }
        drop(phase);
        self.0.changed.notify_one();
    }
}

/// A response body that keeps its request in flight until hyper is done with it.
struct Tracked {
    body: Body,
    _in_flight: InFlight,
}

impl HttpBody for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// The socket, noting on the clock when bytes arrive.
struct Watched {
    stream: TcpStream,
    clock: Arc<Clock>,
}

impl AsyncRead for Watched {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.stream).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            this.clock.received();
        }
        polled
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: Limits = Limits {
        header_timeout: Duration::from_secs(10),
        idle_timeout: Duration::from_secs(30),
        max_connections: 1,
    };

    #[tokio::test]
    async fn the_deadline_follows_the_phase_of_the_connection() {
        let clock = Arc::new(Clock::new());
        let opened = clock.phase().since;
        assert_eq!(clock.deadline(&LIMITS), Some(opened + LIMITS.idle_timeout));
        clock.received();
        let started = clock.phase().since;
        assert_eq!(
            clock.deadline(&LIMITS),
            Some(started + LIMITS.header_timeout)
        );
        let request = InFlight::start(clock.clone());
        // Bytes of a body, or of a request pipelined behind it, start no clock.
        clock.received();
        assert_eq!(clock.deadline(&LIMITS), None);
        drop(request);
        let idle = clock.phase().since;
        assert_eq!(clock.deadline(&LIMITS), Some(idle + LIMITS.idle_timeout));
    }
}
