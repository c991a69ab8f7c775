// fetch, Headers, Response and UTF-8 natively, with a stand-in for the host's `send`.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Headers, Response, makeFetch } from "../src/fetch.js";
import { TextDecoder, TextEncoder, decode, encode } from "../src/utf8.js";

test("utf-8 both ways agrees with node's own, malformed input included", () => {
  const native = { enc: new globalThis.TextEncoder(), dec: new globalThis.TextDecoder() };
  for (const s of ["", "plain", "ünïcödé", "日本語", "😀 emoji", "lone \ud800 surrogate", "a\u0000b"]) {
    assert.deepEqual([...encode(s)], [...native.enc.encode(s)], s);
    assert.equal(decode(encode(s)), native.dec.decode(native.enc.encode(s)), s);
  }
  for (const bytes of [[0xff], [0xc3], [0xe2, 0x82], [0xf0, 0x9f, 0x98], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0x61, 0xe2, 0x28, 0x62]]) {
    assert.equal(decode(new Uint8Array(bytes)), native.dec.decode(new Uint8Array(bytes)), String(bytes));
  }
  assert.equal(new TextDecoder().decode(new TextEncoder().encode("ok")), "ok");
  assert.throws(() => new TextDecoder("latin1"), RangeError);
});

test("headers are case-insensitive, joined when repeated, listed sorted", () => {
  const h = new Headers({ "Content-Type": "a", "X-B": "1" });
  h.append("x-b", "2");
  assert.equal(h.get("content-type"), "a");
  assert.equal(h.get("X-b"), "1, 2");
  assert.equal(h.get("missing"), null);
  assert.deepEqual([...h], [["content-type", "a"], ["x-b", "1, 2"]]);
});

test("fetch sends what the host needs and reads what it answers", async () => {
  const sent = [];
  const fetch = makeFetch((req) => {
    sent.push(req);
    return { status: 201, headers: [["content-type", "application/json"]], body: encode('{"ok":true,"name":"ünï"}') };
  });
  const res = await fetch("https://api.example.com/v1", { method: "post", headers: { "X-Key": "k" }, body: "ünï" });
  assert.equal(sent[0].method, "POST");
  assert.equal(sent[0].url, "https://api.example.com/v1");
  assert.deepEqual(sent[0].headers, [["content-type", "text/plain;charset=UTF-8"], ["x-key", "k"]]);
  assert.deepEqual([...sent[0].body], [...encode("ünï")]);
  assert.equal(res.status, 201);
  assert.ok(res.ok);
  assert.equal(res.headers.get("Content-Type"), "application/json");
  assert.deepEqual(await res.json(), { ok: true, name: "ünï" });
  await assert.rejects(res.text(), TypeError);
  assert.equal(new Response("x", { status: 404 }).ok, false);
});

test("a refused request is a TypeError carrying the host's code", async () => {
  const fetch = makeFetch(() => {
    throw { code: "denied", message: "example.com:443 is not in the task's network.allow" };
  });
  await assert.rejects(fetch("https://example.com/"), (e) => e instanceof TypeError && e.code === "denied" && /network.allow/.test(e.message));
  await assert.rejects(makeFetch(() => ({}))("https://a", { body: { not: "bytes" } }), TypeError);
  // As componentize-qjs throws a WIT error: an Error with the record as its payload.
  const wrapped = makeFetch(() => {
    throw Object.assign(new Error("see error.payload"), { payload: { code: "timeout", message: "no answer" } });
  });
  await assert.rejects(wrapped("https://example.com/"), (e) => e.code === "timeout" && /no answer/.test(e.message));
});
