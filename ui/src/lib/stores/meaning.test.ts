import { describe, expect, it, vi } from 'vitest';
import type { ErrorReport, MeaningFinished, MeaningProgress, MeaningStatus, Subscribe } from '../api';
import { MeaningStore, buildSeconds, roughTime, type MeaningApi } from './meaning.svelte';

const ok = <T>(data: T) => ({ status: 'ok' as const, data });

function status(extra: Partial<MeaningStatus> = {}): MeaningStatus {
  return { problem: null, vectors: 0, waiting: 5000, ready: false, after_sync: false, building: false, last_error: null, ...extra };
}

const MISSING: ErrorReport = {
  kind: 'unavailable',
  message: 'the embedding model (all-MiniLM-L6-v2) is not installed; looked in: /models/all-MiniLM-L6-v2',
  hint: 'set CAIRN_MODEL_DIR to the folder holding the model',
};

/** A store over fake commands, events sent by hand and a clock set by hand. */
function setup(over: Partial<MeaningApi> = {}) {
  let progress: ((p: MeaningProgress) => void) | null = null;
  let finished: ((f: MeaningFinished) => void) | null = null;
  const stopProgress = vi.fn();
  const stopFinished = vi.fn();
  const onProgress: Subscribe<MeaningProgress> = vi.fn(async (h) => {
    progress = h;
    return stopProgress;
  });
  const onFinished: Subscribe<MeaningFinished> = vi.fn(async (h) => {
    finished = h;
    return stopFinished;
  });
  const api = {
    meaningStatus: vi.fn(async () => ok(status())),
    meaningBuild: vi.fn(async () => ok(status({ building: true }))),
    ...over,
  } as unknown as MeaningApi;
  const clock = { now: 1_000_000 };
  const store = new MeaningStore(api, onProgress, onFinished, () => clock.now);
  return {
    store,
    api,
    clock,
    send: (p: MeaningProgress) => progress!(p),
    finish: (f: MeaningFinished) => finished!(f),
    onProgress,
    onFinished,
    stopProgress,
    stopFinished,
  };
}

describe('estimates in words', () => {
  it('rounds to minutes, then to the half hour, and says "roughly" before a build', () => {
    expect(roughTime(20)).toBe('less than a minute');
    expect(roughTime(61)).toBe('about 1 minute');
    expect(roughTime(14 * 60 + 20)).toBe('about 14 minutes');
    expect(roughTime(100 * 60, 'roughly')).toBe('roughly 1.5 hours');
    expect(roughTime(3 * 3600 + 60)).toBe('about 3 hours');
    // 10,000 turns at 15 a second: about 11 minutes.
    expect(roughTime(buildSeconds(10_000), 'roughly')).toBe('roughly 11 minutes');
  });
});

describe('MeaningStore', () => {
  it('loads the status once listening to the build’s events', async () => {
    const t = setup();
    await t.store.load();
    expect(t.onProgress).toHaveBeenCalledOnce();
    expect(t.onFinished).toHaveBeenCalledOnce();
    expect(t.store.status.data).toEqual(status());
    expect(t.store.building).toBe(false);
    // Loading again reads the status again, but subscribes once.
    await t.store.load();
    expect(t.api.meaningStatus).toHaveBeenCalledTimes(2);
    expect(t.onProgress).toHaveBeenCalledOnce();
  });

  it('starts a build and shows the status it returned', async () => {
    const t = setup();
    await t.store.load();
    expect(await t.store.build()).toBe(true);
    expect(t.api.meaningBuild).toHaveBeenCalledOnce();
    expect(t.store.status.data?.building).toBe(true);
    expect(t.store.building).toBe(true);
    // One build at a time: a second press does nothing.
    expect(await t.store.build()).toBe(false);
    expect(t.api.meaningBuild).toHaveBeenCalledOnce();
  });

  it('follows the progress and estimates the time left from the rate since the build started', async () => {
    const t = setup();
    await t.store.load();
    await t.store.build();
    // The first chunk after 1 s: too little data for an estimate.
    t.clock.now += 1000;
    t.send({ done: 250, total: 5000 });
    expect(t.store.progress).toEqual({ done: 250, total: 5000 });
    expect(t.store.secondsLeft).toBeNull();
    // Two events: 500 turns in 2 s, 250 a second; 4,500 left take 18 s.
    t.clock.now += 1000;
    t.send({ done: 500, total: 5000 });
    expect(t.store.secondsLeft).toBe(18);
    t.clock.now += 2000;
    t.send({ done: 1000, total: 5000 });
    expect(t.store.secondsLeft).toBe(16);
  });

  it('gives an estimate from one event when it measured 5 s or more', async () => {
    const t = setup();
    await t.store.load();
    await t.store.build();
    t.clock.now += 20_000;
    t.send({ done: 300, total: 3000 });
    // 15 a second: 2,700 left take 180 s.
    expect(t.store.secondsLeft).toBe(180);
  });

  it('measures a build it did not start from the first event it sees', async () => {
    const t = setup({ meaningStatus: vi.fn(async () => ok(status({ building: true, waiting: 900 }))) });
    await t.store.load();
    expect(t.store.building).toBe(true);
    t.send({ done: 256, total: 1000 });
    expect(t.store.secondsLeft).toBeNull();
    t.clock.now += 16_000;
    t.send({ done: 512, total: 1000 });
    // 256 turns in 16 s: 16 a second; 488 left take 30.5 s.
    expect(t.store.secondsLeft).toBe(30.5);
    // Another round of the same build (turns captured meanwhile) starts over from the last event.
    t.clock.now += 4000;
    t.send({ done: 20, total: 40 });
    expect(t.store.progress).toEqual({ done: 20, total: 40 });
    // 20 turns in 4 s: 5 a second; 20 left take 4 s (one event, under 5 s of data: none yet).
    expect(t.store.secondsLeft).toBeNull();
    t.clock.now += 4000;
    t.send({ done: 40, total: 40 });
    expect(t.store.secondsLeft).toBe(0);
  });

  it('reads the status again when the build finishes, and forgets its progress', async () => {
    const statuses = [status(), status({ building: true }), status({ vectors: 5000, waiting: 0, ready: true, after_sync: true })];
    const t = setup({ meaningStatus: vi.fn(async () => ok(statuses.shift()!)) });
    await t.store.load();
    await t.store.load();
    expect(t.store.building).toBe(true);
    t.send({ done: 5000, total: 5000 });
    t.finish({ embedded: 5000, error: null });
    expect(t.store.progress).toBeNull();
    expect(t.store.secondsLeft).toBeNull();
    await vi.waitFor(() => expect(t.store.status.data?.ready).toBe(true));
    expect(t.api.meaningStatus).toHaveBeenCalledTimes(3);
    expect(t.store.status.data).toMatchObject({ vectors: 5000, after_sync: true, building: false });
    expect(t.store.building).toBe(false);
  });

  it('keeps the refusal’s ErrorReport, with its hint, and reads the status again', async () => {
    const t = setup({
      meaningBuild: vi.fn(async () => ({ status: 'error' as const, error: MISSING })),
      meaningStatus: vi.fn(async () => ok(status())),
    });
    await t.store.load();
    expect(await t.store.build()).toBe(false);
    expect(t.store.request.status).toBe('error');
    expect(t.store.request.problem).toEqual({ kind: 'unavailable', message: MISSING.message, hint: 'set CAIRN_MODEL_DIR to the folder holding the model' });
    expect(t.store.building).toBe(false);
    expect(t.api.meaningStatus).toHaveBeenCalledTimes(2);
  });

  it('reads the status again when the build ended before its answer came', async () => {
    const t = setup();
    await t.store.load();
    (t.api.meaningBuild as ReturnType<typeof vi.fn>).mockImplementationOnce(async () => {
      t.finish({ embedded: 3, error: null });
      return ok(status({ building: true }));
    });
    (t.api.meaningStatus as ReturnType<typeof vi.fn>).mockImplementation(async () => ok(status({ vectors: 3, waiting: 0, ready: true })));
    await t.store.build();
    expect(t.store.status.data).toMatchObject({ ready: true, building: false });
  });

  it('stops listening when disposed, even when a subscription resolves afterwards', async () => {
    const t = setup();
    await t.store.load();
    t.store.dispose();
    await vi.waitFor(() => expect(t.stopProgress).toHaveBeenCalledOnce());
    expect(t.stopFinished).toHaveBeenCalledOnce();

    const late = setup();
    const loading = late.store.load();
    late.store.dispose();
    await loading;
    await vi.waitFor(() => expect(late.stopProgress).toHaveBeenCalledOnce());
    expect(late.stopFinished).toHaveBeenCalledOnce();
  });
});
