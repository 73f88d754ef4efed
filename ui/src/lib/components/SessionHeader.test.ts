import { afterEach, describe, expect, it } from 'vitest';
import { mount, unmount } from 'svelte';
import SessionHeader from './SessionHeader.svelte';
import { fakeDetail } from '../../testing/fake-backend';
import type { SessionDetail } from '../api';

let component: ReturnType<typeof mount> | undefined;

afterEach(() => {
  if (component) unmount(component);
  component = undefined;
  document.body.innerHTML = '';
});

function head(detail: SessionDetail): HTMLElement {
  component = mount(SessionHeader, {
    target: document.body,
    props: { detail, timeline: null, onopen: () => {} },
  });
  return document.querySelector('[data-testid="session-head"]') as HTMLElement;
}

const tokens = () => document.querySelector('[data-testid="session-tokens"]');

describe('SessionHeader', () => {
  it('shows the token usage a session recorded', () => {
    head(fakeDetail('k'));
    expect(tokens()?.textContent).toContain('12.3k');
    expect(tokens()?.textContent).toContain('250k cache read');
  });

  it('shows no usage for a session whose format has no token counts, rather than 0 in, 0 out', () => {
    const detail = fakeDetail('k');
    detail.tokens = { input: 0, output: 0, cache_creation: 0, cache_read: 0, reasoning: 0 };
    const h = head(detail);
    expect(tokens()).toBeNull();
    expect(h.textContent).not.toMatch(/\b0 in\b/);
  });

  it('shows usage when only one count is known', () => {
    const detail = fakeDetail('k');
    detail.tokens = { input: 0, output: 42, cache_creation: 0, cache_read: 0, reasoning: 0 };
    head(detail);
    expect(tokens()?.textContent).toContain('42 out');
  });

  it('heads a session with no title and no prompt as the CLI lists it', () => {
    const detail = { ...fakeDetail('k'), title: null, session_id: 'test-ratelimit-session' };
    const h = head(detail);
    expect(h.querySelector('h2')?.textContent).toBe('(no prompt)');
  });
});
