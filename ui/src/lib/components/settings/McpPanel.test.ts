import { afterEach, describe, expect, it, vi } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import McpPanel from './McpPanel.svelte';
import { SettingsStore, type SettingsApi } from '../../stores/settings.svelte';
import type { McpInstall, McpStatus } from '../../api';

let component: ReturnType<typeof mount> | undefined;

afterEach(() => {
  if (component) unmount(component);
  component = undefined;
  document.body.innerHTML = '';
});

const ok = <T>(data: T) => ({ status: 'ok' as const, data });

function status(extra: Partial<McpStatus> = {}): McpStatus {
  return { agent: 'claude', path: '/home/dev/.claude.json', installed: true, command: '/usr/bin/cairn', data_dir: null, other_archive: false, problem: null, ...extra };
}

function change(extra: Partial<McpInstall> = {}): McpInstall {
  return { agent: 'claude', removed: false, changed: true, replaced: false, path: '/home/dev/.claude.json', backup: null, dry_run: true, diff: '-  "args": ["mcp"]\n+  "args": ["--data-dir", "/data/cairn", "mcp"]\n', notes: [], ...extra };
}

/** The panel over a store whose MCP overview is `shown`. */
async function panel(shown: McpStatus[]) {
  const api = {
    mcpOverview: vi.fn(async () => ok(shown)),
    hookOverview: vi.fn(async () => ok({ agents: [], cli: '/usr/bin/cairn', cli_origin: 'on PATH', cli_problem: null })),
    installMcp: vi.fn(async (_agent: string, dryRun: boolean) => ok(change({ dry_run: dryRun, replaced: true }))),
    uninstallMcp: vi.fn(async () => ok(change({ removed: true }))),
  } as unknown as SettingsApi;
  const settings = new SettingsStore(api);
  await Promise.all([settings.mcp.load(() => api.mcpOverview()), settings.hooks.load(() => api.hookOverview())]);
  component = mount(McpPanel, { target: document.body, props: { settings } });
  flushSync();
  return { api, settings };
}

const one = (testid: string) => document.querySelector<HTMLElement>(`[data-testid="${testid}"]`);
const buttons = (testid: string) => [...one(testid)!.querySelectorAll('button')].map((b) => b.textContent?.trim());

describe('McpPanel', () => {
  it('shows a server registered for this archive as registered, with only a way to remove it', async () => {
    await panel([status()]);
    expect(one('mcp-claude')!.querySelector('.badge')!.textContent?.trim()).toBe('registered');
    expect(buttons('mcp-claude')).toEqual(['Remove…']);
    expect(one('mcp-claude-elsewhere')).toBeNull();
  });

  it('says when the server serves another archive, which one, and offers to point it here', async () => {
    const { api } = await panel([status({ data_dir: '/mnt/old archive', other_archive: true })]);
    expect(one('mcp-claude')!.querySelector('.badge')!.textContent?.trim()).toBe('another archive');
    expect(one('mcp-claude-elsewhere')!.textContent).toContain("Claude's queries reach the archive in /mnt/old archive, not this one.");
    expect(buttons('mcp-claude')).toEqual(['Point here…', 'Remove…']);
    (one('mcp-claude')!.querySelector('button') as HTMLButtonElement).click();
    expect(api.installMcp).toHaveBeenCalledWith('claude', true);
    await vi.waitFor(() => {
      flushSync();
      expect(one('mcp-claude')!.querySelector('pre.diff')?.textContent).toContain('--data-dir');
    });
    expect(buttons('mcp-claude')).toContain('Update the server');
  });

  it('names the default place when the entry names no archive', async () => {
    await panel([status({ other_archive: true })]);
    expect(one('mcp-claude-elsewhere')!.textContent).toContain('reach the archive at the default place, not this one.');
  });
});
