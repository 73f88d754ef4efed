// The Settings place: sources, hooks, privacy, extraction and health. No list: the keys keep
// their defaults, so the arrows and End scroll the page.
import type { Place } from '../place';

export const settingsPlace: Place<'settings'> = {
  load: (_route, s) => s.settings.load(),

  refresh(_route, s) {
    void s.settings.loadDoctor();
    void s.settings.loadExtract();
  },

  move: () => false,

  open: () => false,

  back: () => false,

  tab: () => ({ view: 'settings' }),
};
