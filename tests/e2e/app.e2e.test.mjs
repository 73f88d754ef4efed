// The user journey on the real desktop binary: the window opens on a seeded archive, lists what
// `cairn sync` captured from tests/fixtures, filters by agent and moves with the keyboard.
// Run through tests/e2e/run.sh, which builds, seeds and provides the display.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { remote } from 'webdriverio';

const app = mustEnv('CAIRN_E2E_APP');
const cli = mustEnv('CAIRN_E2E_CLI');
const dataDir = mustEnv('CAIRN_DATA_DIR');
const artifacts = resolve('test-artifacts/e2e');
const port = Number(process.env.CAIRN_E2E_PORT ?? 4444);

/** What the fixtures hold (tests/fixtures/{claude,codex}/SOURCES.md): six top-level Claude
 * sessions (the spotter session's two sub-agent files are counted on it, not listed) and two
 * Codex sessions. */
const FIXTURES = {
  claude: 6,
  codex: 2,
  claudeSessionIds: [
    '1af7fc5e-8455-4414-9ccd-011d40f70b2a',
    'ae4a77f8-aedd-4bc1-888f-c94edc91af04',
    '55604662-cf2a-4331-851a-ec234028f8ca',
    '491e126e-1e71-469c-ade2-fcc8af567c74',
    'd6e0bada-1959-4eec-a9d2-0bfade768d8f',
  ],
  /** First prompts of real sessions, shown as titles when the session has none. */
  titles: ['mix phx.server doesnt seem to start', 'start phoenix in background'],
};

let driver;
let browser;

function mustEnv(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run this test through tests/e2e/run.sh`);
  return value;
}

function tauriDriverPath() {
  if (process.env.TAURI_DRIVER) return process.env.TAURI_DRIVER;
  const cargoBin = join(process.env.CARGO_HOME ?? join(homedir(), '.cargo'), 'bin', 'tauri-driver');
  return existsSync(cargoBin) ? cargoBin : 'tauri-driver';
}

async function waitForDriver(deadline) {
  for (;;) {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/status`);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`tauri-driver did not answer on port ${port}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The sessions `cairn sessions --json` lists: the desktop must show the same ones. */
function cliSessions() {
  const out = execFileSync(cli, ['--data-dir', dataDir, '--json', 'sessions'], { encoding: 'utf8' });
  return JSON.parse(out);
}

async function countShown() {
  const text = await browser.$('#session-count').getText();
  const match = /^([\d,]+) sessions?$/.exec(text.trim());
  return match ? Number(match[1].replaceAll(',', '')) : null;
}

/** The rendered rows, read in one round trip (and through textContent: see the footer check). */
async function rows() {
  return browser.execute(() =>
    [...document.querySelectorAll('[data-testid="session-row"]')].map((row) => ({
      agent: row.getAttribute('data-agent'),
      key: row.getAttribute('data-session-key'),
      id: row.getAttribute('data-session-id'),
      title: row.querySelector('.title')?.textContent?.trim() ?? '',
    })),
  );
}

before(async () => {
  mkdirSync(artifacts, { recursive: true });
  // Its own process group, so teardown ends tauri-driver and the WebKitWebDriver it started.
  driver = spawn(tauriDriverPath(), ['--port', String(port), '--native-port', String(port + 1)], {
    stdio: ['ignore', 'inherit', 'inherit'],
    detached: true,
  });
  await waitForDriver(Date.now() + 15_000);
  browser = await remote({
    hostname: '127.0.0.1',
    port,
    logLevel: 'warn',
    capabilities: {
      'tauri:options': { application: app },
      // WebKitWebDriver speaks classic WebDriver, not BiDi.
      'wdio:enforceWebDriverClassic': true,
    },
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
});

test('the window lists the seeded sessions, filters by agent and moves with j/k', { timeout: 120_000 }, async () => {
  // 1. The window opens with the UI embedded.
  const heading = await browser.$('h1');
  await heading.waitForExist({ timeout: 20_000 });
  assert.equal(await heading.getText(), 'Cairn');

  // 2. The list shows what `cairn sync` captured from the fixtures.
  await browser.waitUntil(async () => (await countShown()) !== null, {
    timeout: 20_000,
    timeoutMsg: 'the session count never appeared',
  });
  // The footer names the data dir in use: the one tauri-driver passed down, not the default.
  const footerDir = await browser.$('.data-dir');
  await footerDir.waitForExist({ timeout: 10_000 });
  // textContent, not getText(): WebKitWebDriver's getText() answers '' for text in an
  // overflow-hidden, ellipsised box.
  assert.equal(await footerDir.getProperty('textContent'), dataDir);
  await browser.saveScreenshot(join(artifacts, 'sessions.png'));
  const expected = cliSessions();
  const total = await countShown();
  assert.equal(total, FIXTURES.claude + FIXTURES.codex, 'sessions listed');
  assert.equal(total, expected.length, 'the window and `cairn sessions` list the same number of sessions');

  const shown = await rows();
  assert.equal(shown.length, total, 'every session of the small fixture set is rendered');
  assert.deepEqual(
    shown.map((r) => r.key),
    expected.map((s) => s.session_key),
    'same sessions, same order (newest first) as the CLI',
  );
  assert.equal(shown.filter((r) => r.agent === 'claude').length, FIXTURES.claude);
  assert.equal(shown.filter((r) => r.agent === 'codex').length, FIXTURES.codex);
  for (const id of FIXTURES.claudeSessionIds) {
    assert.ok(shown.some((r) => r.id === id && r.agent === 'claude'), `Claude session ${id} is listed`);
  }
  for (const title of FIXTURES.titles) {
    assert.ok(
      shown.some((r) => r.title === title),
      `a row is titled "${title}"; titles: ${JSON.stringify(shown.map((r) => r.title))}`,
    );
  }
  assert.ok(shown.every((r) => r.title.length > 0), 'every row has a title');

  // 3. Keyboard: j moves the selection down, k back up.
  const selectedId = async () =>
    browser.$('[role="option"][aria-selected="true"] [data-testid="session-row"]').getAttribute('data-session-key');
  assert.equal(await selectedId(), shown[0].key, 'the newest session starts selected');
  await browser.keys(['j']);
  await browser.waitUntil(async () => (await selectedId()) === shown[1].key, { timeout: 5_000 });
  await browser.keys(['k']);
  await browser.waitUntil(async () => (await selectedId()) === shown[0].key, { timeout: 5_000 });

  // 4. Filter by agent: only Codex sessions remain.
  await browser.$('[data-agent-filter="codex"]').click();
  await browser.waitUntil(async () => (await countShown()) === FIXTURES.codex, {
    timeout: 10_000,
    timeoutMsg: 'the Codex filter did not narrow the list',
  });
  const codex = await rows();
  assert.equal(codex.length, FIXTURES.codex);
  assert.ok(codex.every((r) => r.agent === 'codex'), 'only Codex rows after filtering');
  await browser.saveScreenshot(join(artifacts, 'sessions-codex.png'));

  // ...and back to every agent.
  await browser.$('[data-agent-filter="all"]').click();
  await browser.waitUntil(async () => (await countShown()) === total, { timeout: 10_000 });
});
