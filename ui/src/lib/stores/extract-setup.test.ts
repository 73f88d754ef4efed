import { describe, expect, it, vi } from 'vitest';
import type { DetectedGenerator, ExtractPreview, ExtractSetup } from '../api';
import { ExtractSetupStore, blankSetup, missing, passSeconds, plainHttpOffMachine, roughly, uses, withPicked, type ExtractSetupApi } from './extract-setup.svelte';

const ok = <T>(data: T) => ({ status: 'ok' as const, data });

function detected(kind: DetectedGenerator['kind'], name: string, extra: Partial<DetectedGenerator> = {}): DetectedGenerator {
  const setup = { generator: 'endpoint', endpoint: '', model: '', api_key_env: '', allow_http: false };
  return { kind, name, label: name, path: null, version: null, endpoint: null, models: [], api_key_env: null, paid: false, problem: null, setup, ...extra };
}

// As the core's detection hands them out: each with the setup a pick of it stands for.
const server = detected('server', 'ollama', {
  endpoint: 'http://127.0.0.1:11434/v1',
  models: ['qwen3:8b', 'llama3.2'],
  setup: { generator: 'endpoint', endpoint: 'http://127.0.0.1:11434/v1', model: 'qwen3:8b', api_key_env: '', allow_http: false },
});
const key = detected('key', 'OPENAI_API_KEY', {
  endpoint: 'https://api.openai.com/v1',
  api_key_env: 'OPENAI_API_KEY',
  paid: true,
  setup: { generator: 'endpoint', endpoint: 'https://api.openai.com/v1', model: '', api_key_env: 'OPENAI_API_KEY', allow_http: false },
});
const agent = detected('agent', 'codex', { setup: { generator: 'codex', endpoint: '', model: '', api_key_env: '', allow_http: false } });

function preview(extra: Partial<ExtractPreview> = {}): ExtractPreview {
  return {
    fingerprint: null,
    model: '',
    max_window_chars: 50000,
    sessions: 2,
    units: 10,
    chars: 1000,
    estimated_input_tokens: 300,
    max_output_tokens: 40960,
    max_cost: null,
    estimated_seconds: null,
    concurrency: 2,
    waiting_quiet: 0,
    sessions_list: [],
    ...extra,
  };
}

describe('extraction setup', () => {
  it('picks the setup the core says a detected generator stands for, and knows which one a setup uses', () => {
    const base = { ...blankSetup(), schedule: 'nightly' as const, input_price_per_mtok: 1.5, allow_http: true };
    const s = withPicked(server, base);
    // Plain HTTP allowed to the server before is not carried to the one picked.
    expect(s).toEqual({ ...base, generator: 'endpoint', endpoint: 'http://127.0.0.1:11434/v1', model: 'qwen3:8b', api_key_env: '', allow_http: false });
    expect(uses(s, server) && !uses(s, key) && !uses(s, agent)).toBe(true);
    const k = withPicked(key, s);
    expect(k).toMatchObject({ endpoint: 'https://api.openai.com/v1', api_key_env: 'OPENAI_API_KEY', model: '', schedule: 'nightly' });
    expect(uses(k, key)).toBe(true);
    const a = withPicked(agent, k);
    expect(a).toMatchObject({ generator: 'codex', endpoint: '', model: '', api_key_env: '', input_price_per_mtok: 1.5 });
    expect(uses(a, agent) && !uses(a, server)).toBe(true);
    // The store's pick is that.
    const store = new ExtractSetupStore({} as ExtractSetupApi);
    store.draft = k;
    store.pick(agent);
    expect(store.draft).toEqual(a);
  });

  it('says what is missing before a test or a save', () => {
    expect(missing(blankSetup())).toContain('base URL');
    expect(missing({ ...blankSetup(), endpoint: 'http://127.0.0.1:1/v1' })).toContain('model');
    expect(missing({ ...blankSetup(), generator: 'claude' })).toBeNull();
  });

  it('says what is plainly wrong before a test or a save: a URL without its scheme, a key where its variable goes', () => {
    const ready = { ...blankSetup(), endpoint: 'http://127.0.0.1:1/v1', model: 'llama3', api_key_env: 'MY_KEY' };
    expect(missing(ready)).toBeNull();
    expect(missing({ ...ready, endpoint: 'http:/ bad url with spaces' })).toContain('http:// or https://');
    expect(missing({ ...ready, api_key_env: 'sk-live-THIS-IS-A-REAL-KEY-123' })).toContain('never the key itself');
    expect(missing({ ...ready, api_key_env: '' })).toBeNull();
    // Plain HTTP to another machine waits for the box the CLI's --allow-http is.
    const far = { ...ready, endpoint: 'http://192.0.2.7:8080/v1' };
    expect(plainHttpOffMachine(far.endpoint)).toBe(true);
    expect(missing(far)).toContain('Allow plain HTTP');
    expect(missing({ ...far, allow_http: true })).toBeNull();
    for (const here of ['http://localhost:1/v1', 'http://127.1.2.3:1/v1', 'http://[::1]:1/v1', 'https://192.0.2.7/v1', 'not a url']) {
      expect(plainHttpOffMachine(here), here).toBe(false);
    }
  });

  it('clears a stale failure when a new test or save starts, and holds Start while Save refuses the form', async () => {
    const refusal = { status: 'error', error: { kind: 'config', message: 'endpoint: must start with http:// or https://', hint: null } };
    let saveAnswer: unknown = refusal;
    const backend = {
      extractSave: vi.fn(async (setup: ExtractSetup) => (saveAnswer === null ? ok(setup) : saveAnswer)),
      extractTest: vi.fn(async () => refusal),
      extractStart: vi.fn(async () => ok(null)),
      extractPreview: vi.fn(async () => ok(preview())),
    } as unknown as ExtractSetupApi;
    const store = new ExtractSetupStore(backend);
    store.draft = { ...blankSetup(), endpoint: 'http://x/v1', model: 'm' };
    await store.runTest();
    expect(store.test.status).toBe('error');
    await store.start();
    // The test's failure is the old form's; only the save's is said now.
    expect(store.test.problem).toBeNull();
    expect(store.saved.status).toBe('error');
    expect(store.refused).toBe(true);
    await store.runTest();
    expect(store.saved.problem).toBeNull();
    expect(store.testCurrent).toBe(true);
    // Changing the form lets Start try again, and the test's answer is of the form before.
    store.draft.model = 'other';
    expect(store.refused).toBe(false);
    expect(store.testCurrent).toBe(false);
    saveAnswer = null;
    await store.start();
    expect(backend.extractStart).toHaveBeenCalledTimes(1);
  });

  it('estimates a pass from the last pass, else from the test', () => {
    expect(passSeconds(preview({ estimated_seconds: 42 }), 900)).toBe(42);
    expect(passSeconds(preview(), 1000)).toBe(5);
    expect(passSeconds(preview(), null)).toBeNull();
    expect(passSeconds(preview({ units: 0 }), 1000)).toBeNull();
    expect([roughly(5), roughly(300), roughly(7200)]).toEqual(['about 5 s', 'about 5 min', 'about 2.0 h']);
  });

  it('keeps what the person typed while the saved setup was on its way', async () => {
    let answer: (v: ReturnType<typeof ok<ExtractSetup>>) => void = () => {};
    const saved = { ...blankSetup(), endpoint: 'http://127.0.0.1:1/v1', model: 'saved-model' };
    const backend = {
      extractDetect: vi.fn(async () => ok([])),
      extractSetup: vi.fn(() => new Promise<ReturnType<typeof ok<ExtractSetup>>>((resolve) => (answer = resolve))),
      extractPreview: vi.fn(async () => ok(preview())),
    } as unknown as ExtractSetupApi;
    const store = new ExtractSetupStore(backend);
    const loading = store.load();
    store.draft.model = 'typed-model';
    answer(ok(saved));
    await loading;
    expect(store.draft.model).toBe('typed-model');
    // An untouched form takes the saved setup.
    const fresh = new ExtractSetupStore({ ...backend, extractSetup: vi.fn(async () => ok(saved)) });
    await fresh.load();
    expect(fresh.draft.model).toBe('saved-model');
  });

  it('loads, tests without saving, saves with the switch, starts and stops', async () => {
    let saved: ExtractSetup = blankSetup();
    const backend: ExtractSetupApi = {
      extractDetect: vi.fn(async () => ok([server, key])),
      extractSetup: vi.fn(async () => ok(saved)),
      extractTest: vi.fn(async () =>
        ok({
          model: 'qwen3:8b', deployment: '', server: '', endpoint: '', profile: 'base', segmenter: 'turns-v1',
          max_window_chars: 1, fingerprint: '', checks: [], probe_entries: 1, probe_request: 'r', probe_answer: 'a',
          probe_ms: 5, usage: { prompt_tokens: 0, completion_tokens: 0 },
        }),
      ),
      extractPreview: vi.fn(async () => ok(preview())),
      extractSave: vi.fn(async (setup) => {
        saved = setup as ExtractSetup;
        return ok(saved);
      }),
      extractStart: vi.fn(async () => ok(null)),
      extractStop: vi.fn(async () => ok(null)),
    };
    const store = new ExtractSetupStore(backend);
    await store.load();
    expect(store.detected.data?.length).toBe(2);
    expect(store.edited).toBe(false);
    store.pick(server);
    expect(store.edited).toBe(true);
    await store.runTest();
    expect(store.test.data?.probe_answer).toBe('a');
    expect(backend.extractSave).not.toHaveBeenCalled();
    await store.start();
    expect(saved).toMatchObject({ enabled: true, model: 'qwen3:8b' });
    expect(backend.extractStart).toHaveBeenCalledTimes(1);
    expect(store.edited).toBe(false);
    await store.stop();
    expect(backend.extractStop).toHaveBeenCalledTimes(1);
    await store.save(false);
    expect(saved.enabled).toBe(false);
  });

  it('does not start when the save is refused', async () => {
    const backend = {
      extractSave: vi.fn(async () => ({ status: 'error', error: { kind: 'invalid', message: 'bad', hint: 'fix it' } })),
      extractStart: vi.fn(async () => ok(null)),
      extractPreview: vi.fn(async () => ok(preview())),
    } as unknown as ExtractSetupApi;
    const store = new ExtractSetupStore(backend);
    await store.start();
    expect(store.saved.problem?.message).toBe('bad');
    expect(backend.extractStart).not.toHaveBeenCalled();
  });
});
