// Workflows: each at its newest version, and one workflow's definition
// (its steps, their fallbacks, on_error and on_cancel chains) with its
// runs, the jobs made by it.

import { api } from "./api.js";
import { badge, h, jobLink, pretty, show, table, when } from "./dom.js";
import { read } from "./read.js";

function stepRows(def) {
  const rows = [];
  const add = (chain, s) =>
    rows.push(
      h(
        "tr",
        {},
        h("td", {}, chain),
        h("td", {}, s.name || "—"),
        h("td", {}, s.task || "—"),
        h("td", {}, s.fallback || "—"),
      ),
    );
  for (const s of def.steps || []) add("step", s);
  for (const s of def.on_error || []) add("on_error", s);
  for (const s of def.on_cancel || []) add("on_cancel", s);
  return rows;
}

export async function workflowsPage(name) {
  if (name) {
    let w;
    w = await read("Workflow", `/v1/workflows/${encodeURIComponent(name)}`, `Workflow ${name} was not found.`);
    if (w === null) return;
    let runs = [];
    try {
      runs = (await api(`/v1/jobs?task=${encodeURIComponent(name)}&limit=20`)).jobs;
    } catch {
      runs = [];
    }
    show(
      h("h1", {}, `Workflow ${w.name}`),
      h("p", {}, `Version ${w.version}, defined `, when(w.created_at), "."),
      h("h2", {}, "Stages"),
      table({ id: "workflow-steps" }, ["Chain", "Step", "Task", "Fallback"], stepRows(w)),
      h("h2", {}, "Recent runs"),
      table(
        { id: "workflow-runs", class: "nav-rows" },
        ["Job", "Version", "Status", "Created", "Finished"],
        runs.map((j) =>
          h(
            "tr",
            { "data-href": `#/job/${encodeURIComponent(j.id)}` },
            h("td", {}, jobLink(j.id)),
            h("td", {}, `v${j.task.version}`),
            h("td", {}, badge(j.status)),
            h("td", {}, when(j.created_at)),
            h("td", {}, when(j.finished_at)),
          ),
        ),
        "No runs yet.",
      ),
      h("p", {}, h("a", { href: `#/jobs?task=${encodeURIComponent(name)}` }, "Every run")),
      h("h2", {}, "Definition"),
      pretty(w),
    );
    return;
  }
  let list;
  list = await read("Workflows", "/v1/workflows");
  if (list === null) return;
  show(
    h("h1", {}, "Workflows"),
    table(
      { id: "workflows", class: "nav-rows" },
      ["Workflow", "Version", "Steps", "Created"],
      list.workflows.map((w) =>
        h(
          "tr",
          { "data-href": `#/workflows/${encodeURIComponent(w.name)}` },
          h("td", {}, h("a", { href: `#/workflows/${encodeURIComponent(w.name)}` }, w.name)),
          h("td", {}, w.version),
          h("td", {}, (w.steps || []).map((s) => s.name).join(" → ")),
          h("td", {}, when(w.created_at)),
        ),
      ),
      "No workflows yet.",
    ),
  );
}
