// Injected first into a task's bundle by `taskbox build` (esbuild --inject): what the
// sandbox's QuickJS lacks and tasks and npm packages expect. `Promise` becomes the SDK's
// QueuedPromise, whose reactions the component's `run` drains before it returns (see
// queued-promise.js); `console` writes to the attempt's log; `TextEncoder`/`TextDecoder`
// are UTF-8; `fetch` goes through the host's `taskbox:task/fetch`, with every check of the
// task's network grant.
import host from "taskbox:task/host@0.1.0";
import http from "taskbox:task/fetch@0.1.0";
import { makeFetch, Headers, Response } from "./fetch.js";
import { QueuedPromise } from "./queued-promise.js";
import { TextDecoder, TextEncoder } from "./utf8.js";

globalThis.Promise = QueuedPromise;
globalThis.queueMicrotask = (fn) => {
  QueuedPromise.resolve().then(fn);
};

const line = (level) => (...args) =>
  host.log(level, args.map((a) => (typeof a === "string" ? a : safeJson(a))).join(" "));
function safeJson(v) {
  if (v instanceof Error) return v.stack ? String(v.stack) : String(v);
  try {
    const s = JSON.stringify(v);
    return s === undefined ? String(v) : s;
  } catch {
    return String(v);
  }
}
globalThis.console = {
  log: line("info"),
  info: line("info"),
  debug: line("debug"),
  trace: line("trace"),
  warn: line("warn"),
  error: line("error"),
};

if (typeof globalThis.TextEncoder === "undefined") globalThis.TextEncoder = TextEncoder;
if (typeof globalThis.TextDecoder === "undefined") globalThis.TextDecoder = TextDecoder;
globalThis.Headers = Headers;
globalThis.Response = Response;
globalThis.fetch = makeFetch((request) => http.send(request));
