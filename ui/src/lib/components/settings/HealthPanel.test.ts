import { afterEach, describe, expect, it, vi } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import HealthPanel from './HealthPanel.svelte';
import { SettingsStore, type SettingsApi } from '../../stores/settings.svelte';
import type { Outcome, ReindexReport, Subscribe, SyncProgress } from '../../api';

let component: ReturnType<typeof mount> | undefined;

afterEach(() => {
  if (component) unmount(component);
  component = undefined;
  document.body.innerHTML = '';
});

const ok = <T>(data: T) => ({ status: 'ok' as const, data });

function report(extra: Partial<ReindexReport> = {}): ReindexReport {
  return {
    sessions: 40,
    sessions_changed: 12,
    records_before: 9000,
    records_after: 9004,
    records_changed: 231,
    turns_before: 800,
    turns_after: 803,
    evidence_revoked: 2,
    copy_lines_redacted: 0,
    recall_entries_redacted: 0,
    reports_redacted: 0,
    pulled_files_redacted: 0,
    changed: Array.from({ length: 12 }, (_, i) => ({
      session_key: `sha256-c${i}`,
      handle: `session-${i}`,
      title: i === 0 ? 'Fix the login page' : null,
      records_changed: i === 0 ? 1 : 20,
      evidence_revoked: 0,
      copy_lines_redacted: 0,
    })),
    skipped: [],
    dry_run: true,
    ...extra,
  };
}

/** The panel over a store whose `reindexArchive` answers with `answer` (dry or not). */
function panel(answer: (dry: boolean) => Promise<Outcome<ReindexReport>>, checks: { name: string; status: string; detail: string }[] = []) {
  let send: ((p: SyncProgress) => void) | null = null;
  const api = {
    doctor: vi.fn(async () => ok({ checks })),
    reindexArchive: vi.fn(async (request: { dry_run: boolean }) => answer(request.dry_run)),
  } as unknown as SettingsApi;
  const subscribe: Subscribe<SyncProgress> = async (h) => {
    send = h;
    return () => {};
  };
  const settings = new SettingsStore(api, subscribe);
  void settings.loadDoctor();
  component = mount(HealthPanel, { target: document.body, props: { settings, dataDir: '/data' } });
  flushSync();
  return { settings, api, send: (p: SyncProgress) => (send!(p), flushSync()) };
}

const one = (testid: string) => document.querySelector<HTMLElement>(`[data-testid="${testid}"]`);
const text = (testid: string) => one(testid)?.textContent?.replace(/\s+/g, ' ').trim();
const settle = async () => {
  await new Promise((resolve) => setTimeout(resolve, 0));
  flushSync();
};

describe('HealthPanel: read again', () => {
  it('checks first, showing progress, then says what would change', async () => {
    let finish: (r: Outcome<ReindexReport>) => void = () => {};
    const { api, send } = panel((dry) => (dry ? new Promise((resolve) => (finish = resolve)) : Promise.resolve(ok(report({ dry_run: false })))));
    (one('reindex-check') as HTMLButtonElement).click();
    await settle();
    expect(text('reindex-check')).toBe('Checking…');
    expect((one('reindex-run') as HTMLButtonElement).disabled).toBe(true);
    send({ phase: 'advance', files: 40, bytes_total: 1000, bytes_done: 250 });
    expect((one('reindex-progress') as HTMLProgressElement).value).toBe(0.25);
    finish(ok(report()));
    await settle();
    expect(one('reindex-progress')).toBeNull();
    expect(text('reindex-result')).toBe(
      '12 of 40 sessions would read differently (231 records changed, new or gone); 2 Recall entries would go back to unverified.',
    );
    expect(api.reindexArchive).toHaveBeenCalledWith({ session: null, agent: null, outdated: false, dry_run: true });
    const changed = [...document.querySelectorAll('[data-testid="reindex-changed"] li')].map((li) => li.textContent?.replace(/\s+/g, ' ').trim());
    expect(changed).toHaveLength(6);
    expect(changed[0]).toBe('session-0 Fix the login page: 1 record');
    expect(changed[1]).toBe('session-1: 20 records');
    expect(changed[5]).toContain('and 7 more');

    expect(api.doctor).toHaveBeenCalledTimes(1);
    (one('reindex-run') as HTMLButtonElement).click();
    await settle();
    expect(api.reindexArchive).toHaveBeenLastCalledWith({ session: null, agent: null, outdated: false, dry_run: false });
    // Doctor is asked again: which parsers read the archive moved with it.
    expect(api.doctor).toHaveBeenCalledTimes(2);
    expect(text('reindex-result')).toBe(
      'Read again: 12 of 40 sessions read differently (231 records changed, new or gone); 2 Recall entries went back to unverified.',
    );
  });

  it('offers nothing to run when a check found nothing to change, and names what it could not read', async () => {
    const skipped = Array.from({ length: 7 }, (_, i) => ({
      session_key: `sha256-${i}`,
      reason: 'no transcript of it was read here (pulled from a teammate\u2019s archive)',
    }));
    panel(async () => ok(report({ sessions_changed: 0, records_changed: 0, evidence_revoked: 0, changed: [], skipped })));
    (one('reindex-check') as HTMLButtonElement).click();
    await settle();
    expect(text('reindex-result')).toBe('All 40 sessions read as they were archived: nothing would change.');
    expect((one('reindex-run') as HTMLButtonElement).disabled).toBe(true);
    expect(text('reindex-skipped')).toBe('7 sessions not read again:');
    const items = document.querySelectorAll('.skipped li');
    expect(items).toHaveLength(6);
    expect(items[5]?.textContent).toContain('and 2 more');
  });

  it('says which lines of the copies held a secret today’s rules remove', async () => {
    const secrets = report({
      copy_lines_redacted: 3,
      reports_redacted: 1,
      changed: [
        { session_key: 'sha256-s', handle: 'deploy', title: null, records_changed: 2, evidence_revoked: 0, copy_lines_redacted: 3 },
      ],
    });
    panel(async (dry) => ok({ ...secrets, dry_run: dry }));
    (one('reindex-check') as HTMLButtonElement).click();
    await settle();
    expect(text('reindex-result')).toBe(
      '12 of 40 sessions would read differently (231 records changed, new or gone); 2 Recall entries would go back to unverified; 3 lines of the copies hold a secret today’s rules remove; 1 report holds one too.',
    );
    expect(document.querySelector('[data-testid="reindex-changed"] li')?.textContent?.replace(/\s+/g, ' ').trim()).toBe(
      'deploy: 2 records, 3 lines redacted',
    );
    (one('reindex-run') as HTMLButtonElement).click();
    await settle();
    expect(text('reindex-result')).toContain('; 3 lines of the copies held a secret today’s rules remove, written again redacted; 1 report held one too, redacted.');
  });

  it('says which stored entries and reports it redacted when no copy held a secret', async () => {
    panel(async (dry) => ok(report({ dry_run: dry, recall_entries_redacted: 2, reports_redacted: 1, pulled_files_redacted: 3 })));
    (one('reindex-check') as HTMLButtonElement).click();
    await settle();
    expect(text('reindex-result')).toContain(
      '; 2 Recall entries, 1 report and 3 pulled trajectories hold a secret today’s rules remove.',
    );
  });

  it('says why it failed, and the buttons work again', async () => {
    panel(async () => ({ status: 'error', error: { kind: 'busy', message: 'a sync is running', hint: 'wait for it to finish' } }) as never);
    (one('reindex-run') as HTMLButtonElement).click();
    await settle();
    expect(document.querySelector('[role="alert"]')?.textContent).toContain('a sync is running');
    expect((one('reindex-check') as HTMLButtonElement).disabled).toBe(false);
  });

  it('says when an older Cairn read sessions, until they are checked, and reads only those', async () => {
    const detail =
      '3 of 40 sessions were read by an older Cairn, whose parsers may have misread them or its redaction rules missed a secret; `cairn reindex --outdated --dry-run` says what reading them again would change';
    const { api } = panel(async () => ok(report()), [{ name: 'parsers', status: 'warn', detail }]);
    await settle();
    expect(text('reindex-older')).toBe(
      '3 of 40 sessions were read by an older Cairn, whose parsers may have misread them or its redaction rules missed a secret: check what reading again would change.',
    );
    (one('reindex-check') as HTMLButtonElement).click();
    await settle();
    expect(one('reindex-older')).toBeNull();
    expect(text('reindex-result')).toContain('12 of 40 sessions would read differently');
    expect(api.reindexArchive).toHaveBeenCalledWith({ session: null, agent: null, outdated: true, dry_run: true });
  });
});

describe('HealthPanel: checks', () => {
  it('shows the commands a check quotes as code, not between backticks, and no markup', async () => {
    const detail = 'not installed in /h/.claude/settings.json; run `cairn hooks install --agent claude` (<b>now</b>)';
    panel(async () => ok(report()), [{ name: 'claude hook', status: 'warn', detail }]);
    await settle();
    const shown = document.querySelector('[data-testid="health-checks"] .detail');
    expect(shown?.textContent).toBe('not installed in /h/.claude/settings.json; run cairn hooks install --agent claude (<b>now</b>)');
    expect([...(shown?.querySelectorAll('code') ?? [])].map((c) => c.textContent)).toEqual(['cairn hooks install --agent claude']);
    expect(shown?.querySelector('b')).toBeNull();
  });

  it('shows Aider’s and Crush’s lines as doctor words them, as `cairn doctor` prints them', async () => {
    // Doctor's words (doctor.rs `repository_sources`): what a sync reads, said the same in both
    // doors; the window rewords no check, whatever it begins with.
    const aider =
      'a sync reads the .aider.chat.history.md of each of the 3 repositories captured sessions ran in (1 holds one); name more repositories (or folders of them) in $AIDER_HISTORY_DIRS or [sources.aider] dirs (Settings › Transcript folders)';
    const crush =
      'none set, and no repository known yet: a sync reads the .crush/crush.db of each repository a captured session ran in; name repositories (or folders of them) in $CRUSH_PROJECT_DIRS or [sources.crush] dirs (Settings › Transcript folders) to read theirs now';
    panel(async () => ok(report()), [
      { name: 'aider sources', status: 'ok', detail: aider },
      { name: 'crush sources', status: 'ok', detail: crush },
      { name: 'aider source dir', status: 'ok', detail: '/work/shop (environment)' },
      { name: 'kilo sources', status: 'ok', detail: 'none set: as it came' },
      { name: 'crush sources', status: 'ok', detail: 'none set: as it came' },
    ]);
    await settle();
    const details = [...document.querySelectorAll('[data-testid="health-checks"] .detail')].map((d) => d.textContent);
    expect(details).toEqual([aider, crush, '/work/shop (environment)', 'none set: as it came', 'none set: as it came']);
  });
});
