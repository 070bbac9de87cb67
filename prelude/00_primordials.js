// Primordials: every built-in the prelude uses after install returns, captured when this module is
// evaluated, which is before any user code runs. A script may reassign globals (`globalThis.Map =
// …`), replace prototype methods and getters (`Map.prototype.size`), or add properties to
// Object.prototype; none of that may change what the prelude does, because the prelude enforces
// limits (timers), brands the errors whose code the host trusts, and receives tool results.
//
// Rules for every other prelude file. Tests hold them: src/sandbox/compile.rs checks the syntax
// (no global read that was not captured here, none of the constructs below);
// tests/it/sandbox_prelude.rs overrides each capture below one at a time, and wraps every
// built-in in a tripwire while the prelude runs.
// - they hold for install-time code too, which runs before any script: one rule is easier to
//   check than two;
// - call built-ins through these captures, uncurried: `MapPrototypeSet(map, k, v)`, never
//   `map.set(k, v)`; `instanceof` through `isInstance`, which ignores a script's Symbol.hasInstance;
// - no iteration protocols (for…of, spread, array destructuring) on anything after install:
//   indexed loops and `forEach` captures;
// - objects the prelude reads by key or fills by key (descriptors, records, Proxy handlers, lists)
//   have a null prototype, so Object.prototype and Array.prototype getters and setters never apply;
// - never `await` or `.then` a promise: `whenSettled` reacts to host promises without consulting
//   `constructor`, `Symbol.species` or `then`, which a script can change;
// - no template literals with substitutions: QuickJS compiles them to String.prototype.concat
//   calls; join strings with `+`.
//
// Each capture is one line in one of the shapes the table test parses:
//   const Name = globalObject.Name;                      a global constructor
//   const NamePrototypeMethod = uncurryThis(Name.prototype.method);
//   const NamePrototypeGetProp = uncurryGetter(Name.prototype, "prop");
//   const NameStatic = Name.static;                       a function that ignores `this`

const globalObject = globalThis;

// uncurryThis(fn)(self, ...args) is fn.call(self, ...args), bound once, so later changes to
// Function.prototype.call, bind or apply do not reach it.
const uncurryThis = Function.prototype.bind.bind(Function.prototype.call);
const uncurryGetter = (object, key) => uncurryThis(Reflect.getOwnPropertyDescriptor(object, key).get);

const Array = globalObject.Array;
const ArrayBuffer = globalObject.ArrayBuffer;
const DataView = globalObject.DataView;
const DOMException = globalObject.DOMException;
const Error = globalObject.Error;
const Map = globalObject.Map;
const Math = globalObject.Math;
const BigInt = globalObject.BigInt;
const Boolean = globalObject.Boolean;
const Number = globalObject.Number;
const Object = globalObject.Object;
const Promise = globalObject.Promise;
const Proxy = globalObject.Proxy;
const RangeError = globalObject.RangeError;
const RegExp = globalObject.RegExp;
const Set = globalObject.Set;
const String = globalObject.String;
const TypeError = globalObject.TypeError;
const Uint8Array = globalObject.Uint8Array;
const WeakMap = globalObject.WeakMap;
const WeakSet = globalObject.WeakSet;
const Int8Array = globalObject.Int8Array;
const Uint8ClampedArray = globalObject.Uint8ClampedArray;
const Int16Array = globalObject.Int16Array;
const Uint16Array = globalObject.Uint16Array;
const Int32Array = globalObject.Int32Array;
const Uint32Array = globalObject.Uint32Array;
const Float16Array = globalObject.Float16Array;
const Float32Array = globalObject.Float32Array;
const Float64Array = globalObject.Float64Array;
const BigInt64Array = globalObject.BigInt64Array;
const BigUint64Array = globalObject.BigUint64Array;
// The real Date; the global becomes the logical-clock Date at install.
const NativeDate = globalObject.Date;

const ArrayIsArray = Array.isArray;
const ArrayBufferIsView = ArrayBuffer.isView;
const JSONParse = JSON.parse;
const JSONStringify = JSON.stringify;
const MathFloor = Math.floor;
const MathMax = Math.max;
const NumberIsSafeInteger = Number.isSafeInteger;
const ObjectCreate = Object.create;
const ObjectDefineProperty = Object.defineProperty;
const ObjectFreeze = Object.freeze;
const ObjectGetPrototypeOf = Object.getPrototypeOf;
const ObjectKeys = Object.keys;
const ObjectSetPrototypeOf = Object.setPrototypeOf;
const ReflectApply = Reflect.apply;
const ReflectConstruct = Reflect.construct;
const ReflectDefineProperty = Reflect.defineProperty;
const ReflectDeleteProperty = Reflect.deleteProperty;
const ReflectGetOwnPropertyDescriptor = Reflect.getOwnPropertyDescriptor;
const StringFromCharCode = String.fromCharCode;
const StringFromCodePoint = String.fromCodePoint;
const SymbolIsConcatSpreadable = Symbol.isConcatSpreadable;

const ArrayPrototype = Array.prototype;
const ErrorPrototype = Error.prototype;
const MapPrototype = Map.prototype;
const SetPrototype = Set.prototype;
const ObjectPrototype = Object.prototype;
const TypedArrayPrototype = ObjectGetPrototypeOf(Uint8Array.prototype);

const ArrayBufferPrototypeGetByteLength = uncurryGetter(ArrayBuffer.prototype, "byteLength");
const DataViewPrototypeGetBuffer = uncurryGetter(DataView.prototype, "buffer");
const DataViewPrototypeGetByteLength = uncurryGetter(DataView.prototype, "byteLength");
const DataViewPrototypeGetByteOffset = uncurryGetter(DataView.prototype, "byteOffset");
const DatePrototypeGetTime = uncurryThis(NativeDate.prototype.getTime);
const DatePrototypeToString = uncurryThis(NativeDate.prototype.toString);
const ErrorPrototypeGetStack = uncurryGetter(Error.prototype, "stack");
const FunctionPrototypeSymbolHasInstance = uncurryThis(Function.prototype[Symbol.hasInstance]);
const MapPrototypeDelete = uncurryThis(Map.prototype.delete);
const MapPrototypeForEach = uncurryThis(Map.prototype.forEach);
const MapPrototypeGet = uncurryThis(Map.prototype.get);
const MapPrototypeGetSize = uncurryGetter(Map.prototype, "size");
const MapPrototypeHas = uncurryThis(Map.prototype.has);
const MapPrototypeSet = uncurryThis(Map.prototype.set);
const NumberPrototypeToString = uncurryThis(Number.prototype.toString);
const NumberPrototypeValueOf = uncurryThis(Number.prototype.valueOf);
const BigIntPrototypeValueOf = uncurryThis(BigInt.prototype.valueOf);
const BooleanPrototypeValueOf = uncurryThis(Boolean.prototype.valueOf);
const StringPrototypeValueOf = uncurryThis(String.prototype.valueOf);
const ObjectPrototypeHasOwnProperty = uncurryThis(Object.prototype.hasOwnProperty);
const ObjectPrototypeToString = uncurryThis(Object.prototype.toString);
const PromisePrototypeThen = uncurryThis(Promise.prototype.then);
const RegExpPrototypeGetDotAll = uncurryGetter(RegExp.prototype, "dotAll");
const RegExpPrototypeGetGlobal = uncurryGetter(RegExp.prototype, "global");
const RegExpPrototypeGetHasIndices = uncurryGetter(RegExp.prototype, "hasIndices");
const RegExpPrototypeGetIgnoreCase = uncurryGetter(RegExp.prototype, "ignoreCase");
const RegExpPrototypeGetMultiline = uncurryGetter(RegExp.prototype, "multiline");
const RegExpPrototypeGetSource = uncurryGetter(RegExp.prototype, "source");
const RegExpPrototypeGetSticky = uncurryGetter(RegExp.prototype, "sticky");
const RegExpPrototypeGetUnicode = uncurryGetter(RegExp.prototype, "unicode");
const RegExpPrototypeGetUnicodeSets = uncurryGetter(RegExp.prototype, "unicodeSets");
const SetPrototypeAdd = uncurryThis(Set.prototype.add);
const SetPrototypeGetSize = uncurryGetter(Set.prototype, "size");
const SetPrototypeForEach = uncurryThis(Set.prototype.forEach);
const StringPrototypeCharCodeAt = uncurryThis(String.prototype.charCodeAt);
const StringPrototypePadStart = uncurryThis(String.prototype.padStart);
const StringPrototypeReplaceAll = uncurryThis(String.prototype.replaceAll);
const StringPrototypeSlice = uncurryThis(String.prototype.slice);
const StringPrototypeToLowerCase = uncurryThis(String.prototype.toLowerCase);
const StringPrototypeTrim = uncurryThis(String.prototype.trim);
const StringPrototypeToWellFormed = uncurryThis(String.prototype.toWellFormed);
const SymbolPrototypeToString = uncurryThis(Symbol.prototype.toString);
const TypedArrayPrototypeGetBuffer = uncurryGetter(TypedArrayPrototype, "buffer");
const TypedArrayPrototypeGetByteLength = uncurryGetter(TypedArrayPrototype, "byteLength");
const TypedArrayPrototypeGetByteOffset = uncurryGetter(TypedArrayPrototype, "byteOffset");
const TypedArrayPrototypeGetLength = uncurryGetter(TypedArrayPrototype, "length");
const TypedArrayPrototypeGetSymbolToStringTag = uncurryGetter(TypedArrayPrototype, Symbol.toStringTag);
const TypedArrayPrototypeSet = uncurryThis(TypedArrayPrototype.set);
const WeakMapPrototypeGet = uncurryThis(WeakMap.prototype.get);
const WeakMapPrototypeSet = uncurryThis(WeakMap.prototype.set);

// `value instanceof C` without consulting C[Symbol.hasInstance], which a script can define.
const isInstance = (C, value) => FunctionPrototypeSymbolHasInstance(C, value);

// A property only if `object` has it itself: never an Object.prototype getter a script added.
const own = (object, key) => (ObjectPrototypeHasOwnProperty(object, key) ? object[key] : undefined);

// An array that inherits nothing, so `list[i] = v` can never run an Array.prototype setter.
const newList = () => ObjectSetPrototypeOf([], null);

// Defines `key` on `object` as an ordinary data property, whatever Object.prototype holds.
const defineData = (object, key, value, enumerable) =>
  ObjectDefineProperty(object, key, { __proto__: null, value, writable: true, enumerable, configurable: true });

// Defines a global the script can read but not replace.
const defineFixed = (object, key, value) =>
  ObjectDefineProperty(object, key, { __proto__: null, value, writable: false, enumerable: false, configurable: false });

// Calls onFulfilled / onRejected when a host promise settles. An own `constructor` of undefined
// makes Promise.prototype.then skip the species lookup (a script can redefine
// Promise.prototype.constructor and Promise[Symbol.species]); the captured `then` skips the rest.
const whenSettled = (promise, onFulfilled, onRejected) => {
  ObjectDefineProperty(promise, "constructor", { __proto__: null, value: undefined });
  PromisePrototypeThen(promise, onFulfilled, onRejected);
};

// A promise for a host promise's outcome that the script may do anything with.
const fromHost = (promise) => new Promise((resolve, reject) => whenSettled(promise, resolve, reject));

const rejected = (error) => new Promise((_, reject) => reject(error));

// An error's stack: its own `stack` if it has one, else the engine's, never a script's getter.
const errorStack = (e) => {
  const stack = ObjectPrototypeHasOwnProperty(e, "stack") ? e.stack : ErrorPrototypeGetStack(e);
  return typeof stack === "string" ? stack : null;
};

// A function's name for messages, without running a script's getter.
const functionName = (fn) => {
  const name = own(fn, "name");
  return typeof name === "string" && name !== "" ? name : "anonymous";
};
