import { afterEach, describe, expect, it } from 'vitest';
import { mount, unmount } from 'svelte';
import type { SearchHit } from '../api';
import SearchHitRow from './SearchHitRow.svelte';

let component: ReturnType<typeof mount> | undefined;

afterEach(() => {
  if (component) unmount(component);
  component = undefined;
  document.body.innerHTML = '';
});

function hit(match_reasons: string[]): SearchHit {
  return {
    session_key: 'sha256-0123456789abcdef0123456789abcdef',
    agent: 'claude',
    title: 'Make login accept any known user',
    project: 'shop',
    git_branch: 'feature/login',
    ordinal: 3,
    timestamp: '2026-12-04T10:00:00Z',
    kind: 'message',
    role: 'user',
    snippet: 'Make login accept any known user',
    match_reasons,
  } as unknown as SearchHit;
}

function row(h: SearchHit): HTMLElement {
  component = mount(SearchHitRow, { target: document.body, props: { hit: h, now: Date.parse('2026-12-04T12:00:00Z'), selected: false } });
  return document.querySelector('[data-testid="search-hit"]') as HTMLElement;
}

describe('SearchHitRow', () => {
  it('marks a turn found by meaning alone, and only that', () => {
    expect(row(hit(['semantic'])).querySelector('[data-testid="by-meaning"]')?.textContent).toBe('by meaning');
    unmount(component!);
    component = undefined;
    for (const reasons of [['keyword'], ['keyword', 'semantic'], []]) {
      expect(row(hit(reasons)).querySelector('[data-testid="by-meaning"]'), reasons.join()).toBeNull();
      unmount(component!);
      component = undefined;
    }
  });

  it('shows the title and snippet as a terminal would, without their colour codes', () => {
    const coloured = { ...hit([]), title: '\x1b[1mFix\x1b[0m login', snippet: 'tests \x1b[32m\u{E000}passed\u{E001}\x1b[0m' };
    const shown = row(coloured as SearchHit);
    expect(shown.querySelector('.title')?.textContent).toBe('Fix login');
    expect(shown.querySelector('.snippet')?.textContent).toBe('tests passed');
    expect(shown.querySelector('mark')?.textContent).toBe('passed');
  });

  it('says whose a teammate’s pulled session is, and nothing on one’s own', () => {
    const theirs = row({ ...hit([]), published_by: 'Ann <ann@example.invalid>' } as SearchHit);
    expect(theirs.querySelector('[data-testid="hit-published-by"]')?.textContent).toBe('by Ann <ann@example.invalid>');
    unmount(component!);
    component = undefined;
    expect(row({ ...hit([]), published_by: null } as SearchHit).querySelector('[data-testid="hit-published-by"]')).toBeNull();
  });

  it('shows a title’s Markdown as a person reads it', () => {
    const h = row({ ...hit([]), title: 'Fix the **login** in `auth.rs`\nand more' });
    expect(h.querySelector('.title')?.textContent).toBe('Fix the login in auth.rs');
  });
});
