// Webhooks: each with the events it takes, and its deliveries — status,
// tries, the last answer or error, when it is tried again. The deliveries
// are live: read again at each burst of events (each makes deliveries)
// and every few seconds (tries happen without one). The admin sees every
// tenant's webhooks, each naming its tenant.

import { across, api, can, follow, listPath, tenantHref } from "./api.js";
import { action, badge, h, notice, show, table, when } from "./dom.js";
import { read } from "./read.js";

export async function webhooksPage(id, params) {
  if (!can("webhooks:write")) {
    show(h("h1", {}, "Webhooks"), notice("This token lacks the webhooks:write scope, which lists webhooks.", "error"));
    return;
  }
  let list;
  list = await read("Webhooks", listPath("/v1/webhooks"));
  if (list === null) return;
  if (id) {
    const hook = list.webhooks.find((w) => w.id === id);
    const here = location.hash;
    if (await deliveriesPage(hook, id, params, here)) {
      follow("", () => location.hash === here && deliveriesPage(hook, id, params, here));
    }
    return;
  }
  const all = across();
  const href = (w) => tenantHref(`#/webhooks/${encodeURIComponent(w.id)}`, w.tenant);
  show(
    h("h1", {}, "Webhooks"),
    table(
      { id: "webhooks", class: "nav-rows" },
      ["Webhook", ...(all ? ["Tenant"] : []), "URL", "Events", "Created"],
      list.webhooks.map((w) =>
        h(
          "tr",
          { "data-webhook": w.id, "data-tenant": w.tenant, "data-href": href(w) },
          h("td", {}, h("a", { href: href(w), class: "mono" }, w.id)),
          all ? h("td", { class: "tenant" }, w.tenant) : null,
          h("td", { class: "mono" }, w.url),
          h("td", {}, w.events.join(", ")),
          h("td", {}, when(w.created_at)),
        ),
      ),
      "No webhooks.",
    ),
  );
}

async function deliveriesPage(hook, id, params, here) {
  if (!hook) {
    show(h("h1", {}, "Webhook"), notice(`Webhook ${id} was not found.`, "error"));
    return false;
  }
  const cursor = params.get("cursor");
  const q = new URLSearchParams({ limit: "50" });
  if (cursor) q.set("cursor", cursor);
  let page;
  page = await read("Webhook", `/v1/webhooks/${encodeURIComponent(id)}/deliveries?${q}`);
  if (page === null || location.hash !== here) return false;
  const base = tenantHref(`#/webhooks/${encodeURIComponent(id)}`);
  const message = h("div", { id: "deliveries-message" });
  const redeliver = (d) =>
    action(
      "Redeliver",
      message,
      async () => {
        const again = await api(`/v1/webhooks/${encodeURIComponent(id)}/deliveries/${d.id}/redeliver`, { method: "POST" });
        return `Delivery ${again.seq} is due again now.`;
      },
      { class: "redeliver" },
    );
  // A message said stays through the redraws that follow it.
  const said = document.getElementById("deliveries-message");
  if (said && said.dataset.webhook === id) message.replaceChildren(...said.childNodes);
  message.dataset.webhook = id;
  show(
    h("h1", {}, "Webhook ", h("span", { class: "mono" }, hook.id), h("span", { class: "muted live" }, cursor ? "" : " live")),
    h("p", {}, h("span", { class: "mono" }, hook.url), ` · ${hook.events.join(", ")}`),
    h("h2", {}, "Deliveries"),
    message,
    table(
      { id: "deliveries" },
      ["#", "Event", "Status", "Tries", "Last answer", "Last try", "Next try", "Made", ""],
      page.deliveries.map((d) =>
        h(
          "tr",
          { "data-delivery": d.id, "data-status": d.status },
          h("td", { class: "num" }, d.seq),
          h("td", {}, d.type),
          h("td", {}, badge(d.status)),
          h("td", { class: "num" }, d.attempts),
          h("td", { class: d.last_error ? "error-text" : "" }, d.last_error || (d.last_status ? `HTTP ${d.last_status}` : "—")),
          h("td", {}, when(d.last_at)),
          h("td", {}, d.status === "pending" ? when(d.next_at) : "—"),
          h("td", {}, when(d.created_at)),
          h("td", {}, redeliver(d)),
        ),
      ),
      "No deliveries yet.",
    ),
    h(
      "div",
      { class: "more" },
      cursor ? h("a", { href: base, class: "button" }, "Newest") : "",
      page.next_cursor ? h("a", { href: `${base}${base.includes("?") ? "&" : "?"}cursor=${page.next_cursor}`, class: "button", id: "more" }, "Older") : "",
    ),
  );
  return true;
}
