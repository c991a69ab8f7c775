// The API as the dashboard calls it: the signed-in token as the bearer
// (and, for the admin, the tenant it looks at as `Taskbox-Tenant`), its
// errors as exceptions, and the live feed of the tenant's events. The
// admin looks at every tenant at once unless it picked one: lists then
// ask for `all_tenants`, and a link to one tenant's page carries
// `tenant=` in the URL, which that page sends as its `Taskbox-Tenant`.

const TOKEN_KEY = "taskbox.token";
const TENANT_KEY = "taskbox.tenant";

export const state = {
  token: sessionStorage.getItem(TOKEN_KEY),
  who: null,
  // The tenant the admin looks at (null: every tenant).
  tenant: sessionStorage.getItem(TENANT_KEY),
  // The tenant of the page shown, from its URL's `tenant=` (the admin's,
  // looking at every tenant, on one tenant's page).
  pageTenant: null,
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

/// Whether the admin looks at every tenant on this page: lists name each
/// row's tenant.
export function across() {
  return Boolean(state.who && state.who.admin && !state.tenant && !state.pageTenant);
}

/// The tenant a page's requests act in, when the admin named one.
export function actingTenant() {
  return state.who && state.who.admin ? state.pageTenant || state.tenant : null;
}

/// A list's path: with `all_tenants` while the admin looks at every one.
export function listPath(path, query) {
  const q = new URLSearchParams(query || "");
  if (across()) q.set("all_tenants", "true");
  const text = q.toString();
  return text ? `${path}?${text}` : path;
}

/// A page's link: while the admin looks at every tenant, one tenant's page
/// names its tenant (`tenant`, or the page's own).
export function tenantHref(href, tenant) {
  const t = state.who && state.who.admin && !state.tenant ? tenant || state.pageTenant : null;
  if (!t) return href;
  return `${href}${href.includes("?") ? "&" : "?"}tenant=${encodeURIComponent(t)}`;
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

function headers(extra, tenant) {
  const out = { Authorization: `Bearer ${state.token}`, ...extra };
  const t = tenant || actingTenant();
  if (t && state.who && state.who.admin) out["Taskbox-Tenant"] = t;
  return out;
}

export async function api(path, options = {}) {
  const r = await fetch(path, {
    method: options.method || "GET",
    headers: headers(
      {
        ...(options.body === undefined ? {} : { "Content-Type": "application/json" }),
        ...(options.accept ? { Accept: options.accept } : {}),
      },
      options.tenant,
    ),
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
// token goes as a header; every tenant's while the admin looks at all):
// `each` gets every event, `changed` is called after each burst of them;
// where the stream cannot be had, `changed` is polled instead.
export function follow(query, changed, each) {
  if (across()) {
    const q = new URLSearchParams(query.replace(/^\?/, ""));
    q.delete("after");
    q.set("all_tenants", "true");
    query = `?${q}`;
  }
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
      // Open: what happens from now on reaches `each`.
      document.documentElement.dataset.feed = "open";
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
  delete document.documentElement.dataset.feed;
}
