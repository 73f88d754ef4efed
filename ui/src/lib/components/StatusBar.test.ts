import { afterEach, describe, expect, it, vi } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import StatusBar from './StatusBar.svelte';
import type { AppStore } from '../stores/app.svelte';
import type { LiveStore } from '../stores/live.svelte';
import type { SyncStore } from '../stores/sync.svelte';
import type { SyncReport } from '../api';

let component: ReturnType<typeof mount> | undefined;

afterEach(() => {
  if (component) unmount(component);
  component = undefined;
  document.body.innerHTML = '';
});

function report(extra: Partial<SyncReport> = {}): SyncReport {
  return { files_scanned: 10, forgotten_skipped: 0, sessions_added: 0, subagents_added: 0, sessions_updated: 0, records_added: 0, records_updated: 0, bytes_read: 0, warnings: [], retention: [], retention_warning: null, nothing_to_read: [], agents: [], ...extra };
}

/** The footer after a sync that reported `done`. */
function bar(done: SyncReport) {
  const app = { info: null, live: null } as unknown as AppStore;
  const sync = { status: 'done', report: done, problem: null, progress: null } as unknown as SyncStore;
  const live = { extracting: null } as unknown as LiveStore;
  const noop = () => {};
  component = mount(StatusBar, { target: document.body, props: { app, sync, live, onsync: noop, oninbox: noop, onreadagain: noop } });
  flushSync();
  return document.querySelector<HTMLElement>('[data-testid="sync-status"]')!.textContent!.replace(/\s+/g, ' ').trim();
}

describe('StatusBar', () => {
  it('counts new sessions as the list shows them, and sub-agents apart', () => {
    expect(bar(report({ sessions_added: 8, subagents_added: 2, records_added: 90 }))).toContain(
      'Synced: 8 new sessions (and 2 sub-agents), 0 updated',
    );
  });

  it('says a sync that only added sub-agents was not up to date', () => {
    expect(bar(report({ subagents_added: 1, records_added: 4 }))).toContain('Synced: 0 new sessions (and 1 sub-agent), 0 updated');
  });

  it('says why a sync failed in the text itself, on one line', () => {
    const app = { info: null, live: null } as unknown as AppStore;
    const problem = { message: 'cannot read /home/dev/.claude/projects:\npermission denied', hint: 'check the folder’s owner', kind: 'io' };
    const sync = { status: 'error', report: null, problem, progress: null } as unknown as SyncStore;
    const live = { extracting: null } as unknown as LiveStore;
    const noop = () => {};
    component = mount(StatusBar, { target: document.body, props: { app, sync, live, onsync: noop, oninbox: noop, onreadagain: noop } });
    flushSync();
    const failed = document.querySelector<HTMLElement>('[data-testid="sync-error"]')!;
    const reason = 'cannot read /home/dev/.claude/projects: permission denied (check the folder’s owner)';
    expect(failed.textContent).toBe(`Sync failed: ${reason}`);
    expect(failed.getAttribute('role')).toBe('alert');
    expect(failed.title).toBe(reason);
  });

  it('says which Recall entries the sync took out of service, with a way to the inbox', () => {
    const app = { info: null, live: null } as unknown as AppStore;
    const done = report({ sessions_updated: 1, stale_flagged: { trusted: 2, untrusted: 0 } });
    const sync = { status: 'done', report: done, problem: null, progress: null } as unknown as SyncStore;
    const live = { extracting: null } as unknown as LiveStore;
    const oninbox = vi.fn();
    const noop = () => {};
    component = mount(StatusBar, { target: document.body, props: { app, sync, live, onsync: noop, oninbox, onreadagain: noop } });
    flushSync();
    const flagged = document.querySelector<HTMLButtonElement>('[data-testid="sync-stale-flagged"]')!;
    expect(flagged.textContent).toBe('2 Recall entries taken out of service: a commit changed files they cite — review them');
    flagged.click();
    expect(oninbox).toHaveBeenCalledTimes(1);
  });

  it('counts flagged entries that were only waiting in the inbox apart, and says nothing when none were', () => {
    expect(bar(report({ stale_flagged: { trusted: 1, untrusted: 3 } }))).toContain(
      '1 Recall entry taken out of service and 3 in the inbox marked stale: a commit changed files they cite — review them',
    );
    unmount(component!);
    component = undefined;
    expect(bar(report({ stale_flagged: { trusted: 0, untrusted: 1 } }))).toContain(
      '1 Recall entry in the inbox marked stale: a commit changed files they cite — review them',
    );
    unmount(component!);
    component = undefined;
    expect(bar(report())).not.toContain('Recall');
    expect(document.querySelector('[data-testid="sync-stale-flagged"]')).toBeNull();
  });

  it('says up to date when nothing came', () => {
    expect(bar(report())).toContain('Synced, up to date');
  });
});
