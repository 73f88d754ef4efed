// The Settings place: sources, hooks, privacy, extraction and health. No list: the keys keep
// their defaults, so the arrows and End scroll the page.
import type { Place } from '../place';
import { extractSetup } from '../stores/extract-setup.svelte';

export const settingsPlace: Place<'settings'> = {
  load: (_route, s) => Promise.all([s.settings.load(), extractSetup.load(), s.team.load()]),

  refresh(_route, s) {
    void s.settings.loadDoctor();
    void s.settings.loadExtract();
  },

  move: () => false,

  open: () => false,

  back: () => false,

  tab: () => ({ view: 'settings' }),
};
