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
//
// What JSON cannot hold (a BigInt, a value inside itself, nesting deeper than the host reads) is
// refused here with where it is, and only a refusal made here is the result's fault: a TypeError
// the script's own getter or toJSON throws while the result is written is the script's error.

// As deep as the host reads JSON at all (serde_json's limit, see sandbox::error::not_json).
const RESULT_DEPTH = 128;
// The most containers one inside another that the host reads: serde_json refuses the 128th.
const MOST_NESTED = RESULT_DEPTH - 1;
const TOO_DEEP =
  "it nests deeper than the " + RESULT_DEPTH + " levels JSON is read to here; return a flatter value";

// Whether `o` really is of class `C` (a Map, a Set, a boxed Number…): the prototype first,
// which costs nothing for the plain objects most results hold, then the brand (`brandCheck`
// throws a TypeError on anything else), so a forged prototype is no Map. Only that TypeError
// means "no": a stack overflow or an interrupt goes on up.
function isKind(C, brandCheck, o) {
  if (!isInstance(C, o)) return false;
  try {
    brandCheck(o);
    return true;
  } catch (e) {
    if (isInstance(TypeError, e)) return false;
    throw e;
  }
}
const isMap = (o) => isKind(Map, MapPrototypeGetSize, o);
const isSet = (o) => isKind(Set, SetPrototypeGetSize, o);
// A boxed BigInt (Object(1n)), which JSON.stringify refuses as it does the BigInt in it.
const isBoxedBigInt = (o) => isKind(BigInt, BigIntPrototypeValueOf, o);

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
    if (isKind(BOXES[i][0], BOXES[i][1], o)) return true;
  }
  return false;
}

// The first `length` keys of `path` (the first is the root's, "") as an RFC 6901 pointer, as
// the envelope names places in a result.
function pointer(path, length) {
  let out = "";
  for (let i = 1; i < length; i++) {
    out += "/" + StringPrototypeReplaceAll(StringPrototypeReplaceAll(path[i], "~", "~0"), "/", "~1");
  }
  return out;
}

// Where the value at `path`'s first `length` keys is, in words.
function place(path, length) {
  return length > 1 ? "at " + pointer(path, length) : "the result itself";
}

function makeResultWalk(converted, refuse) {
  const ancestors = newList();
  const walk = (v, depth) => {
    if (v === null || typeof v !== "object" || writtenAsIs(v)) return v;
    if (depth >= MOST_NESTED) refuse(TOO_DEEP);
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

// [json, refusal, atLeast]: JSON.stringify(value) with Map, Set and Error written as what they
// hold, or why the result cannot be JSON. `converted` counts how many of each ([maps, sets,
// errors]) the JSON holds. An array certain to be over `cap` UTF-16 units before it is written
// (ten million holes would be 50 MB of "null,") is written with its first `prefixUnits` items
// only, which still gives the result's first `prefixUnits` units exactly; `atLeast` then says
// how long the whole would be at least.
//
// JSON.stringify hands the replacer each value with its holder, the object being written, so
// the path down to it is the path kept so far cut back to that holder. With the path, a value
// met again below itself is a cycle even when a toJSON hands back a fresh route to it, and the
// nesting is known before the engine's own stack runs out.
function resultJSON(value, converted, cap, prefixUnits) {
  const STOP = ObjectCreate(null);
  let refusal = null;
  let atLeast;
  const refuse = (why) => {
    refusal = why;
    throw STOP;
  };
  const walk = makeResultWalk(converted, refuse);
  // Per level: the value as the script holds it, what it is written as (the holder of the level
  // below), and its key.
  const held = newList();
  const written = newList();
  const keys = newList();
  const replacer = function (key, v) {
    let depth = written.length;
    while (depth > 0 && written[depth - 1] !== this) depth--;
    held.length = written.length = keys.length = depth;
    keys[depth] = key;
    if (typeof v === "bigint" || (v !== null && typeof v === "object" && isBoxedBigInt(v))) {
      refuse(
        "it holds a BigInt (" +
          place(keys, depth + 1) +
          "), which JSON has no form for; return String(n), or Number(n) when it is small enough",
      );
    }
    if (v === null || typeof v !== "object") return v;
    for (let i = 0; i < depth; i++) {
      if (held[i] === v) {
        const ancestor = i === 0 ? "the result itself" : "the one at " + pointer(keys, i + 1);
        refuse("it contains itself: the value at " + pointer(keys, depth + 1) + " is " + ancestor + ", which holds it");
      }
    }
    if (depth >= MOST_NESTED) {
      refuse(TOO_DEEP);
    }
    // Each item is one character at least, and a comma between two.
    if (ArrayIsArray(v) && v.length * 2 + 1 > cap) {
      atLeast = MathMax(atLeast ?? 0, v.length * 2 + 1);
      const out = newList();
      for (let i = 0; i < prefixUnits; i++) out[i] = v[i];
      held[depth] = v;
      written[depth] = out;
      return out;
    }
    const out = isMap(v) || isSet(v) || isInstance(Error, v) ? walk(v, depth) : v;
    held[depth] = v;
    written[depth] = out;
    return out;
  };
  const result = newList();
  try {
    result[0] = JSONStringify(value, replacer);
  } catch (e) {
    if (e !== STOP) throw e;
    result[1] = refusal;
  }
  if (atLeast !== undefined && result[0] !== undefined) result[2] = MathMax(atLeast, result[0].length);
  return result;
}
