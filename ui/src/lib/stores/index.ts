// The window's stores in one bundle, so App takes them as one prop and tests build fresh ones.
import { Router, router } from '../router.svelte';
import { AppStore, app } from './app.svelte';
import { BranchesStore, branches } from './branches.svelte';
import { Clock, clock } from './clock.svelte';
import { LiveStore, live } from './live.svelte';
import { MeaningStore, meaning } from './meaning.svelte';
import { InsightsStore, insights } from './insights.svelte';
import { RecallStore, recall } from './recall.svelte';
import { SearchStore, search } from './search.svelte';
import { SessionStore, session } from './session.svelte';
import { SessionsStore, sessions } from './sessions.svelte';
import { SettingsStore, settings } from './settings.svelte';
import { SkimStore, skim } from './skim.svelte';
import { SyncStore, sync } from './sync.svelte';
import { TeamStore, team } from './team.svelte';

export interface Stores {
  router: Router;
  app: AppStore;
  sync: SyncStore;
  live: LiveStore;
  clock: Clock;
  branches: BranchesStore;
  skim: SkimStore;
  session: SessionStore;
  sessions: SessionsStore;
  search: SearchStore;
  settings: SettingsStore;
  recall: RecallStore;
  insights: InsightsStore;
  team: TeamStore;
  meaning: MeaningStore;
}

/** The window's own stores. */
export const stores: Stores = { router, app, sync, live, clock, branches, skim, session, sessions, search, settings, recall, insights, team, meaning };

/** Fresh stores over the real bindings (tests mock the IPC underneath). */
export function createStores(): Stores {
  return {
    router: new Router(),
    app: new AppStore(),
    sync: new SyncStore(),
    live: new LiveStore(),
    clock: new Clock(),
    branches: new BranchesStore(),
    skim: new SkimStore(),
    session: new SessionStore(),
    sessions: new SessionsStore(),
    search: new SearchStore(),
    settings: new SettingsStore(),
    recall: new RecallStore(),
    insights: new InsightsStore(),
    team: new TeamStore(),
    meaning: new MeaningStore(),
  };
}
