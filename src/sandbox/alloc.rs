//! A metering allocator for one QuickJS runtime: it enforces the memory limit itself and records
//! that it refused an allocation, because an out-of-memory in QuickJS can surface as a bare
//! `null` exception that says nothing (sandbox-findings §1.4). Every run's bytes also count
//! towards one budget for all runs of the process ([`all_runs_budget`]): each run's limit keeps
//! one script in bounds, and the budget keeps many at once (a client starting runs by the
//! thousand) from taking the machine's memory.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// What the runs of a process may use together, and use now (heaps and what the host holds
/// for them).
#[derive(Debug)]
pub struct Budget {
    used: AtomicUsize,
    most: usize,
}

impl Budget {
    pub fn new(most: usize) -> Arc<Budget> {
        Arc::new(Budget {
            used: AtomicUsize::new(0),
            most,
        })
    }

    /// The budget of every run of this process: half the machine's memory, at most 2 GiB (2 GiB
    /// where the machine's size cannot be read from `/proc/meminfo`).
    pub fn of_all_runs() -> &'static Arc<Budget> {
        static BUDGET: OnceLock<Arc<Budget>> = OnceLock::new();
        BUDGET.get_or_init(|| {
            const MOST: usize = 2 << 30;
            let half_of_machine = std::fs::read_to_string("/proc/meminfo")
                .ok()
                .and_then(|info| {
                    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
                    let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
                    Some(kib.saturating_mul(1024) / 2)
                });
            Budget::new(half_of_machine.map_or(MOST, |half| half.min(MOST)))
        })
    }

    fn add(&self, bytes: usize) {
        self.used.fetch_add(bytes, Ordering::Relaxed);
    }

    fn remove(&self, bytes: usize) {
        self.used.fetch_sub(bytes, Ordering::Relaxed);
    }
}

use rquickjs::allocator::{Allocator, RustAllocator};

/// What the engine and the allocator share: live bytes, the limit, and whether a request was
/// refused.
#[derive(Debug)]
pub struct MemoryMeter {
    /// Shared by every run of the process (see [`Budget::of_all_runs`]).
    budget: Arc<Budget>,
    used: AtomicUsize,
    limit: AtomicUsize,
    refused: AtomicBool,
    /// The refusal was for the budget of all runs, not this run's own limit.
    refused_for_all: AtomicBool,
    /// Past its refusal, the run's host headroom is not held to the budget of all runs.
    headroom: AtomicBool,
}

impl MemoryMeter {
    pub fn new(limit: usize) -> Arc<Self> {
        MemoryMeter::within(limit, Budget::of_all_runs().clone())
    }

    /// A meter whose run counts towards `budget`.
    pub fn within(limit: usize, budget: Arc<Budget>) -> Arc<Self> {
        Arc::new(MemoryMeter {
            budget,
            used: AtomicUsize::new(0),
            limit: AtomicUsize::new(limit),
            refused: AtomicBool::new(false),
            refused_for_all: AtomicBool::new(false),
            headroom: AtomicBool::new(false),
        })
    }

    /// The most all runs sharing this meter's budget may use, in bytes.
    pub fn budget_of_all_runs(&self) -> usize {
        self.budget.most
    }

    /// True when the refusal was for the budget of all runs together.
    pub fn hit_budget_of_all_runs(&self) -> bool {
        self.refused_for_all.load(Ordering::Relaxed)
    }

    /// True once any allocation was refused for the limit.
    pub fn hit_limit(&self) -> bool {
        self.refused.load(Ordering::Relaxed)
    }

    /// Sets the limit of a runtime made before its run knew it.
    pub fn set_limit(&self, limit: usize) {
        self.limit.store(limit, Ordering::Relaxed);
    }

    /// Gives the host room to read the error and serialise the result after the script is done.
    pub fn raise_limit(&self, extra: usize) {
        self.limit.fetch_add(extra, Ordering::Relaxed);
        self.headroom.store(true, Ordering::Relaxed);
    }

    /// Counts `bytes` the host holds for the run (outside its heap) as used until the guard is
    /// dropped; `None`, counting nothing, when they do not fit under the limit with the heap.
    pub fn hold(self: &Arc<Self>, bytes: usize) -> Option<Held> {
        // A refusal here is the host's answer to one call, not the script running out.
        if self.fits(bytes).is_err() {
            return None;
        }
        self.used.fetch_add(bytes, Ordering::Relaxed);
        self.budget.add(bytes);
        Some(Held {
            meter: self.clone(),
            bytes,
        })
    }

    /// Whether `size` more bytes fit: `Err(true)` when only the budget of all runs refuses.
    fn fits(&self, size: usize) -> Result<(), bool> {
        let used = self.used.load(Ordering::Relaxed);
        if used.saturating_add(size) > self.limit.load(Ordering::Relaxed) {
            return Err(false);
        }
        if !self.headroom.load(Ordering::Relaxed)
            && self
                .budget
                .used
                .load(Ordering::Relaxed)
                .saturating_add(size)
                > self.budget.most
        {
            return Err(true);
        }
        Ok(())
    }

    fn admit(&self, size: usize) -> bool {
        let Err(for_all) = self.fits(size) else {
            return true;
        };
        self.refused.store(true, Ordering::Relaxed);
        if for_all {
            self.refused_for_all.store(true, Ordering::Relaxed);
        }
        false
    }
}

/// Bytes the host holds for a run, counted against its limit until dropped.
#[derive(Debug)]
pub struct Held {
    meter: Arc<MemoryMeter>,
    bytes: usize,
}

impl Drop for Held {
    fn drop(&mut self) {
        self.meter.used.fetch_sub(self.bytes, Ordering::Relaxed);
        self.meter.budget.remove(self.bytes);
    }
}

/// The allocator handed to `AsyncRuntime::new_with_alloc`.
pub struct MeteredAllocator {
    meter: Arc<MemoryMeter>,
}

impl MeteredAllocator {
    pub fn new(meter: Arc<MemoryMeter>) -> Self {
        MeteredAllocator { meter }
    }

    fn record(&self, ptr: *mut u8) -> *mut u8 {
        if !ptr.is_null() {
            // SAFETY: `ptr` was just returned by RustAllocator, so its header is valid.
            let size = unsafe { RustAllocator::usable_size(ptr) };
            self.meter.used.fetch_add(size, Ordering::Relaxed);
            self.meter.budget.add(size);
        }
        ptr
    }
}

// SAFETY: every pointer comes from RustAllocator and goes back to it; this type only counts.
unsafe impl Allocator for MeteredAllocator {
    fn alloc(&mut self, size: usize) -> *mut u8 {
        if !self.meter.admit(size) {
            return std::ptr::null_mut();
        }
        self.record(RustAllocator.alloc(size))
    }

    fn calloc(&mut self, count: usize, size: usize) -> *mut u8 {
        let Some(total) = count.checked_mul(size) else {
            return std::ptr::null_mut();
        };
        if !self.meter.admit(total) {
            return std::ptr::null_mut();
        }
        self.record(RustAllocator.calloc(count, size))
    }

    unsafe fn dealloc(&mut self, ptr: *mut u8) {
        if ptr.is_null() {
            return;
        }
        // SAFETY: the caller guarantees `ptr` came from this allocator.
        let size = unsafe { RustAllocator::usable_size(ptr) };
        self.meter.used.fetch_sub(size, Ordering::Relaxed);
        self.meter.budget.remove(size);
        // SAFETY: as above.
        unsafe { RustAllocator.dealloc(ptr) }
    }

    unsafe fn realloc(&mut self, ptr: *mut u8, new_size: usize) -> *mut u8 {
        // RustAllocator's realloc reads a header before `ptr`, so null must become an alloc.
        if ptr.is_null() {
            return self.alloc(new_size);
        }
        // SAFETY: the caller guarantees `ptr` came from this allocator.
        let old = unsafe { RustAllocator::usable_size(ptr) };
        if new_size > old && !self.meter.admit(new_size - old) {
            return std::ptr::null_mut();
        }
        // SAFETY: as above.
        let out = unsafe { RustAllocator.realloc(ptr, new_size) };
        if !out.is_null() {
            // SAFETY: `out` was just returned by RustAllocator.
            let now = unsafe { RustAllocator::usable_size(out) };
            self.meter.used.fetch_sub(old, Ordering::Relaxed);
            self.meter.used.fetch_add(now, Ordering::Relaxed);
            self.meter.budget.remove(old);
            self.meter.budget.add(now);
        }
        out
    }

    unsafe fn usable_size(ptr: *mut u8) -> usize {
        // SAFETY: the caller guarantees `ptr` came from this allocator.
        unsafe { RustAllocator::usable_size(ptr) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_past_the_limit_and_remembers() {
        let meter = MemoryMeter::new(1024);
        let mut alloc = MeteredAllocator::new(meter.clone());
        let small = alloc.alloc(100);
        assert!(!small.is_null());
        assert!(alloc.alloc(4096).is_null());
        assert!(meter.hit_limit());
        // SAFETY: `small` came from this allocator.
        unsafe { alloc.dealloc(small) };
        assert_eq!(meter.used.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn what_the_host_holds_counts_until_it_is_let_go() {
        let meter = MemoryMeter::new(1024);
        let held = meter.hold(1000).expect("fits");
        let mut alloc = MeteredAllocator::new(meter.clone());
        assert!(alloc.alloc(100).is_null(), "the heap shares the limit");
        assert!(meter.hold(100).is_none());
        drop(held);
        assert_eq!(meter.used.load(Ordering::Relaxed), 0);
        assert!(meter.hold(1024).is_some());
    }

    #[test]
    fn many_runs_together_stay_within_the_budget_of_all() {
        let budget = Budget::new(3000);
        let meters: Vec<_> = (0..4)
            .map(|_| MemoryMeter::within(1024, budget.clone()))
            .collect();
        let mut allocators: Vec<_> = meters
            .iter()
            .map(|m| MeteredAllocator::new(m.clone()))
            .collect();
        let blocks: Vec<_> = allocators.iter_mut().map(|a| a.alloc(900)).collect();
        // Each run is within its own limit; the fourth is past what all may use together.
        assert!(blocks[..3].iter().all(|b| !b.is_null()));
        assert!(blocks[3].is_null());
        assert!(meters[3].hit_budget_of_all_runs() && !meters[0].hit_budget_of_all_runs());
        // SAFETY: each block came from the allocator at its index.
        unsafe { allocators[0].dealloc(blocks[0]) };
        assert!(
            !allocators[3].alloc(900).is_null(),
            "room again once a run frees"
        );
        // Past its refusal, a run's host headroom is not held to the budget.
        meters[1].raise_limit(1 << 20);
        assert!(!allocators[1].alloc(2000).is_null());
    }
}
