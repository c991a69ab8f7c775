// Tenants: for the admin, every tenant with its weight, quotas and usage
// this minute, a button to look at its pages, and one to look at every
// tenant's at once; for a tenant's token, its own usage.

import { api, lookAt, state } from "./api.js";
import { count, facts, h, ms, show, table, when } from "./dom.js";
import { read } from "./read.js";

function usageFacts(u) {
  const now = u.current;
  return facts(
    [
      ["Queued · running · waiting", `${u.jobs.queued} · ${u.jobs.running} · ${u.jobs.waiting}`],
      ["Fuel this minute", h("span", { class: "usage-fuel" }, count(now.fuel_used))],
      ["Fuel budget", now.fuel_budget === null ? "none" : `${count(now.fuel_budget)} a minute (${count(now.fuel_left)} left)`],
      ["Fuel last minute", count(u.last.fuel_used)],
      ["Wall time this minute", ms(now.wall_ms)],
      ["Attempts this minute", count(now.attempts)],
      ["Ended this minute", `${now.jobs_ended.completed} completed, ${now.jobs_ended.failed} failed, ${now.jobs_ended.cancelled} cancelled`],
      ["Outbound HTTP", `${count(now.http_requests)} requests`],
      ["Cache hits", `${count(now.cache_hits)} (fuel saved ${count(now.fuel_saved)})`],
    ],
    { class: "facts card usage" },
  );
}

export async function tenantsPage() {
  if (!state.who.admin) {
    let u;
    u = await read("Usage", "/v1/usage");
    if (u === null) return;
    show(h("h1", {}, `Tenant ${u.tenant}`), h("h2", {}, "Usage"), usageFacts(u));
    return;
  }
  let list;
  list = await read("Tenants", "/v1/tenants");
  if (list === null) return;
  const usage = await Promise.all(
    list.tenants.map((t) => api(`/v1/tenants/${encodeURIComponent(t.name)}/usage`).catch(() => null)),
  );
  const quotaNames = [...new Set(list.tenants.flatMap((t) => Object.keys(t.quotas)))].sort();
  const rows = list.tenants.map((t, i) => {
    const u = usage[i];
    const now = u && u.current;
    return h(
      "tr",
      { "data-tenant": t.name },
      h("td", {}, t.name),
      h("td", { class: "num" }, t.weight),
      h("td", { class: "num tenant-fuel" }, now ? count(now.fuel_used) : "—"),
      h("td", { class: "num" }, now && now.fuel_budget !== null ? count(now.fuel_budget) : "none"),
      h("td", { class: "num" }, now ? now.attempts : "—"),
      h("td", { class: "num" }, u ? `${u.jobs.queued} / ${u.jobs.running}` : "—"),
      h("td", { class: "num" }, now ? now.jobs_ended.completed : "—"),
      h("td", { class: "num" }, now ? now.jobs_ended.failed : "—"),
      h("td", {}, when(t.created_at)),
      h(
        "td",
        {},
        h(
          "button",
          {
            type: "button",
            class: "look",
            onclick: () => {
              lookAt(t.name);
              document.dispatchEvent(new Event("tenant-changed"));
              location.hash = "#/jobs";
            },
          },
          state.tenant === t.name ? "Looking" : "Look at",
        ),
      ),
    );
  });
  const quotaRows = list.tenants.map((t) =>
    h(
      "tr",
      {},
      h("td", {}, t.name),
      quotaNames.map((q) => {
        const v = t.quotas[q];
        return h(
          "td",
          { class: `num ${v && v.source === "tenant" ? "set" : "muted"}`, title: v && v.source === "tenant" ? "set on the tenant" : "the server's default" },
          v && v.limit !== null ? count(v.limit) : "—",
        );
      }),
    ),
  );
  const everyOne = h(
    "button",
    {
      type: "button",
      id: "look-at-all",
      onclick: () => {
        lookAt(null);
        document.dispatchEvent(new Event("tenant-changed"));
        location.hash = "#/jobs";
      },
    },
    state.tenant ? "Look at every tenant" : "Looking at every tenant",
  );
  show(
    h("h1", {}, "Tenants"),
    h("p", { class: "muted" }, "Usage in the current minute. “Look at” shows one tenant's pages as the admin; every other page lists every tenant's, each naming its tenant."),
    h("div", { class: "actions" }, everyOne),
    table(
      { id: "tenants", class: "nav-rows" },
      ["Tenant", "Weight", "Fuel", "Fuel budget", "Attempts", "Queued / running", "Completed", "Failed", "Created", ""],
      rows,
      "No tenants.",
    ),
    h("h2", {}, "Quotas"),
    h("p", { class: "muted" }, "Bold: set on the tenant; grey: the server's default; — none."),
    table({ id: "quotas" }, ["Tenant", ...quotaNames.map((q) => q.replaceAll("_", " "))], quotaRows),
  );
}
