// TextEncoder/TextDecoder (UTF-8 only) and the spec's base64 helpers (decodeBase64/encodeBase64,
// implemented on the host so the limits and validation match the spec exactly).

// The code point at `i`; a lone surrogate reads as U+FFFD. Code points above U+FFFF span two units.
function codePointAt(text, i) {
  const c = StringPrototypeCharCodeAt(text, i);
  if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
    const d = StringPrototypeCharCodeAt(text, i + 1);
    if (d >= 0xdc00 && d <= 0xdfff) return 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
  }
  return c >= 0xd800 && c <= 0xdfff ? 0xfffd : c;
}

function utf8Size(c) {
  return c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
}

// Writes `c` at `at` and returns the next position.
function writeUtf8(out, at, c) {
  if (c < 0x80) {
    out[at] = c;
    return at + 1;
  }
  if (c < 0x800) {
    out[at] = 0xc0 | (c >> 6);
    out[at + 1] = 0x80 | (c & 63);
    return at + 2;
  }
  if (c < 0x10000) {
    out[at] = 0xe0 | (c >> 12);
    out[at + 1] = 0x80 | ((c >> 6) & 63);
    out[at + 2] = 0x80 | (c & 63);
    return at + 3;
  }
  out[at] = 0xf0 | (c >> 18);
  out[at + 1] = 0x80 | ((c >> 12) & 63);
  out[at + 2] = 0x80 | ((c >> 6) & 63);
  out[at + 3] = 0x80 | (c & 63);
  return at + 4;
}

// Two passes (size, then bytes) so the result is one exact Uint8Array.
function utf8Encode(text) {
  let size = 0;
  for (let i = 0; i < text.length; ) {
    const c = codePointAt(text, i);
    i += c > 0xffff ? 2 : 1;
    size += utf8Size(c);
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (let i = 0; i < text.length; ) {
    const c = codePointAt(text, i);
    i += c > 0xffff ? 2 : 1;
    at = writeUtf8(out, at, c);
  }
  return out;
}

function utf8Decode(bytes, start, fatal) {
  const length = TypedArrayPrototypeGetLength(bytes);
  let out = "";
  let i = start;
  const bad = () => {
    if (fatal) throw new TypeError("The encoded data was not valid UTF-8");
    out += "\ufffd";
  };
  // The WHATWG decoder: the byte after a lead has narrower bounds where a wider one would make an
  // overlong form, a surrogate or a code point past U+10FFFF; a byte out of bounds ends the
  // sequence (one U+FFFD) and is read again on its own.
  while (i < length) {
    const b = bytes[i];
    let need = 0, c = 0;
    let lower = 0x80, upper = 0xbf;
    if (b < 0x80) {
      out += StringFromCharCode(b);
      i++;
      continue;
    } else if (b >= 0xc2 && b <= 0xdf) { need = 1; c = b & 31; }
    else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      c = b & 15;
      if (b === 0xe0) lower = 0xa0;
      if (b === 0xed) upper = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      c = b & 7;
      if (b === 0xf0) lower = 0x90;
      if (b === 0xf4) upper = 0x8f;
    } else { bad(); i++; continue; }
    let j = 1;
    for (; j <= need; j++) {
      if (i + j >= length) break;
      const n = bytes[i + j];
      if (n < lower || n > upper) break;
      lower = 0x80;
      upper = 0xbf;
      c = (c << 6) | (n & 63);
    }
    if (j <= need) {
      bad();
      i += j;
      continue;
    }
    out += StringFromCodePoint(c);
    i += need + 1;
  }
  return out;
}

// A Uint8Array over the bytes of an ArrayBuffer, a typed array or a DataView, read through the
// captured getters (a script's `buffer` getter could point anywhere in its own memory otherwise).
function toBytes(input) {
  if (input === undefined) return new Uint8Array(0);
  if (isInstance(ArrayBuffer, input)) return new Uint8Array(input);
  if (ArrayBufferIsView(input)) {
    if (TypedArrayPrototypeGetSymbolToStringTag(input) !== undefined) {
      return new Uint8Array(
        TypedArrayPrototypeGetBuffer(input),
        TypedArrayPrototypeGetByteOffset(input),
        TypedArrayPrototypeGetByteLength(input),
      );
    }
    return new Uint8Array(
      DataViewPrototypeGetBuffer(input),
      DataViewPrototypeGetByteOffset(input),
      DataViewPrototypeGetByteLength(input),
    );
  }
  throw new TypeError("TextDecoder.decode needs an ArrayBuffer or a typed array");
}

function installEncoding(g, host) {
  class TextEncoder {
    get encoding() {
      return "utf-8";
    }
    encode(text = "") {
      return utf8Encode(String(text));
    }
    encodeInto(text, target) {
      if (TypedArrayPrototypeGetSymbolToStringTag(target) !== "Uint8Array") {
        throw new TypeError("TextEncoder.encodeInto needs a Uint8Array");
      }
      const source = String(text);
      const room = TypedArrayPrototypeGetLength(target);
      let read = 0;
      let written = 0;
      while (read < source.length) {
        const c = codePointAt(source, read);
        if (written + utf8Size(c) > room) break;
        written = writeUtf8(target, written, c);
        read += c > 0xffff ? 2 : 1;
      }
      return { read, written };
    }
  }
  class TextDecoder {
    #fatal;
    #ignoreBOM;
    constructor(label = "utf-8", options = {}) {
      const name = StringPrototypeToLowerCase(StringPrototypeTrim(String(label)));
      if (name !== "utf-8" && name !== "utf8" && name !== "unicode-1-1-utf-8") {
        throw new RangeError("TextDecoder supports only utf-8, not " + name);
      }
      this.#fatal = !!(options && options.fatal);
      this.#ignoreBOM = !!(options && options.ignoreBOM);
    }
    get encoding() {
      return "utf-8";
    }
    get fatal() {
      return this.#fatal;
    }
    get ignoreBOM() {
      return this.#ignoreBOM;
    }
    decode(input) {
      const bytes = toBytes(input);
      const bom =
        !this.#ignoreBOM &&
        TypedArrayPrototypeGetLength(bytes) >= 3 &&
        bytes[0] === 0xef &&
        bytes[1] === 0xbb &&
        bytes[2] === 0xbf;
      return utf8Decode(bytes, bom ? 3 : 0, this.#fatal);
    }
  }
  const hostDecodeBase64 = host.decodeBase64;
  const hostEncodeBase64 = host.encodeBase64;
  const decodeBase64 = function decodeBase64(text) {
    if (typeof text !== "string") throw new TypeError("decodeBase64 accepts a string only");
    return hostDecodeBase64(text);
  };
  const encodeBase64 = function encodeBase64(text, urlSafe = false) {
    if (typeof text !== "string") throw new TypeError("encodeBase64 accepts a string only");
    return hostEncodeBase64(text, !!urlSafe);
  };
  // QuickJS's own atob/btoa, held to the same 1 MiB per conversion as the helpers above.
  const nativeAtob = g.atob;
  const nativeBtoa = g.btoa;
  const atob = function atob(text) {
    if (typeof text !== "string") throw new TypeError("atob accepts a string only");
    if (text.length > 1398104) throw new RangeError("atob accepts at most 1,398,104 characters");
    return nativeAtob(text);
  };
  const btoa = function btoa(text) {
    if (typeof text !== "string") throw new TypeError("btoa accepts a string only");
    if (text.length > 1048576) throw new RangeError("btoa encodes at most 1 MiB");
    return nativeBtoa(text);
  };
  defineFixed(g, "atob", atob);
  defineFixed(g, "btoa", btoa);
  defineFixed(g, "TextEncoder", TextEncoder);
  defineFixed(g, "TextDecoder", TextDecoder);
  defineFixed(g, "decodeBase64", decodeBase64);
  defineFixed(g, "encodeBase64", encodeBase64);
}
