import { afterEach, describe, expect, it, vi } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import ExtractPanel from './ExtractPanel.svelte';
import { SettingsStore, type SettingsApi } from '../../stores/settings.svelte';
import { ExtractSetupStore, blankSetup, type ExtractSetupApi } from '../../stores/extract-setup.svelte';
import type { ExtractSetup, ExtractStatus } from '../../api';

let component: ReturnType<typeof mount> | undefined;

afterEach(() => {
  if (component) unmount(component);
  component = undefined;
  document.body.innerHTML = '';
});

const ok = <T>(data: T) => ({ status: 'ok' as const, data });

/** The form over a backend that saves what it is given, with `draft` typed in. */
function panel(draft: Partial<ExtractSetup>) {
  const api = {
    extractSave: vi.fn(async (s: ExtractSetup) => ok(s)),
    extractPreview: vi.fn(async () => ({ status: 'error' as const, error: { kind: 'invalid', message: 'no preview here', hint: null } })),
  } as unknown as ExtractSetupApi;
  const setup = new ExtractSetupStore(api);
  setup.draft = { ...blankSetup(), ...draft };
  const settings = new SettingsStore({} as SettingsApi, () => Promise.resolve(() => {}));
  // Extraction set up nowhere yet: the form under "Off".
  settings.extract.data = {
    enabled: false,
    model: '',
    fingerprint: null,
    generations: [],
    last_run: null,
    entries: 0,
    entries_published: 0,
    sessions_done: 0,
    sessions_partial: 0,
    sessions_failed: 0,
    not_started: 0,
  } as unknown as ExtractStatus;
  component = mount(ExtractPanel, { target: document.body, props: { settings, setup } });
  flushSync();
  return { api, setup };
}

const one = (testid: string) => document.querySelector<HTMLElement>(`[data-testid="${testid}"]`);

describe('the extraction form', () => {
  it('offers plain HTTP to another machine as a box, as `--allow-http` does, and saves it ticked', async () => {
    const { api, setup } = panel({ endpoint: 'http://192.0.2.7:8080/v1', model: 'm' });
    // Not ticked: the form says why it cannot be tested or saved, and how to go on.
    expect(one('extract-gap')!.textContent).toContain('Allow plain HTTP');
    expect((one('extract-test') as HTMLButtonElement).disabled).toBe(true);
    const box = one('extract-allow-http') as HTMLInputElement;
    expect(box.checked).toBe(false);
    box.click();
    flushSync();
    expect(setup.draft.allow_http).toBe(true);
    expect(one('extract-gap')).toBeNull();
    expect((one('extract-test') as HTMLButtonElement).disabled).toBe(false);
    await setup.save();
    expect(api.extractSave).toHaveBeenCalledWith(expect.objectContaining({ endpoint: 'http://192.0.2.7:8080/v1', allow_http: true }));
  });

  it('shows no such box for a server on this machine or behind https', () => {
    for (const endpoint of ['http://127.0.0.1:11434/v1', 'http://localhost:8080/v1', 'http://[::1]:8080/v1', 'https://api.example.com/v1']) {
      panel({ endpoint, model: 'm' });
      expect(one('extract-allow-http'), endpoint).toBeNull();
      expect(one('extract-gap'), endpoint).toBeNull();
      if (component) unmount(component);
      component = undefined;
      document.body.innerHTML = '';
    }
  });
});
