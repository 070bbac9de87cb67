// console: formats arguments like a terminal would and hands each line to the host, which keeps
// them within the log budget. Once the budget is spent, formatting stops too.

function formatValue(value, stringify) {
  if (typeof value === "string") return value;
  if (value === undefined) return "undefined";
  if (typeof value === "function") return `[Function ${value.name || "anonymous"}]`;
  if (typeof value === "bigint") return `${value}n`;
  if (typeof value === "symbol") return value.toString();
  if (value instanceof Error) return `${value.name}: ${value.message}`;
  const seen = [];
  try {
    const text = stringify(value, function (key, v) {
      if (typeof v === "bigint") return `${v}n`;
      if (typeof v === "function") return `[Function ${v.name || "anonymous"}]`;
      if (v === undefined) return v;
      if (v instanceof Map) return { "[Map]": Array.from(v.entries()) };
      if (v instanceof Set) return { "[Set]": Array.from(v.values()) };
      if (v instanceof Error) return `${v.name}: ${v.message}`;
      if (typeof v === "object" && v !== null) {
        // Only ancestors count as cycles; a shared object seen twice prints twice.
        while (seen.length > 0 && seen[seen.length - 1] !== this) seen.pop();
        if (seen.includes(v)) return "[Circular]";
        seen.push(v);
      }
      return v;
    });
    return text === undefined ? String(value) : text;
  } catch (e) {
    return String(value);
  }
}

function installConsole(g, host, stringify) {
  let full = false;
  const emit = (level) =>
    function (...args) {
      if (full) return;
      const line = args.map((a) => formatValue(a, stringify)).join(" ");
      full = !host.log(level, line);
    };
  const console = {
    log: emit("log"),
    info: emit("info"),
    debug: emit("debug"),
    warn: emit("warn"),
    error: emit("error"),
    trace: emit("trace"),
  };
  Object.freeze(console);
  Object.defineProperty(g, "console", { value: console, writable: false, configurable: false, enumerable: false });
}
