// UTF-8 both ways, for the sandbox's QuickJS, which has neither TextEncoder nor TextDecoder.

/** `text` as UTF-8 bytes (a lone surrogate becomes U+FFFD, as TextEncoder does). */
export function encode(text) {
  const s = String(text);
  const out = [];
  for (let i = 0; i < s.length; i++) {
    let c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
      }
    }
    if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd;
    if (c < 0x80) out.push(c);
    else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 63));
    else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
    else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
  }
  return new Uint8Array(out);
}

/** UTF-8 `bytes` as text; a malformed sequence becomes U+FFFD as TextDecoder makes it (the
 * WHATWG decoder: each maximal subpart of a bad sequence is one replacement). */
export function decode(bytes) {
  const b = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let out = "";
  let i = 0;
  while (i < b.length) {
    const c = b[i++];
    if (c < 0x80) {
      out += String.fromCharCode(c);
      continue;
    }
    let need;
    let cp;
    let lower = 0x80;
    let upper = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) {
      need = 1;
      cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
      need = 2;
      cp = c & 0xf;
      if (c === 0xe0) lower = 0xa0;
      if (c === 0xed) upper = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      need = 3;
      cp = c & 0x7;
      if (c === 0xf0) lower = 0x90;
      if (c === 0xf4) upper = 0x8f;
    } else {
      out += "\ufffd";
      continue;
    }
    let ok = true;
    for (let k = 0; k < need; k++) {
      const n = b[i];
      if (n === undefined || n < lower || n > upper) {
        ok = false;
        break;
      }
      lower = 0x80;
      upper = 0xbf;
      cp = (cp << 6) | (n & 0x3f);
      i++;
    }
    out += ok ? String.fromCodePoint(cp) : "\ufffd";
  }
  return out;
}

export class TextEncoder {
  get encoding() {
    return "utf-8";
  }
  encode(text = "") {
    return encode(text);
  }
}

export class TextDecoder {
  constructor(label = "utf-8") {
    if (!/^utf-?8$/i.test(String(label))) throw new RangeError(`only utf-8 is supported, not ${label}`);
  }
  get encoding() {
    return "utf-8";
  }
  decode(bytes = new Uint8Array()) {
    return decode(bytes instanceof ArrayBuffer ? new Uint8Array(bytes) : bytes);
  }
}
