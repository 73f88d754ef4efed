// Boots the real UI over a mocked IPC layer, for looking at large or broken archives without a
// backend: `npm run dev:ui`, then open /mock.html (see mock.html for the options).
import { mockIPC } from '@tauri-apps/api/mocks';
import { fakeBackend } from './fake-backend';

const params = new URLSearchParams(location.search);
const delay = Number(params.get('delay') ?? 0);
const { handler } = fakeBackend({
  sessions: Number(params.get('n') ?? 1000),
  turns: Number(params.get('turns') ?? 200),
  failOnce: params.has('error') ? { list_branches: 'database /mock/cairn.db: disk I/O error (mocked; Retry succeeds)' } : {},
  meaningMissing: params.has('nomodel'),
  meaningWaiting: Number(params.get('waiting') ?? 12345),
  // A build's progress, a chunk every two seconds, so Settings shows it and its estimate.
  meaningStepMs: 2000,
});

mockIPC(
  async (cmd, args) => {
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    return handler(cmd, args);
  },
  { shouldMockEvents: true },
);

await import('../main');
