// Determinism: a logical clock (Date, Date.now, performance.now) that moves only with timers and
// recorded call durations, and one seeded generator behind Math.random and crypto.

function makeClock(start) {
  let now = start;
  return {
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
  Object.defineProperty(Math, "random", { value: random, writable: false, configurable: false });

  const hex = (n) => (n >>> 0).toString(16).padStart(8, "0");
  const crypto = {
    getRandomValues(array) {
      if (!ArrayBuffer.isView(array) || array instanceof Float32Array || array instanceof Float64Array || array instanceof DataView) {
        throw new TypeError("getRandomValues needs an integer typed array");
      }
      if (array.byteLength > 65536) {
        throw new RangeError("getRandomValues accepts at most 65536 bytes");
      }
      const bytes = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
      for (let i = 0; i < bytes.length; i++) bytes[i] = nextU32() & 0xff;
      return array;
    },
    randomUUID() {
      const w = [nextU32(), nextU32(), nextU32(), nextU32()];
      w[1] = (w[1] & 0xffff0fff) | 0x00004000; // version 4
      w[2] = (w[2] & 0x3fffffff) | 0x80000000; // RFC 4122 variant
      const h = w.map(hex).join("");
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
    },
  };
  Object.freeze(crypto);

  const RealDate = Date;
  const LogicalDate = function Date(...args) {
    if (new.target === undefined) return new RealDate(clock.now).toString();
    if (args.length === 0) return Reflect.construct(RealDate, [clock.now], new.target);
    return Reflect.construct(RealDate, args, new.target);
  };
  Object.defineProperty(LogicalDate, "prototype", { value: RealDate.prototype, writable: false });
  LogicalDate.now = function now() {
    return clock.now;
  };
  LogicalDate.parse = RealDate.parse;
  LogicalDate.UTC = RealDate.UTC;
  Object.defineProperty(RealDate.prototype, "constructor", { value: LogicalDate, writable: false, configurable: false });
  Object.freeze(LogicalDate);

  const start = clock.now;
  const performance = Object.freeze({
    timeOrigin: start,
    now() {
      return clock.now - start;
    },
  });

  const fixed = { value: undefined, writable: false, configurable: false, enumerable: false };
  Object.defineProperty(g, "crypto", { ...fixed, value: crypto });
  Object.defineProperty(g, "Date", { ...fixed, value: LogicalDate });
  Object.defineProperty(g, "performance", { ...fixed, value: performance });
}
