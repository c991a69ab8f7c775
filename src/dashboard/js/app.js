// The taskbox dashboard: sign in with a token, then the pages (one
// module each), all read from the API with the token as the bearer. The
// admin sees every tenant's at once, or looks at one tenant's pages. Keys: j/k move through a list,
// Enter opens, / goes to the filters, g then a page's letter goes there.

import { actingTenant, api, keep, lookAt, state, stopFeed } from "./api.js";
import { h, notice, show } from "./dom.js";
import { chartsPage } from "./charts.js";
import { eventsPage } from "./events.js";
import { jobPage } from "./job.js";
import { jobsPage } from "./jobs.js";
import { queuesPage } from "./queues.js";
import { schedulesPage } from "./schedules.js";
import { secretsPage } from "./secrets.js";
import { tasksPage } from "./tasks.js";
import { tenantsPage } from "./tenants.js";
import { webhooksPage } from "./webhooks.js";
import { workflowsPage } from "./workflows.js";

// ---- sign in -------------------------------------------------------------

function signInPage(message) {
  const input = h("input", {
    id: "token",
    type: "password",
    autocomplete: "off",
    placeholder: "tbx_… or the admin token",
    required: true,
  });
  const form = h(
    "form",
    {
      id: "signin-form",
      class: "card narrow",
      onsubmit: async (ev) => {
        ev.preventDefault();
        await signIn(input.value.trim());
      },
    },
    h("h1", {}, "Sign in"),
    h("p", { class: "muted" }, "The dashboard acts with your token's tenant and scopes. It is kept in this browser tab only."),
    h("label", { for: "token" }, "Token"),
    input,
    h("button", { type: "submit", id: "signin" }, "Sign in"),
    message ? notice(message, "error") : null,
  );
  document.getElementById("nav").hidden = true;
  document.getElementById("who").hidden = true;
  show(form);
  input.focus();
}

async function signIn(token) {
  state.token = token;
  try {
    state.who = await api("/v1/whoami");
  } catch (e) {
    state.token = null;
    keep(null);
    const why =
      e.status === 401
        ? "That token was not accepted: it is unknown, or mistyped."
        : `Cannot sign in: ${e.message}`;
    signInPage(why);
    return;
  }
  keep(token);
  if (!state.who.admin) lookAt(null);
  document.getElementById("nav").hidden = false;
  document.getElementById("nav-tenants").textContent = state.who.admin ? "Tenants" : "Usage";
  document.getElementById("who").hidden = false;
  showWho();
  if (!location.hash || location.hash === "#/signin") location.hash = "#/jobs";
  else route();
}

function showWho() {
  const t = actingTenant();
  document.getElementById("who-tenant").textContent = state.who.admin
    ? t
      ? `admin · looking at ${t}`
      : "admin · every tenant"
    : state.who.tenant;
}

function signOut() {
  stopFeed();
  state.token = null;
  state.who = null;
  keep(null);
  location.hash = "#/signin";
  signInPage();
}

// ---- keys ----------------------------------------------------------------

const GO = { j: "#/jobs", d: "#/dead", t: "#/tasks", w: "#/workflows", s: "#/schedules", q: "#/queues", c: "#/charts", h: "#/webhooks", e: "#/events", x: "#/secrets", u: "#/tenants" };
let pendingG = false;

function rows() {
  return [...document.querySelectorAll("table.nav-rows tbody tr[data-href]")];
}

function onKey(ev) {
  if (!state.who || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const tag = (ev.target && ev.target.tagName) || "";
  if (["INPUT", "SELECT", "TEXTAREA"].includes(tag)) {
    if (ev.key === "Escape") ev.target.blur();
    return;
  }
  if (pendingG) {
    pendingG = false;
    if (GO[ev.key]) {
      location.hash = GO[ev.key];
      ev.preventDefault();
    }
    return;
  }
  const list = rows();
  const at = list.findIndex((r) => r.classList.contains("selected"));
  const select = (i) => {
    if (!list.length) return;
    const next = list[Math.max(0, Math.min(list.length - 1, i))];
    for (const r of list) r.classList.remove("selected");
    next.classList.add("selected");
    next.scrollIntoView({ block: "nearest" });
  };
  switch (ev.key) {
    case "g":
      pendingG = true;
      break;
    case "j":
      select(at + 1);
      break;
    case "k":
      select(at < 0 ? 0 : at - 1);
      break;
    case "Enter":
      if (at >= 0) location.hash = list[at].dataset.href;
      else return;
      break;
    case "/": {
      const first = document.querySelector("form.filters input, form.filters select");
      if (!first) return;
      first.focus();
      break;
    }
    case "?":
      document.getElementById("keys").hidden = !document.getElementById("keys").hidden;
      break;
    default:
      return;
  }
  ev.preventDefault();
}

// ---- routing -------------------------------------------------------------

async function route() {
  stopFeed();
  if (!state.token || !state.who) {
    signInPage();
    return;
  }
  const [path, query] = (location.hash.slice(1) || "/jobs").split("?");
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  const params = new URLSearchParams(query || "");
  // One tenant's page, linked from a list of every tenant's.
  state.pageTenant = state.who.admin ? params.get("tenant") : null;
  showWho();
  const page = parts[0] === "job" ? "jobs" : parts[0] || "jobs";
  for (const a of document.querySelectorAll("#nav a")) {
    a.classList.toggle("current", a.dataset.page === page);
    if (a.dataset.page === page) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  switch (parts[0]) {
    case "job":
      return jobPage(parts[1] || "");
    case "dead":
      return jobsPage(params, true);
    case "tasks":
      return tasksPage(parts[1]);
    case "workflows":
      return workflowsPage(parts[1], params);
    case "schedules":
      return schedulesPage(parts[1]);
    case "queues":
      return queuesPage();
    case "charts":
      return chartsPage(params);
    case "webhooks":
      return webhooksPage(parts[1], params);
    case "secrets":
      return secretsPage();
    case "events":
      return eventsPage(params);
    case "tenants":
      return tenantsPage();
    default:
      return jobsPage(params, false);
  }
}

window.addEventListener("hashchange", () => {
  route().catch((e) => show(notice(e.message, "error")));
});
document.addEventListener("tenant-changed", showWho);
document.addEventListener("keydown", onKey);
document.getElementById("signout").addEventListener("click", signOut);

if (state.token) signIn(state.token);
else signInPage();
