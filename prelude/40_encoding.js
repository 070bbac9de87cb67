// TextEncoder/TextDecoder (UTF-8 only) and the spec's base64 helpers (decodeBase64/encodeBase64,
// implemented on the host so the limits and validation match the spec exactly).

function utf8Encode(text) {
  const out = [];
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
      }
    }
    if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd; // lone surrogate
    if (c < 0x80) out.push(c);
    else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 63));
    else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
    else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
  }
  return new Uint8Array(out);
}

function utf8Decode(bytes, fatal) {
  let out = "";
  let i = 0;
  const bad = () => {
    if (fatal) throw new TypeError("The encoded data was not valid UTF-8");
    out += "\ufffd";
  };
  while (i < bytes.length) {
    const b = bytes[i];
    let need = 0, c = 0, min = 0;
    if (b < 0x80) {
      out += String.fromCharCode(b);
      i++;
      continue;
    } else if (b >= 0xc2 && b <= 0xdf) { need = 1; c = b & 31; min = 0x80; }
    else if (b >= 0xe0 && b <= 0xef) { need = 2; c = b & 15; min = 0x800; }
    else if (b >= 0xf0 && b <= 0xf4) { need = 3; c = b & 7; min = 0x10000; }
    else { bad(); i++; continue; }
    let j = 1;
    for (; j <= need; j++) {
      const n = bytes[i + j];
      if (n === undefined || (n & 0xc0) !== 0x80) break;
      c = (c << 6) | (n & 63);
    }
    if (j <= need || c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) {
      bad();
      i += Math.max(1, j);
      continue;
    }
    out += String.fromCodePoint(c);
    i += need + 1;
  }
  return out;
}

function toBytes(input) {
  if (input === undefined) return new Uint8Array(0);
  if (input instanceof ArrayBuffer) return new Uint8Array(input);
  if (ArrayBuffer.isView(input)) return new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
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
      const bytes = utf8Encode(String(text));
      const n = Math.min(bytes.length, target.length);
      target.set(bytes.subarray(0, n));
      return { read: String(text).length, written: n };
    }
  }
  class TextDecoder {
    #fatal;
    #ignoreBOM;
    constructor(label = "utf-8", options = {}) {
      const name = String(label).trim().toLowerCase();
      if (name !== "utf-8" && name !== "utf8" && name !== "unicode-1-1-utf-8") {
        throw new RangeError(`TextDecoder supports only utf-8, not ${label}`);
      }
      this.#fatal = Boolean(options && options.fatal);
      this.#ignoreBOM = Boolean(options && options.ignoreBOM);
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
      let bytes = toBytes(input);
      if (!this.#ignoreBOM && bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
        bytes = bytes.subarray(3);
      }
      return utf8Decode(bytes, this.#fatal);
    }
  }
  const decodeBase64 = function decodeBase64(text) {
    if (typeof text !== "string") throw new TypeError("decodeBase64 accepts a string only");
    return host.decodeBase64(text);
  };
  const encodeBase64 = function encodeBase64(text, urlSafe = false) {
    if (typeof text !== "string") throw new TypeError("encodeBase64 accepts a string only");
    return host.encodeBase64(text, Boolean(urlSafe));
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
  const fixed = { writable: false, configurable: false, enumerable: false };
  Object.defineProperty(g, "atob", { ...fixed, value: atob });
  Object.defineProperty(g, "btoa", { ...fixed, value: btoa });
  Object.defineProperty(g, "TextEncoder", { ...fixed, value: TextEncoder });
  Object.defineProperty(g, "TextDecoder", { ...fixed, value: TextDecoder });
  Object.defineProperty(g, "decodeBase64", { ...fixed, value: decodeBase64 });
  Object.defineProperty(g, "encodeBase64", { ...fixed, value: encodeBase64 });
}
