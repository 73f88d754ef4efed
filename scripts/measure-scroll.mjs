// Scrolling a session timeline of 100,000 turns in real WebKitGTK: the UI over its fake
// backend (ui/mock.html on the Vite dev server), in MiniBrowser driven by WebKitWebDriver, with
// the fixed-height session list of 100,000 rows as the baseline in the same setup.
//
//   xvfb-run -a -s "-screen 0 1280x800x24" node scripts/measure-scroll.mjs
//
// Each case scrolls 900 px per animation frame for 240 frames and prints the frame times
// (median, p95, max) and how many rows were in the DOM.
import { spawn } from 'node:child_process';
import { remote } from 'webdriverio';

const port = 5199;
const driverPort = 4460;
const minibrowser = process.env.MINIBROWSER ?? '/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser';

const vite = spawn('npx', ['vite', '--config', 'ui/vite.config.ts', '--port', String(port), '--strictPort'], {
  stdio: 'ignore',
  detached: true,
});
const driver = spawn('WebKitWebDriver', [`--port=${driverPort}`], { stdio: 'ignore', detached: true });
await new Promise((resolve) => setTimeout(resolve, 4000));

const browser = await remote({
  hostname: '127.0.0.1',
  port: driverPort,
  logLevel: 'warn',
  capabilities: {
    browserName: 'MiniBrowser',
    'webkitgtk:browserOptions': { binary: minibrowser, args: ['--automation'] },
    'wdio:enforceWebDriverClassic': true,
  },
});

function scroll(selector) {
  return browser.executeAsync((listSelector, done) => {
    const list = document.querySelector(listSelector);
    const frames = [];
    let last = performance.now();
    const step = () => {
      const now = performance.now();
      frames.push(now - last);
      last = now;
      list.scrollTop += 900;
      if (frames.length < 240) requestAnimationFrame(step);
      else {
        frames.shift();
        frames.sort((a, b) => a - b);
        done({
          rowsInDom: list.querySelectorAll('[role="option"]').length,
          scrolledPx: list.scrollTop,
          medianMs: Math.round(frames[frames.length >> 1]),
          p95Ms: Math.round(frames[Math.floor(frames.length * 0.95)]),
          maxMs: Math.round(frames.at(-1)),
        });
      }
    };
    requestAnimationFrame(step);
  }, selector);
}

try {
  await browser.setTimeout({ script: 120_000 });
  await browser.url(`http://localhost:${port}/mock.html?n=100000&turns=100000`);
  await (await browser.$('[data-tab="sessions"]')).click();
  await (await browser.$('[data-testid="session-row"]')).waitForExist({ timeout: 20_000 });
  console.log('session list, 100,000 fixed-height rows:', JSON.stringify(await scroll('[role="listbox"]')));
  await browser.execute(() => {
    document.querySelector('[role="listbox"]').scrollTop = 0;
  });
  await browser.pause(300);
  await (await browser.$('[data-testid="session-row"]')).doubleClick();
  await (await browser.$('[data-testid="turn-row"]')).waitForExist({ timeout: 20_000 });
  console.log('session timeline, 100,000 measured turns:', JSON.stringify(await scroll('[data-testid="session-view"] [role="listbox"]')));
} finally {
  await browser.deleteSession().catch(() => {});
  for (const child of [vite, driver]) {
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
}
