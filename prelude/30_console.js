// console: formats arguments like a terminal would and hands each line to the host, which keeps
// them within the log budget. Once the budget is spent, formatting stops too.

function formatValue(value) {
  try {
    return formatUnchecked(value);
  } catch (_) {
    // A script's getter or toJSON threw; the line still prints.
  }
  try {
    return ObjectPrototypeToString(value);
  } catch (_) {
    return "[unprintable]";
  }
}

function errorText(e) {
  const name = e.name;
  const message = e.message;
  return (typeof name === "string" ? name : "Error") + ": " + (typeof message === "string" ? message : "");
}

// What console shows of an object: a Map as its entries, a Set as its values, an Error as its
// name and message; anything else as JSON writes it.
function shownAs(v) {
  if (isInstance(Map, v)) {
    const entries = newList();
    MapPrototypeForEach(v, (x, k) => {
      const pair = newList();
      pair[0] = k;
      pair[1] = x;
      entries[entries.length] = pair;
    });
    return { __proto__: null, "[Map]": entries };
  }
  if (isInstance(Set, v)) {
    const values = newList();
    SetPrototypeForEach(v, (x) => {
      values[values.length] = x;
    });
    return { __proto__: null, "[Set]": values };
  }
  if (isInstance(Error, v)) return errorText(v);
  return v;
}

function formatUnchecked(value) {
  if (typeof value === "string") return value;
  if (value === undefined) return "undefined";
  if (typeof value === "function") return "[Function " + functionName(value) + "]";
  if (typeof value === "bigint") return value + "n";
  if (typeof value === "symbol") return SymbolPrototypeToString(value);
  if (isInstance(Error, value)) return errorText(value);
  // Ancestors of the value being written, to print cycles as [Circular]: each as the script
  // holds it and as it is written. A value's holder is what its parent was written as (a Map
  // is written as its entries), so the ancestors are cut back to the holder.
  const held = newList();
  const written = newList();
  const text = JSONStringify(value, function (key, v) {
    if (typeof v === "bigint") return v + "n";
    if (typeof v === "function") return "[Function " + functionName(v) + "]";
    if (typeof v === "symbol") return undefined;
    if (typeof v !== "object" || v === null) return v;
    // Only ancestors count as cycles; a shared object seen twice prints twice.
    let depth = written.length;
    while (depth > 0 && written[depth - 1] !== this) depth--;
    held.length = written.length = depth;
    for (let i = 0; i < depth; i++) {
      if (held[i] === v) return "[Circular]";
    }
    const out = shownAs(v);
    held[depth] = v;
    written[depth] = out;
    return out;
  });
  return text === undefined ? ObjectPrototypeToString(value) : text;
}

function installConsole(g, host) {
  const log = host.log;
  let full = false;
  const emit = (level) =>
    function (...args) {
      if (full) return;
      let line = "";
      for (let i = 0; i < args.length; i++) {
        if (i > 0) line += " ";
        line += formatValue(args[i]);
      }
      // A lone surrogate is no text the host can take; it prints as U+FFFD rather than
      // making the log line throw.
      full = !log(level, StringPrototypeToWellFormed(line));
    };
  const console = {
    log: emit("log"),
    info: emit("info"),
    debug: emit("debug"),
    warn: emit("warn"),
    error: emit("error"),
    trace: emit("trace"),
  };
  ObjectFreeze(console);
  defineFixed(g, "console", console);
}
