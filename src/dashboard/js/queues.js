// The tenant's queues (the admin's: every tenant's, each row naming its
// tenant): depth by status, the oldest wait, pause and resume; live.

import { across, api, can, follow, listPath } from "./api.js";
import { badge, h, ms, notice, show } from "./dom.js";
import { read } from "./read.js";

export async function queuesPage() {
  let list;
  list = await read("Queues", listPath("/v1/queues"));
  if (list === null) return;
  const all = across();
  const message = h("div", {});
  const statuses = ["queued", "running", "waiting", "completed", "failed", "cancelled"];
  show(
    h("h1", {}, "Queues"),
    message,
    list.queues.length
      ? h(
          "div",
          { class: "scroll" },
          h(
            "table",
            { id: "queues" },
            h(
              "thead",
              {},
              h("tr", {}, [...(all ? ["Tenant"] : []), "Queue", ...statuses, "Oldest queued", "", ""].map((x) => h("th", {}, x))),
            ),
            h(
              "tbody",
              {},
              list.queues.map((q) =>
                h(
                  "tr",
                  { "data-queue": q.name, "data-tenant": q.tenant },
                  all ? h("td", { class: "tenant" }, q.tenant) : null,
                  h("td", {}, q.name),
                  statuses.map((st) => h("td", { class: "num" }, q.depth[st] ?? 0)),
                  h("td", {}, ms(q.oldest_queued_age_ms)),
                  h("td", {}, q.paused ? badge("paused") : ""),
                  h(
                    "td",
                    {},
                    can("jobs:run")
                      ? h(
                          "button",
                          {
                            type: "button",
                            onclick: async () => {
                              try {
                                await api(`/v1/queues/${encodeURIComponent(q.name)}/${q.paused ? "resume" : "pause"}`, {
                                  method: "POST",
                                  tenant: q.tenant,
                                });
                                queuesPage();
                              } catch (e) {
                                message.replaceChildren(notice(e.message, "error"));
                              }
                            },
                          },
                          q.paused ? "Resume" : "Pause",
                        )
                      : "",
                  ),
                ),
              ),
            ),
          ),
        )
      : h("p", { class: "muted" }, "No queues yet: a queue appears with its first job."),
  );
  follow("", () => queuesPage());
}
