// A source folder that is there but cannot be read is not said to be missing: the real
// cairn-desktop, on a data dir of its own, with Codex's folder named (CODEX_SESSIONS_DIR) as a
// link that leads to itself, the way a folder the user may not read is refused (root, which runs
// CI, reads a folder of mode 000, but no one follows a loop). Settings › Transcript folders says
// "cannot be read" with why, where it said "missing". Run through tests/e2e/run.sh (it builds the
// app with the UI embedded and provides the display), or alone with its environment:
//   CAIRN_E2E_APP=target/debug/cairn-desktop xvfb-run -a node --test tests/e2e/sources.e2e.test.mjs
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { remote } from 'webdriverio';

const app = process.env.CAIRN_E2E_APP;
if (!app) throw new Error('CAIRN_E2E_APP is not set: run this test through tests/e2e/run.sh');
const artifacts = resolve('test-artifacts/e2e');
// Not app.e2e.test.mjs's port: node --test may hold its driver's port until the process ends.
const port = Number(process.env.CAIRN_E2E_SOURCES_PORT ?? 4454);

const work = mkdtempSync(join(tmpdir(), 'cairn-e2e-sources-'));
const looped = join(work, 'codex-sessions');
let driver;
let browser;

before(async () => {
  mkdirSync(artifacts, { recursive: true });
  mkdirSync(join(work, 'data'));
  mkdirSync(join(work, 'claude'));
  mkdirSync(join(work, 'home'));
  symlinkSync(looped, looped);
  const tauriDriver = process.env.TAURI_DRIVER ?? join(process.env.CARGO_HOME ?? join(homedir(), '.cargo'), 'bin', 'tauri-driver');
  // tauri-driver passes its environment down to the app: an archive and a home of this test's own.
  driver = spawn(existsSync(tauriDriver) ? tauriDriver : 'tauri-driver', ['--port', String(port), '--native-port', String(port + 1)], {
    stdio: ['ignore', 'inherit', 'inherit'],
    detached: true,
    env: {
      ...process.env,
      CAIRN_DATA_DIR: join(work, 'data'),
      CLAUDE_PROJECTS_DIR: join(work, 'claude'),
      CODEX_SESSIONS_DIR: looped,
      HOME: join(work, 'home'),
    },
  });
  const deadline = Date.now() + 15_000;
  for (;;) {
    const up = await fetch(`http://127.0.0.1:${port}/status`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (Date.now() > deadline) throw new Error(`tauri-driver did not answer on port ${port}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  browser = await remote({
    hostname: '127.0.0.1',
    port,
    logLevel: 'warn',
    capabilities: { 'tauri:options': { application: app }, 'wdio:enforceWebDriverClassic': true },
  });
});

after(async () => {
  await browser?.deleteSession().catch(() => {});
  if (driver?.pid) {
    try {
      process.kill(-driver.pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
  rmSync(work, { recursive: true, force: true });
});

test('settings: a source folder that cannot be read says so and why, not that it is missing', async () => {
  await (await browser.$('[data-tab="settings"]')).waitForExist({ timeout: 20_000 });
  await (await browser.$('[data-tab="settings"]')).click();
  await browser.waitUntil(() => browser.execute(() => document.querySelector('[data-testid="sources-codex"]') !== null), {
    timeout: 15_000,
    timeoutMsg: 'Settings never listed the Codex folders',
  });
  const dirs = await browser.execute(() =>
    [...document.querySelectorAll('[data-testid="sources-codex"] [data-testid="source-dir"]')].map((li) => ({
      state: li.getAttribute('data-state'),
      path: li.querySelector('.path')?.textContent ?? '',
      badge: li.querySelector('.badge')?.textContent?.trim() ?? '',
      why: li.querySelector('[data-testid="source-dir-unreadable"]')?.textContent ?? '',
    })),
  );
  const codex = dirs.find((d) => d.path === looped);
  assert.ok(codex, `the looped folder is listed: ${JSON.stringify(dirs)}`);
  assert.equal(codex.state, 'unreadable', JSON.stringify(codex));
  assert.equal(codex.badge, 'cannot be read');
  assert.match(codex.why, /^cannot read .*codex-sessions: .*so the codex transcripts there are not captured/);
  // The Claude folder, empty but there, is found.
  const claude = await browser.execute(() => document.querySelector('[data-testid="sources-claude"] .badge')?.textContent?.trim());
  assert.equal(claude, 'found');
  await browser.execute(() => document.querySelector('[data-testid="sources-codex"]')?.scrollIntoView({ block: 'center' }));
  await browser.saveScreenshot(join(artifacts, '30-settings-unreadable-source.png'));
});
