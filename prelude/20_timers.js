// Timers: one host wake-up at a time for the earliest timer, so timers fire in (due, id) order
// whatever the host's timer wheel does, and the logical clock jumps to each timer's due time.
// The pending-timer limit is checked here and enforced by the host (`host.timerLimit` ends the
// run), so the count comes from captured Map methods a script cannot change.

function installTimers(g, host, clock) {
  const wake = host.wake;
  const timerLimit = host.timerLimit;
  const maxTimerMs = host.maxTimerMs;
  const maxPendingTimers = host.maxPendingTimers;
  const timers = new Map();
  let nextId = 1;
  let armedDue = Infinity;

  const earliest = () => {
    let next = null;
    MapPrototypeForEach(timers, (t) => {
      if (next === null || t.due < next.due || (t.due === next.due && t.id < next.id)) next = t;
    });
    return next;
  };

  const fire = (woke) => {
    if (!woke) return; // superseded by an earlier timer
    const target = armedDue;
    armedDue = Infinity;
    const due = earliest();
    // The timer this wake-up was for may have been cleared; a later one waits its turn.
    if (due === null || due.due > target) {
      arm();
      return;
    }
    clock.advanceTo(due.due);
    MapPrototypeDelete(timers, due.id);
    try {
      ReflectApply(due.fn, undefined, due.args);
    } finally {
      arm();
    }
  };

  // Asks the host for the one wake-up, at `t`'s due time; an earlier one replaces it.
  const armFor = (t) => {
    armedDue = t.due;
    whenSettled(wake(MathMax(0, t.due - clock.now)), fire);
  };
  const arm = () => {
    const next = earliest();
    if (next !== null && next.due < armedDue) armFor(next);
  };

  const setTimeout = function setTimeout(fn, ms, ...args) {
    if (typeof fn !== "function") {
      throw new TypeError("setTimeout needs a function; strings are never evaluated");
    }
    let delay = Number(ms);
    if (!(delay >= 0)) delay = 0;
    if (delay > maxTimerMs) {
      throw new RangeError("setTimeout delay " + delay + " ms is over the " + maxTimerMs + " ms limit");
    }
    const pending = MapPrototypeGetSize(timers);
    if (pending >= maxPendingTimers) timerLimit(pending + 1);
    const id = nextId++;
    const timer = { __proto__: null, id, due: clock.now + MathFloor(delay), fn, args };
    MapPrototypeSet(timers, id, timer);
    // Only a timer due before the armed wake-up needs a new one (no scan per timer).
    if (timer.due < armedDue) armFor(timer);
    return id;
  };
  const clearTimeout = function clearTimeout(id) {
    MapPrototypeDelete(timers, id);
  };
  const sleep = function sleep(ms) {
    return new Promise((resolve) => setTimeout(resolve, ms));
  };

  defineFixed(g, "setTimeout", setTimeout);
  defineFixed(g, "clearTimeout", clearTimeout);
  defineFixed(g, "sleep", sleep);
}
