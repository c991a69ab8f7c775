// Building the page: elements from values (always as text, never as
// markup: a job's input or a guest's log cannot become code), times in
// the viewer's zone with UTC on hover, figures, tables and notices.

import { tenantHref } from "./api.js";

export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

export const main = () => document.getElementById("main");

export function show(...nodes) {
  // Left-out parts (null, false) are not shown: replaceChildren would
  // write them as text.
  main().replaceChildren(...nodes.flat().filter((n) => n !== null && n !== undefined && n !== false));
}

/// A time in the viewer's zone (or `zone`), its UTC form on hover.
export function when(iso, zone) {
  if (!iso) return "—";
  const d = new Date(iso);
  if (isNaN(d)) return iso;
  let text;
  try {
    text = zone
      ? d.toLocaleString(undefined, { timeZone: zone, timeZoneName: "short" })
      : d.toLocaleString();
  } catch {
    // A zone this browser does not know: the viewer's, and say so.
    text = `${d.toLocaleString()} (here; this browser does not know ${zone})`;
  }
  return h("time", { datetime: d.toISOString(), title: `${d.toISOString().replace(".000Z", "Z")} UTC` }, text);
}

export function ms(n) {
  if (n === null || n === undefined) return "—";
  return n < 1000 ? `${n} ms` : `${(n / 1000).toFixed(2)} s`;
}

export function bytes(n) {
  if (!n) return "0 B";
  const units = ["B", "KiB", "MiB", "GiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${n.toFixed(i ? 1 : 0)} ${units[i]}`;
}

export function count(n) {
  return n === null || n === undefined ? "—" : Number(n).toLocaleString();
}

export function pretty(v, attrs) {
  return h("pre", { class: "json", ...attrs }, v === undefined ? "—" : JSON.stringify(v, null, 2));
}

export function badge(status) {
  return h("span", { class: `badge ${status}` }, status);
}

export function notice(text, kind) {
  return h("p", { class: `notice ${kind || ""}`, role: kind === "error" ? "alert" : "status" }, text);
}

export function facts(pairs, attrs) {
  return h(
    "dl",
    { class: "facts card", ...attrs },
    pairs.filter(Boolean).flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]),
  );
}

/// A table: `heads` the column titles, `rows` rows of `tr` (or, when
/// empty, `empty` said across the table).
export function table(attrs, heads, rows, empty) {
  return h(
    "div",
    { class: "scroll" },
    h(
      "table",
      attrs,
      h("thead", {}, h("tr", {}, heads.map((t) => h("th", {}, t)))),
      h(
        "tbody",
        {},
        rows.length ? rows : h("tr", {}, h("td", { colspan: heads.length, class: "muted" }, empty || "None.")),
      ),
    ),
  );
}

export function task(ref) {
  return ref ? `${ref.name} v${ref.version}` : "—";
}

export function link(href, text, attrs) {
  return h("a", { href, ...attrs }, text);
}

/// A link to a job's page (`tenant`'s, while the admin looks at every
/// tenant).
export function jobLink(id, tenant) {
  return link(tenantHref(`#/job/${encodeURIComponent(id)}`, tenant), id, { class: "mono" });
}

/// A button that runs `act` and reports what came of it in `message`.
export function action(label, message, act, attrs) {
  return h(
    "button",
    {
      type: "button",
      ...attrs,
      onclick: async (ev) => {
        ev.target.disabled = true;
        try {
          const said = await act();
          message.replaceChildren(notice(said || `${label}: done.`));
        } catch (e) {
          message.replaceChildren(notice(`${label}: ${e.message}`, "error"));
        } finally {
          ev.target.disabled = false;
        }
      },
    },
    label,
  );
}
