// Charts: jobs started, completed and failed; how long jobs waited to
// start; queue depth and the oldest wait; fuel and wall time by tenant and
// by task, stacked. For the last hour or day, from GET /v1/series, drawn
// with uPlot (served with the page) and redrawn as new figures come in.
// The admin sees every tenant's, or the one it looks at.

import { actingTenant, api, state, tenantHref } from "./api.js";
import { h, link, notice, show } from "./dom.js";
import uPlot from "./uplot.js";

const COLORS = ["#2f5bd3", "#e07a1f", "#1f7a3f", "#b42318", "#7a3fb4", "#0f8a8a", "#9a6700", "#c2417a", "#667085"];
const REFRESH_MS = { hour: 5000, day: 60000 };

// Stacked areas: each series drawn as the sum of itself and those below
// it (the largest at the bottom), its band filled down to the one below;
// the legend shows each series' own value.
function stacked(stacks) {
  let below = null;
  return stacks.map((s, i) => {
    below = s.values.map((v, j) => v + (below ? below[j] : 0));
    return { name: s.name, raw: s.values, sum: below, color: COLORS[i % COLORS.length], stacked: true };
  });
}

// An axis' figure, short: 1,500 · 12.5k · 3.2M · 1.1G.
function short(v) {
  const a = Math.abs(v);
  for (const [n, unit] of [[1e9, "G"], [1e6, "M"], [1e4, "k"]]) {
    if (a >= n) return `${+(v / (unit === "k" ? 1e3 : n)).toFixed(1)}${unit}`;
  }
  return (Number.isInteger(v) ? v : +v.toFixed(2)).toLocaleString();
}

// Lines; `dots` marks each point, for a series with gaps (a bucket where
// no job started has no wait), whose lone points a line would not show.
function lines(named, dots) {
  return named.map(([name, values], i) => ({ name, raw: values, sum: values, color: COLORS[i % COLORS.length], line: true, dots }));
}

// One chart's spec: its id, title, unit and series.
function specs(s) {
  const across = s.tenant === null;
  const per = s.span === "hour" ? "a minute" : "each 10 minutes";
  const out = [
    { id: "jobs", title: `Jobs ${per}`, unit: "jobs", series: lines([["started", s.jobs.started], ["completed", s.jobs.completed], ["failed", s.jobs.failed]]) },
    { id: "wait", title: "Wait to start (ms)", unit: "ms", series: lines([["p50", s.start_wait_ms.p50], ["p90", s.start_wait_ms.p90], ["p99", s.start_wait_ms.p99]], true) },
    { id: "depth", title: `Queue depth, by ${across ? "tenant" : "queue"}`, unit: "jobs", series: stacked(s.queue_depth), stacks: s.queue_depth },
    { id: "oldest", title: "Oldest wait (ms)", unit: "ms", series: lines([["oldest", s.oldest_wait_ms]]) },
  ];
  if (across) out.push({ id: "fuel-tenant", title: `Fuel by tenant, ${per}`, unit: "fuel", series: stacked(s.fuel.by_tenant), stacks: s.fuel.by_tenant });
  out.push({ id: "fuel-task", title: `Fuel by task, ${per}`, unit: "fuel", series: stacked(s.fuel.by_task), stacks: s.fuel.by_task });
  if (across) out.push({ id: "wall-tenant", title: `Wall time by tenant (ms), ${per}`, unit: "ms", series: stacked(s.wall_ms.by_tenant), stacks: s.wall_ms.by_tenant });
  out.push({ id: "wall-task", title: `Wall time by task (ms), ${per}`, unit: "ms", series: stacked(s.wall_ms.by_task), stacks: s.wall_ms.by_task });
  return out;
}

function options(spec, width) {
  return {
    width,
    height: 200,
    legend: { live: true },
    cursor: { drag: { x: false, y: false } },
    scales: { x: { time: true }, y: { range: (u, min, max) => [0, Math.max(1, (max || 0) * 1.1)] } },
    axes: [{}, { size: 56, values: (u, splits) => splits.map(short) }],
    // Each stacked series' band lies between it and the one below.
    bands: spec.series.flatMap((x, i) => (x.stacked && i > 0 ? [{ series: [i + 1, i], fill: `${x.color}55` }] : [])),
    series: [
      {},
      ...spec.series.map((x) => ({
        label: x.name,
        stroke: x.color,
        width: 1.5,
        // The bottom of a stack fills to the axis; the others' bands.
        fill: x.stacked && spec.series[0] === x ? `${x.color}55` : undefined,
        spanGaps: false,
        points: x.dots ? { show: true, size: 6 } : undefined,
        value: (u, v, si, i) => {
          const raw = i === null || i === undefined ? null : x.raw[i];
          if (raw === null || raw === undefined) return "—";
          return (Number.isInteger(raw) ? raw : Math.round(raw * 10) / 10).toLocaleString();
        },
      })),
    ],
  };
}

// What the browser test and a reader can check against the API: each
// series' total over the span.
function totals(spec) {
  const out = {};
  for (const x of spec.series) out[x.name] = x.raw.reduce((a, v) => a + (v || 0), 0);
  return JSON.stringify(out);
}

class Chart {
  constructor(spec, times, box) {
    this.figure = h("figure", { class: "chart card", id: `chart-${spec.id}` }, h("figcaption", {}, spec.title));
    box.append(this.figure);
    this.draw(spec, times);
  }

  draw(spec, times) {
    const names = spec.series.map((x) => x.name).join("\u0000");
    const data = [times, ...spec.series.map((x) => x.sum)];
    this.figure.dataset.totals = totals(spec);
    this.figure.dataset.points = String(times.length);
    const empty = spec.series.length === 0;
    this.figure.classList.toggle("empty", empty);
    if (empty) {
      if (this.plot) this.plot.destroy();
      this.plot = null;
      this.names = null;
      if (!this.figure.querySelector(".notice")) this.figure.append(notice("Nothing in this span yet."));
      return;
    }
    for (const n of this.figure.querySelectorAll(".notice")) n.remove();
    if (this.plot && this.names === names) {
      this.plot.setData(data);
      return;
    }
    if (this.plot) this.plot.destroy();
    this.names = names;
    this.plot = new uPlot(options(spec, this.width()), data, this.figure);
  }

  width() {
    return Math.max(260, this.figure.clientWidth - 32);
  }

  resize() {
    if (this.plot) this.plot.setSize({ width: this.width(), height: 200 });
  }
}

export async function chartsPage(params) {
  const span = params.get("span") === "day" ? "day" : "hour";
  const tenant = actingTenant();
  const query = `?span=${span}${tenant ? `&tenant=${encodeURIComponent(tenant)}` : ""}`;
  const status = h("p", { class: "muted", id: "charts-status" });
  const box = h("div", { class: "charts", id: "charts", "data-span": span, "data-updates": "0" });
  const whose = state.who.admin ? (tenant ? `tenant ${tenant}` : "every tenant") : `tenant ${state.who.tenant}`;
  show(
    h("h1", {}, "Charts"),
    h(
      "p",
      { class: "spans" },
      link(tenantHref("#/charts?span=hour"), "Last hour", { class: span === "hour" ? "current" : "" }),
      " · ",
      link(tenantHref("#/charts?span=day"), "Last day", { class: span === "day" ? "current" : "" }),
      h("span", { class: "muted" }, ` — ${whose}; times in your zone; live`),
    ),
    status,
    box,
  );
  const charts = new Map();
  let updates = 0;
  const load = async () => {
    let s;
    try {
      s = await api(`/v1/series${query}`);
    } catch (e) {
      status.replaceChildren(notice(`Cannot read the series: ${e.message}`, "error"));
      return;
    }
    status.replaceChildren(`Updated ${new Date().toLocaleTimeString()}.`);
    for (const spec of specs(s)) {
      const c = charts.get(spec.id);
      if (c) c.draw(spec, s.times);
      else charts.set(spec.id, new Chart(spec, s.times, box));
    }
    box.dataset.updates = String(++updates);
  };
  await load();
  // Left while the first figures were read: nothing to keep up to date.
  if (!location.hash.startsWith("#/charts")) return;
  const timer = setInterval(load, REFRESH_MS[span]);
  const onResize = () => {
    for (const c of charts.values()) c.resize();
  };
  window.addEventListener("resize", onResize);
  state.feed = () => {
    clearInterval(timer);
    window.removeEventListener("resize", onResize);
    for (const c of charts.values()) if (c.plot) c.plot.destroy();
  };
}
