import { afterEach, describe, expect, it, vi } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import HooksPanel from './HooksPanel.svelte';
import { SettingsStore, type SettingsApi } from '../../stores/settings.svelte';
import type { HookInstall, HookStatus } from '../../api';

let component: ReturnType<typeof mount> | undefined;

afterEach(() => {
  if (component) unmount(component);
  component = undefined;
  document.body.innerHTML = '';
});

const ok = <T>(data: T) => ({ status: 'ok' as const, data });

function hook(extra: Partial<HookStatus> = {}): HookStatus {
  return { agent: 'codex', path: '/home/dev/.codex/hooks.json', installed: true, memory: true, other_archive: false, problem: null, not_running: null, ...extra };
}

/** The panel over a store whose hook overview lists `hooks`, after the install `done` when given. */
async function panel(hooks: HookStatus[], done?: HookInstall) {
  const api = {
    hookOverview: vi.fn(async () => ok({ hooks, cli: '/usr/bin/cairn', cli_origin: 'on PATH', cli_problem: null })),
  } as unknown as SettingsApi;
  const settings = new SettingsStore(api);
  await settings.hooks.load(() => api.hookOverview());
  if (done) await settings.hookInstall.codex.load(async () => ok(done));
  component = mount(HooksPanel, { target: document.body, props: { settings } });
  flushSync();
}

const one = (testid: string) => document.querySelector<HTMLElement>(`[data-testid="${testid}"]`);
const buttons = (testid: string) => [...one(testid)!.querySelectorAll('button')].map((b) => b.textContent?.trim());

describe('HooksPanel', () => {
  it('offers only removal for a hook that is installed and runs', async () => {
    await panel([hook()]);
    expect(buttons('hook-codex')).toEqual(['Remove…']);
    expect(one('hook-codex-not-running')).toBeNull();
  });

  it('says why an installed hook does not run, and offers the install that turns it on', async () => {
    const why = 'Codex runs hooks only with `codex_hooks = true` under [features] in /home/dev/.codex/config.toml';
    await panel([hook({ not_running: why })]);
    expect(one('hook-codex-not-running')!.textContent).toBe(why);
    expect(buttons('hook-codex')).toEqual(['Install…', 'Remove…']);
  });

  it('says, after an install, that the agent will not run the hook yet and why', async () => {
    const why = 'Codex hooks are switched off in /home/dev/.codex/config.toml';
    const done: HookInstall = {
      agent: 'codex', changed: true, path: '/home/dev/.codex/hooks.json', backup: null, dry_run: false,
      diff: '', capture: 'added', memory: 'added', notes: [], not_running: why,
    };
    await panel([hook({ not_running: why })], done);
    expect(one('hook-not-running')!.textContent).toContain(`will not run it yet: ${why}`);
    unmount(component!);
    document.body.innerHTML = '';
    await panel([hook()], { ...done, not_running: null });
    expect(one('hook-not-running')).toBeNull();
  });
});
