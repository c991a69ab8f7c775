// The tenant's secrets: names, versions and dates — never a value (the
// API has no way to read one back). The admin sees every tenant's, each
// naming its tenant.

import { across, can, listPath } from "./api.js";
import { h, notice, show, table, when } from "./dom.js";
import { read } from "./read.js";

export async function secretsPage() {
  if (!can("secrets:write")) {
    show(h("h1", {}, "Secrets"), notice("This token lacks the secrets:write scope, which lists secrets.", "error"));
    return;
  }
  let list;
  list = await read("Secrets", listPath("/v1/secrets"));
  if (list === null) return;
  const all = across();
  show(
    h("h1", {}, "Secrets"),
    h("p", { class: "muted" }, "Guests read these through wasi:config/store. Values are write-only: set them with the CLI or the API."),
    table(
      { id: "secrets" },
      ["Name", "Version", "Created", "Updated", ...(all ? ["Tenant"] : [])],
      list.secrets.map((s) =>
        h(
          "tr",
          { "data-secret": s.name, "data-tenant": s.tenant },
          h("td", { class: "mono" }, s.name),
          h("td", {}, s.version),
          h("td", {}, when(s.created_at)),
          h("td", {}, when(s.updated_at)),
          all ? h("td", { class: "tenant" }, s.tenant) : null,
        ),
      ),
      "No secrets.",
    ),
  );
}
