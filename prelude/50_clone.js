// structuredClone for the data a script handles: plain objects and arrays, Date, RegExp, Map,
// Set, ArrayBuffer, typed arrays, DataView, Error, and cycles. Functions and symbols refuse.

function installClone(g) {
  const cloneError = (what) => new DOMException(`${what} could not be cloned`, "DataCloneError");
  const structuredClone = function structuredClone(value) {
    const seen = new Map();
    const walk = (v) => {
      if (v === null || (typeof v !== "object" && typeof v !== "function" && typeof v !== "symbol")) return v;
      if (typeof v === "function") throw cloneError(`function ${v.name || "anonymous"}`);
      if (typeof v === "symbol") throw cloneError(v.toString());
      if (seen.has(v)) return seen.get(v);
      let out;
      if (Array.isArray(v)) {
        out = new Array(v.length);
        seen.set(v, out);
        for (let i = 0; i < v.length; i++) if (i in v) out[i] = walk(v[i]);
        return out;
      }
      if (v instanceof Date) out = new Date(v.getTime());
      else if (v instanceof RegExp) out = new RegExp(v.source, v.flags);
      else if (v instanceof ArrayBuffer) out = v.slice(0);
      else if (v instanceof DataView) out = new DataView(walk(v.buffer), v.byteOffset, v.byteLength);
      else if (ArrayBuffer.isView(v)) out = new v.constructor(walk(v.buffer), v.byteOffset, v.length);
      else if (v instanceof Map) {
        out = new Map();
        seen.set(v, out);
        for (const [k, x] of v) out.set(walk(k), walk(x));
        return out;
      } else if (v instanceof Set) {
        out = new Set();
        seen.set(v, out);
        for (const x of v) out.add(walk(x));
        return out;
      } else if (v instanceof Error) {
        out = new Error(v.message);
        out.name = v.name;
        if (v.stack !== undefined) out.stack = v.stack;
      } else if (v instanceof Promise || v instanceof WeakMap || v instanceof WeakSet) {
        throw cloneError(Object.prototype.toString.call(v));
      } else {
        out = {};
        seen.set(v, out);
        for (const k of Object.keys(v)) out[k] = walk(v[k]);
        return out;
      }
      seen.set(v, out);
      return out;
    };
    return walk(value);
  };
  Object.defineProperty(g, "structuredClone", { value: structuredClone, writable: false, configurable: false, enumerable: false });
}
