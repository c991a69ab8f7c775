// The tasks: each at its live version, and one task's definition, its
// versions and any rollout under way with its figures. The admin sees
// every tenant's tasks, each naming its tenant.

import { across, listPath, tenantHref } from "./api.js";
import { h, pretty, show, when } from "./dom.js";
import { read } from "./read.js";

export async function tasksPage(name) {
  if (name) {
    let t;
    t = await read("Task", `/v1/tasks/${encodeURIComponent(name)}`, `Task ${name} was not found.`);
    if (t === null) return;
    const d = t.definition || {};
    const r = t.rollout;
    const rollout = r
      ? [
          h("h2", {}, "Rollout"),
          h(
            "p",
            {},
            `Version ${r.version} gets ${r.percent} % of new jobs beside version ${r.live_version}, since `,
            when(r.started_at),
            ".",
          ),
          h(
            "div",
            { class: "scroll" },
            h(
              "table",
              {},
              h(
                "thead",
                {},
                h("tr", {}, ["Version", "Role", "Completed", "Failed", "Attempts", "Fuel", "Fuel per attempt"].map((x) => h("th", {}, x))),
              ),
              h(
                "tbody",
                {},
                r.figures.map((f) =>
                  h(
                    "tr",
                    {},
                    h("td", {}, f.version),
                    h("td", {}, f.version === r.version ? "staged" : "live"),
                    h("td", {}, f.completed),
                    h("td", {}, f.failed),
                    h("td", {}, f.attempts),
                    h("td", {}, f.fuel),
                    h("td", {}, f.attempts ? Math.round(f.fuel / f.attempts) : "—"),
                  ),
                ),
              ),
            ),
          ),
        ]
      : [];
    show(
      h("h1", {}, `Task ${t.name}`),
      h(
        "dl",
        { class: "facts card" },
        [
          ["Live version", t.version],
          ["Digest", h("span", { class: "mono" }, t.digest)],
          ["Queue", d.queue || "default"],
          ["Fallback", d.fallback || "—"],
          ["Created", when(t.created_at)],
        ].flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]),
      ),
      ...rollout,
      h("h2", {}, "Limits"),
      pretty(d.limits || "server defaults"),
      h("h2", {}, "Retry policy"),
      pretty(d.retry || "server defaults"),
      h("h2", {}, "Input schema"),
      pretty(d.input_schema || "none"),
      h("h2", {}, "Output schema"),
      pretty(d.output_schema || "none"),
      h("h2", {}, "Versions"),
      h(
        "div",
        { class: "scroll" },
        h(
          "table",
          {},
          h("thead", {}, h("tr", {}, ["Version", "State", "Digest", "Created"].map((x) => h("th", {}, x)))),
          h(
            "tbody",
            {},
            t.versions.map((v) =>
              h(
                "tr",
                {},
                h("td", {}, v.version),
                h("td", {}, (v.state || "").replace("_", " ")),
                h("td", { class: "mono" }, v.digest),
                h("td", {}, when(v.created_at)),
              ),
            ),
          ),
        ),
      ),
    );
    return;
  }
  let list;
  list = await read("Tasks", listPath("/v1/tasks"));
  if (list === null) return;
  const all = across();
  show(
    h("h1", {}, "Tasks"),
    list.tasks.length
      ? h(
          "div",
          { class: "scroll" },
          h(
            "table",
            { id: "tasks" },
            h("thead", {}, h("tr", {}, ["Task", ...(all ? ["Tenant"] : []), "Version", "Queue", "Digest", "Created"].map((x) => h("th", {}, x)))),
            h(
              "tbody",
              {},
              list.tasks.map((t) =>
                h(
                  "tr",
                  { "data-task": t.name, "data-tenant": t.tenant },
                  h("td", {}, h("a", { href: tenantHref(`#/tasks/${encodeURIComponent(t.name)}`, t.tenant) }, t.name)),
                  all ? h("td", { class: "tenant" }, t.tenant) : null,
                  h("td", {}, t.version),
                  h("td", {}, t.queue),
                  h("td", { class: "mono" }, t.digest),
                  h("td", {}, when(t.created_at)),
                ),
              ),
            ),
          ),
        )
      : h("p", { class: "muted" }, "No tasks yet."),
  );
}
