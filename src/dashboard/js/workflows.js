// Workflows: each at its newest version, and one workflow's definition
// at a version (its steps, their fallbacks, on_error and on_cancel
// chains), every version, and its runs, the jobs made by it. The admin
// sees every tenant's workflows, each naming its tenant.

import { across, api, listPath, tenantHref } from "./api.js";
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

export async function workflowsPage(name, params) {
  if (name) {
    const asked = params && params.get("version");
    const path = `/v1/workflows/${encodeURIComponent(name)}${asked ? `?version=${encodeURIComponent(asked)}` : ""}`;
    let w;
    w = await read("Workflow", path, `Workflow ${name}${asked ? ` version ${asked}` : ""} was not found.`);
    if (w === null) return;
    let runs = [];
    try {
      runs = (await api(`/v1/jobs?task=${encodeURIComponent(name)}&limit=20`)).jobs;
    } catch {
      runs = [];
    }
    const newest = w.versions.length ? w.versions[w.versions.length - 1].version : w.version;
    const at = (v) => tenantHref(`#/workflows/${encodeURIComponent(name)}${v === newest ? "" : `?version=${v}`}`);
    show(
      h("h1", {}, `Workflow ${w.name}`),
      h("p", {}, `Version ${w.version}${w.version === newest ? " (the newest)" : ` of ${newest}`}, defined `, when(w.created_at), "."),
      h("h2", {}, "Versions"),
      table(
        { id: "workflow-versions", class: "nav-rows" },
        ["Version", "Defined", "Runs shown"],
        [...w.versions].reverse().map((v) =>
          h(
            "tr",
            { "data-version": v.version, "data-href": at(v.version), class: v.version === w.version ? "selected-version" : null },
            h("td", {}, v.version === w.version ? h("strong", {}, `v${v.version} (shown)`) : h("a", { href: at(v.version) }, `v${v.version}`)),
            h("td", {}, when(v.created_at)),
            h("td", { class: "num" }, runs.filter((j) => j.task.version === v.version).length),
          ),
        ),
      ),
      h("h2", {}, "Stages"),
      table({ id: "workflow-steps" }, ["Chain", "Step", "Task", "Fallback"], stepRows(w)),
      h("h2", {}, "Recent runs"),
      table(
        { id: "workflow-runs", class: "nav-rows" },
        ["Job", "Version", "Status", "Created", "Finished"],
        runs.map((j) =>
          h(
            "tr",
            { "data-href": tenantHref(`#/job/${encodeURIComponent(j.id)}`) },
            h("td", {}, jobLink(j.id)),
            h("td", {}, `v${j.task.version}`),
            h("td", {}, badge(j.status)),
            h("td", {}, when(j.created_at)),
            h("td", {}, when(j.finished_at)),
          ),
        ),
        "No runs yet.",
      ),
      h("p", {}, h("a", { href: tenantHref(`#/jobs?task=${encodeURIComponent(name)}`) }, "Every run")),
      h("h2", {}, "Definition"),
      pretty(w),
    );
    return;
  }
  let list;
  list = await read("Workflows", listPath("/v1/workflows"));
  if (list === null) return;
  const all = across();
  const href = (w) => tenantHref(`#/workflows/${encodeURIComponent(w.name)}`, w.tenant);
  show(
    h("h1", {}, "Workflows"),
    table(
      { id: "workflows", class: "nav-rows" },
      ["Workflow", ...(all ? ["Tenant"] : []), "Version", "Steps", "Created"],
      list.workflows.map((w) =>
        h(
          "tr",
          { "data-workflow": w.name, "data-tenant": w.tenant, "data-href": href(w) },
          h("td", {}, h("a", { href: href(w) }, w.name)),
          all ? h("td", { class: "tenant" }, w.tenant) : null,
          h("td", {}, w.version),
          h("td", {}, (w.steps || []).map((s) => s.name).join(" → ")),
          h("td", {}, when(w.created_at)),
        ),
      ),
      "No workflows yet.",
    ),
  );
}
