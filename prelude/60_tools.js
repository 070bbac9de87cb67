// The tools: one frozen global per namespace whose functions call the host, `hub` for
// search/describe, and ToolError.
//
// Errors the prelude makes for the host are branded: `hostErrors` maps each one to a frozen record
// of what the host said, taken when the error is made, and describeError (90_install.js) reads
// code, hint and address from that record only. The map is out of a script's reach, so a script's
// own throw (a plain object, its own ToolError, an Error with a `code`) is a runtime error, and a
// host error it caught and rewrote still reports what the host said.

const hostErrors = new WeakMap();

function brand(error, name, code, message, hint, address) {
  const record = {
    __proto__: null,
    name,
    message,
    stack: errorStack(error),
    code,
    hint: typeof hint === "string" ? hint : null,
    address,
  };
  WeakMapPrototypeSet(hostErrors, error, ObjectFreeze(record));
  return error;
}

// Names the language itself probes on objects (`await ns`, JSON.stringify(ns), String(ns)). A
// namespace never has them, or those probes would call a tool; the catalogue names such tools
// `thenTool` and so on (PROBED_NAMES in src/catalog/address.rs).
const PROBED_NAMES = { __proto__: null, then: true, toJSON: true, toString: true, valueOf: true };

const NO_DETAILS = ObjectFreeze({ __proto__: null });

// Runs `body`, turning a synchronous throw into a rejected promise, as an async function would.
function promised(body) {
  try {
    return body();
  } catch (e) {
    return rejected(e);
  }
}

// An exception's message for another message, without running a script's code.
function messageOf(e) {
  const message = e !== null && typeof e === "object" ? own(e, "message") : undefined;
  return typeof message === "string" ? message : "a thrown value";
}

function installTools(g, host, clock) {
  class ToolError extends Error {
    constructor(message, details) {
      super(message);
      const d = details === undefined || details === null ? NO_DETAILS : details;
      defineData(this, "code", d.code ?? "tool_error", true);
      defineData(this, "address", d.address ?? null, true);
      defineData(this, "status", d.status ?? null, true);
      defineData(this, "hint", d.hint ?? null, true);
      defineData(this, "retryable", !!d.retryable, true);
    }
  }
  defineFixed(ToolError.prototype, "name", "ToolError");
  ObjectFreeze(ToolError.prototype);
  ObjectFreeze(ToolError);

  const hostError = (code, message, hint, address, status, retryable) => {
    const details = { __proto__: null, code, address, status, hint, retryable };
    return brand(new ToolError(message, details), "ToolError", code, message, hint, address);
  };

  const hostCall = host.call;
  const callTool = (ns, tool, input, options) => {
    const address = ns + "." + tool;
    const invalid = (message) =>
      rejected(hostError("invalid_arguments", address + ": " + message, null, address, null, false));
    let connection = null;
    if (options !== undefined && options !== null) {
      if (typeof options !== "object") {
        return invalid('the second argument must be an object like { connection: "work" }');
      }
      const asked = options.connection;
      if (asked !== undefined && asked !== null) {
        if (typeof asked !== "string") return invalid("connection must be a string");
        connection = asked;
      }
    }
    let json;
    try {
      json = input === undefined ? "{}" : JSONStringify(input);
    } catch (e) {
      return invalid("arguments are not JSON (" + messageOf(e) + ")");
    }
    if (json === undefined) return invalid("arguments must be an object");
    const issuedAt = clock.now;
    const pending = hostCall(ns, tool, json, connection);
    return new Promise((resolve, reject) => {
      whenSettled(pending, (text) => {
        const reply = JSONParse(text);
        clock.advanceTo(issuedAt + own(reply, "ms"));
        if (own(reply, "ok") === true) {
          resolve(own(reply, "value"));
          return;
        }
        const error = own(reply, "error");
        const code = own(error, "code");
        const message = own(error, "message");
        reject(hostError(code, message, own(error, "hint"), address, own(error, "status"), own(error, "retryable")));
      });
    });
  };

  const hostUnknownTool = host.unknownTool;
  const unknownTool = (ns, key) => {
    const message = hostUnknownTool(ns, key);
    const e = new TypeError(message);
    defineData(e, "code", "unknown_tool", true);
    return brand(e, "TypeError", "unknown_tool", message, null, null);
  };

  const hostSearch = host.search;
  const hostDescribe = host.describe;
  const hub = {
    search(query) {
      return promised(() => {
        if (typeof query !== "string" || StringPrototypeTrim(query) === "") {
          throw new TypeError("hub.search needs a non-empty string");
        }
        return fromHost(hostSearch(query));
      });
    },
    describe(targets) {
      return promised(() => {
        const list = newList();
        if (!ArrayIsArray(targets)) list[0] = targets;
        else if (targets.length <= 10) for (let i = 0; i < targets.length; i++) list[i] = targets[i];
        let valid = list.length >= 1;
        for (let i = 0; i < list.length; i++) if (typeof list[i] !== "string") valid = false;
        if (!valid) throw new TypeError("hub.describe needs an address string or an array of 1 to 10 of them");
        return fromHost(hostDescribe(JSONStringify(list)));
      });
    },
  };
  ObjectFreeze(hub);
  defineFixed(g, "hub", hub);
  defineFixed(g, "ToolError", ToolError);

  // The listing is [[namespace, [tool, …]], …], so no name is special while it is read.
  const listing = JSONParse(host.namespaces);
  const skipped = newList();
  for (let i = 0; i < listing.length; i++) {
    const ns = listing[i][0];
    const tools = listing[i][1];
    // An own global (a built-in or one of the prelude's) keeps its name; the host reports the
    // namespace as unreachable. Inherited names (`toString`, `__proto__`) are simply shadowed.
    if (ObjectPrototypeHasOwnProperty(g, ns)) {
      skipped[skipped.length] = ns;
      continue;
    }
    const target = ObjectCreate(null);
    for (let j = 0; j < tools.length; j++) {
      const tool = tools[j];
      if (PROBED_NAMES[tool] === true || ObjectPrototypeHasOwnProperty(target, tool)) continue;
      // A method, so it is not a constructor; named after the tool for stack traces.
      const fn = {
        [tool](input, options) {
          return promised(() => callTool(ns, tool, input, options));
        },
      }[tool];
      ObjectDefineProperty(target, tool, { __proto__: null, value: fn, enumerable: true, writable: false, configurable: false });
    }
    ObjectFreeze(target);
    const readOnly = (key, what) => new TypeError(ns + " is read-only: " + ns + "." + String(key) + " cannot be " + what);
    // No prototype: a trap added to Object.prototype (`has`, `ownKeys`) must not become one here.
    const handler = {
      __proto__: null,
      get(t, key) {
        if (typeof key === "symbol") return undefined;
        if (ObjectPrototypeHasOwnProperty(t, key)) return t[key];
        // `await ns`, JSON.stringify(ns) and String(ns) probe these; they are not tool calls.
        if (PROBED_NAMES[key] === true) return undefined;
        throw unknownTool(ns, key);
      },
      set(t, key) {
        throw readOnly(key, "assigned");
      },
      defineProperty(t, key) {
        throw readOnly(key, "defined");
      },
      deleteProperty(t, key) {
        throw readOnly(key, "deleted");
      },
      setPrototypeOf() {
        throw new TypeError(ns + " is read-only");
      },
    };
    defineFixed(g, ns, new Proxy(target, handler));
  }
  return skipped;
}
