// `cairn://` links and the routes they name. Pure functions, shared by the router and tests.
//
// Every evidence link in Cairn is `cairn://session/<key>?record=<ordinal>`: it opens the session
// scrolled to that record, highlighted. Links come from outside (the command line, other apps),
// so parsing validates every part and refuses anything else with a message that says why.

export type Route =
  /** `repo`: the repository's root; without one, `project` names a group of sessions that ran in
   * no repository (none: every repository with the branch). */
  | { view: 'branches'; branch: string | null; repo: string | null; project?: string | null }
  | { view: 'sessions' }
  | { view: 'session'; key: string; record: number | null; turn: number | null }
  | { view: 'search'; q: string; why?: WhyFrom }
  | { view: 'recall'; tab: RecallTab; insight: number | null }
  | { view: 'team'; session: TeamSessionRef | null }
  | { view: 'settings' };

/** A "Why" question in Search, and where it is traced: a repository root the archive knows, the
 * folder a session ran in, or neither (the words are a description). The backend checks both
 * against the archive; a link only names them. */
export interface WhyFrom {
  repo: string | null;
  session: string | null;
}

/** A teammate's session in the team archive: its key and its publisher (the database role
 * that pushed it; two teammates may hold a copy of the same session). */
export interface TeamSessionRef {
  key: string;
  publisher: string;
}

/** The Recall page's tabs: the trusted corpus, the review inbox, generated reports. */
export const RECALL_TABS = ['corpus', 'inbox', 'agents', 'generated'] as const;
export type RecallTab = (typeof RECALL_TABS)[number];
/** A saved report's id: a positive integer (SQLite rowid) that fits a JS number exactly. */
const INSIGHT_ID = /^[1-9][0-9]{0,14}$/;

export type View = Route['view'];

/** A session key: `sha256-` and 32 lowercase hex digits (see cairn-core `keys`). */
const SESSION_KEY = /^sha256-[0-9a-f]{32}$/;
/** A record ordinal or turn index: a plain non-negative integer that fits a u32. */
const INDEX = /^(0|[1-9][0-9]{0,9})$/;
const MAX_INDEX = 4_294_967_295;
/** A branch target key (`ref:refs/heads/<name>`), as the backend gives it. */
const BRANCH_KEY = /^ref:refs\/[^\s\p{Cc}]{1,500}$/u;
/** A repository root: an absolute path without control characters (a branch name is per repository). */
const REPO_ROOT = /^\/[^\p{Cc}]{0,4095}$/u;
/** A project's name as the archive keeps it: printable, no bidi controls; empty for the group
 * of sessions of no project. */
const PROJECT = /^[^\p{Cc}\u200e\u200f\u202a-\u202e\u2066-\u2069]{0,200}$/u;
/** A publisher: a PostgreSQL role name as the team archive gives it, printable, no spaces, at
 * most 63 bytes (PostgreSQL's limit). */
const PUBLISHER = /^[^\s\p{C}]{1,63}$/u;

function isPublisher(value: string): boolean {
  return PUBLISHER.test(value) && new TextEncoder().encode(value).length <= 63;
}

export function isSessionKey(value: string): boolean {
  return SESSION_KEY.test(value);
}

function index(value: string | null, name: string): number | null {
  if (value === null) return null;
  if (!INDEX.test(value) || Number(value) > MAX_INDEX) {
    throw new LinkError(`${name} must be a whole number, not "${value}"`);
  }
  return Number(value);
}

export class LinkError extends Error {}

/** What no part of a link may hold once its %-escapes are decoded: control characters (a
 * terminal's colour codes), the characters that reorder text (bidi marks, embeddings,
 * overrides and isolates, the Arabic letter mark), invisible ones that join nothing (the
 * zero-width space, the byte-order mark) and line or paragraph separators. The shell refuses
 * them raw; a %-escape would carry them past it, and shown back (a search's words in a
 * sentence) they could disguise or reverse what the window says. The joiners a script or an
 * emoji needs (ZWJ, ZWNJ) and the soft hyphen are words' own, and pass. */
const HIDDEN = /[\p{Cc}\u061c\u200b\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\ufeff]/u;

/** Refuse a link whose decoded path or parameters hold a [`HIDDEN`] character. */
function refuseHidden(url: URL): void {
  let path: string;
  try {
    path = decodeURIComponent(url.pathname);
  } catch {
    // Only a session's link reads its path, and it refuses a malformed escape itself.
    path = '';
  }
  const parts = [path, ...[...url.searchParams].flat()];
  if (parts.some((part) => HIDDEN.test(part))) {
    throw new LinkError('it holds control or invisible formatting characters (%-escaped), which could disguise what it says');
  }
}

/** The route a `cairn://` link names; throws [`LinkError`] saying what is wrong with it. */
export function parseLink(link: string): Route {
  if (!link.startsWith('cairn://')) throw new LinkError('not a cairn:// link');
  let url: URL;
  try {
    url = new URL(link);
  } catch {
    throw new LinkError('the link is malformed');
  }
  const route = routeOf(url);
  // After the places' own checks, which name the parameter at fault more precisely.
  refuseHidden(url);
  return route;
}

function routeOf(url: URL): Route {
  const where = url.host;
  const path = url.pathname.replace(/^\/+/, '');
  const param = (name: string) => url.searchParams.get(name);
  switch (where) {
    case 'session': {
      let key: string;
      try {
        key = decodeURIComponent(path);
      } catch {
        // A stray or truncated `%` escape (`%E0%A4%A`): URIError, not a route.
        throw new LinkError('the session key has a malformed %-escape');
      }
      if (!isSessionKey(key)) throw new LinkError(`"${key}" is not a session key (sha256-… with 32 hex digits)`);
      return { view: 'session', key, record: index(param('record'), 'record'), turn: index(param('turn'), 'turn') };
    }
    case 'branches': {
      const branch = param('branch');
      if (branch !== null && !BRANCH_KEY.test(branch)) throw new LinkError(`"${branch}" is not a branch key`);
      const repo = param('repo');
      if (repo !== null && !REPO_ROOT.test(repo)) throw new LinkError('repo must be an absolute path');
      const project = repo === null ? param('project') : null;
      if (project !== null && !PROJECT.test(project)) throw new LinkError('project must be a name of at most 200 printable characters');
      if (branch === null) return { view: 'branches', branch, repo: null };
      return project === null ? { view: 'branches', branch, repo } : { view: 'branches', branch, repo: null, project };
    }
    case 'sessions':
      return { view: 'sessions' };
    case 'search': {
      const q = (param('q') ?? '').slice(0, 500);
      if (param('why') === null) return { view: 'search', q };
      const repo = param('repo');
      if (repo !== null && !REPO_ROOT.test(repo)) throw new LinkError('repo must be an absolute path');
      const session = param('session');
      if (session !== null && !isSessionKey(session)) throw new LinkError(`"${session.slice(0, 80)}" is not a session key`);
      if (repo !== null && session !== null) throw new LinkError('a why question is traced in a repo or a session, not both');
      return { view: 'search', q, why: { repo, session } };
    }
    case 'recall': {
      const tab = param('tab') ?? 'corpus';
      if (!(RECALL_TABS as readonly string[]).includes(tab)) {
        throw new LinkError(`tab must be one of ${RECALL_TABS.join(', ')}, not "${tab.slice(0, 40)}"`);
      }
      const insight = param('insight');
      if (insight !== null && !INSIGHT_ID.test(insight)) {
        throw new LinkError(`insight must be a report number, not "${insight.slice(0, 40)}"`);
      }
      if (insight !== null && tab !== 'generated') throw new LinkError('insight= belongs to tab=generated');
      return { view: 'recall', tab: tab as RecallTab, insight: insight === null ? null : Number(insight) };
    }
    case 'settings':
      return { view: 'settings' };
    case 'team': {
      const session = param('session');
      const publisher = param('publisher');
      if (session === null && publisher === null) return { view: 'team', session: null };
      if (session === null || publisher === null) throw new LinkError('a teammate’s session needs both session= and publisher=');
      if (!isSessionKey(session)) throw new LinkError(`"${session.slice(0, 80)}" is not a session key`);
      if (!isPublisher(publisher)) {
        throw new LinkError('publisher must be a database role: printable, no spaces, at most 63 bytes');
      }
      return { view: 'team', session: { key: session, publisher } };
    }
    default:
      throw new LinkError(`cairn://${where} is not a place in Cairn`);
  }
}

/** The `cairn://` link of a route. */
export function toLink(route: Route): string {
  switch (route.view) {
    case 'session': {
      const params = new URLSearchParams();
      if (route.record !== null) params.set('record', String(route.record));
      if (route.turn !== null) params.set('turn', String(route.turn));
      const query = params.toString();
      return `cairn://session/${route.key}${query ? `?${query}` : ''}`;
    }
    case 'branches':
      if (route.branch === null) return 'cairn://branches';
      return `cairn://branches?${new URLSearchParams(
        route.repo !== null
          ? { branch: route.branch, repo: route.repo }
          : route.project !== null && route.project !== undefined
            ? { branch: route.branch, project: route.project }
            : { branch: route.branch },
      )}`;
    case 'search': {
      const params = new URLSearchParams();
      if (route.q) params.set('q', route.q);
      if (route.why) {
        params.set('why', '1');
        if (route.why.repo !== null) params.set('repo', route.why.repo);
        if (route.why.session !== null) params.set('session', route.why.session);
      }
      const query = params.toString();
      return `cairn://search${query ? `?${query}` : ''}`;
    }
    case 'recall': {
      const params = new URLSearchParams({ tab: route.tab });
      if (route.insight !== null) params.set('insight', String(route.insight));
      return `cairn://recall?${params}`;
    }
    case 'team':
      if (route.session === null) return 'cairn://team';
      return `cairn://team?${new URLSearchParams({ session: route.session.key, publisher: route.session.publisher })}`;
    default:
      return `cairn://${route.view}`;
  }
}

/** The anchor of one record: what Recall's evidence links point at. */
export function recordLink(sessionKey: string, ordinal: number): string {
  return toLink({ view: 'session', key: sessionKey, record: ordinal, turn: null });
}

