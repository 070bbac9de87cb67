// The script's value as JSON. JSON has no Map, Set or Error, and JSON.stringify writes each as
// `{}`: a script that returns a Map, or the errors it caught, would lose what they hold without
// a word. In the result only, each becomes what it holds, and the host says so in a notice: a
// Map an object of its entries (an array of [key, value] pairs when a key is neither a string
// nor a number, or two keys read the same), a Set an array, an Error its name, message, cause
// and own fields. A script's own toJSON on those prototypes is left as it is.
//
// Each is converted with everything inside it in one walk, so a Map that holds itself is a
// cycle the walk sees, not an endless chain of fresh copies.

// As deep as the host reads JSON at all (serde_json's limit, see sandbox::error::not_json).
const RESULT_DEPTH = 128;

// A real Map's (or Set's) size, or -1 for an object that only inherits the prototype. Only the
// brand check's TypeError is taken for "no": a stack overflow or an interrupt goes on up.
function sizeOf(getSize, o) {
  try {
    return getSize(o);
  } catch (e) {
    if (isInstance(TypeError, e)) return -1;
    throw e;
  }
}

function makeResultWalk(converted, lent) {
  const ancestors = newList();
  const refuse = (what) => {
    throw new TypeError(what);
  };
  // Left for JSON.stringify: primitives, and objects with a toJSON of their own (a Date).
  const ownJSON = (v) => {
    const toJSON = v.toJSON;
    if (typeof toJSON !== "function") return false;
    for (let i = 0; i < lent.length; i++) if (lent[i] === toJSON) return false;
    return true;
  };
  const walk = (v, depth) => {
    if (v === null || typeof v !== "object") return v;
    if (ownJSON(v)) return v;
    if (depth > RESULT_DEPTH) refuse("it nests deeper than " + RESULT_DEPTH + " levels");
    for (let i = 0; i < ancestors.length; i++) {
      if (ancestors[i] === v) refuse("it holds a Map, Set or Error that contains itself");
    }
    ancestors[ancestors.length] = v;
    const out = convert(v, depth + 1);
    ancestors.length -= 1;
    return out;
  };
  const convert = (v, depth) => {
    if (sizeOf(MapPrototypeGetSize, v) >= 0) {
      converted[0]++;
      return mapEntries(v, depth);
    }
    if (sizeOf(SetPrototypeGetSize, v) >= 0) {
      converted[1]++;
      const values = newList();
      SetPrototypeForEach(v, (x) => {
        values[values.length] = walk(x, depth);
      });
      return values;
    }
    if (ArrayIsArray(v)) {
      const items = newList();
      const length = v.length;
      for (let i = 0; i < length; i++) items[i] = walk(v[i], depth);
      return items;
    }
    const out = ObjectCreate(null);
    if (isInstance(Error, v)) {
      converted[2]++;
      out.name = walk(v.name, depth);
      out.message = walk(v.message, depth);
      if (ObjectPrototypeHasOwnProperty(v, "cause")) out.cause = walk(v.cause, depth);
    }
    const keys = ObjectKeys(v);
    for (let i = 0; i < keys.length; i++) out[keys[i]] = walk(v[keys[i]], depth);
    return out;
  };
  const mapEntries = (m, depth) => {
    const keys = newList();
    const values = newList();
    MapPrototypeForEach(m, (x, k) => {
      keys[keys.length] = k;
      values[values.length] = x;
    });
    const members = ObjectCreate(null);
    let named = true;
    for (let i = 0; named && i < keys.length; i++) {
      const k = keys[i];
      const name = typeof k === "string" || typeof k === "number" ? String(k) : null;
      if (name === null || ObjectPrototypeHasOwnProperty(members, name)) named = false;
      else members[name] = walk(values[i], depth);
    }
    if (named) return members;
    const pairs = newList();
    for (let i = 0; i < keys.length; i++) {
      const pair = newList();
      pair[0] = walk(keys[i], depth);
      pair[1] = walk(values[i], depth);
      pairs[i] = pair;
    }
    return pairs;
  };
  return walk;
}

// JSON.stringify(value) with Map, Set and Error written as what they hold; `converted` counts
// how many of each ([maps, sets, errors]) the JSON holds.
function resultJSON(value, converted) {
  const lent = newList();
  const walk = makeResultWalk(converted, lent);
  const lend = (proto, isKind) => {
    if (ObjectPrototypeHasOwnProperty(proto, "toJSON")) return;
    const toJSON = function toJSON() {
      // Something that only inherits the prototype is written as JSON.stringify would.
      return isKind(this) ? walk(this, 0) : plainCopy(this);
    };
    lent[lent.length] = toJSON;
    const descriptor = { __proto__: null, value: toJSON, writable: true, configurable: true };
    // False, not a throw, when the script froze the prototype: it keeps JSON's `{}` then.
    if (!ReflectDefineProperty(proto, "toJSON", descriptor)) lent.length -= 1;
  };
  lend(MapPrototype, (v) => sizeOf(MapPrototypeGetSize, v) >= 0);
  lend(SetPrototype, (v) => sizeOf(SetPrototypeGetSize, v) >= 0);
  lend(ErrorPrototype, () => true);
  try {
    return JSONStringify(value);
  } finally {
    const protos = [MapPrototype, SetPrototype, ErrorPrototype];
    for (let i = 0; i < protos.length; i++) {
      const own = ObjectPrototypeHasOwnProperty(protos[i], "toJSON") ? protos[i].toJSON : undefined;
      for (let j = 0; j < lent.length; j++) if (own === lent[j]) ReflectDeleteProperty(protos[i], "toJSON");
    }
  }
}

// The own enumerable fields of `o` in a copy that inherits nothing: what JSON.stringify would
// have written of it.
function plainCopy(o) {
  const out = ObjectCreate(null);
  const keys = ObjectKeys(o);
  for (let i = 0; i < keys.length; i++) out[keys[i]] = o[keys[i]];
  return out;
}
