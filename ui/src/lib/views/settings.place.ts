// The Settings place: sources, hooks, privacy, health, search by meaning, extraction and the team
// archive. No list: the keys keep their defaults, so the arrows and End scroll the page.
import type { Place } from '../place';
import { extractSetup } from '../stores/extract-setup.svelte';

export const settingsPlace: Place<'settings'> = {
  load: (_route, s) => Promise.all([s.settings.load(), extractSetup.load(), s.team.load(), s.meaning.load()]),

  refresh(_route, s) {
    void s.settings.loadDoctor();
    void s.settings.loadExtract();
    // A sync brought turns without vectors, or started their build.
    void s.meaning.load();
  },

  move: () => false,

  open: () => false,

  back: () => false,

  tab: () => ({ view: 'settings' }),
};
