// Entry point: the host calls install(host) once per run, before the user's code loads, and keeps
// the returned helpers for reading the result and the error and for waiting on the script's
// promise, and the namespaces it could not install (their names are taken by globals).

export default function install(host) {
  const g = globalObject;
  const clock = makeClock(host.start);

  lockdown(g);
  installDeterminism(g, host, clock);
  installTimers(g, host, clock);
  installConsole(g, host);
  installEncoding(g, host);
  installClone(g);
  const skipped = installTools(g, host, clock);

  // Returns [true, json] or [false, prefix] when the value cannot fit `budget` bytes anyway, so a
  // 50 MB string is never copied into JSON just to be refused.
  const finish = (value, budget) => {
    if (value === undefined || typeof value === "function" || typeof value === "symbol") return [true, "null"];
    if (typeof value === "string" && value.length > budget) return [false, StringPrototypeSlice(value, 0, budget)];
    const json = JSONStringify(value);
    return [true, json === undefined ? "null" : json];
  };

  // A script's value: whatever it says, it is not the host's.
  const field = (e, key) => {
    try {
      const v = e[key];
      return typeof v === "string" ? v : v === undefined || v === null ? null : String(v);
    } catch (_) {
      return null;
    }
  };
  const stackOf = (e) => {
    try {
      return errorStack(e);
    } catch (_) {
      return null;
    }
  };
  // The thrown value for the host: [name, message, stack, code, hint, address], in a list that
  // inherits nothing (JSON.stringify would consult Array.prototype, which a script can change).
  // Code, hint and address come only from the brand record of an error the prelude made for the
  // host; for anything else they are null, whatever the value claims.
  const fields = (name, message, stack, code, hint, address) => {
    const list = newList();
    list[0] = name;
    list[1] = message;
    list[2] = stack;
    list[3] = code;
    list[4] = hint;
    list[5] = address;
    return list;
  };
  const describeError = (e) => {
    const isObject = e !== null && (typeof e === "object" || typeof e === "function");
    const record = isObject ? WeakMapPrototypeGet(hostErrors, e) : undefined;
    if (record !== undefined) {
      return fields(record.name, record.message, record.stack, record.code, record.hint, record.address);
    }
    if (isObject) {
      const message = field(e, "message") ?? formatValue(e);
      return fields(field(e, "name"), message, stackOf(e), null, null, null);
    }
    let message;
    try {
      message = typeof e === "string" ? e : JSONStringify(e) ?? String(e);
    } catch (_) {
      message = String(e);
    }
    return fields(null, message, null, null, null, null);
  };
  return { finish, describeError, whenSettled, skipped };
}
