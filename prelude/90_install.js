// Entry point: the host calls install(host) once per run, before the user's code loads, and keeps
// the returned helpers for reading the result and the error.

export default function install(host) {
  const g = globalThis;
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const tagged = new WeakSet();
  const clock = makeClock(host.start);

  lockdown(g);
  installDeterminism(g, host, clock);
  installTimers(g, host, clock, { maxTimerMs: host.maxTimerMs, maxPendingTimers: host.maxPendingTimers });
  installConsole(g, host, stringify);
  installEncoding(g, host);
  installClone(g);
  installTools(g, host, clock, stringify, parse, tagged);

  // Returns [true, json] or [false, prefix] when the value cannot fit `budget` bytes anyway, so a
  // 50 MB string is never copied into JSON just to be refused.
  const finish = (value, budget) => {
    if (value === undefined || typeof value === "function" || typeof value === "symbol") return [true, "null"];
    if (typeof value === "string" && value.length > budget) return [false, value.slice(0, budget)];
    const json = stringify(value);
    return [true, json === undefined ? "null" : json];
  };

  const field = (e, key) => {
    try {
      const v = e[key];
      return typeof v === "string" ? v : v === undefined || v === null ? null : String(v);
    } catch (_) {
      return null;
    }
  };
  const describeError = (e) => {
    if (e === null || (typeof e !== "object" && typeof e !== "function")) {
      let text;
      try {
        text = typeof e === "string" ? e : stringify(e) ?? String(e);
      } catch (_) {
        text = String(e);
      }
      return stringify({ name: null, message: text, stack: null, code: null, hint: null });
    }
    const trusted = tagged.has(e);
    return stringify({
      name: field(e, "name"),
      message: field(e, "message") ?? formatValue(e, stringify),
      stack: field(e, "stack"),
      code: trusted ? field(e, "code") : null,
      hint: trusted ? field(e, "hint") : null,
      address: trusted ? field(e, "address") : null,
    });
  };
  return { finish, describeError };
}
