// Schedules: each with its cron in words, its next slots in its own zone,
// what it last fired and skipped; pause, resume and trigger behind the
// scope the API asks for (schedules:write). Live: each page is read again
// when a job starts or ends (a slot fired, a job it made ended) and every
// few seconds (the next slot moves on with the clock). The admin sees
// every tenant's, each row naming its tenant.

import { across, api, can, follow, listPath, tenantHref } from "./api.js";
import { action, badge, facts, h, jobLink, pretty, show, table, when } from "./dom.js";
import { read } from "./read.js";

function target(s) {
  return s.workflow ? `workflow ${s.workflow}` : `task ${s.task}`;
}

// The events that change what a schedule page shows.
const CHANGES = "?type=job.queued,job.started,job.completed,job.failed";

/// Draws the page with `draw`, then again at each burst of `CHANGES`
/// (and at the feed's poll) while the page is shown.
async function live(draw) {
  const here = location.hash;
  const again = () => location.hash === here && draw(here);
  if (await draw(here)) follow(CHANGES, again);
}

export async function schedulesPage(name) {
  return live(name ? (here) => drawSchedule(name, here) : drawList);
}

async function drawList(here) {
  let list;
  list = await read("Schedules", listPath("/v1/schedules"));
  if (list === null || location.hash !== here) return false;
  const all = across();
  show(
    h("h1", {}, "Schedules ", h("span", { class: "muted live" }, "live")),
    table(
      { id: "schedules", class: "nav-rows" },
      ["Schedule", ...(all ? ["Tenant"] : []), "Runs", "When", "Next", "Last fired", "Fired", "Skipped", ""],
      list.schedules.map((s) =>
        h(
          "tr",
          {
            "data-schedule": s.name,
            "data-tenant": s.tenant,
            "data-fired": s.fired,
            "data-href": tenantHref(`#/schedules/${encodeURIComponent(s.name)}`, s.tenant),
          },
          h("td", {}, h("a", { href: tenantHref(`#/schedules/${encodeURIComponent(s.name)}`, s.tenant) }, s.name)),
          all ? h("td", { class: "tenant" }, s.tenant) : null,
          h("td", {}, target(s)),
          h("td", {}, s.cron_words || h("span", { class: "mono" }, s.cron), h("span", { class: "muted" }, ` (${s.timezone})`)),
          h("td", {}, s.enabled ? when(s.next_slot, s.timezone) : "—"),
          h("td", {}, when(s.last_slot, s.timezone)),
          h("td", { class: "num" }, s.fired),
          h("td", { class: "num" }, s.skipped),
          h("td", {}, s.enabled ? "" : badge("paused")),
        ),
      ),
      "No schedules.",
    ),
  );
  return true;
}

async function drawSchedule(name, here) {
  let s;
  s = await read("Schedule", `/v1/schedules/${encodeURIComponent(name)}`, `Schedule ${name} was not found.`);
  if (s === null || location.hash !== here) return false;
  const message = h("div", { id: "schedule-message" });
  const post = (verb) => async () => {
    await api(`/v1/schedules/${encodeURIComponent(name)}/${verb}`, { method: "POST" });
    drawSchedule(name, here);
  };
  const writable = can("schedules:write");
  show(
    h("h1", {}, `Schedule ${s.name} `, s.enabled ? "" : badge("paused"), h("span", { class: "muted live" }, " live")),
    h(
      "div",
      { class: "actions" },
      writable ? action(s.enabled ? "Pause" : "Resume", message, post(s.enabled ? "pause" : "resume"), { id: s.enabled ? "pause" : "resume" }) : null,
      writable ? action("Trigger now", message, post("trigger"), { id: "trigger" }) : null,
      writable ? null : h("span", { class: "muted" }, "Pausing and triggering need the schedules:write scope."),
    ),
    message,
    facts(
      [
        ["Runs", target(s)],
        ["When", h("span", { id: "cron-words" }, s.cron_words || s.cron)],
        ["Cron", h("span", { class: "mono" }, s.cron)],
        ["Zone", s.timezone],
        ["Overlap", s.overlap],
        ["Queue", s.queue || "the task's"],
        ["Last fired", when(s.last_slot, s.timezone)],
        ["Last job", s.last_job ? h("span", { id: "last-job" }, jobLink(s.last_job.id), " ", s.last_job.status ? badge(s.last_job.status) : "(pruned)") : "—"],
        ["Fired", h("span", { id: "fired" }, s.fired)],
        ["Skipped", s.skipped],
        s.last_error ? ["Last error", h("span", { class: "error-text" }, s.last_error)] : null,
        ["Created", when(s.created_at)],
      ],
      { id: "schedule-facts" },
    ),
    h("h2", {}, `Next slots (${s.timezone})`),
    s.enabled ? null : h("p", { class: "muted" }, "Paused: these are the slots it would fire at."),
    h("ol", { id: "next-slots" }, s.next_slots.map((at) => h("li", { "data-at": at }, when(at, s.timezone)))),
    h("h2", {}, "Input"),
    pretty(s.input),
  );
  return true;
}
