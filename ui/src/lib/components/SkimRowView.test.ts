import { afterEach, describe, expect, it } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import type { SkimSession } from '../api';
import SkimRowView from './SkimRowView.svelte';

let component: ReturnType<typeof mount> | undefined;

afterEach(() => {
  if (component) unmount(component);
  component = undefined;
  document.body.innerHTML = '';
});

const session = (extra: Partial<SkimSession> = {}): SkimSession => ({
  session_key: 'sha256-00000000000000000000000000000001',
  status: 'local-only',
  untrusted: false,
  pulled_from: null,
  published_by: null,
  published_at: null,
  archive_key: null,
  agent: 'claude',
  ran_by: null,
  title: 'Add login',
  project: 'shop',
  started_at: '2026-03-01T09:00:00Z',
  updated_at: '2026-03-01T09:30:00Z',
  turn_count: 1,
  record_count: 4,
  related_turn_count: 1,
  weak: false,
  why_related: [
    { evidence: 'commit_by_session', confidence: 1, target_key: 'ref:refs/heads/feat', turn_key: null, turn_index: 0, ordinal: 7, commit: 'abc1234', reason: 'committed abc1234' },
  ],
  previews: [],
  turns: [],
  ...extra,
});

function render(s: SkimSession, opened: string[] = []): HTMLElement {
  const target = document.createElement('div');
  document.body.append(target);
  component = mount(SkimRowView, {
    target,
    props: {
      row: { type: 'session', session: s },
      selected: false,
      onopen: (key: string) => opened.push(key),
      onrecord: () => {},
      ontoggle: () => {},
      oncorrect: () => {},
    },
  });
  flushSync();
  return target;
}

describe('SkimRowView', () => {
  it('marks a teammate’s pulled session with its publisher and opens it under its key here', () => {
    const opened: string[] = [];
    const el = render(
      session({
        status: 'published',
        untrusted: true,
        pulled_from: 'origin',
        published_by: 'Ann <ann@example.invalid>',
        archive_key: 'sha256-000000000000000000000000000000aa',
      }),
      opened,
    );
    expect(el.querySelector('[data-testid="published-by"]')?.textContent).toBe('published by Ann <ann@example.invalid>');
    // A teammate's session is theirs: no link corrections, no evidence link into their records.
    expect(el.querySelector('[data-testid="not-related"]')).toBeNull();
    expect(el.querySelector('[data-testid="evidence-link"]')).toBeNull();
    el.querySelector<HTMLButtonElement>('button.open')!.click();
    expect(opened).toEqual(['sha256-000000000000000000000000000000aa']);
  });

  it('offers no Open for a teammate’s summary without its transcript', () => {
    const el = render(session({ status: 'published', untrusted: true, pulled_from: 'origin' }));
    expect(el.querySelector('button.open')).toBeNull();
    expect(el.querySelector('[data-testid="published-by"]')).toBeNull();
    expect(el.textContent).toContain('published by a teammate');
  });

  it('badges a teammate’s session of an agent this build does not know by that agent’s name', () => {
    const el = render(session({ status: 'published', untrusted: true, pulled_from: 'origin', agent: 'atif', ran_by: 'zed' }));
    const badge = el.querySelector<HTMLElement>('[data-testid="agent-badge"]')!;
    expect(badge.textContent).toBe('zed');
    expect(badge.classList.contains('claude')).toBe(false);
  });

  it('shows this machine’s own session as before', () => {
    const opened: string[] = [];
    const el = render(session(), opened);
    expect(el.querySelector('[data-testid="evidence-link"]')).not.toBeNull();
    el.querySelector<HTMLButtonElement>('button.open')!.click();
    expect(opened).toEqual(['sha256-00000000000000000000000000000001']);
  });
});
