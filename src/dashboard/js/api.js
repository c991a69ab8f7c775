// The API as the dashboard calls it: the signed-in token as the bearer
// (and, for the admin, the tenant it looks at as `Taskbox-Tenant`), its
// errors as exceptions, and the live feed of the tenant's events.

const TOKEN_KEY = "taskbox.token";
const TENANT_KEY = "taskbox.tenant";

export const state = {
  token: sessionStorage.getItem(TOKEN_KEY),
  who: null,
  // The tenant the admin looks at (null: its own, `default`).
  tenant: sessionStorage.getItem(TENANT_KEY),
  // The live feed of the page shown, stopped when another is.
  feed: null,
};

export function keep(token) {
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  else {
    sessionStorage.removeItem(TOKEN_KEY);
    sessionStorage.removeItem(TENANT_KEY);
    state.tenant = null;
  }
}

export function lookAt(tenant) {
  state.tenant = tenant || null;
  if (tenant) sessionStorage.setItem(TENANT_KEY, tenant);
  else sessionStorage.removeItem(TENANT_KEY);
}

export function can(scope) {
  return state.who && (state.who.admin || state.who.scopes.includes(scope));
}

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

function headers(extra) {
  const out = { Authorization: `Bearer ${state.token}`, ...extra };
  if (state.who && state.who.admin && state.tenant) out["Taskbox-Tenant"] = state.tenant;
  return out;
}

export async function api(path, options = {}) {
  const r = await fetch(path, {
    method: options.method || "GET",
    headers: headers({
      ...(options.body === undefined ? {} : { "Content-Type": "application/json" }),
      ...(options.accept ? { Accept: options.accept } : {}),
    }),
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await r.text();
  let body = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = text;
  }
  if (!r.ok) {
    const e = body && body.error;
    throw new ApiError(r.status, e && e.code, (e && e.message) || `HTTP ${r.status}`);
  }
  return body;
}

// Follows the tenant's events (server-sent, read through fetch so that the
// token goes as a header): `each` gets every event, `changed` is called
// after each burst of them; where the stream cannot be had, `changed` is
// polled instead.
export function follow(query, changed, each) {
  stopFeed();
  const controller = new AbortController();
  let timer = null;
  const soon = () => {
    clearTimeout(timer);
    timer = setTimeout(changed, 150);
  };
  const poll = setInterval(changed, 5000);
  state.feed = () => {
    controller.abort();
    clearTimeout(timer);
    clearInterval(poll);
  };
  (async () => {
    try {
      const r = await fetch(`/v1/events${query}`, {
        headers: headers({ Accept: "text/event-stream" }),
        signal: controller.signal,
      });
      if (!r.ok || !r.body) return;
      const reader = r.body.getReader();
      const decoder = new TextDecoder();
      let buffered = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffered += decoder.decode(value, { stream: true });
        let at;
        while ((at = buffered.indexOf("\n\n")) >= 0) {
          const block = buffered.slice(0, at);
          buffered = buffered.slice(at + 2);
          const type = /^event: (.*)$/m.exec(block);
          if (!type) continue;
          if (each) {
            const data = /^data: (.*)$/m.exec(block);
            try {
              each(type[1], data ? JSON.parse(data[1]) : null);
            } catch {
              // A line the page cannot read is not worth the stream.
            }
          }
          soon();
        }
      }
    } catch {
      // Aborted, or the stream broke: the poll goes on.
    }
  })();
}

export function stopFeed() {
  if (state.feed) state.feed();
  state.feed = null;
}
