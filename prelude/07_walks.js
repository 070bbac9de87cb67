// Array walks the run's limits can stop. Some of QuickJS's array built-ins walk an array's
// `length` in C without ever polling the run's deadline (join, reverse, copyWithin, concat, flat,
// slice, shift, unshift, sort, splice, toLocaleString): over a sparse array of four billion
// holes, or an object that claims a length of 2^53 - 1, one call would hold the JavaScript thread
// past every time limit and cancellation, and a hub's threads with it. So each runs natively only
// on a `this` whose length is its own number, read here without running any script code (no
// getter, no Proxy trap, no valueOf), and at most LONGEST_WALK: the built-in then reads the same
// number. Any other `this` (a Proxy, an object whose length is a getter or inherited, a number
// whose prototype a script gave a length) is copied first here, in JavaScript, where the limits
// hold, or refused by a method that changes it. concat and flat look into their arguments and
// elements too, and String.raw reads its template's `raw` through getters, so they are written
// here whole. A dense array of more than LONGEST_WALK elements
// would be over the memory limit anyway: only sparse arrays and array-likes meet the bound.

const LONGEST_WALK = 16777216;
const LONGEST_LENGTH = 9007199254740991;

// The spec's ToLength of a number.
const toLength = (n) => {
  if (!(n > 0)) return 0;
  return n > LONGEST_LENGTH ? LONGEST_LENGTH : MathFloor(n);
};

function boundArrayWalks(host) {
  const isProxy = host.isProxy;

  const label = (name) => (name === "raw" ? "String.raw" : "Array.prototype." + name);
  const tooLong = (name, length) =>
    new RangeError(
      label(name) + " over " + length + " elements (a sparse array, or an object that claims that length) " +
        "is refused in the sandbox: at most " + LONGEST_WALK + " are walked. Walk it with a loop of your own, which the run's limits can stop."
    );

  // The length `o` holds as its own number, read without running script code; undefined when it
  // has none (a Proxy, a getter, an inherited length, a primitive other than a string).
  const ownLength = (o) => {
    if (typeof o === "string") return o.length;
    if (o === null || (typeof o !== "object" && typeof o !== "function") || isProxy(o)) return undefined;
    const descriptor = ReflectGetOwnPropertyDescriptor(o, "length");
    if (descriptor === undefined) return undefined;
    ObjectSetPrototypeOf(descriptor, null);
    return typeof descriptor.value === "number" ? descriptor.value : undefined;
  };

  const toObject = (name, value) => {
    if (value === null || value === undefined) {
      throw new TypeError(label(name) + " called on null or undefined");
    }
    return Object(value);
  };

  // `o`'s elements as a plain array, its length read once (getters and traps run once each, as
  // the built-in would run them).
  const copyOf = (name, o) => {
    const object = toObject(name, o);
    const length = toLength(+object.length);
    if (length > LONGEST_WALK) throw tooLong(name, length);
    const copy = new Array(length);
    for (let k = 0; k < length; k++) {
      if (k in object) defineData(copy, k, object[k], true);
    }
    return copy;
  };

  // Puts `method` (named `name` already, by its key) in place of `holder`'s built-in, with its
  // `length`.
  const replace = (name, method, length, holder = ArrayPrototype) => {
    ObjectDefineProperty(method, "length", { __proto__: null, value: length, writable: false, enumerable: false, configurable: true });
    defineData(holder, name, method, false);
  };

  const guard = (name, changes) => {
    const native = ArrayPrototype[name];
    const method = {
      [name](...args) {
        const length = ownLength(this);
        if (length !== undefined) {
          if (toLength(length) > LONGEST_WALK) throw tooLong(name, length);
          return ReflectApply(native, this, args);
        }
        if (this === null || this === undefined) return ReflectApply(native, this, args);
        if (changes) {
          throw new TypeError(
            "Array.prototype." + name + " is refused in the sandbox on a value whose length is not its own number " +
              "(a Proxy, a getter, an inherited length): its built-in could be told another length than the one checked. Copy it first with Array.from."
          );
        }
        return ReflectApply(native, copyOf(name, this), args);
      },
    }[name];
    replace(name, method, native.length);
  };
  guard("join", false);
  guard("slice", false);
  guard("toLocaleString", false);
  guard("copyWithin", true);
  guard("reverse", true);
  guard("shift", true);
  guard("sort", true);
  guard("splice", true);
  guard("unshift", true);

  // Appends `value` to `target` at `n`, spread when it is concat-spreadable; the new length.
  const spreadInto = (target, n, value) => {
    const isObject = value !== null && (typeof value === "object" || typeof value === "function");
    let spreadable = false;
    if (isObject) {
      const flag = value[SymbolIsConcatSpreadable];
      spreadable = flag !== undefined ? !!flag : ArrayIsArray(value);
    }
    if (!spreadable) {
      defineData(target, n, value, true);
      return n + 1;
    }
    const length = toLength(+value.length);
    if (length > LONGEST_WALK) throw tooLong("concat", length);
    for (let k = 0; k < length; k++) {
      if (k in value) defineData(target, n + k, value[k], true);
    }
    return n + length;
  };
  replace(
    "concat",
    {
      concat(...items) {
        const out = new Array();
        let n = spreadInto(out, 0, toObject("concat", this));
        for (let i = 0; i < items.length; i++) n = spreadInto(out, n, items[i]);
        out.length = n;
        return out;
      },
    }.concat,
    1
  );

  // The spec's FlattenIntoArray: `source`'s elements (mapped, for flatMap) into `target` from `n`,
  // arrays among them flattened `depth` levels more; the new length.
  const flattenInto = (name, target, n, source, depth, mapper, thisArg) => {
    const length = toLength(+source.length);
    if (length > LONGEST_WALK) throw tooLong(name, length);
    for (let k = 0; k < length; k++) {
      if (!(k in source)) continue;
      let element = source[k];
      if (mapper !== undefined) element = ReflectApply(mapper, thisArg, [element, k, source]);
      if (depth > 0 && ArrayIsArray(element)) {
        n = flattenInto(name, target, n, element, depth - 1, undefined, undefined);
      } else {
        defineData(target, n, element, true);
        n += 1;
      }
    }
    return n;
  };
  // String.raw walks its template's `raw` the same way; written here whole.
  const stringOf = (value) => {
    if (typeof value === "symbol") throw new TypeError("Cannot convert a Symbol value to a string");
    return String(value);
  };
  const raw = {
    raw(template, ...substitutions) {
      const strings = toObject("raw", toObject("raw", template).raw);
      const length = toLength(+strings.length);
      if (length > LONGEST_WALK) throw tooLong("raw", length);
      let out = "";
      for (let i = 0; i < length; i++) {
        out += stringOf(strings[i]);
        if (i + 1 < length && i < substitutions.length) out += stringOf(substitutions[i]);
      }
      return out;
    },
  }.raw;
  replace("raw", raw, 1, String);

  replace(
    "flat",
    {
      flat(depth) {
        const source = toObject("flat", this);
        let levels = depth === undefined ? 1 : +depth;
        levels = levels !== levels || levels < 0 ? 0 : levels;
        const out = new Array();
        out.length = flattenInto("flat", out, 0, source, levels, undefined, undefined);
        return out;
      },
    }.flat,
    0
  );
  replace(
    "flatMap",
    {
      flatMap(mapper, thisArg) {
        const source = toObject("flatMap", this);
        if (typeof mapper !== "function") throw new TypeError("Array.prototype.flatMap: the mapper is not a function");
        const out = new Array();
        out.length = flattenInto("flatMap", out, 0, source, 1, mapper, thisArg);
        return out;
      },
    }.flatMap,
    1
  );
}
