//! Runtimes made ready before a run asks for one: a fresh QuickJS runtime and context with the
//! prelude loaded and its module body evaluated. That body only defines functions and captures
//! the intrinsics; everything a run brings (seed, clock, namespaces, host functions, limits,
//! interrupt) is installed by the run itself, through the prelude's `install(host)`. Each
//! runtime serves exactly one run and is then freed, so nothing passes from one run to the
//! next; making one is about a third of an empty run's time on its thread, and it is done after
//! a run has delivered its envelope, so the next run does not wait for it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rquickjs::context::intrinsic::{
    DOMException, Date, Json, MapSet, Promise as PromiseIntrinsic, Proxy, RegExp, TypedArrays,
};
use rquickjs::{AsyncContext, AsyncRuntime, Function, Module};

use super::alloc::{MemoryMeter, MeteredAllocator};
use super::compile::prelude_bytecode;

/// How many ready runtimes are kept: enough for a burst of two runs, not a heap per thread
/// sitting idle.
const KEEP: usize = 2;

/// A runtime with the prelude evaluated, waiting for its run.
pub struct Ready {
    // Field order matters: the context must drop before its runtime.
    pub context: AsyncContext,
    pub runtime: AsyncRuntime,
    /// Counts the prelude's memory too; the run sets its limit.
    pub meter: Arc<MemoryMeter>,
}

fn kept() -> &'static Mutex<Vec<Ready>> {
    static KEPT: Mutex<Vec<Ready>> = Mutex::new(Vec::new());
    &KEPT
}

/// A ready runtime: a kept one, or one made now.
pub async fn take() -> Result<Ready, String> {
    let kept = kept().lock().unwrap_or_else(|p| p.into_inner()).pop();
    match kept {
        Some(ready) => Ok(ready),
        None => make().await,
    }
}

/// Whether runtimes are made ahead: a long-lived hub asks for it ([`want`]); a one-shot
/// command runs one script and exits, and a runtime made for a next run would be waste.
static WANTED: AtomicBool = AtomicBool::new(false);

/// From now on, keeps [`KEEP`] runtimes ready.
pub fn want() {
    WANTED.store(true, Ordering::Relaxed);
}

/// Makes runtimes until [`KEEP`] are ready, when they are wanted. A failure is only logged: the
/// next run makes its own and reports it.
pub async fn refill() {
    if !WANTED.load(Ordering::Relaxed) {
        return;
    }
    while kept().lock().unwrap_or_else(|p| p.into_inner()).len() < KEEP {
        match make().await {
            Ok(ready) => {
                // Several runs may refill at once: one past `KEEP` is freed, outside the lock.
                let mut kept = kept().lock().unwrap_or_else(|p| p.into_inner());
                let surplus = if kept.len() < KEEP {
                    kept.push(ready);
                    None
                } else {
                    Some(ready)
                };
                drop(kept);
                drop(surplus);
            }
            Err(e) => {
                tracing::debug!("no JavaScript runtime made ahead of time: {e}");
                return;
            }
        }
    }
}

/// The prelude's `install(host)`, taken out of a ready context by the run that uses it.
pub fn take_install<'js>(ctx: &rquickjs::Ctx<'js>) -> Option<Function<'js>> {
    ctx.remove_userdata::<Function<'js>>()
        .ok()
        .flatten()
        .map(|install| *install)
}

async fn make() -> Result<Ready, String> {
    let prelude =
        prelude_bytecode().map_err(|e| format!("the prelude does not compile: {}", e.message))?;
    // The run that takes this runtime sets the real limit before any of its code runs.
    let meter = MemoryMeter::new(usize::MAX);
    let runtime = AsyncRuntime::new_with_alloc(MeteredAllocator::new(meter.clone()))
        .map_err(|e| format!("cannot create a JavaScript runtime: {e}"))?;
    let context = AsyncContext::custom::<(
        Date,
        RegExp,
        Json,
        Proxy,
        MapSet,
        TypedArrays,
        PromiseIntrinsic,
        DOMException,
    )>(&runtime)
    .await
    .map_err(|e| format!("cannot create a JavaScript context: {e}"))?;
    let evaluated: rquickjs::Result<()> = context
        .async_with(async |ctx| {
            // atob/btoa are a separate intrinsic in QuickJS-ng, with no rquickjs marker type.
            // SAFETY: the context is alive and locked for the duration of this call.
            unsafe { rquickjs::qjs::JS_AddIntrinsicAToB(ctx.as_raw().as_ptr()) };
            // SAFETY: the bytes are our own prelude, compiled by this build of QuickJS, and
            // 'static, so they outlive the runtime that loads them without copying.
            let module = unsafe { Module::load(ctx.clone(), prelude) }?;
            let (module, evaluated) = module.eval()?;
            evaluated.into_future::<()>().await?;
            let install: Function = module.get("default")?;
            // Kept in the runtime's own storage (freed with it), not in a global a script
            // could reach.
            ctx.store_userdata(install)
                .map_err(|_| rquickjs::Error::Unknown)?;
            Ok(())
        })
        .await;
    evaluated.map_err(|e| format!("the prelude failed to install: {e}"))?;
    Ok(Ready {
        context,
        runtime,
        meter,
    })
}
