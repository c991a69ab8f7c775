// js-fetch: a taskbox task in JavaScript that GETs a URL with `fetch` (jco componentize, world
// `task`, built with the `http` feature on: fetch goes out through wasi:http/outgoing-handler).
//
// Input  {"url": string}
// Output {"status": number, "body": string (the first 4096 characters of the response text)}
//   Any status is a result, 3xx, 4xx and 5xx too: this fetch does not follow redirects.
// Errors: fetch failing (DNS, connection, refused by the host, timeout) →
// err({code: "fetch_failed", message, retryable: true}); input that is not JSON or whose `url`
// is not an absolute URL → err({code: "bad_input", retryable: false}).
//
// `run` is async although the world's `run` is synchronous: componentize-js runs the event loop
// inside the call until the returned promise settles, and a rejection with a plain
// {code, message, retryable} object becomes `err(failure)` just as a throw does in a sync export.
import { log } from 'taskbox:task/host@0.1.0';

const BODY_CHARS = 4096;

function fail(code, message, retryable) {
  // A plain object, not an Error: jco lowers it into the `failure` record (an Error would trap).
  return { code, message, retryable };
}

export async function run(job, input) {
  let url;
  try {
    ({ url } = JSON.parse(input));
  } catch (e) {
    throw fail('bad_input', `input is not a JSON object: ${e}`, false);
  }
  try {
    new URL(url);
  } catch {
    // Not worth another attempt: the same input fails the same way.
    throw fail('bad_input', `not an absolute URL: ${JSON.stringify(url)}`, false);
  }

  let status, text;
  try {
    const response = await fetch(url);
    status = response.status;
    text = await response.text();
  } catch (e) {
    // A network failure rejects with a TypeError; its message is all there is to report.
    throw fail('fetch_failed', `GET ${url}: ${e?.message ?? e}`, true);
  }
  log('info', `GET ${url}: ${status}, ${text.length} characters`);
  return { tag: 'done', val: JSON.stringify({ status, body: text.slice(0, BODY_CHARS) }) };
}
