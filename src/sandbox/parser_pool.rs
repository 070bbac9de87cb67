//! A few long-lived threads with big stacks for parsing user code. oxc's parser is recursive with
//! no depth limit, so deeply nested code must not run on a normal 2 MiB stack; spawning a
//! big-stack thread per run cost ~200 µs, so the threads are kept.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc::{Receiver, Sender, channel, sync_channel};
use std::sync::{Arc, Mutex, OnceLock};

/// Virtual reservation per thread; only the pages a parse touches are ever committed.
const STACK: usize = 256 << 20;

type Job = Box<dyn FnOnce() + Send>;

fn pool() -> Option<&'static Mutex<Sender<Job>>> {
    static POOL: OnceLock<Option<Mutex<Sender<Job>>>> = OnceLock::new();
    POOL.get_or_init(|| {
        let (sender, receiver) = channel::<Job>();
        let receiver = Arc::new(Mutex::new(receiver));
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 8));
        let mut started = 0;
        for i in 0..threads {
            let receiver = receiver.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("sandbox-parse-{i}"))
                .stack_size(STACK)
                .spawn(move || work(&receiver));
            started += usize::from(spawned.is_ok());
        }
        (started > 0).then(|| Mutex::new(sender))
    })
    .as_ref()
}

fn work(receiver: &Mutex<Receiver<Job>>) {
    loop {
        let job = match receiver.lock() {
            Ok(receiver) => receiver.recv(),
            Err(_) => return,
        };
        match job {
            Ok(job) => job(),
            Err(_) => return,
        }
    }
}

/// Runs `f` on a parser thread and waits for it; `None` if the pool is unavailable or `f`
/// panicked.
pub fn run_on_big_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let (reply, answer) = sync_channel(1);
    let job: Job = Box::new(move || {
        let _ = reply.send(catch_unwind(AssertUnwindSafe(f)).ok());
    });
    pool()?.lock().ok()?.send(job).ok()?;
    answer.recv().ok().flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_jobs_and_survives_panics() {
        assert_eq!(run_on_big_stack(|| 1 + 1), Some(2));
        assert_eq!(run_on_big_stack(|| -> u8 { panic!("boom") }), None);
        assert_eq!(run_on_big_stack(|| "still alive"), Some("still alive"));
    }
}
