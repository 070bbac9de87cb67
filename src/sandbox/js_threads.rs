//! The threads JavaScript runs on: a few, one per core (at least two), each driving many runs.
//! A run is a task on them; while it waits for a tool call, a timer or a person it holds no
//! thread, only its runtime's memory — so a thousand runs waiting on slow upstreams cost a
//! thousand small heaps, not a thousand threads. Tool calls themselves run on the caller's
//! runtime (the bridge spawns them there), so a busy script never delays another run's I/O.
//!
//! What a script does between two awaits runs without a break (QuickJS cannot be paused in the
//! middle of a script). So that a busy script cannot starve the runs that share its thread, its
//! interrupt handler asks [`Slice::check`] how long it has run since it last awaited: past
//! [`SLICE`], the thread hands its share of the pool to a fresh thread
//! (`tokio::task::block_in_place`) and carries on with the busy script alone, while the other
//! runs go on at once on the pool. Busy scripts end (or hit their time limit); the pool always
//! keeps its threads for the rest.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio::runtime::{Builder, Runtime};
use tokio::sync::Notify;
use tokio::task::JoinHandle;

/// How long a script may run without awaiting before its thread leaves the pool to it.
pub const SLICE: Duration = Duration::from_millis(20);

/// Room for QuickJS's own stack limit (`Limits::stack_bytes`, 1 MiB at most) and the host
/// frames around it.
const STACK_BYTES: usize = 8 << 20;

/// The JavaScript threads, started on first use and kept for the life of the process.
fn runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        let threads = std::thread::available_parallelism()
            .map(usize::from)
            .unwrap_or(2)
            .max(2);
        Builder::new_multi_thread()
            .worker_threads(threads)
            .thread_name("capabilities-js")
            .thread_stack_size(STACK_BYTES)
            .enable_all()
            .build()
            // Without threads to run scripts on, no run can do anything; say so plainly.
            .unwrap_or_else(|e| panic!("cannot start the threads that run scripts: {e}"))
    })
}

/// Runs the future `run` makes on the JavaScript threads; it gets the [`Slice`] its interrupt
/// handler checks.
pub fn spawn<F>(run: impl FnOnce(Arc<Slice>) -> F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let slice = Arc::new(Slice::default());
    let inner = Box::pin(run(slice.clone()));
    LIVE.fetch_add(1, Ordering::AcqRel);
    runtime().spawn(Sliced { inner, slice })
}

/// Tasks spawned here and not yet dropped, and the signal that the count reached zero.
static LIVE: AtomicUsize = AtomicUsize::new(0);
static SETTLED: Notify = Notify::const_new();

/// Waits, at most `bound`, until every task spawned here has ended and freed what it held.
/// A run frees its heap after delivering its envelope, and that heap's host functions hold the
/// state store: a process about to exit waits for them, so the store closes cleanly.
pub async fn settled(bound: Duration) {
    let all_done = async {
        loop {
            let notified = SETTLED.notified();
            let mut notified = std::pin::pin!(notified);
            // Registered before the count is read, so an end in between still wakes us.
            notified.as_mut().enable();
            if LIVE.load(Ordering::Acquire) == 0 {
                return;
            }
            notified.await;
        }
    };
    let _ = tokio::time::timeout(bound, all_done).await;
}

/// How many times one stretch of a busy script tries to give its place in the pool away.
const HANDOFFS: u32 = 3;

/// How long a hand-off waits for the new thread to take the pool's place; taking it back
/// before then would undo the hand-off.
const HANDOFF_WAIT: Duration = Duration::from_millis(1);

/// How long the run has been running since it was last resumed.
#[derive(Default)]
pub struct Slice {
    /// When the current poll began, in nanoseconds since [`epoch`].
    started_ns: AtomicU64,
    /// When this poll last tried to give its place away.
    tried_ns: AtomicU64,
    /// How many times this poll tried.
    tries: AtomicU32,
}

impl Slice {
    fn begin(&self) {
        let now = nanos_since_epoch();
        self.started_ns.store(now, Ordering::Relaxed);
        self.tried_ns.store(now, Ordering::Relaxed);
        self.tries.store(0, Ordering::Relaxed);
    }

    /// Called from the run's interrupt handler: once the script has run [`SLICE`] without
    /// awaiting, hands this thread's place in the pool to a new thread, so the runs queued
    /// behind this one are not held up by it. The new thread may be slow to start (and the
    /// place then comes back), so a still-busy script tries again a few slices later.
    pub fn check(&self) {
        let now = nanos_since_epoch();
        let slice = SLICE.as_nanos() as u64;
        if now.saturating_sub(self.tried_ns.load(Ordering::Relaxed)) < slice
            || self.tries.load(Ordering::Relaxed) >= HANDOFFS
        {
            return;
        }
        self.tried_ns.store(now, Ordering::Relaxed);
        self.tries.fetch_add(1, Ordering::Relaxed);
        // Only a worker of a multi-threaded runtime can do this; the runs are always polled by
        // one (this module's), and anything else just carries on as before.
        if tokio::runtime::Handle::try_current()
            .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread)
        {
            tokio::task::block_in_place(|| std::thread::sleep(HANDOFF_WAIT));
        }
    }
}

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

fn nanos_since_epoch() -> u64 {
    u64::try_from(epoch().elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// A run, timing each of its polls for [`Slice::check`].
struct Sliced<F> {
    inner: Pin<Box<F>>,
    slice: Arc<Slice>,
}

impl<F> Drop for Sliced<F> {
    fn drop(&mut self) {
        if LIVE.fetch_sub(1, Ordering::AcqRel) == 1 {
            SETTLED.notify_waiters();
        }
    }
}

impl<F: Future> Future for Sliced<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        self.slice.begin();
        self.inner.as_mut().poll(cx)
    }
}
