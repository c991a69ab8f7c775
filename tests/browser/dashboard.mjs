// Drives the dashboard in headless Chromium, as tests/it/browser.rs sets it
// up: a wrong token, sign in, a job enqueued through the API appearing and
// completing without a reload, its page and log, a running job cancelled
// from its page, another tenant's job "not found", a workflow job's
// timeline, schedules, webhooks, secrets, dead letters, events, filters
// in the URL, keys, the admin's tenants, its charts across tenants (drawn,
// as the API has them, updating live), a tenant's own charts, the admin's
// view of every tenant at once (jobs, queues, schedules, events, and one
// tenant's job from there), the admin's look at another tenant, a job's
// callbacks both ways, a workflow's versions, a schedule and a webhook's
// deliveries updating live, and a phone's width. Each page's figures are
// checked against the API's own answers. Saves a screenshot of each page
// under SHOTS.
//
// Environment: TASKBOX_URL, TENANT_TOKEN (every scope of tenant acme),
// ADMIN_TOKEN, OTHER_JOB (a job of another tenant), WORKFLOW_JOB (acme's
// workflow job whose step failed and ran its on_error), WEBHOOK (acme's
// webhook whose deliveries fail), CALLBACK_JOB (acme's job whose
// on_success made a callback), SHOTS (a directory), CHROMIUM (the
// browser's path).

import { chromium } from "playwright-core";
import { mkdirSync } from "node:fs";
import { join } from "node:path";

const env = (k) => {
  const v = process.env[k];
  if (!v) throw new Error(`${k} is not set`);
  return v;
};
const url = env("TASKBOX_URL");
const token = env("TENANT_TOKEN");
const admin = env("ADMIN_TOKEN");
const otherJob = env("OTHER_JOB");
const workflowJob = env("WORKFLOW_JOB");
const webhook = env("WEBHOOK");
const callbackJob = env("CALLBACK_JOB");
const shots = env("SHOTS");
mkdirSync(shots, { recursive: true });

const step = (what) => console.log(`browser: ${what}`);

async function get(path, as = token, tenant) {
  const headers = { Authorization: `Bearer ${as}` };
  if (tenant) headers["Taskbox-Tenant"] = tenant;
  const r = await fetch(`${url}${path}`, { headers });
  if (!r.ok) throw new Error(`GET ${path} answered ${r.status}: ${await r.text()}`);
  return r.json();
}

function same(what, shown, want) {
  if (JSON.stringify(shown) !== JSON.stringify(want)) {
    throw new Error(`${what}: the page shows ${JSON.stringify(shown)}, the API says ${JSON.stringify(want)}`);
  }
}

async function post(path, body, as = token) {
  const r = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { Authorization: `Bearer ${as}`, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!r.ok) throw new Error(`POST ${path} answered ${r.status}: ${await r.text()}`);
  return r.json();
}

async function enqueue(body) {
  return (await post("/v1/jobs", body)).id;
}

/// Reads the page's `shown()` between two reads of the API's `asked()`,
/// again while the two reads differ (the data moved meanwhile).
async function steady(shown, asked) {
  for (let tries = 0; ; tries++) {
    const before = await asked();
    const seen = await shown();
    const after = await asked();
    if (JSON.stringify(before) === JSON.stringify(after) || tries >= 3) return [seen, after];
  }
}

const browser = await chromium.launch({
  executablePath: env("CHROMIUM"),
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});
const failures = [];
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, locale: "en-US" });
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  page.on("pageerror", (e) => failures.push(`a script error on the page: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error") console.log(`browser console: ${m.text()}`);
  });
  const shot = async (name, p = page) => {
    // A part a page left out is never written as "null" or "undefined".
    const stray = await p.evaluate(() =>
      [...document.querySelectorAll("#main *, #main")]
        .flatMap((e) => [...e.childNodes])
        .filter((n) => n.nodeType === Node.TEXT_NODE && ["null", "undefined"].includes(n.textContent.trim()))
        .map((n) => n.parentElement.tagName),
    );
    if (stray.length) throw new Error(`${name}: the page writes null or undefined as text (in ${stray.join(", ")})`);
    await p.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
    step(`screenshot ${name}.png`);
  };

  step("a wrong token is refused with a clear message");
  await page.goto(url);
  await page.fill("#token", "tbx_not-a-token");
  await page.click("#signin");
  await page.getByText("That token was not accepted").waitFor();
  await shot("01-sign-in-refused");

  step("sign in");
  await page.fill("#token", token);
  await page.click("#signin");
  await page.locator("#jobs").waitFor();
  await page.locator("#who-tenant", { hasText: "acme" }).waitFor();

  step("a job enqueued through the API appears and completes without a reload");
  const quick = await enqueue({ task: "limits", input: { op: "log", lines: 3 } });
  const row = page.locator(`tr[data-id="${quick}"]`);
  await row.waitFor();
  await page.locator(`tr[data-id="${quick}"][data-status="completed"]`).waitFor();
  await shot("02-jobs");

  step("open it and read its log");
  await row.locator("a").click();
  await page.locator("#digest").waitFor();
  await page.locator("pre.log", { hasText: "line 3" }).waitFor();
  await shot("03-job");

  step("cancel a running job from its page");
  const slow = await enqueue({ task: "slow", input: { op: "sleep", ms: 60000 } });
  await page.goto(`${url}/#/job/${slow}`);
  await page.locator(".facts .badge.running").waitFor();
  await page.click("#cancel");
  await page.locator(".facts .badge.cancelled").waitFor();
  await shot("04-job-cancelled");

  step("another tenant's job is not found");
  await page.goto(`${url}/#/job/${otherJob}`);
  await page.getByText(`Job ${otherJob} was not found.`).waitFor();
  await shot("05-other-tenants-job");

  step("tasks, a task, queues");
  await page.goto(`${url}/#/tasks`);
  await page.locator("#tasks").waitFor();
  await shot("06-tasks");
  await page.goto(`${url}/#/tasks/limits`);
  await page.getByText("Task limits").waitFor();
  await shot("07-task");
  await page.goto(`${url}/#/queues`);
  await page.locator("#queues").waitFor();
  await shot("08-queues");

  step("a workflow job: its stages as the API has them, and no fallback");
  await page.goto(`${url}/#/job/${workflowJob}`);
  await page.locator("#timeline").waitFor();
  const wf = await get(`/v1/jobs/${workflowJob}`);
  const wfAttempts = (await get(`/v1/jobs/${workflowJob}/attempts?limit=100`)).attempts;
  same("the API's fallback of a workflow job", wf.fallback ?? null, null);
  const terms = await page.locator("#job-facts dt").allTextContents();
  if (terms.includes("Fallback")) throw new Error(`a workflow job's page says Fallback: ${terms}`);
  same("the workflow", await page.locator("#job-workflow").textContent(), `${wf.workflow.name} v${wf.workflow.version}`);
  const stages = await page.locator("#timeline > li.stage").evaluateAll((els) =>
    els.map((e) => ({
      seq: Number(e.dataset.seq),
      name: e.dataset.step,
      kind: e.dataset.kind,
      status: e.dataset.status,
      digest: e.querySelector(".digest").textContent,
      attempts: e.querySelectorAll("details.attempt").length,
    })),
  );
  same(
    "the stages",
    stages,
    wf.steps.map((st) => ({
      seq: st.seq,
      name: st.name,
      kind: st.kind,
      status: st.status,
      digest: st.task.digest,
      attempts: wfAttempts.filter((a) => a.step && a.step.seq === st.seq).length,
    })),
  );
  for (const st of wf.steps) {
    const placed = wfAttempts.filter((a) => a.step && a.step.seq === st.seq).length;
    same(`attempts placed in stage ${st.name}`, placed, st.attempts);
  }
  const tell = wf.steps.find((st) => st.kind === "on_error");
  same("the on_error step ran", tell.status, "completed");
  const chain = await page.locator("#job-chain").textContent();
  if (!chain.includes(`on_error ${tell.name}`)) throw new Error(`the chain that ran reads ${chain}`);
  await page.locator("time[title$=' UTC']").first().waitFor();
  await shot("11-workflow-job");

  step("a job's callbacks, and the callback's page naming the job that made it");
  const paid = await get(`/v1/jobs/${callbackJob}`);
  await page.goto(`${url}/#/job/${callbackJob}`);
  await page.locator("#callbacks li[data-callback]").first().waitFor();
  same(
    "the callbacks",
    await page.locator("#callbacks li[data-callback]").evaluateAll((els) => els.map((e) => [e.dataset.kind, e.dataset.callback])),
    paid.callbacks.map((c) => [c.kind, c.job]),
  );
  await shot("20-callbacks");
  await page.locator(`#callbacks li[data-callback='${paid.callbacks[0].job}'] a`).click();
  await page.locator("#callback-of").waitFor();
  same("the callback's maker", await page.locator("#callback-of").getAttribute("data-job"), callbackJob);
  same("the API's maker", (await get(`/v1/jobs/${paid.callbacks[0].job}`)).callback_of.job, callbackJob);

  step("a workflow's versions, and an older one's definition");
  const doomed = await get("/v1/workflows/doomed");
  await page.goto(`${url}/#/workflows/doomed`);
  await page.locator("#workflow-versions tr[data-version]").first().waitFor();
  same(
    "the versions, newest first",
    await page.locator("#workflow-versions tr[data-version]").evaluateAll((els) => els.map((e) => Number(e.dataset.version))),
    doomed.versions.map((v) => v.version).reverse(),
  );
  await page.locator("#workflow-versions tr[data-version='1'] a").click();
  await page.getByText("Version 1 of 2").waitFor();
  const v1 = await get("/v1/workflows/doomed?version=1");
  same(
    "version 1's stages",
    await page.locator("#workflow-steps tbody tr").count(),
    v1.steps.length + (v1.on_error || []).length + (v1.on_cancel || []).length,
  );
  await shot("21-workflow-versions");

  step("the schedule: its cron in words and its next five slots");
  await page.goto(`${url}/#/schedules`);
  await page.locator("#schedules tr[data-schedule='weekday-report']").waitFor();
  await page.goto(`${url}/#/schedules/weekday-report`);
  await page.locator("#next-slots li").first().waitFor();
  const sched = await get("/v1/schedules/weekday-report");
  same("the cron in words", await page.locator("#cron-words").textContent(), sched.cron_words);
  same("the next slots", await page.locator("#next-slots li").evaluateAll((els) => els.map((e) => e.dataset.at)), sched.next_slots);
  same("five slots", sched.next_slots.length, 5);
  await page.click("#pause");
  await page.locator("h1 .badge.paused").waitFor();
  same("paused from the page", (await get("/v1/schedules/weekday-report")).enabled, false);
  await shot("12-schedule");
  await page.click("#resume");
  await page.locator("#pause").waitFor();
  same("resumed from the page", (await get("/v1/schedules/weekday-report")).enabled, true);
  // Fired through the API, not the page: the page shows it without a reload.
  await page.evaluate(() => {
    window.notReloaded = true;
  });
  const firedBefore = Number(await page.locator("#fired").textContent());
  await post("/v1/schedules/weekday-report/trigger", {});
  await page.waitForFunction(
    (n) => {
      const fired = document.getElementById("fired");
      return fired !== null && Number(fired.textContent) > n;
    },
    firedBefore,
    { timeout: 30_000 },
  );
  same("the schedule's fired count, live", Number(await page.locator("#fired").textContent()), (await get("/v1/schedules/weekday-report")).fired);
  same("no reload", await page.evaluate(() => window.notReloaded === true), true);

  step("the webhook and its failed deliveries");
  await page.goto(`${url}/#/webhooks`);
  await page.locator(`#webhooks tr[data-webhook='${webhook}']`).waitFor();
  await page.goto(`${url}/#/webhooks/${webhook}`);
  await page.locator("#deliveries tr[data-delivery]").first().waitFor();
  const deliveries = (await get(`/v1/webhooks/${webhook}/deliveries`)).deliveries;
  same(
    "the deliveries",
    await page.locator("#deliveries tr[data-delivery]").evaluateAll((els) => els.map((e) => Number(e.dataset.delivery))),
    deliveries.map((d) => d.id),
  );
  const failed = deliveries.find((d) => d.last_error);
  if (!failed) throw new Error(`no delivery failed: ${JSON.stringify(deliveries)}`);
  await page.locator(`#deliveries tr[data-delivery='${failed.id}'] td.error-text`).waitFor();
  await shot("13-webhook");
  // Redelivered from the page: tried again at once, not at its backoff's end.
  const tries = (id) => get(`/v1/webhooks/${webhook}/deliveries`).then((p) => p.deliveries.find((d) => d.id === id));
  const before = await tries(failed.id);
  await page.locator(`#deliveries tr[data-delivery='${failed.id}'] button.redeliver`).click();
  await page.locator("#deliveries-message", { hasText: "is due again now" }).waitFor();
  for (const end = Date.now() + 20_000; ; ) {
    const now = await tries(failed.id);
    if (now.attempts > before.attempts) break;
    if (Date.now() > end) throw new Error(`a redelivered delivery was not tried again: ${JSON.stringify(now)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  // The page shows the new try without a reload.
  const triedAgain = await tries(failed.id);
  await page.waitForFunction(
    ([id, n]) => {
      const cell = document.querySelector(`#deliveries tr[data-delivery='${id}'] td:nth-child(4)`);
      return cell !== null && Number(cell.textContent) >= n;
    },
    [failed.id, triedAgain.attempts],
    { timeout: 30_000 },
  );

  step("secrets: names and versions, never a value");
  await page.goto(`${url}/#/secrets`);
  await page.locator("#secrets tr[data-secret='API_KEY']").waitFor();
  const secrets = (await get("/v1/secrets")).secrets;
  same(
    "the secrets",
    await page.locator("#secrets tr[data-secret]").evaluateAll((els) => els.map((e) => [e.dataset.secret, e.children[1].textContent])),
    secrets.map((x) => [x.name, String(x.version)]),
  );
  if ((await page.content()).includes("not-a-real-key")) throw new Error("the secrets page shows a value");
  await shot("14-secrets");

  step("dead letters are the failed jobs");
  await page.goto(`${url}/#/dead`);
  await page.locator(`#jobs tr[data-id='${workflowJob}']`).waitFor();
  const deadShown = await page.locator("#jobs tr[data-id]").evaluateAll((els) => els.map((e) => e.dataset.id));
  const deadApi = (await get("/v1/jobs?status=failed&limit=50")).jobs.map((j) => j.id);
  for (const id of deadShown) if (!deadApi.includes(id)) throw new Error(`dead letters show ${id}, which the API does not call failed`);
  await shot("15-dead-letters");

  step("filters are in the URL, and keys move through the list");
  await page.goto(`${url}/#/jobs?status=completed`);
  await page.locator("#jobs tr[data-id]").first().waitFor();
  same("the status filter", await page.locator("#filter-status").inputValue(), "completed");
  const statuses = await page.locator("#jobs tr[data-id]").evaluateAll((els) => els.map((e) => e.dataset.status));
  if (statuses.some((x) => x !== "completed")) throw new Error(`status=completed shows ${statuses}`);
  const firstId = await page.locator("#jobs tr[data-id]").first().getAttribute("data-id");
  await page.keyboard.press("j");
  await page.keyboard.press("Enter");
  await page.waitForURL((u) => u.hash === `#/job/${firstId}`);
  await page.keyboard.press("g");
  await page.keyboard.press("w");
  await page.locator("#workflows tr[data-href]").first().waitFor();
  await shot("16-workflows");

  step("events arrive live");
  await page.goto(`${url}/#/events`);
  await page.locator("#events").waitFor();
  const live = await enqueue({ task: "limits", input: { op: "echo", value: 2 } });
  await page.locator(`#events tr[data-type='job.completed'] a[href='#/job/${live}']`).waitFor();
  await shot("17-events");

  step("on a phone");
  const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true });
  const small = await phone.newPage();
  small.setDefaultTimeout(20_000);
  await small.goto(url);
  await small.fill("#token", token);
  await small.click("#signin");
  await small.locator("#jobs tr[data-id]").first().waitFor();
  await shot("09-jobs-phone", small);
  await phone.close();

  step("the admin sees the tenants");
  const adminContext = await browser.newContext({ viewport: { width: 1280, height: 860 }, locale: "en-US" });
  const adminPage = await adminContext.newPage();
  adminPage.setDefaultTimeout(20_000);
  await adminPage.goto(url);
  await adminPage.fill("#token", admin);
  await adminPage.click("#signin");
  await adminPage.locator("#nav-tenants").click();
  await adminPage.locator("#tenants tr[data-tenant='acme']").waitFor();
  // Fuel this minute, as the API says it: read again if a minute turned
  // between the page and the answer.
  for (let tries = 0; ; tries++) {
    const before = await get("/v1/tenants/acme/usage", admin);
    await adminPage.goto(`${url}/#/queues`);
    await adminPage.goto(`${url}/#/tenants`);
    await adminPage.locator("#tenants tr[data-tenant='other'] .tenant-fuel").waitFor();
    const shown = {};
    for (const t of ["acme", "other"]) shown[t] = await adminPage.locator(`#tenants tr[data-tenant='${t}'] .tenant-fuel`).textContent();
    const after = {};
    for (const t of ["acme", "other"]) after[t] = await get(`/v1/tenants/${t}/usage`, admin);
    if (before.current.start !== after.acme.current.start && tries < 3) continue;
    for (const t of ["acme", "other"]) same(`${t}'s fuel`, shown[t], Number(after[t].current.fuel_used).toLocaleString("en-US"));
    break;
  }
  await shot("10-tenants", adminPage);
  step("the admin's charts: every tenant's figures, as the API has them, drawn");
  await adminPage.evaluate(() => {
    window.notReloaded = true;
  });
  await adminPage.goto(`${url}/#/charts`);
  await adminPage.locator("#chart-fuel-tenant canvas").waitFor();
  // Totals by name, in name order (a stack is drawn largest first).
  const byName = (o) => Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : 1)));
  const chartTotals = (id, p = adminPage) => p.locator(`#chart-${id}`).getAttribute("data-totals").then((t) => byName(JSON.parse(t)));
  const stackTotals = (stack) => byName(Object.fromEntries(stack.map((x) => [x.name, x.total])));
  const sumOf = (xs) => xs.reduce((a, v) => a + (v || 0), 0);
  for (let tries = 0; ; tries++) {
    const before = await get("/v1/series", admin);
    const shown = { tenant: await chartTotals("fuel-tenant"), task: await chartTotals("fuel-task"), jobs: await chartTotals("jobs") };
    const after = await get("/v1/series", admin);
    if (JSON.stringify(before.fuel) !== JSON.stringify(after.fuel) && tries < 3) continue;
    same("fuel by tenant", shown.tenant, stackTotals(after.fuel.by_tenant));
    same("fuel by task", shown.task, stackTotals(after.fuel.by_task));
    same("jobs completed", shown.jobs.completed, sumOf(after.jobs.completed));
    if (!(shown.tenant.acme > 0 && shown.tenant.other > 0 && shown.tenant.acme !== shown.tenant.other)) {
      throw new Error(`two tenants' unlike fuel is not what the chart shows: ${JSON.stringify(shown.tenant)}`);
    }
    break;
  }
  for (const id of ["jobs", "wait", "depth", "oldest", "fuel-tenant", "fuel-task", "wall-tenant", "wall-task"]) {
    await adminPage.locator(`#chart-${id}`).waitFor();
  }
  const inked = await adminPage.locator("#chart-fuel-tenant canvas").evaluate((c) => {
    const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++;
    return n;
  });
  if (inked < 100) throw new Error(`the fuel chart's canvas is blank (${inked} pixels drawn)`);
  await shot("18-charts", adminPage);
  await adminPage.locator("#chart-fuel-tenant").screenshot({ path: join(shots, "19-fuel-chart.png") });

  step("the charts update live, without a reload");
  const updates = Number(await adminPage.locator("#charts").getAttribute("data-updates"));
  const completedBefore = (await chartTotals("jobs")).completed;
  const fresh = await enqueue({ task: "limits", input: { op: "spin", iterations: 1000 } });
  for (const end = Date.now() + 30_000; ; ) {
    const j = await get(`/v1/jobs/${fresh}`);
    if (j.status === "completed") break;
    if (Date.now() > end) throw new Error(`a job for the live chart did not complete: ${JSON.stringify(j)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  await adminPage.waitForFunction(
    ([before]) => JSON.parse(document.getElementById("chart-jobs").dataset.totals).completed > before,
    [completedBefore],
    { timeout: 30_000 },
  );
  if (Number(await adminPage.locator("#charts").getAttribute("data-updates")) <= updates) throw new Error("the charts did not update");
  same("no reload", await adminPage.evaluate(() => window.notReloaded === true), true);

  step("a tenant's charts are its own: by task, no other tenant");
  await page.goto(`${url}/#/charts?span=day`);
  await page.locator("#chart-fuel-task canvas").waitFor();
  same("no tenant chart for a tenant", await page.locator("#chart-fuel-tenant").count(), 0);
  const ownDay = await get("/v1/series?span=day");
  same("acme's fuel by task over the day", await chartTotals("fuel-task", page), stackTotals(ownDay.fuel.by_task));
  same("a day's buckets", Number(await page.locator("#chart-jobs").getAttribute("data-points")), 144);

  step("the admin sees every tenant's jobs at once, each naming its tenant");
  await adminPage.goto(`${url}/#/jobs`);
  await adminPage.locator("#who-tenant", { hasText: "every tenant" }).waitFor();
  await adminPage.locator(`#jobs tr[data-id='${otherJob}'][data-tenant='other']`).waitFor();
  await adminPage.locator(`#jobs tr[data-id='${workflowJob}'][data-tenant='acme']`).waitFor();
  const [acrossShown, acrossApi] = await steady(
    () => adminPage.locator("#jobs tr[data-id]").evaluateAll((els) => els.map((e) => [e.dataset.id, e.dataset.tenant])),
    async () => (await get("/v1/jobs?all_tenants=true&limit=50", admin)).jobs.map((j) => [j.id, j.tenant]),
  );
  same("every tenant's jobs", acrossShown, acrossApi);
  await shot("22-admin-every-tenant", adminPage);
  await adminPage.locator(`#jobs tr[data-id='${otherJob}'] a`).click();
  await adminPage.locator("#digest").waitFor();
  await adminPage.locator("#who-tenant", { hasText: "looking at other" }).waitFor();
  same("other's job, opened from the list of every tenant's", await adminPage.locator("h1 .mono").textContent(), otherJob);

  step("every tenant's queues, schedules and events");
  await adminPage.goto(`${url}/#/queues`);
  await adminPage.locator("#queues tr[data-tenant='other']").first().waitFor();
  const queuesApi = (await get("/v1/queues?all_tenants=true", admin)).queues.map((q) => [q.tenant, q.name]);
  same(
    "every tenant's queues",
    await adminPage.locator("#queues tr[data-queue]").evaluateAll((els) => els.map((e) => [e.dataset.tenant, e.dataset.queue])),
    queuesApi,
  );
  await adminPage.goto(`${url}/#/schedules`);
  await adminPage.locator("#schedules tr[data-schedule='weekday-report'][data-tenant='acme']").waitFor();
  await adminPage.goto(`${url}/#/events`);
  await adminPage.locator("#events").waitFor();
  // The stream is open (what happens from now on reaches the page).
  await adminPage.locator("html[data-feed='open']").waitFor({ state: "attached" });
  const seenLive = await enqueue({ task: "limits", input: { op: "echo", value: 3 } });
  await adminPage.locator(`#events tr[data-type='job.completed'][data-tenant='acme'] a[href^='#/job/${seenLive}']`).waitFor();
  await shot("23-admin-events", adminPage);

  step("the admin retries every tenant's dead letters at once");
  const attemptsBefore = (await get(`/v1/jobs/${workflowJob}`)).attempts;
  await adminPage.goto(`${url}/#/dead`);
  await adminPage.locator(`#jobs tr[data-id='${workflowJob}'][data-tenant='acme']`).waitFor();
  await adminPage.locator("#retry-all", { hasText: "in every tenant" }).click();
  await adminPage.locator("#jobs-message", { hasText: /Retried [1-9]/ }).waitFor();
  // acme's failed workflow job, retried from the admin's list of every tenant's, runs again.
  for (const end = Date.now() + 20_000; ; ) {
    const job = await get(`/v1/jobs/${workflowJob}`);
    if (job.attempts > attemptsBefore) break;
    if (Date.now() > end) throw new Error(`the retry of every tenant's left ${workflowJob} alone: ${JSON.stringify(job)}`);
    await new Promise((r) => setTimeout(r, 100));
  }

  step("the admin looks at another tenant's pages");
  await adminPage.goto(`${url}/#/tenants`);
  await adminPage.locator("#tenants tr[data-tenant='other'] button.look").click();
  await adminPage.locator(`#jobs tr[data-id='${otherJob}']`).waitFor();
  await adminPage.locator("#who-tenant", { hasText: "looking at other" }).waitFor();
  await adminContext.close();
} catch (e) {
  failures.push(e.stack || String(e));
  for (const p of browser.contexts().flatMap((c) => c.pages())) {
    await p.screenshot({ path: join(shots, `failed-${Date.now()}.png`), fullPage: true }).catch(() => {});
  }
} finally {
  await browser.close();
}
if (failures.length) {
  console.error(`browser: FAILED\n${failures.join("\n")}`);
  process.exit(1);
}
step("all passed");
