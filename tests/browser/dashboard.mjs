// Drives the dashboard in headless Chromium, as tests/it/browser.rs sets it
// up: a wrong token, sign in, a job enqueued through the API appearing and
// completing without a reload, its page and log, a running job cancelled
// from its page, another tenant's job "not found", the other pages, and a
// phone's width. Saves a screenshot of each page under SHOTS.
//
// Environment: TASKBOX_URL, TENANT_TOKEN (every scope of tenant acme),
// ADMIN_TOKEN, OTHER_JOB (a job of another tenant), SHOTS (a directory),
// CHROMIUM (the browser's path).

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
const shots = env("SHOTS");
mkdirSync(shots, { recursive: true });

const step = (what) => console.log(`browser: ${what}`);

async function enqueue(body) {
  const r = await fetch(`${url}/v1/jobs`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  if (r.status !== 201) throw new Error(`enqueue answered ${r.status}: ${await r.text()}`);
  return (await r.json()).id;
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
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  page.on("pageerror", (e) => failures.push(`a script error on the page: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error") console.log(`browser console: ${m.text()}`);
  });
  const shot = async (name, p = page) => {
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
  const adminContext = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  const adminPage = await adminContext.newPage();
  adminPage.setDefaultTimeout(20_000);
  await adminPage.goto(url);
  await adminPage.fill("#token", admin);
  await adminPage.click("#signin");
  await adminPage.locator("#nav-tenants").click();
  await adminPage.locator("#tenants", { hasText: "acme" }).waitFor();
  await shot("10-tenants", adminPage);
  await adminContext.close();
} catch (e) {
  failures.push(e.stack || String(e));
} finally {
  await browser.close();
}
if (failures.length) {
  console.error(`browser: FAILED\n${failures.join("\n")}`);
  process.exit(1);
}
step("all passed");
