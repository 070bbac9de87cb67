// Determinism: a logical clock (Date, Date.now, performance.now) that moves only with timers and
// recorded call durations, and one seeded generator behind Math.random and crypto.

function makeClock(start) {
  let now = start;
  return {
    __proto__: null,
    get now() {
      return now;
    },
    advanceTo(t) {
      if (t > now) now = t;
    },
  };
}

// sfc32: small, fast, and good enough for scripts; seeded with four host u32s.
function makeRandom(seed) {
  let a = seed[0] >>> 0, b = seed[1] >>> 0, c = seed[2] >>> 0, d = seed[3] >>> 0;
  const nextU32 = () => {
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = ((c << 21) | (c >>> 11)) >>> 0;
    c = (c + t) >>> 0;
    return t;
  };
  for (let i = 0; i < 12; i++) nextU32();
  return nextU32;
}

function installDeterminism(g, host, clock) {
  const nextU32 = makeRandom(host.seed);
  const random = function random() {
    return nextU32() / 4294967296;
  };
  defineFixed(Math, "random", random);

  const hex = (n) => StringPrototypePadStart(NumberPrototypeToString(n >>> 0, 16), 8, "0");
  const crypto = {
    getRandomValues(array) {
      // The typed array's own tag, not `instanceof`: a script can fake prototypes but not tags.
      const kind = TypedArrayPrototypeGetSymbolToStringTag(array);
      if (kind === undefined || kind === "Float16Array" || kind === "Float32Array" || kind === "Float64Array") {
        throw new TypeError("getRandomValues needs an integer typed array");
      }
      const length = TypedArrayPrototypeGetByteLength(array);
      if (length > 65536) {
        throw new RangeError("getRandomValues accepts at most 65536 bytes");
      }
      const bytes = new Uint8Array(TypedArrayPrototypeGetBuffer(array), TypedArrayPrototypeGetByteOffset(array), length);
      for (let i = 0; i < length; i++) bytes[i] = nextU32() & 0xff;
      return array;
    },
    randomUUID() {
      const w0 = nextU32();
      const w1 = (nextU32() & 0xffff0fff) | 0x00004000; // version 4
      const w2 = (nextU32() & 0x3fffffff) | 0x80000000; // RFC 4122 variant
      const w3 = nextU32();
      const h = hex(w0) + hex(w1) + hex(w2) + hex(w3);
      const part = (from, to) => StringPrototypeSlice(h, from, to);
      return part(0, 8) + "-" + part(8, 12) + "-" + part(12, 16) + "-" + part(16, 20) + "-" + part(20, 32);
    },
  };
  ObjectFreeze(crypto);

  const LogicalDate = function Date(...args) {
    if (new.target === undefined) return DatePrototypeToString(new NativeDate(clock.now));
    if (args.length === 0) return ReflectConstruct(NativeDate, [clock.now], new.target);
    return ReflectConstruct(NativeDate, args, new.target);
  };
  ObjectDefineProperty(LogicalDate, "prototype", { __proto__: null, value: NativeDate.prototype, writable: false });
  LogicalDate.now = function now() {
    return clock.now;
  };
  LogicalDate.parse = NativeDate.parse;
  LogicalDate.UTC = NativeDate.UTC;
  defineFixed(NativeDate.prototype, "constructor", LogicalDate);
  ObjectFreeze(LogicalDate);

  const start = clock.now;
  const performance = ObjectFreeze({
    timeOrigin: start,
    now() {
      return clock.now - start;
    },
  });

  defineFixed(g, "crypto", crypto);
  defineFixed(g, "Date", LogicalDate);
  defineFixed(g, "performance", performance);
}
