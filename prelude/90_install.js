// Entry point: the host calls install(host) once per run, before the user's code loads, and keeps
// the returned helpers for reading the result and the error and for waiting on the script's
// promise, and the namespaces it could not install (their names are taken by globals).

export default function install(host) {
  const g = globalObject;
  const clock = makeClock(host.start);

  lockdown(g);
  boundArrayWalks(host);
  installDeterminism(g, host, clock);
  installTimers(g, host, clock);
  installConsole(g, host);
  installEncoding(g, host);
  installClone(g);
  const skipped = installTools(g, host, clock);

  // The script's value as [units, text, whole, [maps, sets, errors], refusal]: the length of its
  // JSON in UTF-16 units (never more than its UTF-8 bytes), and the whole JSON, or only its
  // first `prefixUnits` units when it is over `cap` for certain; then how many Maps, Sets and
  // Errors it holds, written as what they hold (80_result.js); or, alone, why it cannot be JSON.
  // Nothing over the cap is copied out of the runtime just to be refused, and a string over it
  // is not even written as JSON.
  // The first `units` of `text`, less the first half of a UTF-16 pair the cut would split: a
  // lone half cannot cross to the host, which would lose the whole prefix.
  const prefixOf = (text, units) => {
    const cut = StringPrototypeSlice(text, 0, units);
    const last = StringPrototypeCharCodeAt(cut, cut.length - 1);
    return last >= 0xd800 && last <= 0xdbff ? StringPrototypeSlice(cut, 0, -1) : cut;
  };
  const finish = (value, cap, prefixUnits) => {
    const list = newList();
    const converted = newList();
    converted[0] = converted[1] = converted[2] = 0;
    list[3] = converted;
    let json;
    if (value === undefined || typeof value === "function" || typeof value === "symbol") json = "null";
    else if (typeof value === "string" && value.length + 2 > cap) {
      list[0] = value.length + 2;
      list[1] = JSONStringify(StringPrototypeSlice(value, 0, prefixUnits));
      list[2] = false;
      return list;
    } else {
      const written = resultJSON(value, converted, cap, prefixUnits);
      if (written[1] !== undefined) {
        list[4] = written[1];
        return list;
      }
      if (written[2] !== undefined) {
        list[0] = written[2];
        list[1] = prefixOf(written[0], prefixUnits);
        list[2] = false;
        return list;
      }
      json = written[0] ?? "null";
    }
    list[0] = json.length;
    list[1] = json.length > cap ? prefixOf(json, prefixUnits) : json;
    list[2] = json.length <= cap;
    return list;
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
  // A lone surrogate (half of a UTF-16 pair, as a tool's answer can carry) cannot cross to the
  // host, which would lose the whole text: it becomes U+FFFD, as in console lines.
  const wellFormed = (text) => (typeof text === "string" ? StringPrototypeToWellFormed(text) : text);
  const fields = (name, message, stack, code, hint, address) => {
    const list = newList();
    list[0] = wellFormed(name);
    list[1] = wellFormed(message);
    list[2] = wellFormed(stack);
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
