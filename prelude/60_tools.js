// The tools: one frozen global per namespace whose async functions call the host, `hub` for
// search/describe, and ToolError. Errors the prelude raises are remembered in `tagged` so the
// host trusts their `code` (a script's own `{ code: "timeout" }` throw is just a runtime error).

function installTools(g, host, clock, stringify, parse, tagged) {
  class ToolError extends Error {
    constructor(message, details = {}) {
      super(message);
      this.code = details.code ?? "tool_error";
      this.address = details.address ?? null;
      this.status = details.status ?? null;
      this.hint = details.hint ?? null;
      this.retryable = Boolean(details.retryable);
    }
  }
  Object.defineProperty(ToolError.prototype, "name", { value: "ToolError", writable: false, configurable: false });
  Object.freeze(ToolError.prototype);
  Object.freeze(ToolError);

  const fail = (details) => {
    const e = new ToolError(details.message, details);
    tagged.add(e);
    return e;
  };

  const callTool = async (ns, tool, input, options) => {
    const address = `${ns}.${tool}`;
    let connection = null;
    if (options !== undefined && options !== null) {
      if (typeof options !== "object") {
        throw fail({ code: "invalid_arguments", address, message: `${address}: the second argument must be an object like { connection: "work" }` });
      }
      if (options.connection !== undefined && options.connection !== null) {
        if (typeof options.connection !== "string") {
          throw fail({ code: "invalid_arguments", address, message: `${address}: connection must be a string` });
        }
        connection = options.connection;
      }
    }
    let json;
    try {
      json = stringify(input === undefined ? {} : input);
    } catch (e) {
      throw fail({ code: "invalid_arguments", address, message: `${address}: arguments are not JSON (${e && e.message})` });
    }
    if (json === undefined) {
      throw fail({ code: "invalid_arguments", address, message: `${address}: arguments must be an object` });
    }
    const issuedAt = clock.now;
    const reply = parse(await host.call(ns, tool, json, connection));
    clock.advanceTo(issuedAt + reply.ms);
    if (reply.ok) return reply.value;
    throw fail({ ...reply.error, address });
  };

  const namespaces = parse(host.namespaces);
  for (const ns of Object.keys(namespaces)) {
    if (ns in g) throw new Error(`the namespace ${ns} collides with a global of the same name`);
    const target = Object.create(null);
    for (const tool of namespaces[ns]) {
      // A method, so it is not a constructor; named after the tool for stack traces.
      const fn = { async [tool](input, options) { return callTool(ns, tool, input, options); } }[tool];
      Object.defineProperty(target, tool, { value: fn, enumerable: true, writable: false, configurable: false });
    }
    Object.freeze(target);
    const proxy = new Proxy(target, {
      get(t, key) {
        if (typeof key === "symbol" || Object.prototype.hasOwnProperty.call(t, key)) return t[key];
        // `await ns`, JSON.stringify(ns) and String(ns) probe these; they are not tool calls.
        if (key === "then" || key === "toJSON" || key === "toString" || key === "valueOf") return undefined;
        const e = new TypeError(host.unknownTool(ns, String(key)));
        e.code = "unknown_tool";
        tagged.add(e);
        throw e;
      },
      set(t, key) { throw new TypeError(`${ns} is read-only: ${ns}.${String(key)} cannot be assigned`); },
      defineProperty(t, key) { throw new TypeError(`${ns} is read-only: ${ns}.${String(key)} cannot be defined`); },
      deleteProperty(t, key) { throw new TypeError(`${ns} is read-only: ${ns}.${String(key)} cannot be deleted`); },
      setPrototypeOf() { throw new TypeError(`${ns} is read-only`); },
    });
    Object.defineProperty(g, ns, { value: proxy, writable: false, configurable: false, enumerable: false });
  }

  const hub = {
    async search(query) {
      if (typeof query !== "string" || query.trim() === "") throw new TypeError("hub.search needs a non-empty string");
      return host.search(query);
    },
    async describe(targets) {
      const list = Array.isArray(targets) ? targets : [targets];
      if (list.length < 1 || list.length > 10 || !list.every((t) => typeof t === "string")) {
        throw new TypeError("hub.describe needs an address string or an array of 1 to 10 of them");
      }
      return host.describe(stringify(list));
    },
  };
  Object.freeze(hub);
  const fixed = { writable: false, configurable: false, enumerable: false };
  Object.defineProperty(g, "hub", { ...fixed, value: hub });
  Object.defineProperty(g, "ToolError", { ...fixed, value: ToolError });
}
