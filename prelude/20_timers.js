// Timers: one host wake-up at a time for the earliest timer, so timers fire in (due, id) order
// whatever the host's timer wheel does, and the logical clock jumps to each timer's due time.

function installTimers(g, host, clock, limits) {
  const timers = new Map();
  let nextId = 1;
  let armedDue = Infinity;

  const earliest = () => {
    let next = null;
    for (const t of timers.values()) {
      if (next === null || t.due < next.due || (t.due === next.due && t.id < next.id)) next = t;
    }
    return next;
  };

  const arm = () => {
    const next = earliest();
    if (next === null || next.due >= armedDue) return;
    armedDue = next.due;
    host.wake(Math.max(0, next.due - clock.now)).then((woke) => {
      if (!woke) return; // superseded by an earlier timer
      const target = armedDue;
      armedDue = Infinity;
      const due = earliest();
      // The timer this wake-up was for may have been cleared; a later one waits its turn.
      if (due === null || due.due > target) {
        arm();
      } else {
        clock.advanceTo(due.due);
        timers.delete(due.id);
        try {
          due.fn(...due.args);
        } finally {
          arm();
        }
      }
    });
  };

  const setTimeout = function setTimeout(fn, ms, ...args) {
    if (typeof fn !== "function") {
      throw new TypeError("setTimeout needs a function; strings are never evaluated");
    }
    let delay = Number(ms);
    if (!(delay >= 0)) delay = 0;
    if (delay > limits.maxTimerMs) {
      throw new RangeError(`setTimeout delay ${delay} ms is over the ${limits.maxTimerMs} ms limit`);
    }
    if (timers.size >= limits.maxPendingTimers) host.timerLimit(timers.size + 1);
    const id = nextId++;
    timers.set(id, { id, due: clock.now + Math.floor(delay), fn, args });
    arm();
    return id;
  };
  const clearTimeout = function clearTimeout(id) {
    timers.delete(id);
  };
  const sleep = function sleep(ms) {
    return new Promise((resolve) => setTimeout(resolve, ms));
  };

  const fixed = { writable: false, configurable: false, enumerable: false };
  Object.defineProperty(g, "setTimeout", { ...fixed, value: setTimeout });
  Object.defineProperty(g, "clearTimeout", { ...fixed, value: clearTimeout });
  Object.defineProperty(g, "sleep", { ...fixed, value: sleep });
}
