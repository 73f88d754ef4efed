import { afterEach, describe, expect, it, vi } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import MeaningPanel from './MeaningPanel.svelte';
import { MeaningStore, type MeaningApi } from '../../stores/meaning.svelte';
import type { MeaningProgress, MeaningStatus, Outcome, Subscribe } from '../../api';

let component: ReturnType<typeof mount> | undefined;

afterEach(() => {
  if (component) unmount(component);
  component = undefined;
  document.body.innerHTML = '';
});

const ok = <T>(data: T) => ({ status: 'ok' as const, data });
const MISSING = 'the embedding model (all-MiniLM-L6-v2) is not installed; looked in: /models/all-MiniLM-L6-v2. Fetch it with `scripts/fetch-model.sh`';

function status(extra: Partial<MeaningStatus> = {}): MeaningStatus {
  return { problem: null, vectors: 0, waiting: 12345, ready: false, after_sync: false, building: false, last_error: null, ...extra };
}

/** The panel over a store whose status is `shown`; `build` answers "Compute vectors". */
async function panel(shown: MeaningStatus, build?: () => Promise<Outcome<MeaningStatus>>) {
  let send: ((p: MeaningProgress) => void) | null = null;
  const api = {
    meaningStatus: vi.fn(async () => ok(shown)),
    meaningBuild: vi.fn(build ?? (async () => ok({ ...shown, building: true }))),
  } as unknown as MeaningApi;
  const onProgress: Subscribe<MeaningProgress> = async (h) => {
    send = h;
    return () => {};
  };
  const clock = { now: 0 };
  const meaning = new MeaningStore(api, onProgress, async () => () => {}, () => clock.now);
  await meaning.load();
  component = mount(MeaningPanel, { target: document.body, props: { meaning } });
  flushSync();
  return { meaning, api, clock, send: (p: MeaningProgress) => (send!(p), flushSync()) };
}

const one = (testid: string) => document.querySelector<HTMLElement>(`[data-testid="${testid}"]`);
const text = (testid: string) => one(testid)?.textContent?.replace(/\s+/g, ' ').trim();

describe('MeaningPanel', () => {
  it('names the fix when the model is missing, and offers no button', async () => {
    await panel(status({ problem: MISSING, waiting: null }));
    expect(one('meaning-panel')!.querySelector('h3')!.textContent).toBe('Search by meaning');
    expect(text('meaning-status')).toBe('Search by meaning cannot run on this machine: search finds words only.');
    expect(text('meaning-problem')).toBe(MISSING);
    expect(one('meaning-build')).toBeNull();
    expect(one('meaning-progress')).toBeNull();
  });

  it('offers to compute the vectors when none exist, with how many turns wait and roughly how long', async () => {
    await panel(status());
    expect(text('meaning-status')).toBe('No turn has a vector yet: search finds words only.');
    // 12,345 turns at 15 a second: 823 s.
    expect(text('meaning-estimate')).toContain('12,345 turns wait: computing their vectors takes roughly 14 minutes on this machine.');
    const button = one('meaning-build') as HTMLButtonElement;
    expect(button.textContent?.trim()).toBe('Compute vectors');
    expect(button.disabled).toBe(false);
    expect(button.type).toBe('button');
  });

  it('shows the build’s progress and the time left once known, the button disabled', async () => {
    const { api, clock, send } = await panel(status({ waiting: 5678 }));
    (one('meaning-build') as HTMLButtonElement).click();
    await vi.waitFor(() => expect(api.meaningBuild).toHaveBeenCalledOnce());
    flushSync();
    expect(one('meaning-progress')!.querySelector('[role="progressbar"]')!.getAttribute('aria-valuenow')).toBeNull();
    expect(text('meaning-status')).toBe('Computing vectors for 5,678 turns…');
    expect((one('meaning-build') as HTMLButtonElement).disabled).toBe(true);
    expect(one('meaning-build')!.textContent?.trim()).toBe('Computing…');
    expect(text('meaning-meanwhile')).toBe('The window keeps working meanwhile; search finds words only until every turn has its vector.');

    clock.now += 1000;
    send({ done: 1234, total: 5678 });
    expect(text('meaning-status')).toBe('Computing vectors: 1,234 of 5,678 turns.');
    expect(one('meaning-progress')!.querySelector('[role="progressbar"]')!.getAttribute('aria-valuenow')).toBe('22');
    // 2,468 turns in 160 s: about 15 a second; 3,210 left take about 208 s.
    clock.now += 159_000;
    send({ done: 2468, total: 5678 });
    expect(text('meaning-status')).toBe('Computing vectors: 2,468 of 5,678 turns, about 3 minutes left.');
  });

  it('says how many have vectors and how many wait, and offers the rest', async () => {
    await panel(status({ vectors: 1, waiting: 2 }));
    expect(text('meaning-status')).toBe('1 turn has a vector; 2 turns wait.');
    expect(one('meaning-build')!.textContent?.trim()).toBe('Compute the rest');
    unmount(component!);
    component = undefined;
    document.body.innerHTML = '';
    await panel(status({ vectors: 4000, waiting: 1 }));
    expect(text('meaning-status')).toBe('4,000 turns have vectors; 1 turn waits.');
  });

  it('says what search does with the turns a sync brought once the vectors are built', async () => {
    const { api } = await panel(status({ vectors: 4000, waiting: 3, after_sync: true }));
    expect(text('meaning-status')).toBe('4,000 turns have vectors; 3 turns wait, found by words only until theirs are computed.');
    (one('meaning-build') as HTMLButtonElement).click();
    await vi.waitFor(() => expect(api.meaningBuild).toHaveBeenCalledOnce());
    flushSync();
    expect(text('meaning-meanwhile')).toBe(
      'The window keeps working meanwhile; turns without a vector are found by words only until theirs is computed.',
    );
  });

  it('says every turn is searchable, and that new ones follow after each sync', async () => {
    await panel(status({ vectors: 5678, waiting: 0, ready: true, after_sync: true }));
    expect(text('meaning-status')).toBe('Every turn is searchable by meaning. New turns get theirs after each sync.');
    expect(one('meaning-build')).toBeNull();
    expect(one('meaning-error')).toBeNull();
  });

  it('shows a refused build’s message and hint', async () => {
    const refusal = { kind: 'unavailable', message: 'the embedding model is not installed', hint: 'set CAIRN_MODEL_DIR to the folder holding the model' };
    await panel(status(), async () => ({ status: 'error', error: refusal }));
    (one('meaning-build') as HTMLButtonElement).click();
    await vi.waitFor(() => expect(one('meaning-error')).not.toBeNull());
    expect(one('meaning-error')!.querySelector('.message')!.textContent).toBe('the embedding model is not installed');
    expect(text('error-hint')).toBe('set CAIRN_MODEL_DIR to the folder holding the model');
  });

  it('shows the last build’s failure from the status', async () => {
    await panel(status({ vectors: 10, last_error: { kind: 'io', message: 'disk full', hint: null } }));
    expect(text('meaning-error')).toBe('disk full');
  });
});
