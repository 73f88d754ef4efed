import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { flushSync, mount, tick, unmount } from 'svelte';
import { clearMocks, mockIPC } from '@tauri-apps/api/mocks';
import App from './App.svelte';
import { SessionsStore } from './lib/stores/sessions.svelte';
import { AppInfoStore } from './lib/stores/app.svelte';
import type { Session } from './lib/api';
import { fakeSessions } from './testing/sessions';

/** What the fake backend answers, per test. */
let answer: (args: Record<string, unknown>) => Session[] | Promise<Session[]>;
let calls: Record<string, unknown>[] = [];
let component: ReturnType<typeof mount> | undefined;

beforeEach(() => {
  calls = [];
  // The IPC boundary is mocked, so the generated bindings run for real.
  mockIPC(async (cmd, args) => {
    if (cmd === 'app_info') return { data_dir: '/tmp/cairn-test', version: '0.1.0' };
    if (cmd === 'list_sessions') {
      calls.push(args as Record<string, unknown>);
      return answer(args as Record<string, unknown>);
    }
    throw `unknown command ${cmd}`;
  });
});

afterEach(() => {
  if (component) unmount(component);
  component = undefined;
  clearMocks();
  document.body.innerHTML = '';
});

async function settle() {
  for (let i = 0; i < 5; i++) {
    await new Promise((resolve) => setTimeout(resolve, 0));
    await tick();
  }
  flushSync();
}

async function renderApp() {
  const target = document.createElement('div');
  document.body.append(target);
  component = mount(App, { target, props: { sessions: new SessionsStore(), appInfo: new AppInfoStore() } });
  await settle();
  return target;
}

const rows = (target: HTMLElement) => [...target.querySelectorAll<HTMLElement>('[data-testid="session-row"]')];

function key(key: string) {
  window.dispatchEvent(new KeyboardEvent('keydown', { key, bubbles: true }));
  flushSync();
}

describe('App', () => {
  it('lists the sessions with agent, title, counts and branch', async () => {
    answer = () => fakeSessions(4);
    const target = await renderApp();

    expect(target.querySelector('#session-count')!.textContent!.trim()).toBe('4 sessions');
    const first = rows(target)[0]!;
    expect(first.dataset.agent).toBe('claude');
    expect(first.textContent).toContain('Session number 1');
    expect(first.textContent).not.toContain('second line');
    expect(first.textContent).toContain('1 turn');
    expect(first.textContent).toContain('feature/1');
    expect(target.textContent).toContain('/tmp/cairn-test');
    expect(calls).toEqual([{ query: {} }]);
  });

  it('filters by agent through the backend', async () => {
    answer = (args) => {
      const agent = (args.query as { agent?: string }).agent;
      return agent === 'codex' ? fakeSessions(2, 'codex') : fakeSessions(5);
    };
    const target = await renderApp();
    expect(rows(target)).toHaveLength(5);

    target.querySelector<HTMLInputElement>('input[value="codex"]')!.click();
    await settle();

    expect(calls.at(-1)).toEqual({ query: { agent: 'codex' } });
    expect(rows(target).map((r) => r.dataset.agent)).toEqual(['codex', 'codex']);
    expect(target.querySelector('#session-count')!.textContent!.trim()).toBe('2 sessions');
  });

  it('explains what to do when there are no sessions', async () => {
    answer = () => [];
    const target = await renderApp();
    const empty = target.querySelector('[data-testid="empty-state"]')!;
    expect(empty.textContent).toContain('No sessions yet');
    expect(empty.textContent).toContain('cairn sync');
  });

  it('shows the error and retries', async () => {
    let fail = true;
    answer = () => {
      if (fail) throw 'database /tmp/cairn-test/cairn.db: disk I/O error';
      return fakeSessions(1);
    };
    const target = await renderApp();
    const error = target.querySelector('[data-testid="error-state"]')!;
    expect(error.textContent).toContain('disk I/O error');

    fail = false;
    error.querySelector('button')!.click();
    await settle();
    expect(target.querySelector('[data-testid="error-state"]')).toBeNull();
    expect(rows(target)).toHaveLength(1);
  });

  it('moves the selection with j and k', async () => {
    answer = () => fakeSessions(3);
    const target = await renderApp();
    const selectedId = () => target.querySelector('[role="option"][aria-selected="true"] [data-session-id]');
    expect(selectedId()?.getAttribute('data-session-id')).toBe('session-1');
    key('j');
    key('j');
    expect(selectedId()?.getAttribute('data-session-id')).toBe('session-3');
    key('k');
    expect(selectedId()?.getAttribute('data-session-id')).toBe('session-2');
    expect(target.querySelector('aside')!.textContent).toContain('session-2');
  });
});
