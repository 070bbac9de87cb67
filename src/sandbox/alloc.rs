//! A metering allocator for one QuickJS runtime: it enforces the memory limit itself and records
//! that it refused an allocation, because an out-of-memory in QuickJS can surface as a bare
//! `null` exception that says nothing (sandbox-findings §1.4).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use rquickjs::allocator::{Allocator, RustAllocator};

/// What the engine and the allocator share: live bytes, the limit, and whether a request was
/// refused.
#[derive(Debug, Default)]
pub struct MemoryMeter {
    used: AtomicUsize,
    limit: AtomicUsize,
    refused: AtomicBool,
}

impl MemoryMeter {
    pub fn new(limit: usize) -> Arc<Self> {
        Arc::new(MemoryMeter {
            used: AtomicUsize::new(0),
            limit: AtomicUsize::new(limit),
            refused: AtomicBool::new(false),
        })
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
    }

    /// Counts `bytes` the host holds for the run (outside its heap) as used until the guard is
    /// dropped; `None`, counting nothing, when they do not fit under the limit with the heap.
    pub fn hold(self: &Arc<Self>, bytes: usize) -> Option<Held> {
        let used = self.used.fetch_add(bytes, Ordering::Relaxed);
        if used.saturating_add(bytes) > self.limit.load(Ordering::Relaxed) {
            self.used.fetch_sub(bytes, Ordering::Relaxed);
            return None;
        }
        Some(Held {
            meter: self.clone(),
            bytes,
        })
    }

    fn admit(&self, size: usize) -> bool {
        let used = self.used.load(Ordering::Relaxed);
        if used.saturating_add(size) > self.limit.load(Ordering::Relaxed) {
            self.refused.store(true, Ordering::Relaxed);
            return false;
        }
        true
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
}
