// The tools: one frozen global per namespace whose functions call the host, `hub` for
// search/describe and for reading stored results (read/get), and ToolError.
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

// hub.read's options, each read once, and only the options object's own enumerable keys: nothing
// a script puts on Object.prototype (a getter named `path`) is consulted, and a getter or a Proxy
// on the options runs once per key, so what is checked is what is sent.
const READ_OPTIONS = { __proto__: null, path: true, fields: true, offset: true };
const MAX_READ_FIELDS = 64;
const READ_USAGE = 'like { path: "/items", fields: ["id", "title"], offset: 0 }';

function readOptions(options) {
  const out = { __proto__: null, path: "", fields: null, offset: 0 };
  if (options === undefined) return out;
  if (options === null || typeof options !== "object" || ArrayIsArray(options)) {
    throw new TypeError("hub.read: options must be an object " + READ_USAGE);
  }
  const keys = ObjectKeys(options);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    if (READ_OPTIONS[key] !== true) {
      throw new TypeError('hub.read: unknown option "' + key + '"; the options are path, fields and offset, ' + READ_USAGE);
    }
    const value = options[key];
    if (value === undefined) continue;
    if (key === "path") out.path = readPath(value);
    else if (key === "fields") out.fields = readFields(value);
    else out.offset = readOffset(value);
  }
  return out;
}

function readPath(path) {
  // A JSON Pointer (RFC 6901) is "" or starts with "/".
  if (typeof path !== "string" || (path !== "" && StringPrototypeCharCodeAt(path, 0) !== 47)) {
    throw new TypeError('hub.read: path must be a JSON Pointer string such as "/items" ("" is the whole result)');
  }
  return path;
}

function readFields(fields) {
  const usage = "hub.read: fields must be an array of 1 to " + MAX_READ_FIELDS + " distinct, non-empty field names";
  if (!ArrayIsArray(fields)) throw new TypeError(usage);
  const count = fields.length;
  if (!NumberIsSafeInteger(count) || count < 1 || count > MAX_READ_FIELDS) throw new TypeError(usage);
  const list = newList();
  const seen = new Map();
  for (let i = 0; i < count; i++) {
    // A hole would be read from Array.prototype; `own` reads only the array's own elements.
    const name = own(fields, i);
    if (typeof name !== "string" || name === "") {
      throw new TypeError("hub.read: fields[" + i + "] must be a non-empty string");
    }
    if (MapPrototypeHas(seen, name)) throw new TypeError('hub.read: fields lists "' + name + '" twice');
    MapPrototypeSet(seen, name, true);
    list[i] = name;
  }
  return list;
}

function readOffset(offset) {
  if (typeof offset !== "number" || !NumberIsSafeInteger(offset) || offset < 0) {
    throw new TypeError("hub.read: offset must be a non-negative integer (a page's nextOffset)");
  }
  return offset;
}

function checkResultRef(what, resultRef) {
  if (typeof resultRef !== "string" || resultRef === "") {
    throw new TypeError(what + ": resultRef must be a non-empty string (stored.resultRef of an envelope)");
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

  // A promise for a stored result's host reply: its value, or a branded error with the
  // failure's code (result_unavailable, row_too_large, result_too_large) under `address`.
  const storedReply = (pending, address) =>
    new Promise((resolve, reject) => {
      whenSettled(
        pending,
        (text) => {
          const reply = JSONParse(text);
          if (own(reply, "ok") === true) {
            resolve(own(reply, "value"));
            return;
          }
          const error = own(reply, "error");
          reject(hostError(own(error, "code"), own(error, "message"), own(error, "hint"), address, own(error, "status"), own(error, "retryable")));
        },
        reject,
      );
    });

  const hostSearch = host.search;
  const hostDescribe = host.describe;
  const hostRead = host.read;
  const hostGet = host.get;
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
    // Not tool calls: they do not count toward the call limit and are not listed in `calls`.
    read(resultRef, options, ...extra) {
      return promised(() => {
        if (extra.length !== 0) {
          throw new TypeError("hub.read takes a resultRef and an optional options object " + READ_USAGE + ", nothing more");
        }
        checkResultRef("hub.read", resultRef);
        const o = readOptions(options);
        return storedReply(hostRead(resultRef, o.path, o.fields, o.offset), "hub.read");
      });
    },
    get(resultRef, ...extra) {
      return promised(() => {
        if (extra.length !== 0) {
          throw new TypeError("hub.get takes exactly one argument, a resultRef; read part of a stored result with hub.read(resultRef, { path, fields, offset })");
        }
        checkResultRef("hub.get", resultRef);
        return storedReply(hostGet(resultRef), "hub.get");
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
