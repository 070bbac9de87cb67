// The script's value as JSON. JSON has no Map, Set or Error, and JSON.stringify writes each as
// `{}`: a script that returns a Map, or the errors it caught, would lose what they hold without
// a word. In the result only, each becomes what it holds, and the host says so in a notice: a
// Map an object of its entries (an array of [key, value] pairs when a key is neither a string
// nor a number, or two keys read the same), a Set an array, an Error its name, message, cause,
// errors (an AggregateError's) and own fields. A script's own toJSON still comes first.
//
// The conversion is a replacer of the one JSON.stringify that writes the result, so nothing
// else changes: a JSON.stringify a getter makes while the result is written sees JSON as ever.
// Each Map, Set or Error is converted with everything inside it in one walk, so one that holds
// itself is a cycle the walk sees, not an endless chain of fresh copies.

// As deep as the host reads JSON at all (serde_json's limit, see sandbox::error::not_json).
const RESULT_DEPTH = 128;

// Whether `o` really is a Map (or a Set): the prototype first, which costs nothing for the
// plain objects most results hold, then the brand, so a forged prototype is no Map. Only the
// brand check's TypeError means "no": a stack overflow or an interrupt goes on up.
function isKind(C, getSize, o) {
  if (!isInstance(C, o)) return false;
  try {
    getSize(o);
    return true;
  } catch (e) {
    if (isInstance(TypeError, e)) return false;
    throw e;
  }
}
const isMap = (o) => isKind(Map, MapPrototypeGetSize, o);
const isSet = (o) => isKind(Set, SetPrototypeGetSize, o);

// Boxed primitives, each with the brand check of its kind.
const BOXES = [
  [Number, NumberPrototypeValueOf],
  [String, StringPrototypeValueOf],
  [Boolean, BooleanPrototypeValueOf],
  [BigInt, BigIntPrototypeValueOf],
];

// What JSON.stringify writes of `o` itself without looking inside: a boxed primitive (its
// value), and anything with a toJSON of its own (a Date).
function writtenAsIs(o) {
  if (typeof o.toJSON === "function") return true;
  for (let i = 0; i < BOXES.length; i++) {
    if (!isInstance(BOXES[i][0], o)) continue;
    try {
      BOXES[i][1](o);
      return true;
    } catch (e) {
      if (!isInstance(TypeError, e)) throw e;
    }
  }
  return false;
}

function makeResultWalk(converted) {
  const ancestors = newList();
  const refuse = (what) => {
    throw new TypeError(what);
  };
  const walk = (v, depth) => {
    if (v === null || typeof v !== "object" || writtenAsIs(v)) return v;
    if (depth > RESULT_DEPTH) refuse("it nests deeper than " + RESULT_DEPTH + " levels");
    for (let i = 0; i < ancestors.length; i++) {
      if (ancestors[i] === v) refuse("it holds a Map, Set or Error that contains itself");
    }
    const at = ancestors.length;
    ancestors[at] = v;
    try {
      return convert(v, depth + 1);
    } finally {
      ancestors.length = at;
    }
  };
  const convert = (v, depth) => {
    if (isMap(v)) {
      converted[0]++;
      return mapEntries(v, depth);
    }
    if (isSet(v)) {
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
      if (ObjectPrototypeHasOwnProperty(v, "errors")) out.errors = walk(v.errors, depth);
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
  const walk = makeResultWalk(converted);
  const replacer = function (key, v) {
    if (v === null || typeof v !== "object") return v;
    return isMap(v) || isSet(v) || isInstance(Error, v) ? walk(v, 0) : v;
  };
  return JSONStringify(value, replacer);
}
