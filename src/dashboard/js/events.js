// The tenant's events as they happen: the stream, filtered by type, task,
// queue or job (the filters in the URL), newest at the top; it begins
// with the last page already recorded. The admin who looks at every
// tenant follows every tenant's from the page's opening on (each tenant
// numbers its own events, so there is no one recorded page to begin
// with), each naming its tenant.

import { across, api, follow } from "./api.js";
import { h, jobLink, notice, show, when } from "./dom.js";

const SHOWN = 200;

function line(e, all) {
  const bits = [];
  if (e.attempt) bits.push(`attempt ${e.attempt}`);
  if (e.step) bits.push(`step ${e.step}`);
  if (e.status) bits.push(e.status);
  if (e.reason) bits.push(e.reason);
  if (e.error) bits.push(`${e.error.kind} (${e.error.code})`);
  if (e.will_retry) bits.push("will retry");
  return h(
    "tr",
    { "data-seq": e.seq, "data-type": e.type, "data-tenant": e.tenant },
    all ? h("td", { class: "tenant" }, e.tenant) : null,
    h("td", { class: "num" }, e.seq),
    h("td", {}, when(e.at)),
    h("td", {}, h("span", { class: `badge ${e.type.replace("job.", "")}` }, e.type)),
    h("td", {}, e.job ? jobLink(e.job.id, e.tenant) : "—"),
    h("td", {}, e.job ? e.job.task : ""),
    h("td", {}, e.job ? e.job.queue : ""),
    h("td", {}, bits.join(" · ")),
  );
}

export async function eventsPage(params) {
  const filters = {};
  for (const k of ["type", "task", "queue", "job"]) if (params.get(k)) filters[k] = params.get(k);
  const inputs = ["type", "task", "queue", "job"].map((k) =>
    h("input", { id: `filter-${k}`, name: k, placeholder: k === "type" ? "type (job.failed)" : k, value: filters[k] || "", "aria-label": k }),
  );
  const body = h("tbody", { id: "events-body" });
  const all = across();
  const heads = [...(all ? ["Tenant"] : []), "#", "At", "Event", "Job", "Task", "Queue", ""];
  show(
    h("h1", {}, "Events ", h("span", { class: "muted live" }, "live")),
    h(
      "form",
      {
        class: "filters",
        onsubmit: (ev) => {
          ev.preventDefault();
          const q = new URLSearchParams();
          for (const i of inputs) if (i.value.trim()) q.set(i.name, i.value.trim());
          location.hash = `#/events?${q}`;
        },
      },
      inputs,
      h("button", { type: "submit" }, "Filter"),
    ),
    h(
      "div",
      { class: "scroll" },
      h(
        "table",
        { id: "events" },
        h("thead", {}, h("tr", {}, heads.map((t) => h("th", {}, t)))),
        body,
      ),
    ),
  );
  const query = new URLSearchParams(filters);
  const empty = () => h("tr", { class: "empty" }, h("td", { colspan: heads.length, class: "muted" }, all ? "Waiting for events of every tenant…" : "No events yet."));
  // Each tenant numbers its own events: only one tenant's are told apart
  // from those already shown by their number.
  let last = 0;
  const add = (e) => {
    if (!all && e.seq <= last) return;
    last = e.seq;
    body.prepend(line(e, all));
    while (body.children.length > SHOWN) body.lastChild.remove();
  };
  const live = () =>
    follow(
      `?${query}`,
      () => {},
      (type, e) => {
        if (!e || !e.seq) return;
        const waiting = body.querySelector("tr.empty");
        if (waiting) waiting.remove();
        add(e);
      },
    );
  if (all) {
    body.replaceChildren(empty());
    live();
    return;
  }
  let recent;
  try {
    const q = new URLSearchParams(query);
    q.set("limit", "1000");
    // The newest page: from the head back by a page's worth.
    const page = { accept: "application/json" };
    const head = await api(`/v1/events?${new URLSearchParams({ ...filters, limit: "1" })}`, page);
    const after = Math.max(0, (head.head || 0) - SHOWN * 5);
    q.set("after", String(after));
    recent = await api(`/v1/events?${q}`, page);
  } catch (e) {
    body.replaceChildren(h("tr", {}, h("td", { colspan: heads.length }, notice(e.message, "error"))));
    return;
  }
  for (const e of recent.events) add(e);
  if (!recent.events.length) body.replaceChildren(empty());
  query.set("after", String(recent.next_after ?? last));
  live();
}
