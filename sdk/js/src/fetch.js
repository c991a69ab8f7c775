// `fetch`, `Headers` and `Response` over one host call, `send(request) -> response` (the
// world's `taskbox:task/fetch`): enough of the standard's for the usual `await fetch(url,
// {method, headers, body})` then `res.ok`, `res.status`, `res.headers.get(..)`,
// `await res.json()`. The whole body is read by the host before `fetch` resolves; there are
// no streams, no `AbortSignal`, no redirects followed (a 3xx is the answer), no cookies.
import { decode, encode } from "./utf8.js";

export class Headers {
  constructor(init) {
    this._map = new Map();
    if (init instanceof Headers) init.forEach((v, k) => this.append(k, v));
    else if (Array.isArray(init)) for (const [k, v] of init) this.append(k, v);
    else if (init && typeof init === "object") for (const k of Object.keys(init)) this.append(k, init[k]);
  }
  append(name, value) {
    const k = String(name).toLowerCase();
    const v = String(value);
    const had = this._map.get(k);
    this._map.set(k, had === undefined ? v : `${had}, ${v}`);
  }
  set(name, value) {
    this._map.set(String(name).toLowerCase(), String(value));
  }
  get(name) {
    const v = this._map.get(String(name).toLowerCase());
    return v === undefined ? null : v;
  }
  has(name) {
    return this._map.has(String(name).toLowerCase());
  }
  delete(name) {
    this._map.delete(String(name).toLowerCase());
  }
  forEach(fn, thisArg) {
    for (const [k, v] of this) fn.call(thisArg, v, k, this);
  }
  *entries() {
    yield* [...this._map.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }
  *keys() {
    for (const [k] of this.entries()) yield k;
  }
  *values() {
    for (const [, v] of this.entries()) yield v;
  }
  [Symbol.iterator]() {
    return this.entries();
  }
}

function bytesOf(body) {
  if (body === undefined || body === null) return new Uint8Array();
  if (typeof body === "string") return encode(body);
  if (body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (ArrayBuffer.isView(body)) return new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  throw new TypeError("a fetch body is a string, a Uint8Array or an ArrayBuffer (JSON.stringify an object first)");
}

export class Response {
  constructor(body, init = {}) {
    this._body = bytesOf(body);
    this.status = init.status ?? 200;
    this.statusText = init.statusText ?? "";
    this.headers = new Headers(init.headers);
    this.url = init.url ?? "";
    this.redirected = false;
    this.type = "basic";
    this.bodyUsed = false;
  }
  get ok() {
    return this.status >= 200 && this.status < 300;
  }
  _take() {
    if (this.bodyUsed) throw new TypeError("the response body was read already");
    this.bodyUsed = true;
    return this._body;
  }
  async arrayBuffer() {
    const b = this._take();
    return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
  }
  async bytes() {
    return new Uint8Array(this._take());
  }
  async text() {
    return decode(this._take());
  }
  async json() {
    return JSON.parse(decode(this._take()));
  }
  clone() {
    if (this.bodyUsed) throw new TypeError("the response body was read already");
    return new Response(new Uint8Array(this._body), this);
  }
}

/** A `fetch` whose requests go to `send`, the host's, which answers or throws `{code, message}`. */
export function makeFetch(send) {
  return async function fetch(input, init = {}) {
    const url = typeof input === "string" ? input : input && input.url ? input.url : String(input);
    const method = String(init.method ?? "GET").toUpperCase();
    const headers = new Headers(init.headers);
    if (typeof init.body === "string" && !headers.has("content-type")) {
      headers.set("content-type", "text/plain;charset=UTF-8");
    }
    let answer;
    try {
      answer = send({ method, url, headers: [...headers], body: bytesOf(init.body) });
    } catch (thrown) {
      // componentize-qjs throws a WIT error as an Error whose `payload` is the record.
      const e = thrown && thrown.payload !== undefined ? thrown.payload : thrown;
      const code = e && typeof e.code === "string" ? e.code : "error";
      const err = new TypeError(`fetch ${method} ${url} failed: ${code}: ${e && e.message ? e.message : e}`);
      err.code = code;
      throw err;
    }
    return new Response(answer.body, { status: answer.status, headers: answer.headers, url });
  };
}
