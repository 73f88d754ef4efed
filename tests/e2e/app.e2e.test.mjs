// The journeys of a person on the real desktop binary, in order, on one machine seeded by
// tests/e2e/seed.mjs (a git repository where agents worked, and their transcripts):
//   first run → sync → pick a branch → skim timeline → open a session → expand a turn →
//   follow an evidence link → search → live update → settings → a second launch hands its cairn://
//   link to the open window → start the app on a cairn:// link →
//   Recall: accept an entry in the inbox, find it trusted, follow its evidence → generate a report
//   with the agent CLI (tests/e2e/bin/claude) and open it by its cairn://recall link →
//   Recall from the first minute: the branches' offer → Settings → the detected agent CLI → test →
//   preview → start → progress in the status bar → the inbox badge → accept → trusted →
//   the same through an OpenAI-compatible endpoint (tests/e2e/fake-llm.mjs) typed into Settings
//   with the name of its key variable.
// Each journey saves a screenshot to test-artifacts/e2e/. Run through tests/e2e/run.sh, which
// builds, seeds and provides the display.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { remote } from 'webdriverio';
import { startFakeLlm } from './fake-llm.mjs';

const app = mustEnv('CAIRN_E2E_APP');
const dataDir = mustEnv('CAIRN_DATA_DIR');
const seed = JSON.parse(readFileSync(mustEnv('CAIRN_E2E_SEED'), 'utf8'));
const artifacts = resolve('test-artifacts/e2e');
const port = Number(process.env.CAIRN_E2E_PORT ?? 4444);
const LOGIN = 'ref:refs/heads/feature/login';

let driver;
let browser;
/** The session key of the seeded "login" session, read from the window. */
let loginKey;

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

function openApp(args = []) {
  return remote({
    hostname: '127.0.0.1',
    port,
    logLevel: 'warn',
    capabilities: {
      'tauri:options': { application: app, args },
      // WebKitWebDriver speaks classic WebDriver, not BiDi.
      'wdio:enforceWebDriverClassic': true,
    },
  });
}

/** The pids of running cairn-desktop processes of this build (the web processes are others). */
function appProcesses() {
  const exe = realpathSync(app);
  return readdirSync('/proc')
    .filter((pid) => /^[0-9]+$/.test(pid))
    .filter((pid) => {
      try {
        return readlinkSync(`/proc/${pid}/exe`) === exe;
      } catch {
        return false; // gone, or not ours to read
      }
    });
}

/** The archive's single-instance D-Bus name, as src-tauri/src/lib.rs `instance_id` makes it. */
const instanceName = `dev.cairn.desktop.archive_${createHash('sha256').update(realpathSync(dataDir)).digest('hex').slice(0, 16)}.SingleInstance`;

/** Whether some process on the session bus still owns the archive's single-instance name. */
function instanceNameOwned() {
  const reply = execFileSync(
    'dbus-send',
    ['--session', '--print-reply', '--dest=org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus.NameHasOwner', `string:${instanceName}`],
    { encoding: 'utf8' },
  );
  return /boolean true/.test(reply);
}

/** What the desktop does for a clicked link (`cairn-desktop %u`, same archive, same environment)
 * while the app runs: the second launch hands `link` to the open window and exits cleanly. */
async function handOver(link) {
  const second = spawn(app, [link], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  second.stderr.on('data', (chunk) => (stderr += chunk));
  const code = await new Promise((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`the second launch did not exit: ${stderr}`)), 30_000);
    second.on('exit', (status) => {
      clearTimeout(timer);
      done(status);
    });
  });
  assert.equal(code, 0, `the second launch exits cleanly: ${stderr}`);
}

/** End the window's session and start the app again with `args`, once the old process is gone
 * and the bus has let go of its name: a new one started while the bus still lists the old one as
 * the archive's single instance would try to hand its arguments over and exit. (The process leaves
 * /proc before the bus daemon has read its hang-up; on a busy machine that gap is long enough.) */
async function restartApp(args) {
  await browser.deleteSession();
  const deadline = Date.now() + 15_000;
  while (appProcesses().length > 0 || instanceNameOwned()) {
    if (Date.now() > deadline) throw new Error(`cairn-desktop still runs (${appProcesses()}) or ${instanceName} is still owned`);
    await new Promise((r) => setTimeout(r, 100));
  }
  browser = await openApp(args);
}

const shot = (name) => browser.saveScreenshot(join(artifacts, `${name}.png`));
const byTestId = (id) => browser.$(`[data-testid="${id}"]`);
/** textContent, not getText(): WebKitWebDriver's getText() answers '' for ellipsised text. */
const text = async (element) => (await element.getProperty('textContent')) ?? '';
/** Type `value` into the field `[data-testid=id]`, in place of what it holds, once a person
 * could: scrolled to the middle of the window (out from under Settings' sticky bar) and
 * clickable. WebKitWebDriver refuses to clear a field that is not. */
async function fill(id, value) {
  const field = await byTestId(id);
  await field.scrollIntoView({ block: 'center' });
  await field.waitForClickable({ timeout: 10_000 });
  await field.setValue(value);
}

let failures = 0;
async function until(check, message, timeout = 15_000) {
  try {
    await browser.waitUntil(check, { timeout, interval: 100, timeoutMsg: message });
  } catch (error) {
    // What the window showed when the wait gave up.
    await browser.saveScreenshot(join(artifacts, `failure-${++failures}.png`)).catch(() => {});
    throw error;
  }
}

/** The text of the first `[data-testid=id]` now, read in one round trip: a wait on an element
 * the window renders again meanwhile never holds a stale reference to it. */
function liveText(testid) {
  return browser.execute((id) => document.querySelector(`[data-testid="${id}"]`)?.textContent ?? '', testid);
}

/** Rows of a kind currently rendered, read in one round trip. */
function rendered(testid, attribute) {
  return browser.execute(
    (id, attr) => [...document.querySelectorAll(`[data-testid="${id}"]`)].map((e) => e.getAttribute(attr)),
    testid,
    attribute,
  );
}

/** The highlighted record and whether it is inside the visible part of its list. */
function highlightedRecord() {
  return browser.execute(() => {
    const record = document.querySelector('.record.highlighted');
    if (!record) return null;
    const box = record.getBoundingClientRect();
    const view = record.closest('[role="listbox"]').getBoundingClientRect();
    return {
      ordinal: record.getAttribute('data-ordinal'),
      visible: box.bottom > view.top && box.top < view.bottom,
      selected: record.closest('[role="option"]').getAttribute('aria-selected') === 'true',
    };
  });
}

before(async () => {
  mkdirSync(artifacts, { recursive: true });
  // Its own process group, so teardown ends tauri-driver and the WebKitWebDriver it started.
  driver = spawn(tauriDriverPath(), ['--port', String(port), '--native-port', String(port + 1)], {
    stdio: ['ignore', 'inherit', 'inherit'],
    detached: true,
  });
  await waitForDriver(Date.now() + 15_000);
  browser = await openApp();
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

test('first run: the window explains where transcripts come from and offers the import', async () => {
  const welcome = await byTestId('welcome');
  await welcome.waitForExist({ timeout: 20_000 });
  const shown = await text(welcome);
  assert.match(shown, /Welcome to Cairn/);
  assert.ok(shown.includes(seed.claudeDir), `the Claude folder is listed: ${shown}`);
  assert.ok(shown.includes(seed.codexDir), 'the Codex folder is listed');
  // The footer names the data dir tauri-driver passed down, not the default.
  assert.equal(await text(await browser.$('.data-dir')), dataDir);
  // One line a folder: a global style once made each row 70 px tall (the list ran off the
  // window and the import button with it).
  const heights = await browser.execute(() =>
    [...document.querySelectorAll('[data-testid=welcome-found] li')].map((li) => li.getBoundingClientRect().height),
  );
  assert.ok(heights.length >= 2, `folders listed: ${heights}`);
  assert.ok(heights.every((h) => h < 30), `each folder on one line: ${heights}`);
  await shot('01-first-run');
});

test('sync: the first import runs with progress and lands on the branches', async () => {
  await (await browser.$('#first-sync')).click();
  await until(async () => !(await (await byTestId('welcome')).isExisting()), 'the welcome page never went away', 60_000);
  await until(async () => (await rendered('branch-row', 'data-branch-key')).includes(LOGIN), 'feature/login is not listed');
  const status = await text(await byTestId('sync-status'));
  // As the session list shows them: the sub-agents are counted apart, under their parents.
  assert.match(status, /Synced: 19 new sessions \(and 3 sub-agents\)/, status);
  // What the sync could not read is in the status bar: Enter on the count opens the list, which
  // names the empty transcript the seed left, and Esc closes it. The next sync says it no more.
  const warnings = await byTestId('sync-warnings');
  assert.ok(await warnings.isExisting(), `the status bar names what the sync could not read: ${status}`);
  await browser.execute(() => document.querySelector('[data-testid="sync-warnings"] summary').focus());
  await browser.keys('Enter');
  const opened = await browser.execute(() => {
    const details = document.querySelector('[data-testid="sync-warnings"]');
    return { open: details.open, items: [...details.querySelectorAll('li')].map((li) => li.textContent) };
  });
  assert.ok(opened.open, 'Enter on the count opens the list');
  assert.ok(
    opened.items.some((t) => t.includes('5a1d0c3e-4444-4aaa-8bbb-000000000004.jsonl') && t.includes('empty file skipped')),
    `the empty transcript is named: ${JSON.stringify(opened.items)}`,
  );
  await shot('02-sync-warnings');
  await browser.keys('Escape');
  assert.equal(await browser.execute(() => document.querySelector('[data-testid="sync-warnings"]').open), false, 'Esc closes the list');
  await (await browser.$('button[title="Import new transcripts now"]')).click();
  await until(
    async () => (await (await byTestId('sync-status')).getAttribute('data-status')) === 'done' && !(await (await byTestId('sync-warnings')).isExisting()),
    'the next sync still lists the warnings the first one gave',
    60_000,
  );
  const repos = await browser.execute(() => [...document.querySelectorAll('[data-testid="repo-row"]')].map((r) => r.textContent));
  assert.ok(repos.some((r) => r.includes('shop')), `the seeded repository is listed: ${repos}`);
  // With the distil offer above it, the branch list still ends above the status bar (it ran
  // under it), and a row's second line fits its width (it was cut at the sidebar's edge).
  const layout = await browser.execute(() => {
    const list = document.querySelector('nav [role="listbox"]').getBoundingClientRect();
    const bar = document.querySelector('[data-testid="sync-status"]').closest('footer').getBoundingClientRect();
    const metas = [...document.querySelectorAll('[data-testid="branch-row"] .meta')];
    return {
      offer: document.querySelector('[data-testid="distil-offer"]') !== null,
      listBottom: list.bottom,
      barTop: bar.top,
      overflowing: metas.filter((m) => m.scrollWidth > m.clientWidth + 1).length,
      cut: [...document.querySelectorAll('[data-testid="branch-row"] .sessions')]
        .filter((s) => s.scrollWidth > s.clientWidth + 1)
        .map((s) => s.textContent),
    };
  });
  assert.ok(layout.offer, 'the distil offer is shown above the list');
  assert.ok(layout.listBottom <= layout.barTop + 0.5, `the list runs under the status bar: ${JSON.stringify(layout)}`);
  assert.equal(layout.overflowing, 0, 'every branch row fits the sidebar');
  // The sessions phrase is brief enough to read whole, not cut by the ellipsis.
  assert.deepEqual(layout.cut, [], 'a branch row cuts its sessions phrase');
  await shot('02-synced-branches');
});

test('pick a branch: its skim timeline shows the work and why it is related', async () => {
  await (await browser.$(`[data-testid="branch-row"][data-branch-key="${LOGIN}"]`)).click();
  const head = await byTestId('skim-head');
  await head.waitForExist({ timeout: 10_000 });
  assert.match(await text(head), /feature\/login/);
  const sessions = await browser.$$('[data-testid="skim-session"]');
  assert.equal(sessions.length, 1, 'one session has evidence of work landing on feature/login');
  const card = await text(sessions[0]);
  assert.match(card, /Make login accept any known user/);
  assert.match(card, /committed [0-9a-f]{7} "Login accepts known users"/);
  loginKey = await sessions[0].getAttribute('data-session-key');
  const turns = await browser.$$('[data-testid="skim-turn"]');
  assert.equal(turns.length, 2, 'both turns of the session are listed');
  assert.match(await text(turns[1]), /committed/);

  // The session that only talked while the branch was checked out is in the collapsed group.
  const group = await byTestId('weak-group');
  assert.match(await text(group), /Also ran on this branch \(1\)/);
  await (await group.$('button')).click();
  await until(async () => (await browser.$$('[data-testid="skim-session"]')).length === 2, 'the weak group did not open');
  await shot('03-skim-timeline');
});

test('open a session: turn timeline, model and token usage', async () => {
  const card = await browser.$(`[data-testid="skim-session"][data-session-key="${loginKey}"]`);
  await (await card.$('button.open')).click();
  const view = await byTestId('session-view');
  await view.waitForExist({ timeout: 10_000 });
  assert.equal(await view.getAttribute('data-session-key'), loginKey);
  await until(async () => (await rendered('turn-row', 'data-turn-index')).length === 2, 'the two turns are not shown');
  assert.match(await text(await byTestId('session-model')), /claude-sonnet-4-5/);
  assert.match(await text(await byTestId('session-tokens')), /in.*out/);
  await shot('04-session');
});

test('expand a turn: records with the edit as a diff and the command line', async () => {
  await (await browser.$('[data-testid="turn-row"][data-turn-index="0"] button')).click();
  await until(async () => (await rendered('record-row', 'data-ordinal')).length >= 6, 'the records did not load');
  const diff = await text(await byTestId('tool-diff'));
  assert.match(diff, /-return false;/);
  assert.match(diff, /\+return user !== null;/);
  assert.match(await text(await byTestId('tool-command')), /\$ printf/);
  await shot('05-turn-expanded');
});

test('follow an evidence link: the session opens at the record, highlighted', async () => {
  await browser.keys(['Escape']);
  await (await byTestId('skim-head')).waitForExist({ timeout: 10_000 });
  const link = await browser.$(`[data-testid="skim-session"][data-session-key="${loginKey}"] [data-testid="evidence-link"]`);
  await link.click();
  // The list centres the record, then re-aims as the rows around it are measured.
  await until(async () => (await highlightedRecord())?.visible === true, 'no highlighted record came into view');
  const record = await highlightedRecord();
  assert.deepEqual(record, { ordinal: String(seed.commitOrdinal), visible: true, selected: true });
  const highlighted = await text(await browser.$('.record.highlighted'));
  assert.match(highlighted, /Login accepts known users/);
  await shot('06-evidence-link');
});

test('search: full text with results that jump to the record', async () => {
  await browser.keys(['/']);
  const input = await browser.$('#search-input');
  await input.waitForExist({ timeout: 5_000 });
  assert.equal(await browser.execute(() => document.activeElement?.id), 'search-input', '/ focuses the search box');
  await input.setValue('Login accepts known users');
  await until(async () => (await rendered('search-hit', 'data-session-key')).length > 0, 'no search results');
  const hits = await rendered('search-hit', 'data-session-key');
  assert.ok(hits.every((k) => k === loginKey), 'only the login session talks about known users');
  assert.ok(await (await browser.$('[data-testid="search-hit"] mark')).isExisting(), 'matches are marked');
  await shot('07-search');

  const ordinal = await (await browser.$('[data-testid="search-hit"]')).getAttribute('data-ordinal');
  await browser.keys(['ArrowDown']); // leave the box for the results
  await browser.keys(['Enter']);
  await until(async () => (await highlightedRecord())?.ordinal === ordinal, 'the hit did not open at its record');
  await until(async () => (await highlightedRecord())?.visible === true, 'the record did not come into view');
  await shot('08-search-opened');
});

test('live: a turn an agent appends shows up in the open session', async () => {
  const file = join(seed.claudeDir, '-shop', `${seed.sessions.login}.jsonl`);
  const base = { sessionId: seed.sessions.login, cwd: seed.repo, gitBranch: 'feature/login', version: '2.1.39' };
  const now = Date.now();
  appendFileSync(
    file,
    `${JSON.stringify({ ...base, type: 'user', uuid: 'live-1', timestamp: new Date(now).toISOString(), message: { role: 'user', content: 'Also log failed logins' } })}\n` +
      `${JSON.stringify({ ...base, type: 'assistant', uuid: 'live-2', timestamp: new Date(now + 1000).toISOString(), message: { id: 'msg_live', role: 'assistant', model: 'claude-sonnet-4-5', content: [{ type: 'text', text: 'Failed logins are logged now.' }] } })}\n`,
  );
  await until(async () => (await rendered('turn-row', 'data-turn-index')).includes('2'), 'the new turn never appeared', 20_000);
  await browser.keys(['End']); // select the new turn, the last row, which scrolls it into view
  await until(
    () => browser.execute(() => document.querySelector('[aria-selected="true"] [data-turn-index="2"]') !== null),
    'End did not select the new turn',
  );
  await shot('09-live-update');
});

test('settings: folders, hooks, health and the privacy preview', async () => {
  await (await browser.$('[data-tab="settings"]')).click();
  const sources = await byTestId('sources-claude');
  await sources.waitForExist({ timeout: 10_000 });
  const shown = await text(sources);
  assert.ok(shown.includes(seed.claudeDir), shown);
  assert.match(shown, /environment variable/);
  await until(async () => (await byTestId('health-checks')).isExisting(), 'no health checks');
  await until(async () => /REDACTED|\[/.test(await text(await byTestId('privacy-output'))), 'no privacy preview');
  const preview = await text(await byTestId('privacy-output'));
  assert.ok(!preview.includes('ghp_abcdefghijklmnopqrstuvwxyz0123456789'), `the token is removed: ${preview}`);
  // Reading the archive again, checked first: this build archived it, so nothing would change.
  await clickIn('reindex', 'Check what would change');
  await until(async () => (await byTestId('reindex-result')).isExisting(), 'the check never answered', 30_000);
  const checked = await text(await byTestId('reindex-result'));
  assert.match(
    checked,
    /^(All [\d,]+ sessions read as they were archived|The session reads as it was archived): nothing would change\.$/,
    checked,
  );
  assert.equal(await (await byTestId('reindex-run')).isEnabled(), false, 'nothing to read again, yet Read again is offered');
  await browser.execute(() => document.querySelector('[data-testid="reindex"]')?.scrollIntoView({ block: 'center' }));
  await shot('10-settings-read-again');
  await browser.execute(() => document.querySelector('[data-testid="settings-view"]')?.scrollTo(0, 0));
  await shot('10-settings');
});

/** Click the enabled button whose label starts with `label` inside `[data-testid=id]`, once
 * it is there. */
async function clickIn(id, label) {
  await until(
    () =>
      browser.execute(
        (id, label) => {
          const button = [...document.querySelectorAll(`[data-testid="${id}"] button`)].find(
            (b) => b.textContent.trim().startsWith(label) && !b.disabled,
          );
          button?.click();
          return Boolean(button);
        },
        id,
        label,
      ),
    `no "${label}" button in ${id}`,
  );
}

test('settings: the capture hook is installed, then removed, each after its diff', async () => {
  await (await browser.$('[data-tab="settings"]')).click();
  const file = join(mustEnv('HOME'), '.claude', 'settings.json');
  const hooked = () => existsSync(file) && readFileSync(file, 'utf8').includes('hook --agent claude');
  await (await byTestId('hook-claude')).waitForExist({ timeout: 10_000 });
  assert.equal(hooked(), false, 'no hook before the install');
  await clickIn('hook-claude', 'Install…');
  await until(async () => (await text(await byTestId('hook-claude'))).includes('hook --agent claude'), 'the install diff was not shown');
  assert.equal(hooked(), false, 'the preview wrote nothing');
  await clickIn('hook-claude', 'Install the hook');
  await until(async () => hooked(), 'the hook was not written');
  await clickIn('hook-claude', 'Remove…');
  await until(async () => /Remove the hooks/.test(await text(await byTestId('hook-claude'))), 'the removal diff was not shown');
  assert.equal(hooked(), true, 'the preview removed nothing');
  await clickIn('hook-claude', 'Remove the hooks');
  await until(async () => /Removed from/.test(await text(await byTestId('hook-claude'))), 'the removal was not confirmed');
  assert.equal(hooked(), false, 'the hook is gone from the settings file');
  await (await byTestId('hook-claude')).scrollIntoView();
  await shot('10a-hook-removed');
});

test('a second launch with a cairn:// link hands it to the open window and exits', async () => {
  const running = appProcesses();
  assert.equal(running.length, 1, `one app runs: ${running}`);
  assert.ok(instanceNameOwned(), `the open window holds ${instanceName}`);
  await handOver(`cairn://session/${loginKey}?record=${seed.commitOrdinal}`);
  await until(async () => (await highlightedRecord())?.ordinal === String(seed.commitOrdinal), 'the open window did not follow the link', 20_000);
  await until(async () => (await highlightedRecord())?.visible === true, 'the record did not come into view');
  assert.deepEqual(appProcesses(), running, 'only the first app runs');
  await shot('10b-second-launch-link');

  // A link naming a folder no agent worked in: refused in words, and no git runs there.
  const elsewhere = mkdtempSync(join(tmpdir(), 'cairn-e2e-unknown-'));
  await handOver(`cairn://branches?${new URLSearchParams({ branch: 'ref:refs/heads/main', repo: elsewhere })}`);
  await until(
    async () => (await text(await browser.$('body'))).includes(`no repository with agent sessions at ${elsewhere}`),
    'a link to a repository the archive does not know was not refused',
    20_000,
  );
  await (await browser.$('[data-tab="sessions"]')).click();
});

test('a cairn:// link on the command line opens the app at that record', async () => {
  const link = `cairn://session/${loginKey}?record=${seed.commitOrdinal}`;
  await restartApp([link]);
  await until(async () => (await highlightedRecord())?.ordinal === String(seed.commitOrdinal), 'the link was not followed', 20_000);
  await until(async () => (await highlightedRecord())?.visible === true, 'the record did not come into view');
  await shot('11-launched-on-link');
});

test('recall: an entry accepted in the inbox is found trusted and its evidence opens the record', async () => {
  // A reviewer's import writes a reviewed entry; extraction writes unreviewed ones, so the entry is
  // turned back to unreviewed the way extraction leaves it.
  const dir = mkdtempSync(join(tmpdir(), 'cairn-e2e-recall-'));
  const file = join(dir, 'entries.jsonl');
  writeFileSync(
    file,
    `${JSON.stringify({
      candidate_id: 'e2e-login',
      session_id: seed.sessions.login,
      type: 'decision',
      scope: 'project',
      title: 'Login accepts known users only',
      body: 'login() returns true only for a known user; the commit on feature/login made it so.',
      label: 'correct',
      evidence: { ordinal_start: seed.commitOrdinal, ordinal_end: seed.commitOrdinal },
    })}\n`,
  );
  execFileSync(mustEnv('CAIRN_E2E_CLI'), ['recall', 'import', file, '--yes'], { stdio: 'pipe' });
  execFileSync('sqlite3', [
    '-cmd',
    '.timeout 10000',
    join(dataDir, 'cairn.db'),
    "UPDATE recall_entries SET review_state = 'unreviewed_auto', transferable = 0, reviewed_at = NULL WHERE id = 'e2e-login'",
  ]);

  await (await browser.$('[data-tab="recall"]')).click();
  await (await browser.$('[data-recall-tab="inbox"]')).click();
  await until(async () => (await rendered('inbox-item', 'data-entry-id')).includes('e2e-login'), 'the entry is not in the inbox');
  await shot('12-recall-inbox');
  // Edited first: narrowed to the branch its session ran on, and typed a warning.
  await (await byTestId('edit')).click();
  await (await byTestId('draft-type')).selectByAttribute('value', 'warning');
  await (await byTestId('draft-scope')).selectByAttribute('value', 'branch');
  await until(async () => /only in sessions on feature\/login/.test(await text(await byTestId('draft-scope-means'))), 'the scope does not say where it applies');
  await (await byTestId('accept')).click();
  await until(async () => (await byTestId('inbox-empty')).isExisting(), 'the inbox did not empty after the accept');

  await (await browser.$('[data-recall-tab="corpus"]')).click();
  await (await byTestId('recall-show')).selectByAttribute('value', 'trusted');
  await (await browser.$('#recall-search')).setValue('known users');
  const entry = 'recall-entry';
  await until(
    () =>
      browser.execute(
        (id) => document.querySelector(`[data-testid="${id}"][data-entry-id="e2e-login"]`)?.getAttribute('data-trusted') === 'true',
        entry,
      ),
    'the accepted entry is not found trusted-only',
  );
  await shot('13-recall-trusted');
  const card = await text(await browser.$('[data-testid="recall-entry"][data-entry-id="e2e-login"] .meta'));
  assert.match(card, /warning/);
  assert.match(card, /branch/);
  await (await browser.$('[data-entry-id="e2e-login"] [data-testid="recall-evidence"]')).click();
  await until(async () => (await highlightedRecord())?.ordinal === String(seed.commitOrdinal), 'the evidence link did not open its record');
  await until(async () => (await highlightedRecord())?.visible === true, 'the record did not come into view');
  assert.match(await text(await browser.$('.record.highlighted')), /Login accepts known users/);
  await shot('14-recall-evidence');
});

test('generated insights: the agent CLI writes a report, which opens by its cairn://recall link', async () => {
  await (await browser.$('[data-tab="recall"]')).click();
  await (await browser.$('[data-recall-tab="generated"]')).click();
  await until(async () => /\d+ sessions? \(/.test(await text(await byTestId('insight-slice'))), 'the form does not show the slice');
  await (await byTestId('generate')).click();
  await until(async () => (await byTestId('insight-view')).isExisting(), 'no report was generated', 60_000);
  const id = await (await byTestId('insight-view')).getAttribute('data-insight-id');
  assert.match(id, /^[1-9][0-9]*$/);

  await restartApp([`cairn://recall?tab=generated&insight=${id}`]);
  await until(
    async () => (await (await byTestId('insight-view')).getAttribute('data-insight-id').catch(() => null)) === id,
    'the cairn://recall link did not open the report',
    20_000,
  );
  const body = await byTestId('insight-body');
  assert.match(await text(body), /E2E weekly report/);
  const unsafe = await browser.execute(() => ({
    scripts: document.querySelectorAll('[data-testid="insight-body"] script').length,
    hrefs: [...document.querySelectorAll('[data-testid="insight-body"] a')].map((a) => a.getAttribute('href')),
    title: document.title,
  }));
  assert.equal(unsafe.scripts, 0);
  assert.notEqual(unsafe.title, 'pwned');
  assert.ok(unsafe.hrefs.every((h) => h === null || h.startsWith('cairn://')), `only cairn:// links stay live: ${unsafe.hrefs}`);
  // Times read as dates, counts agree with their nouns, and the saved report's title is not
  // squeezed out by its slice (it read "Weekly su…").
  const head = await text(await browser.$('[data-testid="insight-view"] .muted'));
  assert.doesNotMatch(head, /\d{4}-\d\d-\d\dT|\b1 sessions\b/, head);
  assert.match(head, /\d+ sessions? ·\s/, head);
  assert.doesNotMatch(await text(await byTestId('insight-slice')), /\d{4}-\d\d-\d\dT|\b1 sessions\b/);
  // A title cut short keeps at least 40% of its row, and the row does not repeat the slice
  // the title already names.
  const rows = await browser.execute(() =>
    [...document.querySelectorAll('[data-testid="insight-row"]')].map((row) => {
      const link = row.querySelector('.link');
      return {
        cut: link.scrollWidth > link.clientWidth + 1,
        share: link.clientWidth / row.clientWidth,
        meta: [...row.querySelectorAll('.muted')].map((m) => m.textContent).join(' · '),
        dateCut: row.querySelector('.date').scrollWidth > row.querySelector('.date').clientWidth + 1,
      };
    }),
  );
  assert.ok(rows.length > 0);
  for (const r of rows) {
    assert.ok(!r.cut || r.share >= 0.39, `a saved report's title is squeezed: ${JSON.stringify(r)}`);
    assert.match(r.meta, /^\d{4}-\d\d-\d\d$/, `the row repeats the slice its title names: ${r.meta}`);
    assert.ok(!r.dateCut, 'the date is cut');
  }
  await shot('15-report-by-link');

  // The report's session link opens the session.
  await (await browser.$('[data-testid="insight-body"] a[data-cairn-link]')).click();
  await (await byTestId('session-view')).waitForExist({ timeout: 10_000 });
  await until(async () => (await highlightedRecord()) !== null, 'the report link did not open a record');
  await shot('16-report-link-followed');
});

// ---- why2
test('a branch of sessions in no repository: its timeline shows that group\'s sessions, not every repository\'s', async () => {
  await (await browser.$('[data-tab="branches"]')).click();
  // `main` of the group `repo` (Codex and Copilot fixtures whose folder is no repository here):
  // two sessions that only ran on it. The shop repository's `main` has a commit on it, which
  // this timeline must not show.
  const row = await browser.$('[data-testid="branch-row"][data-branch-key="ref:refs/heads/main"][data-group="repo"]');
  await row.waitForExist({ timeout: 10_000 });
  assert.match(await text(row), /2/, 'the row counts two sessions');
  await row.click();
  const group = await byTestId('weak-group');
  await until(async () => /Also ran on this branch \(2\)/.test(await text(group).catch(() => '')), 'the group\'s two sessions are not the timeline');
  assert.equal((await browser.$$('[data-testid="skim-session"]')).length, 0, 'no session with work landing on main of another repository');
  await shot('16a-branch-outside-a-repository');
});

test('why: from a commit of the branch timeline to the session and turn that made it', async () => {
  await (await browser.$('[data-tab="branches"]')).click();
  await (await browser.$(`[data-testid="branch-row"][data-branch-key="${LOGIN}"]`)).click();
  const card = await browser.$(`[data-testid="skim-session"][data-session-key="${loginKey}"]`);
  await card.waitForExist({ timeout: 10_000 });
  await (await card.$('[data-testid="why-commit"]')).click();
  await until(async () => (await browser.$$('[data-testid="why-session"]')).length > 0, 'Why found no session for the commit', 20_000);
  assert.match(await text(await byTestId('why-commits')), /Login accepts known users/);
  const first = (await browser.$$('[data-testid="why-session"]'))[0];
  assert.equal(await first.getAttribute('data-session-key'), loginKey, 'the login session explains its own commit first');
  assert.match(await text(first), /\d+%/);
  await shot('why-01-commit');
  await (await first.$('[data-testid="why-turn"]')).click();
  const view = await byTestId('session-view');
  await view.waitForExist({ timeout: 10_000 });
  assert.equal(await view.getAttribute('data-session-key'), loginKey);
  await until(async () => (await highlightedRecord()) !== null, 'the turn that made the commit is not highlighted');
  await shot('why-02-turn');
});

test('why: from a file the session edited, and a description typed in Search', async () => {
  await showSessionDetails();
  const edited = await byTestId('session-edited');
  await edited.waitForExist({ timeout: 10_000 });
  assert.match(await text(edited), /login\.js/);
  await (await edited.$('[data-testid="why-path"]')).click();
  // The session's folder has main checked out, whose login.js no session wrote (the edit is on
  // feature/login): the session that edited it is named all the same, at low confidence. The
  // previous answer (the commit's, which names the same session) stays on screen until this one
  // comes, so the wait is for this answer's words.
  await until(
    async () =>
      /another branch/.test(await text(await byTestId('why-results')).catch(() => '')) ||
      (await (await byTestId('why-error')).isExisting()),
    'Why on the edited file did not name the session that edited it',
    20_000,
  );
  assert.equal(await (await byTestId('why-error')).isExisting(), false, 'Why on the edited file failed');
  assert.ok((await rendered('why-session', 'data-session-key')).includes(loginKey), 'the session that edited it is not named');
  assert.match(await text(await byTestId('why-results')), /another branch/);
  assert.equal(await (await byTestId('why-session-place')).isExisting(), true, 'it is traced in the session folder');
  await shot('why-03-path');

  const input = await browser.$('#search-input');
  await input.setValue('login accept known user');
  await browser.keys('Enter');
  await until(
    async () => (await rendered('why-session', 'data-session-key')).includes(loginKey),
    'the description did not find the login session',
    20_000,
  );
  await shot('why-04-description');
});

// ---- recall3
test('recall from the first minute: the branches offer extraction, set up in Settings with the agent CLI found on PATH; a pass fills the inbox and an accepted proposal is trusted', async () => {
  // The stand-in agent (tests/e2e/bin/claude) holds its answers while this file exists, so the
  // running pass can be seen in the status bar.
  const hold = join(homedir(), 'cairn-e2e-hold');
  await (await browser.$('[data-tab="branches"]')).click();
  const offer = await byTestId('distil-offer');
  await offer.waitForExist({ timeout: 10_000 });
  assert.match(await text(offer), /Distil what your agents learned/);
  await shot('17-distil-offer');
  await (await offer.$('[data-testid="setup-extraction"]')).click();

  // Settings → Recall extraction: what is at hand was found without sending anything.
  const panel = await byTestId('extract-panel');
  await panel.waitForExist({ timeout: 10_000 });
  await until(async () => /claude/.test(await text(await byTestId('extract-detected'))), 'the agent CLI on PATH was not found');
  assert.match(await text(await byTestId('extract-detected')), /stand-in/, 'its version is shown');
  await browser.execute(() => {
    const found = [...document.querySelectorAll('[data-testid="extract-detected"] li')].find((li) => /claude/.test(li.textContent ?? ''));
    found?.querySelector('input[type="radio"]')?.click();
  });
  await until(async () => (await (await byTestId('extract-generator')).getValue()) === 'claude', 'picking the agent did not fill the form');

  // Test: one tiny request, shown with what was sent and what came back.
  await (await byTestId('extract-test')).click();
  await until(async () => (await byTestId('extract-test-result')).isExisting(), 'the test gave no result', 30_000);
  const tested = await text(await byTestId('extract-test-result'));
  assert.match(tested, /port 4173/, `the request is shown: ${tested}`);
  assert.match(tested, /The person asked/, `the answer is shown: ${tested}`);
  assert.doesNotMatch(tested, /Problem/, tested);
  await until(async () => /A pass would read [\d,]+ sessions? in [\d,]+ pieces?/.test(await text(await byTestId('extract-preview'))), 'no preview of the pass');
  await shot('18-extract-setup-tested');

  // Start: the pass runs in the background, its progress in the status bar.
  writeFileSync(hold, '');
  try {
    await (await byTestId('extract-start')).click();
    await until(async () => (await byTestId('extract-status')).isExisting(), 'the running pass is not in the status bar', 30_000);
    assert.match(await text(await byTestId('extract-status')), /Extracting/);
    await until(async () => /^On:/.test((await text(await byTestId('extract-enabled'))).trim()), 'Settings does not say extraction is on');
    await shot('19-extract-running');
  } finally {
    rmSync(hold, { force: true });
  }
  await until(async () => !(await (await byTestId('extract-status')).isExisting()), 'the pass did not end', 120_000);

  // The inbox tab has a badge with the new entries; opening it shows the proposals.
  await (await browser.$('[data-tab="recall"]')).click();
  const badge = await byTestId('inbox-badge');
  await badge.waitForExist({ timeout: 10_000 });
  assert.match(await text(badge), /[1-9]\d* new/);
  await shot('20-inbox-badge');
  await (await browser.$('[data-recall-tab="inbox"]')).click();
  await until(async () => (await rendered('inbox-item', 'data-entry-id')).length > 0, 'the proposals are not in the inbox');
  const [id] = await rendered('inbox-item', 'data-entry-id');
  assert.match(await text(await browser.$(`[data-testid="inbox-item"][data-entry-id="${id}"]`)), /The person asked/);
  await (await byTestId('accept')).click();
  await until(async () => !(await rendered('inbox-item', 'data-entry-id')).includes(id), 'the accepted proposal stayed in the inbox');

  // The entry is in Recall, trusted.
  await (await browser.$('[data-recall-tab="corpus"]')).click();
  await (await byTestId('recall-show')).selectByAttribute('value', 'trusted');
  await (await browser.$('#recall-search')).setValue('person asked');
  await until(
    () => browser.execute((entry) => document.querySelector(`[data-testid="recall-entry"][data-entry-id="${entry}"]`)?.getAttribute('data-trusted') === 'true', id),
    'the accepted proposal is not found trusted',
  );
  await shot('21-recall-first-trusted');

  // The offer was made once: the branches page no longer shows it.
  await (await browser.$('[data-tab="branches"]')).click();
  await until(async () => (await rendered('branch-row', 'data-branch-key')).length > 0, 'the branches did not come back');
  assert.equal(await (await byTestId('distil-offer')).isExisting(), false, 'the offer is made once');
});

// ---- own3
/** Unfold the session header's secondary parts (files edited, export, forget, resume), which a
 * window under 800 px tall (the app's default 720) shows folded. */
async function showSessionDetails() {
  const toggle = await byTestId('session-more-toggle');
  await toggle.waitForExist({ timeout: 10_000 });
  if ((await toggle.getAttribute('aria-expanded')) !== 'true') await toggle.click();
  await (await byTestId('session-more')).waitForExist({ timeout: 10_000 });
}

/** Open a session from the Sessions list: select its row, then Enter; its header unfolded. */
async function openFromSessions(key) {
  await (await browser.$('[data-tab="sessions"]')).click();
  const row = await browser.$(`[data-testid="session-row"][data-session-key="${key}"]`);
  await row.waitForExist({ timeout: 10_000 });
  await row.click();
  await browser.keys(['Enter']);
  await until(
    async () => (await (await byTestId('session-view')).getAttribute('data-session-key').catch(() => null)) === key,
    `session ${key} did not open`,
  );
  await showSessionDetails();
}

test('export: a session saved as one self-contained HTML page that renders on its own', async () => {
  await openFromSessions(loginKey);
  // The resume command shows whole (wrapped where it must), never cut mid-id.
  const resume = await byTestId('resume-command');
  await resume.waitForExist({ timeout: 10_000 });
  assert.ok(await browser.execute((el) => el.scrollWidth <= el.clientWidth, resume), `the resume command is cut: ${await text(resume)}`);
  await (await byTestId('export-format')).selectByAttribute('value', 'html');
  await (await byTestId('export-button')).click();
  await until(async () => /^Saved /.test(await text(await byTestId('export-result'))), 'the export did not say where it saved the page');
  const result = await text(await byTestId('export-result'));
  const path = /\((\/[^()]+\.html)\)/.exec(result)?.[1];
  assert.ok(path && existsSync(path), `the saved page exists: ${result}`);
  assert.match(result, /secrets|Redacted/, 'the result says what was redacted');
  const html = readFileSync(path, 'utf8');
  assert.match(html, /^<!DOCTYPE html>/);
  assert.match(html, /Login accepts known users/);
  assert.doesNotMatch(html, /<script|<link |src="http/, 'no scripts and no external assets');
  assert.ok(!html.includes(homedir()), 'the home directory is not in the page');
  await shot('own3-01-export-result');

  // The page as whoever receives it sees it: opened in the webview on its own, offline.
  await browser.url(`file://${path}`);
  await until(async () => (await browser.getUrl()).startsWith('file://'), 'the exported page did not open');
  const page = await browser.execute(() => ({ title: document.title, h1: document.querySelector('h1')?.textContent ?? '', body: document.body.textContent }));
  assert.ok(page.h1.length > 0 && page.title === page.h1, `the page has its title: ${JSON.stringify(page.title)}`);
  assert.match(page.body, /Login accepts known users/);
  await shot('own3-02-exported-html');
  await restartApp([]);
  await until(async () => (await rendered('branch-row', 'data-branch-key')).length > 0, 'the app did not come back after the exported page');
});

test('forget: the confirmation lists what goes, then the session is gone everywhere', async () => {
  await (await browser.$('[data-tab="sessions"]')).click();
  await until(async () => (await rendered('session-row', 'data-session-key')).length > 1, 'no sessions listed');
  const before = await rendered('session-row', 'data-session-key');
  // The list is virtual: count what it holds, not the rows on screen.
  const listedCount = async () => Number((await text(await browser.$('#session-count'))).replace(/\D/g, ''));
  const total = await listedCount();
  // The oldest session on screen that is not the one the other journeys follow.
  const victim = before.filter((k) => k !== loginKey).at(-1);
  await openFromSessions(victim);
  await (await byTestId('forget-button')).click();
  const plan = await byTestId('forget-plan');
  await plan.waitForExist({ timeout: 10_000 });
  await shot('own3-03-forget-confirmation');
  const listed = (await text(plan)).replace(/\s+/g, ' ');
  assert.match(listed, /Forgetting removes every byte of 1 session/);
  // Each count agrees with its noun ("1 turns" and "1 retained copies" were printed).
  const counts = /(\d+) (turns?), (\d+) (records?), (\d+) (retained cop(?:y|ies)), (\d+) (vectors?), (\d+) (links?)\./.exec(listed);
  assert.ok(counts, listed);
  for (let i = 1; i < counts.length; i += 2) {
    const singular = !/(s|ies)$/.test(counts[i + 1]);
    assert.equal(singular, counts[i] === '1', `${counts[i]} ${counts[i + 1]}`);
  }
  const items = await plan.$$('li');
  assert.equal(items.length >= 1, true, 'the session is listed');
  // Its start reads as a date, not an RFC 3339 time.
  const first = await text(items[0]);
  assert.doesNotMatch(first, /\d{4}-\d\d-\d\dT/, first);
  await (await byTestId('forget-confirm')).click();
  await until(async () => /^Forgot 1 session/.test((await text(await byTestId('forget-result'))).trim()), 'the forget did not report what went');

  await (await browser.$('[data-tab="sessions"]')).click();
  await until(async () => {
    const keys = await rendered('session-row', 'data-session-key');
    return (await listedCount()) === total - 1 && !keys.includes(victim);
  }, 'the forgotten session is still listed');
  await shot('own3-04-forgotten');
  // Nothing of it is left to find: the CLI on the same archive does not know it.
  const listing = execFileSync(mustEnv('CAIRN_E2E_CLI'), ['--json', 'sessions', '--limit', '1000'], { encoding: 'utf8' });
  assert.ok(!listing.includes(victim), 'the archive still lists the forgotten session');
});

// ---- team-desk
test('team: set up the team archive in Settings, then open a teammate’s session from it', async () => {
  const team = {
    host: mustEnv('CAIRN_E2E_TEAM_HOST'),
    port: mustEnv('CAIRN_E2E_TEAM_PORT'),
    db: mustEnv('CAIRN_E2E_TEAM_DB'),
    user: mustEnv('CAIRN_E2E_TEAM_USER'),
    publisher: mustEnv('CAIRN_E2E_TEAM_PUBLISHER'),
    password: mustEnv('CAIRN_E2E_TEAM_PW'),
  };
  await (await browser.$('[data-tab="settings"]')).click();
  await (await byTestId('team-form')).waitForExist({ timeout: 10_000 });
  await fill('team-host', team.host);
  await fill('team-port', team.port);
  await fill('team-database', team.db);
  await fill('team-user', team.user);
  // The form takes the variable's name; the password stays in the environment.
  await fill('team-password-env', 'CAIRN_E2E_TEAM_PW');
  await (await byTestId('team-test')).click();
  await until(async () => (await byTestId('team-test-result')).isExisting(), 'Test connection did not answer', 30_000);
  const result = await text(await byTestId('team-test-result'));
  assert.match(result, new RegExp(`as ${team.user}`));
  assert.match(result, /1 session from 1\s+teammate/);
  assert.ok(!result.includes(team.password), result);
  await (await byTestId('team-save')).click();
  // Saved: Push now appears, and the variable is found set in the app's environment.
  await until(async () => (await byTestId('team-push')).isExisting(), 'the form was not saved');
  assert.match(await text(await byTestId('team-address')), /CAIRN_E2E_TEAM_PW \(set\)/);
  const config = readFileSync(join(dataDir, 'config.toml'), 'utf8');
  assert.match(config, /\[team\]/);
  assert.match(config, /password_env = "CAIRN_E2E_TEAM_PW"/);
  assert.ok(!config.includes(team.password), 'the password reached config.toml');
  await shot('17-team-settings');

  await (await browser.$('[data-tab="team"]')).click();
  await fill('team-search-input', 'quokka');
  await (await byTestId('team-search')).click();
  await until(async () => (await byTestId('team-hit')).isExisting(), 'the team search found nothing', 30_000);
  assert.match(await text(await byTestId('team-hit')), new RegExp(team.publisher));
  // The match is marked as the local search marks it, no asterisks left in the text.
  assert.match(await text(await (await byTestId('team-hit')).$('mark')), /quokka/i);
  assert.doesNotMatch(await text(await byTestId('team-hit')), /\*\*/);
  await (await byTestId('team-hit')).click();
  await (await byTestId('team-session')).waitForExist({ timeout: 20_000 });
  assert.match(await text(await byTestId('team-publisher')), new RegExp(`Published by ${team.publisher}`));
  assert.match(await text(await byTestId('team-readonly')), /Read-only/);
  await until(
    async () => (await rendered('team-record', 'data-kind')).length >= 2,
    'the teammate’s records did not render',
  );
  assert.match(await text(await byTestId('team-session')), /quokka migration moves stock counts/);
  // Headed by its first request (the push had no title: it showed the session's key), counted
  // in words that agree, linked to the branch by name with the evidence in words.
  assert.equal(await text(await byTestId('team-session-title')), 'Plan the quokka inventory migration for the shop');
  assert.match(await text(await byTestId('team-session')), /Claude · shop · feature\/quokka · [^·]+ · 1 turn · 2 records/);
  const why = await text(await byTestId('team-why'));
  assert.equal(why, 'Linked to feature/quokka (ran on branch)');
  await shot('18-team-session');
});

test('team: a skim kept to one of this archive’s repositories leaves out another repository’s branch', async () => {
  await (await browser.$('[data-tab="team"]')).click();
  // The teammate's session the journey before opened: back to the view's search and skim.
  const back = await browser.$('[data-testid="team-back"]');
  if (await back.isExisting()) await back.click();
  await (await byTestId('team-skim-input')).waitForExist({ timeout: 10_000 });
  const sessions = async () => (await browser.$$('[data-testid="team-skim-session"]')).length;
  await fill('team-skim-input', 'feature/quokka');
  await (await byTestId('team-skim')).click();
  await until(async () => (await sessions()) === 1, 'the teammate’s session is not in the skim of every repository', 30_000);
  // The shop repository of this machine: the teammate's session was pushed from another one.
  const repo = await byTestId('team-skim-repo');
  await repo.selectByVisibleText('shop');
  await until(
    async () => /No teammate’s session is linked/.test(await text(await browser.$('[data-testid="team-view"]'))),
    'a skim kept to shop still lists another repository’s session',
    30_000,
  );
  await shot('18a-team-skim-one-repository');
  await repo.selectByVisibleText('Every repository');
  await until(async () => (await sessions()) === 1, 'every repository’s skim did not come back', 30_000);
});

test('team: a cairn://team link opens a teammate’s session in the open window; a bad one is refused in words', async () => {
  const session = mustEnv('CAIRN_E2E_TEAM_SESSION');
  const publisher = mustEnv('CAIRN_E2E_TEAM_PUBLISHER');
  const teamLink = (params) => `cairn://team?${new URLSearchParams(params)}`;
  await (await browser.$('[data-tab="branches"]')).click();
  await until(async () => !(await (await byTestId('team-session')).isExisting()), 'the teammate’s session stayed open');

  await handOver(teamLink({ session, publisher }));
  await (await byTestId('team-session')).waitForExist({ timeout: 20_000 });
  assert.match(await text(await byTestId('team-publisher')), new RegExp(`Published by ${publisher}`));
  assert.match(await text(await byTestId('team-session')), /quokka migration moves stock counts/);

  // Well formed, but nobody pushed it: the team archive's answer, not an empty page.
  await handOver(teamLink({ session: `sha256-${'0'.repeat(32)}`, publisher }));
  await until(async () => (await byTestId('team-show-error')).isExisting(), 'a session nobody pushed was not reported');
  assert.match(await text(await byTestId('team-show-error')), /no session sha256-0{32} in the team archive/);

  // A link comes from outside: a publisher that is no database role (a terminal escape, a space).
  await handOver(teamLink({ session, publisher: `${publisher}\u001b[31m; DROP` }));
  await until(async () => (await byTestId('link-error')).isExisting(), 'the bad link was not refused');
  assert.match(await text(await byTestId('link-error')), /publisher must be a database role/);
  assert.equal(appProcesses().length, 1, 'the bad link did not start or stop an app');
  await (await browser.$('[data-testid="link-error"] button')).click();
  await shot('18b-team-link');
});

// ---- team-keyring
/** What libsecret's own client (not Cairn's) finds in the keyring under Cairn's item for `account`. */
function keyringItem(account) {
  try {
    return execFileSync('secret-tool', ['lookup', 'application', 'cairn', 'service', 'cairn-team', 'account', account], { encoding: 'utf8' });
  } catch {
    return null; // secret-tool exits 1 when nothing matches
  }
}

/** Files under `dir` whose bytes contain `needle`. */
function filesHolding(dir, needle) {
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath ?? entry.path, entry.name);
    if (readFileSync(path).includes(needle)) found.push(path);
  }
  return found;
}

test('team: the password kept in the OS keyring from Settings, the team archive read with it alone, then forgotten', async () => {
  const password = mustEnv('CAIRN_E2E_TEAM_PW');
  const account = `${mustEnv('CAIRN_E2E_TEAM_USER')}@${mustEnv('CAIRN_E2E_TEAM_HOST')}:${mustEnv('CAIRN_E2E_TEAM_PORT')}/${mustEnv('CAIRN_E2E_TEAM_DB')}`;
  assert.equal(keyringItem(account), null, 'the throwaway keyring starts empty');
  await (await browser.$('[data-tab="settings"]')).click();
  const state = await byTestId('team-keyring-state');
  await state.waitForExist({ timeout: 10_000 });
  assert.match(await text(state), new RegExp(`the Secret Service keeps no password for ${account}`, 'i'));

  // A wrong password: the server refuses it, so the keyring is not touched.
  await fill('team-keyring-password', `${password}-wrong`);
  await (await byTestId('team-keyring-remember')).click();
  await until(async () => (await byTestId('team-keyring-error')).isExisting(), 'a refused password was not reported', 30_000);
  assert.ok(!(await text(await byTestId('team-keyring-error'))).includes(password), 'the error shows the password');
  assert.equal(keyringItem(account), null, 'a refused password was kept');

  // The right one: checked, kept, and read back by another client; the field is emptied.
  await fill('team-keyring-password', password);
  await (await byTestId('team-keyring-remember')).click();
  await until(
    async () => /The server accepted it; kept it in the Secret Service/.test(await text(await byTestId('team-keyring-result'))),
    'Remember did not report the password kept',
    30_000,
  );
  assert.equal(keyringItem(account), password);
  assert.equal(await (await byTestId('team-keyring-password')).getValue(), '');
  await until(async () => /is kept in the Secret Service/.test(await text(await byTestId('team-keyring-state'))), 'the state did not say it is kept');
  assert.deepEqual(filesHolding(dataDir, password), [], 'the password reached the data dir');
  await shot('18c-team-keyring');

  // The form now names a variable Cairn's environment does not have: the keyring's password
  // alone reads the team archive.
  await fill('team-password-env', 'CAIRN_E2E_NO_SUCH_PW');
  await (await byTestId('team-save')).click();
  await until(async () => /CAIRN_E2E_NO_SUCH_PW \(not set/.test(await text(await byTestId('team-address'))), 'the form was not saved');
  const teamSession = `cairn://team?${new URLSearchParams({ session: mustEnv('CAIRN_E2E_TEAM_SESSION'), publisher: mustEnv('CAIRN_E2E_TEAM_PUBLISHER') })}`;
  await handOver(teamSession);
  await until(
    async () => /quokka migration moves stock counts/.test(await text(await byTestId('team-session'))),
    'the teammate’s session was not read with the keyring’s password',
    30_000,
  );

  // Forget: gone from the keyring, and the next read is refused with what to do.
  await (await browser.$('[data-tab="settings"]')).click();
  await (await byTestId('team-keyring-forget')).click();
  await until(
    async () => /Forgotten: the keyring no longer keeps it/.test(await text(await byTestId('team-keyring-result'))),
    'Forget did not report the password gone',
  );
  assert.equal(keyringItem(account), null, 'the keyring still keeps the password');
  await handOver(teamSession);
  await until(async () => (await byTestId('team-show-error')).isExisting(), 'a read without a password was not refused', 30_000);
  assert.match(await text(await byTestId('team-show-error')), /cairn team login/);
});

// ---- agents-app
/** Where each part of the agent filter bar on screen sits, and the window's width. */
function filterBar() {
  return browser.execute(() => {
    const bar = document.querySelector('[data-testid="agent-filter"]');
    if (!bar) return null;
    const box = (el) => {
      const r = el.getBoundingClientRect();
      return { left: r.left, right: r.right };
    };
    const more = bar.querySelector('[data-testid="agent-more"]');
    return {
      width: window.innerWidth,
      chips: [...bar.querySelectorAll('label[data-agent-filter]')].map((l) => ({ agent: l.dataset.agentFilter, ...box(l) })),
      more: more ? { options: [...more.querySelectorAll('option')].map((o) => o.value).filter(Boolean), ...box(more) } : null,
    };
  });
}

/** Choose an agent in the bar on screen: its button, or the menu when it has none. */
async function pickAgent(agent) {
  const chip = await browser.$(`[data-testid="agent-filter"] label[data-agent-filter="${agent}"]`);
  if (await chip.isExisting()) await chip.click();
  else await (await byTestId('agent-more')).selectByAttribute('value', agent);
}

async function assertFits(where) {
  const bar = await filterBar();
  assert.ok(bar, `${where}: no agent filter`);
  for (const part of [...bar.chips, ...(bar.more ? [bar.more] : [])]) {
    assert.ok(part.left >= 0 && part.right <= bar.width, `${where}: ${JSON.stringify(part)} runs off a ${bar.width} px window`);
  }
  return bar;
}

test('agents: the filter bars offer the agents in the archive, fit the window, and filter sessions and branches', async () => {
  // The window at 1280 px, where the bar of every agent used to run off the right edge.
  await browser.setWindowSize(1280, 800).catch(() => {});
  await (await browser.$('[data-tab="sessions"]')).click();
  await until(async () => (await rendered('session-row', 'data-agent')).length > 1, 'no sessions listed');
  await until(async () => ((await filterBar())?.more?.options.length ?? 0) > 0, 'the bar has no menu for the other agents');
  const bar = await assertFits('sessions');
  const offered = [...bar.chips.map((c) => c.agent), ...bar.more.options];
  // Every agent with sessions once, and none without: 8 seeded agents, not the 16 Cairn reads.
  const seeded = ['claude', 'codex', ...seed.otherAgents];
  assert.deepEqual([...offered].sort(), ['all', ...seeded].sort(), `offered: ${offered}`);
  assert.equal(bar.chips.length, 6, 'All and five agents as buttons');
  await shot('agents-01-sessions-bar');

  // An agent from the menu: only its sessions are listed, and it shows as the menu's choice.
  const picked = bar.more.options.at(-1);
  await (await byTestId('agent-more')).selectByAttribute('value', picked);
  await until(async () => {
    const agents = await rendered('session-row', 'data-agent');
    return agents.length > 0 && agents.every((a) => a === picked);
  }, `the list is not only ${picked}'s sessions`);
  assert.equal(await (await byTestId('agent-more')).getValue(), picked);
  await assertFits('sessions, filtered');
  // Back to every agent with a button: the keyboard reaches it as a radio.
  await (await browser.$('[data-testid="agent-filter"] label[data-agent-filter="all"]')).click();
  await until(async () => new Set(await rendered('session-row', 'data-agent')).size > 2, 'All did not bring every agent back');

  // Branches: Codex's fixture session ran on `main` of a folder that is no repository here, so
  // its branch stands alone; Gemini's recorded no branch at all.
  await (await browser.$('[data-tab="branches"]')).click();
  await until(async () => (await rendered('branch-row', 'data-branch-key')).includes(LOGIN), 'feature/login is not listed');
  await assertFits('branches');
  const repoNames = () => browser.execute(() => [...document.querySelectorAll('[data-testid="repo-row"]')].map((r) => r.textContent ?? ''));
  await pickAgent('codex');
  await until(async () => {
    const names = await repoNames();
    return names.length > 0 && !names.some((n) => n.includes('shop')) && !(await rendered('branch-row', 'data-branch-key')).includes(LOGIN);
  }, 'the shop repository is still listed for Codex');
  await pickAgent('gemini');
  await until(async () => {
    const empty = await byTestId('branches-empty');
    return (await empty.isExisting()) && /No branches with Gemini sessions/.test(await text(empty));
  }, 'Gemini has branches');
  await shot('agents-02-branches-gemini');
  await pickAgent('claude');
  await until(async () => (await rendered('branch-row', 'data-branch-key')).includes(LOGIN), 'Claude\'s branch is not listed');
  await (await browser.$(`[data-testid="branch-row"][data-branch-key="${LOGIN}"]`)).click();
  await until(async () => {
    const agents = await rendered('skim-session', 'data-agent');
    return agents.length > 0 && agents.every((a) => a === 'claude');
  }, 'the timeline is not only Claude\'s sessions');
  await (await browser.$('[data-testid="agent-filter"] label[data-agent-filter="all"]')).click();
  await until(async () => (await rendered('branch-row', 'data-branch-key')).length > 1, 'All did not bring the branches back');
});

// ---- team-git2
test('git: pull a teammate’s published sessions in the branch view, see who published them, and open one', async () => {
  const mate = JSON.parse(readFileSync(mustEnv('CAIRN_E2E_GIT_SEED'), 'utf8'));
  await (await browser.$('[data-tab="branches"]')).click();
  const row = await browser.$(`[data-testid="branch-row"][data-branch-key="${LOGIN}"]`);
  await row.waitForExist({ timeout: 10_000 });
  await row.click();
  const pull = await byTestId('pull-teammates');
  await pull.waitForExist({ timeout: 10_000 });
  const before = await rendered('skim-session', 'data-session-key');
  await pull.click();
  await until(async () => (await byTestId('skim-pulled')).isExisting(), 'the pull did not report', 30_000);
  assert.match(await text(await byTestId('skim-pulled')), /Pulled 1 published session from origin \(1 in full\)/);
  await until(
    async () => (await rendered('skim-session', 'data-session-key')).length === before.length + 1,
    'the teammate’s session is not on the timeline',
  );
  const badge = await byTestId('published-by');
  assert.match(await text(badge), new RegExp(`published by ${mate.publisher}`));
  await shot('git-01-pulled-on-branch');

  // Open it: the teammate's whole session, marked as theirs, shown as the agent that ran it.
  let teammate = null;
  for (const card of await browser.$$('[data-testid="skim-session"]')) {
    if (/quokka/.test(await text(card))) teammate = card;
  }
  assert.ok(teammate, 'no card holds the teammate’s work');
  await (await teammate.$('button.open')).click();
  const view = await byTestId('session-view');
  await view.waitForExist({ timeout: 10_000 });
  await until(async () => /Remember the quokka accounts on login/.test(await text(view)), 'the teammate’s session did not open');
  assert.match(await text(await byTestId('session-published-by')), new RegExp(`Published by ${mate.publisher}.*pulled from origin`));
  assert.match(await text(await byTestId('agent-badge')), /Claude/);
  await shot('git-02-teammate-session');
});

// ---- e2e-endpoint
/** Scroll an element to the middle of the window, for a screenshot that shows it. */
const showTestId = (id) => browser.execute((tid) => document.querySelector(`[data-testid="${tid}"]`)?.scrollIntoView({ block: 'center' }), id);

test('recall through an OpenAI-compatible endpoint: typed into Settings with the name of its key variable, tested, previewed and run; its entries fill the inbox and an accepted one is trusted', async () => {
  // The fake server (tests/e2e/fake-llm.mjs) on loopback; it refuses requests without the key
  // run.sh put in the app's environment, whose NAME is all the form is given.
  const keyVar = 'CAIRN_E2E_LLM_KEY';
  const key = mustEnv(keyVar);
  const llm = await startFakeLlm({ key });
  try {
    await (await browser.$('[data-tab="settings"]')).click();
    await (await byTestId('extract-panel')).waitForExist({ timeout: 10_000 });
    await (await byTestId('extract-form')).waitForExist({ timeout: 10_000 });
    // Whatever an earlier journey chose (the agent CLI found on PATH), switch to the endpoint.
    await (await byTestId('extract-generator')).selectByAttribute('value', 'endpoint');
    await (await byTestId('extract-endpoint')).waitForExist({ timeout: 5_000 });
    await fill('extract-endpoint', llm.url);
    await fill('extract-model', llm.model);
    await fill('extract-key-var', keyVar);
    // Only by hand: no pass starts on its own while the form is saved, so the one the Run
    // button starts is the one the preview describes.
    await (await byTestId('extract-schedule')).selectByAttribute('value', 'manual');
    assert.equal(await (await byTestId('extract-gap')).isExisting(), false, 'the form still lacks something');

    // Test: the model list and one tiny extraction, both through the fake server with the key.
    await (await byTestId('extract-test')).click();
    await until(async () => {
      const result = await byTestId('extract-test-result');
      return (await result.isExisting()) && (await text(result)).includes(`${llm.model} is served`);
    }, 'the test of the endpoint gave no result', 30_000);
    const tested = await text(await byTestId('extract-test-result'));
    assert.match(tested, /port 4173/, `the request is shown: ${tested}`);
    assert.match(tested, /Records 0-0: Run the dev server/, `the answer is shown: ${tested}`);
    assert.doesNotMatch(tested, /Problem/, tested);
    assert.deepEqual(
      llm.requests().map((r) => `${r.method} ${r.path}`),
      ['GET /v1/models', 'POST /v1/chat/completions'],
      'the test sends one model list request and one tiny extraction',
    );
    await showTestId('extract-test-result');
    await shot('endpoint-01-tested');

    // Save: Cairn writes config.toml itself, with the variable's name and never the key.
    await (await byTestId('extract-save')).click();
    await until(
      async () => (await (await byTestId('extract-preview')).getAttribute('data-model').catch(() => null)) === llm.model,
      'the preview is not of the saved endpoint',
      30_000,
    );
    const config = readFileSync(join(dataDir, 'config.toml'), 'utf8');
    assert.ok(config.includes(`endpoint = "${llm.url}"`), config);
    assert.match(config, new RegExp(`api_key_env = "${keyVar}"`));
    assert.match(config, /generator = "endpoint"/);
    assert.match(config, /schedule = "manual"/);
    assert.ok(!config.includes(key), 'the key reached config.toml');
    const preview = await text(await byTestId('extract-preview'));
    const planned = /A pass would read ([1-9][\d,]*) sessions? in ([1-9][\d,]*) pieces?/.exec(preview);
    assert.ok(planned, `the preview names the work of the new model: ${preview}`);
    const units = Number(planned[2].replaceAll(',', ''));
    assert.equal(llm.chats().length, 1, 'saving sent nothing');
    await showTestId('extract-preview');
    await shot('endpoint-02-preview');

    // Run: the fake holds its answers until the running pass is seen in the status bar.
    const sentBefore = llm.chats().length;
    llm.hold();
    try {
      const run = (await (await byTestId('extract-start')).isExisting()) ? 'extract-start' : 'extract-run';
      await (await byTestId(run)).click();
      await until(async () => (await byTestId('extract-status')).isExisting(), 'the running pass is not in the status bar', 30_000);
      assert.match(await text(await byTestId('extract-status')), /Extracting/);
      await until(async () => /^On:/.test((await text(await byTestId('extract-enabled'))).trim()), 'Settings does not say extraction is on');
      assert.match(await text(await byTestId('extract-enabled')), new RegExp(llm.model));
      await shot('endpoint-03-running');
    } finally {
      llm.release();
    }
    await until(async () => !(await (await byTestId('extract-status')).isExisting()), 'the pass did not end', 180_000);
    assert.equal(llm.chats().length - sentBefore, units, 'the pass asked once per unit the preview named');
    assert.deepEqual(llm.violations(), [], 'every request carried the key and the strict schema');

    // Settings, opened again, tells the pass's outcome: the endpoint's generation now serves.
    await (await browser.$('[data-tab="branches"]')).click();
    await (await browser.$('[data-tab="settings"]')).click();
    await until(
      async () => new RegExp(`active\\s*${llm.model}`).test(await text(await byTestId('extract-generations')).catch(() => '')),
      'the endpoint’s generation is not the active one',
    );
    const lastRun = await text(await byTestId('extract-last-run'));
    const wrote = Number(/(\d+) new entr(?:y|ies)/.exec(lastRun)?.[1] ?? 0);
    assert.doesNotMatch(lastRun, /\d{4}-\d\d-\d\dT|\b1 sessions\b/, `the last pass reads as a date: ${lastRun}`);
    assert.ok(wrote > 0 && wrote <= llm.entriesServed(), `the pass wrote what the server proposed (${llm.entriesServed()}): ${lastRun}`);
    assert.doesNotMatch(lastRun, /failed|Stopped/, lastRun);

    // The inbox badge counts the pass's entries; the proposals are the endpoint's.
    await (await browser.$('[data-tab="recall"]')).click();
    const badge = await byTestId('inbox-badge');
    await badge.waitForExist({ timeout: 10_000 });
    const added = Number(/(\d+) new/.exec(await text(badge))?.[1] ?? 0);
    assert.ok(added >= wrote, `the badge (${added}) counts the pass's ${wrote} entries`);
    await shot('endpoint-04-inbox-badge');
    await (await browser.$('[data-recall-tab="inbox"]')).click();
    const proposals = () =>
      browser.execute(() =>
        [...document.querySelectorAll('[data-testid="inbox-item"]')]
          .filter((item) => /Records \d+-\d+:/.test(item.textContent ?? ''))
          .map((item) => item.getAttribute('data-entry-id')),
      );
    await until(async () => (await proposals()).length > 0, 'the endpoint’s proposals are not in the inbox');
    const [id] = await proposals();
    await (await browser.$(`[data-testid="inbox-item"][data-entry-id="${id}"] .reason`)).click();
    await until(async () => (await (await byTestId('inbox-review')).getAttribute('data-entry-id').catch(() => null)) === id, 'the proposal did not open for review');
    await (await (await byTestId('inbox-review')).$('[data-testid="accept"]')).click();
    await until(async () => !(await rendered('inbox-item', 'data-entry-id')).includes(id), 'the accepted proposal stayed in the inbox');

    // The entry is in Recall, trusted.
    await (await browser.$('[data-recall-tab="corpus"]')).click();
    await (await byTestId('recall-show')).selectByAttribute('value', 'trusted');
    await (await browser.$('#recall-search')).setValue('Records');
    await until(
      () => browser.execute((entry) => document.querySelector(`[data-testid="recall-entry"][data-entry-id="${entry}"]`)?.getAttribute('data-trusted') === 'true', id),
      'the accepted proposal is not found trusted',
    );
    await shot('endpoint-05-trusted');
  } finally {
    llm.release();
    await llm.close();
  }
});

test('search by meaning: vectors computed from Settings, then Search finds the login work by words it never uses', async () => {
  await (await browser.$('[data-tab="settings"]')).click();
  const panel = await byTestId('meaning-panel');
  await panel.waitForExist({ timeout: 10_000 });
  await panel.scrollIntoView();
  await until(async () => /No turn has a vector yet/.test(await liveText('meaning-status')), 'the panel did not say no turn has a vector');
  assert.match(await text(await byTestId('meaning-estimate')), /\d+ turns? waits?: computing their vectors takes/);
  await shot('meaning-01-none');

  // Words alone find nothing: no transcript says any of these.
  const query = 'sign-in lets recognised accounts through';
  await (await browser.$('[data-tab="search"]')).click();
  // The Why journeys left Search asking Why: back to the archive's transcripts.
  await (await byTestId('search-mode-archive')).click();
  const input = await browser.$('#search-input');
  await input.waitForExist({ timeout: 10_000 });
  await input.setValue(query);
  await browser.keys('Enter');
  await (await byTestId('search-empty')).waitForExist({ timeout: 10_000 });
  assert.deepEqual(await rendered('search-hit', 'data-session-key'), [], 'words alone find no hit');

  await (await browser.$('[data-tab="settings"]')).click();
  await (await byTestId('meaning-panel')).waitForExist({ timeout: 10_000 });
  await (await byTestId('meaning-build')).click();
  await until(
    async () => /searchable by meaning/.test(await liveText('meaning-status')),
    'the vectors were not computed',
    120_000,
  );
  assert.match(await text(await byTestId('meaning-status')), /New turns get theirs after each sync/);
  await (await byTestId('meaning-panel')).scrollIntoView();
  await shot('meaning-02-ready');

  await (await browser.$('[data-tab="search"]')).click();
  await (await browser.$('#search-input')).setValue(query);
  await browser.keys('Enter');
  // The first search by meaning loads the model: on two busy cores that takes a while.
  await until(async () => (await rendered('search-hit', 'data-session-key')).length > 0, 'meaning found nothing', 90_000);
  const hits = await rendered('search-hit', 'data-session-key');
  assert.equal(hits[0], loginKey, `the login session comes first: ${hits}`);
  assert.match(await text(await browser.$('#search-count')), /by meaning and words, closest first/);
  assert.equal(await (await browser.$('[data-testid="search-hit"] [data-testid="by-meaning"]')).isExisting(), true, 'the hit says it was found by meaning');
  await shot('meaning-03-search');

  // A question about nothing here finds nothing: no turn is close enough in meaning, though
  // every turn is nearest to something.
  await (await browser.$('#search-input')).setValue('what is the capital of France');
  await browser.keys('Enter');
  await (await byTestId('search-empty')).waitForExist({ timeout: 60_000 });
  assert.deepEqual(await rendered('search-hit', 'data-session-key'), [], 'an off-topic question lists no turn');
});
