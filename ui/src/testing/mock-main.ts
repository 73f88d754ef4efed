// Boots the real UI over a mocked IPC layer, for looking at large or broken archives without a
// backend: `npm run dev:ui`, then open /mock.html?n=100000 (see mock.html for the options).
import { mockIPC } from '@tauri-apps/api/mocks';
import type { SessionQuery } from '../lib/api';
import { fakeSessions } from './sessions';

const params = new URLSearchParams(location.search);
const all = fakeSessions(Number(params.get('n') ?? 100_000));
const delay = Number(params.get('delay') ?? 0);
let failuresLeft = params.has('error') ? 1 : 0;

mockIPC(async (cmd, args) => {
  if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
  if (cmd === 'app_info') return { data_dir: '(mock backend)', version: 'dev' };
  if (cmd === 'list_sessions') {
    if (failuresLeft > 0) {
      failuresLeft -= 1;
      throw 'database /mock/cairn.db: disk I/O error (mocked; Retry succeeds)';
    }
    const query = (args as { query: SessionQuery }).query;
    return query.agent ? all.filter((s) => s.agent === query.agent) : all;
  }
  throw `unknown command ${cmd}`;
});

const { sessions } = await import('../lib/stores/sessions.svelte');
await import('../main');
const select = params.get('select');
if (select !== null) {
  // Wait for the first load, then jump: the list must scroll the row into view.
  const started = Date.now();
  while (sessions.status !== 'ready' && Date.now() - started < 10_000) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  sessions.select(Number(select));
}
