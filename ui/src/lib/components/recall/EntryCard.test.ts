// A Recall entry's card shown whole: its stale note carries a commit's subject and the paths it
// changed (a teammate's words, a repository's file names), so it is shown as the other text the
// card quotes is, through `displayText`.
import { afterEach, describe, expect, it } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import EntryCard from './EntryCard.svelte';
import { fakeEntry } from '../../../testing/fake-backend';

let component: ReturnType<typeof mount> | undefined;

afterEach(() => {
  if (component) unmount(component);
  component = undefined;
  document.body.innerHTML = '';
});

describe('EntryCard', () => {
  it('shows a stale note without its direction controls or terminal escapes', () => {
    // U+202E would show the path reversed from there on ("st.gifnoc.etiv"); the escape would
    // show as `␛[31m` before the subject.
    const note = 'vite.config\u202Ets.gifnoc changed in 1a2b3c4 ("\u001b[31mMove the dev server\u001b[0m") after this was recorded';
    const entry = { ...fakeEntry('rc-1', 'The dev server listens on 4173', false), stale: true, stale_note: note };
    component = mount(EntryCard, { target: document.body, props: { entry, full: true, onopen: () => {} } });
    flushSync();
    const shown = document.querySelector<HTMLElement>('[data-testid="entry-stale-note"]')!;
    expect(shown.textContent).toBe('vite.configts.gifnoc changed in 1a2b3c4 ("Move the dev server") after this was recorded');
    expect(shown.textContent).not.toMatch(/[\u202A-\u202E\u2066-\u2069]/);
    expect(shown.textContent).not.toContain('\u001b');
  });
});
