// Live capture's problems as the window keeps them: shown once however often the watcher retries,
// cleared by the step's next success, dismissed until a different failure comes.
import { describe, expect, it } from 'vitest';
import type { ErrorReport, LiveCapture } from '../api';
import { dismissed, shown, told, type LiveProblems } from './live-problems';
import { LiveStore } from './live.svelte';

const full: ErrorReport = {
  kind: 'no_room',
  message: 'cannot write to the data dir /home/dev/.local/share/cairn: the disk is full (writing cairn.db); nothing stored before this was lost',
  hint: 'Free some space on the disk, then try again.',
};
const unwatched: ErrorReport = {
  kind: 'io',
  message: "cannot watch /home/dev/.codex/sessions: the system's limit on watched folders is reached",
  hint: 'Raise the limit',
};
const failed = (problem: ErrorReport): LiveCapture => ({ step: 'capture', problem });
const went = (step: LiveCapture['step']): LiveCapture => ({ step, problem: null });

describe('live capture problems', () => {
  it('shows a failure once however often it repeats, and clears it when capture works again', () => {
    let state: LiveProblems = {};
    state = told(state, failed(full), 1_000);
    state = told(state, failed(full), 3_000);
    state = told(state, failed(full), 5_000);
    const [only, ...rest] = shown(state);
    expect(rest).toEqual([]);
    expect(only).toMatchObject({ step: 'capture', problem: full, count: 3, since: 1_000, last: 5_000 });

    state = told(state, went('capture'), 6_000);
    expect(shown(state)).toEqual([]);
  });

  it('keeps a dismissed failure hidden while it repeats, and shows a different one', () => {
    let state = told({}, failed(full), 1_000);
    state = dismissed(state, 'capture');
    state = told(state, failed(full), 2_000);
    expect(shown(state)).toEqual([]);
    const locked: ErrorReport = { kind: 'locked', message: 'Live capture is waiting: `cairn sync` (process 4242) holds the capture lock', hint: null };
    state = told(state, failed(locked), 3_000);
    expect(shown(state).map((p) => p.problem)).toEqual([locked]);
  });

  it('clears a step only by that step going well', () => {
    let state = told({}, { step: 'watch', problem: unwatched }, 1_000);
    state = told(state, failed(full), 2_000);
    state = told(state, went('capture'), 3_000);
    expect(shown(state).map((p) => p.step)).toEqual(['watch']);
    state = told(state, went('watch'), 4_000);
    expect(shown(state)).toEqual([]);
  });

  it('hears the shell through the live store', async () => {
    let handler: ((event: LiveCapture) => void) | undefined;
    const none = () => Promise.resolve(() => {});
    const store = new LiveStore(none, none, none, (h) => {
      handler = h;
      return Promise.resolve(() => {});
    });
    await store.start();
    handler!(failed(full));
    handler!(failed(full));
    expect(store.shownProblems).toHaveLength(1);
    expect(store.shownProblems[0]!.count).toBe(2);
    store.dismissProblem('capture');
    expect(store.shownProblems).toEqual([]);
    expect(store.problems.capture).toBeDefined();
    handler!(went('capture'));
    expect(store.problems.capture).toBeUndefined();
  });
});
