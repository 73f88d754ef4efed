import { afterEach, describe, expect, it } from 'vitest';
import { mount, unmount } from 'svelte';
import AgentBadge from './AgentBadge.svelte';

let component: ReturnType<typeof mount> | undefined;

afterEach(() => {
  if (component) unmount(component);
  component = undefined;
  document.body.innerHTML = '';
});

function badge(props: { agent: 'claude' | 'atif'; ranBy?: string | null }): HTMLElement {
  component = mount(AgentBadge, { target: document.body, props });
  return document.querySelector('[data-testid="agent-badge"]') as HTMLElement;
}

describe('AgentBadge', () => {
  it('shows an agent by its name on its colour', () => {
    const b = badge({ agent: 'claude' });
    expect(b.textContent).toBe('Claude');
    expect(b.classList.contains('claude')).toBe(true);
    expect(b.title).toBe('');
  });

  it('shows the agent that ran an imported or pulled trajectory, not the format', () => {
    const b = badge({ agent: 'atif', ranBy: 'claude' });
    expect(b.textContent).toBe('Claude');
    expect(b.classList.contains('claude')).toBe(true);
    expect(b.title).toContain('ATIF');
  });

  it('shows a foreign agent by its plain name, and the format when none is named', () => {
    const foreign = badge({ agent: 'atif', ranBy: 'openhands' });
    expect(foreign.textContent).toBe('openhands');
    expect(foreign.title).toContain('newer Cairn');
    unmount(component!);
    component = undefined;
    expect(badge({ agent: 'atif', ranBy: null }).textContent).toBe('ATIF import');
  });
});
