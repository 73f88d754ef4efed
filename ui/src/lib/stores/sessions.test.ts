import { describe, expect, it, vi } from 'vitest';
import { SessionsStore } from './sessions.svelte';
import type { Outcome, Session, SessionQuery, SessionsBackend } from '../api';
import { fakeSessions } from '../../testing/sessions';

function backendReturning(...outcomes: Outcome<Session[]>[]): SessionsBackend & { queries: SessionQuery[] } {
  const queries: SessionQuery[] = [];
  return {
    queries,
    listSessions: vi.fn(async (query: SessionQuery) => {
      queries.push(query);
      const next = outcomes.length > 1 ? outcomes.shift() : outcomes[0];
      if (next === undefined) throw new Error('no outcome left');
      return next;
    }),
  };
}

describe('SessionsStore', () => {
  it('starts idle and loads every agent by default', async () => {
    const backend = backendReturning({ status: 'ok', data: fakeSessions(3) });
    const store = new SessionsStore(backend);
    expect(store.status).toBe('idle');

    const loading = store.load();
    expect(store.status).toBe('loading');
    await loading;

    expect(store.status).toBe('ready');
    expect(store.sessions).toHaveLength(3);
    expect(store.selected).toBe(0);
    expect(backend.queries).toEqual([{}]);
  });

  it('sends the agent filter to the backend', async () => {
    const backend = backendReturning({ status: 'ok', data: fakeSessions(2, 'codex') });
    const store = new SessionsStore(backend);
    await store.setAgent('codex');
    expect(backend.queries).toEqual([{ agent: 'codex' }]);
    expect(store.agent).toBe('codex');
    await store.setAgent('all');
    expect(backend.queries.at(-1)).toEqual({});
  });

  it('reports a backend error and recovers on retry', async () => {
    const backend = backendReturning(
      { status: 'error', error: { kind: 'busy', message: 'database /x/cairn.db: locked', hint: null } },
      { status: 'ok', data: fakeSessions(1) },
    );
    const store = new SessionsStore(backend);
    await store.load();
    expect(store.status).toBe('error');
    expect(store.error).toBe('database /x/cairn.db: locked');

    await store.load();
    expect(store.status).toBe('ready');
    expect(store.error).toBeNull();
    expect(store.sessions).toHaveLength(1);
  });

  it('turns a rejected call into an error message', async () => {
    const store = new SessionsStore({
      listSessions: () => Promise.reject(new Error('IPC is down')),
    });
    await store.load();
    expect(store.status).toBe('error');
    expect(store.error).toBe('IPC is down');
  });

  it('ignores an answer that a newer load superseded', async () => {
    let release: (outcome: Outcome<Session[]>) => void = () => {};
    const slow = new Promise<Outcome<Session[]>>((resolve) => (release = resolve));
    const calls = [slow, Promise.resolve<Outcome<Session[]>>({ status: 'ok', data: fakeSessions(2, 'codex') })];
    const store = new SessionsStore({ listSessions: () => calls.shift() ?? slow });

    const first = store.load();
    const second = store.setAgent('codex');
    await second;
    release({ status: 'ok', data: fakeSessions(5, 'claude') });
    await first;

    expect(store.sessions.map((s) => s.agent)).toEqual(['codex', 'codex']);
  });

  it('keeps the selected session across a refresh', async () => {
    const rows = fakeSessions(4);
    const backend = backendReturning(
      { status: 'ok', data: rows },
      { status: 'ok', data: [rows[3]!, rows[0]!, rows[1]!, rows[2]!] },
    );
    const store = new SessionsStore(backend);
    await store.load();
    store.select(2);
    await store.load();
    expect(store.selectedSession?.session_key).toBe(rows[2]!.session_key);
    expect(store.selected).toBe(3);
  });

  it('moves the selection within the list', async () => {
    const store = new SessionsStore(backendReturning({ status: 'ok', data: fakeSessions(3) }));
    store.move(1);
    expect(store.selected).toBe(-1);

    await store.load();
    store.move(1);
    store.move(1);
    store.move(1);
    expect(store.selected).toBe(2);
    store.move(-5);
    expect(store.selected).toBe(0);
    store.select(99);
    expect(store.selected).toBe(2);
  });

  it('selects nothing in an empty list', async () => {
    const store = new SessionsStore(backendReturning({ status: 'ok', data: [] }));
    await store.load();
    expect(store.status).toBe('ready');
    expect(store.selected).toBe(-1);
    expect(store.selectedSession).toBeNull();
  });
});
