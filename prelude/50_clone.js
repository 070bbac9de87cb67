// structuredClone for the data a script handles: plain objects and arrays, Date, RegExp, Map,
// Set, ArrayBuffer, typed arrays, DataView, Error, and cycles. Functions and symbols refuse.
// Copies are filled while they inherit nothing, so a setter on a prototype never sees a value.

function regExpFlags(r) {
  return (
    (RegExpPrototypeGetHasIndices(r) ? "d" : "") +
    (RegExpPrototypeGetGlobal(r) ? "g" : "") +
    (RegExpPrototypeGetIgnoreCase(r) ? "i" : "") +
    (RegExpPrototypeGetMultiline(r) ? "m" : "") +
    (RegExpPrototypeGetDotAll(r) ? "s" : "") +
    (RegExpPrototypeGetUnicode(r) ? "u" : "") +
    (RegExpPrototypeGetUnicodeSets(r) ? "v" : "") +
    (RegExpPrototypeGetSticky(r) ? "y" : "")
  );
}

function installClone(g) {
  const typedArrays = {
    __proto__: null,
    Int8Array,
    Uint8Array,
    Uint8ClampedArray,
    Int16Array,
    Uint16Array,
    Int32Array,
    Uint32Array,
    Float16Array,
    Float32Array,
    Float64Array,
    BigInt64Array,
    BigUint64Array,
  };
  const cloneError = (what) => new DOMException(what + " could not be cloned", "DataCloneError");
  const structuredClone = function structuredClone(value) {
    const seen = new Map();
    const walk = (v) => {
      if (v === null || (typeof v !== "object" && typeof v !== "function" && typeof v !== "symbol")) return v;
      if (typeof v === "function") throw cloneError("function " + functionName(v));
      if (typeof v === "symbol") throw cloneError(SymbolPrototypeToString(v));
      if (MapPrototypeHas(seen, v)) return MapPrototypeGet(seen, v);
      let out;
      if (ArrayIsArray(v)) {
        const length = v.length;
        out = ObjectSetPrototypeOf(new Array(length), null);
        MapPrototypeSet(seen, v, out);
        for (let i = 0; i < length; i++) if (i in v) out[i] = walk(v[i]);
        return ObjectSetPrototypeOf(out, ArrayPrototype);
      }
      if (isInstance(NativeDate, v)) out = new NativeDate(DatePrototypeGetTime(v));
      else if (isInstance(RegExp, v)) out = new RegExp(RegExpPrototypeGetSource(v), regExpFlags(v));
      else if (isInstance(ArrayBuffer, v)) {
        out = new ArrayBuffer(ArrayBufferPrototypeGetByteLength(v));
        TypedArrayPrototypeSet(new Uint8Array(out), new Uint8Array(v));
      } else if (isInstance(DataView, v)) {
        out = new DataView(walk(DataViewPrototypeGetBuffer(v)), DataViewPrototypeGetByteOffset(v), DataViewPrototypeGetByteLength(v));
      } else if (ArrayBufferIsView(v)) {
        const Kind = typedArrays[TypedArrayPrototypeGetSymbolToStringTag(v)];
        out = new Kind(walk(TypedArrayPrototypeGetBuffer(v)), TypedArrayPrototypeGetByteOffset(v), TypedArrayPrototypeGetLength(v));
      } else if (isInstance(Map, v)) {
        out = new Map();
        MapPrototypeSet(seen, v, out);
        MapPrototypeForEach(v, (x, k) => MapPrototypeSet(out, walk(k), walk(x)));
        return out;
      } else if (isInstance(Set, v)) {
        out = new Set();
        MapPrototypeSet(seen, v, out);
        SetPrototypeForEach(v, (x) => SetPrototypeAdd(out, walk(x)));
        return out;
      } else if (isInstance(Error, v)) {
        out = new Error(v.message);
        defineData(out, "name", v.name, true);
        const stack = errorStack(v);
        if (stack !== null) defineData(out, "stack", stack, false);
      } else if (isInstance(Promise, v) || isInstance(WeakMap, v) || isInstance(WeakSet, v)) {
        throw cloneError(ObjectPrototypeToString(v));
      } else {
        out = ObjectCreate(null);
        MapPrototypeSet(seen, v, out);
        const keys = ObjectKeys(v);
        for (let i = 0; i < keys.length; i++) out[keys[i]] = walk(v[keys[i]]);
        return ObjectSetPrototypeOf(out, ObjectPrototype);
      }
      MapPrototypeSet(seen, v, out);
      return out;
    };
    return walk(value);
  };
  defineFixed(g, "structuredClone", structuredClone);
}
