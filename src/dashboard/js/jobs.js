// The jobs list, and the dead letters (the failed jobs, with redrive):
// filters and the page shown are in the URL, so a link shows the same
// jobs; live, the first page follows the tenant's events. The admin sees
// every tenant's, each row naming its tenant, or one tenant's (`tenant`).

import { across, api, can, follow, listPath, state, tenantHref } from "./api.js";
import { action, badge, h, jobLink, notice, show, when } from "./dom.js";

const STATUSES = ["", "queued", "running", "waiting", "completed", "failed", "cancelled"];

// Job ids are ULIDs: their first ten characters are their creation time
// (ms, Crockford base 32), so a time bounds a page of ids.
const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
export function ulidAt(msSinceEpoch, fill) {
  let t = Math.max(0, Math.floor(msSinceEpoch));
  let out = "";
  for (let i = 0; i < 10; i++) {
    out = CROCKFORD[t % 32] + out;
    t = Math.floor(t / 32);
  }
  return out + fill.repeat(16);
}

function localInput(iso) {
  // `datetime-local` takes the viewer's wall time, without a zone.
  if (!iso) return "";
  const d = new Date(iso);
  if (isNaN(d)) return "";
  const pad = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

function filterForm(base, filters, fixedStatus) {
  // The admin who looks at every tenant may narrow the list to one.
  const tenantIn =
    state.who.admin && !state.tenant
      ? h("input", { id: "filter-tenant", name: "tenant", placeholder: "tenant", value: filters.tenant, "aria-label": "tenant" })
      : null;
  const status = fixedStatus
    ? null
    : h(
        "select",
        { id: "filter-status", name: "status", "aria-label": "status" },
        STATUSES.map((s) => h("option", { value: s, selected: s === filters.status }, s || "any status")),
      );
  const taskIn = h("input", { id: "filter-task", name: "task", placeholder: "task", value: filters.task, "aria-label": "task" });
  const queueIn = h("input", { id: "filter-queue", name: "queue", placeholder: "queue", value: filters.queue, "aria-label": "queue" });
  const fromIn = h("input", { id: "filter-from", type: "datetime-local", value: localInput(filters.from), "aria-label": "created from" });
  const toIn = h("input", { id: "filter-to", type: "datetime-local", value: localInput(filters.to), "aria-label": "created until" });
  return h(
    "form",
    {
      class: "filters",
      onsubmit: (ev) => {
        ev.preventDefault();
        const q = new URLSearchParams();
        if (status && status.value) q.set("status", status.value);
        if (taskIn.value.trim()) q.set("task", taskIn.value.trim());
        if (queueIn.value.trim()) q.set("queue", queueIn.value.trim());
        if (fromIn.value) q.set("from", new Date(fromIn.value).toISOString());
        if (toIn.value) q.set("to", new Date(toIn.value).toISOString());
        if (tenantIn && tenantIn.value.trim()) q.set("tenant", tenantIn.value.trim());
        location.hash = `${base}?${q}`;
      },
    },
    tenantIn,
    status,
    taskIn,
    queueIn,
    h("label", { class: "inline" }, "from ", fromIn),
    h("label", { class: "inline" }, "until ", toIn),
    h("button", { type: "submit" }, "Filter"),
  );
}

/// `#/jobs` (every status, or `status=`) and `#/dead` (failed only).
export async function jobsPage(params, dead) {
  const base = dead ? "#/dead" : "#/jobs";
  const filters = {
    status: dead ? "failed" : params.get("status") || "",
    task: params.get("task") || "",
    queue: params.get("queue") || "",
    from: params.get("from") || "",
    to: params.get("to") || "",
    tenant: params.get("tenant") || "",
  };
  const all = across();
  const cursor = params.get("cursor") || "";
  const body = h("tbody", { id: "jobs-body" });
  const more = h("div", { class: "more" });
  const message = h("div", { id: "jobs-message" });
  const heads = ["Job", ...(all ? ["Tenant"] : []), "Task", "Status", "Queue", "Attempts", "Created", "Finished"];
  if (dead) heads.push("Error", "");
  const retryAll =
    dead && can("jobs:queue")
      ? action(
          all ? "Retry every match, in every tenant" : "Retry every match",
          message,
          async () => {
            const filter = {};
            if (filters.task) filter.task = filters.task;
            if (filters.queue) filter.queue = filters.queue;
            // Across tenants each job is charged to its own tenant's enqueue rate.
            const r = await api(listPath("/v1/jobs/retry"), { method: "POST", body: { filter } });
            load();
            return `Retried ${r.retried}${r.refused ? `, refused ${r.refused}` : ""}${r.more ? ", more remain" : ""}.`;
          },
          { id: "retry-all" },
        )
      : null;
  show(
    h("h1", {}, dead ? "Dead letters " : "Jobs ", h("span", { class: "muted live" }, cursor ? "" : "live")),
    dead ? h("p", { class: "muted" }, "Jobs that failed for good: retry one, or every one that matches the filter.") : null,
    filterForm(base, filters, dead),
    h("div", { class: "actions" }, retryAll),
    message,
    h(
      "div",
      { class: "scroll" },
      h("table", { id: "jobs", class: "nav-rows" }, h("thead", {}, h("tr", {}, heads.map((t) => h("th", {}, t)))), body),
    ),
    more,
  );
  if (!can("jobs:read")) {
    body.replaceChildren(h("tr", {}, h("td", { colspan: heads.length }, "This token lacks the jobs:read scope.")));
    return;
  }
  const floor = filters.from ? ulidAt(Date.parse(filters.from), "0") : null;
  let before = cursor;
  if (!before && filters.to) before = ulidAt(Date.parse(filters.to), "Z");
  const row = (j) =>
    h(
      "tr",
      { "data-id": j.id, "data-status": j.status, "data-tenant": j.tenant, "data-href": tenantHref(`#/job/${encodeURIComponent(j.id)}`, j.tenant) },
      h("td", {}, jobLink(j.id, j.tenant)),
      all ? h("td", { class: "tenant" }, j.tenant) : null,
      h("td", {}, j.task.name, h("span", { class: "muted" }, ` v${j.task.version}`)),
      h("td", {}, badge(j.status)),
      h("td", {}, j.queue),
      h("td", {}, `${j.attempts} / ${j.max_attempts}`),
      h("td", {}, when(j.created_at)),
      h("td", {}, when(j.finished_at)),
      dead ? h("td", { class: "error-text" }, j.error ? `${j.error.kind} (${j.error.code})` : "—") : null,
      dead && can("jobs:queue")
        ? h(
            "td",
            {},
            action("Retry", message, async () => {
              const again = await api(`/v1/jobs/${encodeURIComponent(j.id)}/retry`, { method: "POST", body: {}, tenant: j.tenant });
              load();
              return `Retried ${j.id}: now ${again.status}.`;
            }),
          )
        : dead
          ? h("td", {})
          : null,
    );
  const load = async () => {
    const q = new URLSearchParams();
    for (const k of ["status", "task", "queue"]) if (filters[k]) q.set(k, filters[k]);
    q.set("limit", "50");
    if (before) q.set("cursor", before);
    let page;
    try {
      page = await api(listPath("/v1/jobs", q));
    } catch (e) {
      more.replaceChildren(notice(e.message, "error"));
      return;
    }
    const jobs = floor ? page.jobs.filter((j) => j.id >= floor) : page.jobs;
    const ended = floor && jobs.length < page.jobs.length;
    body.replaceChildren(...(jobs.length ? jobs.map(row) : [h("tr", {}, h("td", { colspan: heads.length, class: "muted" }, "No jobs."))]));
    const next = new URLSearchParams(params);
    next.set("cursor", page.next_cursor || "");
    const first = new URLSearchParams(params);
    first.delete("cursor");
    more.replaceChildren(
      cursor ? h("a", { href: `${base}?${first}`, id: "newest", class: "button" }, "Newest") : "",
      page.next_cursor && !ended ? h("a", { href: `${base}?${next}`, id: "more", class: "button" }, "Older") : "",
    );
  };
  await load();
  // Live: the page again after each burst of events (only the newest
  // page: an older one stays as it was linked).
  if (!cursor) follow("", load);
}
