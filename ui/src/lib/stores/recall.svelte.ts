// Recall in the window: the corpus (filtered list, or a ranked query when there are words),
// the review inbox (cursor, bulk selection, the edit being made) and the entries of one session.
// Trust changes only through the review commands; this store never edits an entry itself.
import {
  api,
  type AgentUsage,
  type Api,
  type Edit,
  type Entry,
  type EntryType,
  type InboxItem,
  type Proposal,
  type Restored,
  type RecallFilters,
  type ReviewState,
  type Scope,
  type Unaccepted,
} from '../api';
import type { RecallTab } from '../links';
import { SvelteSet } from 'svelte/reactivity';
import { problemOf, type CommandError, type Problem } from '../errors';
import { Resource } from './resource.svelte';
import { count } from '../format';
import type { AgentFilter } from './agents.svelte';

export const ENTRY_TYPES: EntryType[] = [
  'fact',
  'decision',
  'procedure',
  'debugging_method',
  'warning',
  'preference',
  'open_question',
];
export const SCOPES: Scope[] = ['global', 'project', 'repository', 'branch', 'file', 'tool', 'agent'];
const LIST_LIMIT = 500;
const INBOX_LIMIT = 500;
const USAGE_LIMIT = 200;

type RecallApi = Pick<
  Api,
  | 'recallList'
  | 'recallQuery'
  | 'recallInbox'
  | 'recallAccept'
  | 'recallUnaccept'
  | 'recallReject'
  | 'recallRestore'
  | 'recallSupersede'
  | 'recallMerge'
  | 'recallProposal'
  | 'recallForSession'
  | 'recallAgentUsage'
  | 'recallCheckStale'
>;

/** How agents judged an entry they used: mostly wrong is a reason to review it again. */
export type UsageVerdict = 'wrong' | 'helpful' | 'mixed' | 'unrated';

export function usageVerdict(u: AgentUsage): UsageVerdict {
  if (u.helpful === 0 && u.wrong === 0) return 'unrated';
  if (u.wrong > u.helpful) return 'wrong';
  if (u.helpful > u.wrong) return 'helpful';
  return 'mixed';
}

/** The ledger's agent view in one line: entries used, times shown and packed, ratings. */
export function usageSummary(rows: AgentUsage[]): string {
  const sum = (f: (u: AgentUsage) => number) => rows.reduce((n, u) => n + f(u), 0);
  const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
  const wrong = rows.filter((u) => usageVerdict(u) === 'wrong').length;
  const parts = [
    `${count(rows.length, 'entry', 'entries')} used`,
    `shown ${count(sum((u) => u.shown), 'time', 'times')}`,
    `${sum((u) => u.packed)} in briefs`,
    `${sum((u) => u.helpful)} helpful, ${sum((u) => u.wrong)} wrong`,
  ];
  if (wrong > 0) parts.push(`${count(wrong, 'entry', 'entries')} mostly wrong: review again`);
  return parts.join(' · ');
}

/** Whether the entry is trusted, as the core decides it (a person reviewed it, it is served, and
 * its evidence still holds): the window never re-derives it. */
export function isTrusted(entry: Entry): boolean {
  return entry.trusted;
}

/** What the Entries list shows, in the core's filters: `status = accepted` means "not archived"
 * (an entry nobody reviewed yet is accepted too), so each choice says whose review it holds. */
export type CorpusShow = 'served' | 'trusted' | 'unreviewed' | 'archived';

export const CORPUS_SHOW: { value: CorpusShow; label: string }[] = [
  { value: 'served', label: 'All but archived' },
  { value: 'trusted', label: 'Trusted (reviewed by you)' },
  { value: 'unreviewed', label: 'Unreviewed' },
  { value: 'archived', label: 'Archived' },
];

/** Whether the Entries list offers to archive `entry`: one a person accepted and still served
 * (an unreviewed one is rejected in the Inbox). */
export function canArchive(entry: Entry): boolean {
  return entry.status === 'accepted' && entry.review_state === 'human_reviewed';
}

/** What Undo does for the review a notice names: a reject or archive is restored, an accept
 * taken back to the review state the entry had before (`edited`: the accept saved an edit, which
 * the core keeps when it takes the accept back). */
export type Undo = { action: 'restore'; id: string } | { action: 'unaccept'; id: string; previous: ReviewState; edited?: boolean };

/** An entry as a notice names it: its title, else its id. */
function named(entry: Pick<Entry, 'id' | 'title'>): string {
  return `“${entry.title.trim() || entry.id}”`;
}

/** What a reject handed back, said after it: the entry served again in the rejected one's place
 * (it had replaced that one). '' when it replaced none. */
export function handedBack(reinstated: (Entry | null)[]): string {
  const back = reinstated.filter((e): e is Entry => e !== null);
  if (back.length === 0) return '';
  if (back.length === 1) return `; ${named(back[0]!)} is served again in its place`;
  return `; ${back.map(named).join(', ')} are served again in their places`;
}

/** What an Undo of an accept did, when there is more to say than the entry being back in the
 * inbox: the reviewer's edit it keeps (`edited`), and the entry it had replaced when that one is
 * served again in its place (a reviewed entry is replaced only by a reviewed one); null
 * otherwise. */
export function unacceptedNotice({ entry, reinstated }: Unaccepted, edited: boolean): string | null {
  // The core keeps the reviewer's edit (accepting again accepts it): said, so a type or scope
  // chosen by mistake is not thought undone with it.
  const back = edited ? `${named(entry)} is back in the inbox as you edited it: Edit (e) changes it again` : `${named(entry)} is back in the inbox`;
  return edited || reinstated ? `${back}${handedBack([reinstated])}` : null;
}

/** What an Undo of a reject did when the entry replaces another again (the restore's answer
 * names it: `replaces`); null otherwise. */
export function replacesAgain({ entry, replaces }: Restored): string | null {
  return replaces ? `${named(entry)} is served again and replaces ${named(replaces)} again` : null;
}

/** What a staleness check flagged (the core's `stale::Flagged`): trusted entries it took out of
 * service, and entries already waiting for review it only marked. */
export interface StaleFlagged {
  trusted: number;
  untrusted: number;
}

/** A staleness check's outcome in words: the entries taken out of service said apart from those
 * only marked, so a served note taken back is never hidden in a total. */
export function staleNotice({ trusted, untrusted }: StaleFlagged): string {
  if (trusted === 0 && untrusted === 0) return 'No cited file changed in a commit since the last check: nothing is stale';
  const parts: string[] = [];
  if (trusted > 0) parts.push(`${count(trusted, 'entry')} taken out of service`);
  if (untrusted > 0) parts.push(trusted > 0 ? `${untrusted.toLocaleString('en')} marked stale` : `${count(untrusted, 'entry')} waiting for review marked stale`);
  return `${parts.join(', ')}: files they cite changed in a later commit`;
}

/** The edit being made to an inbox entry before it is accepted. */
export interface Draft {
  id: string;
  title: string;
  body: string;
  trigger: string;
  type: EntryType;
  scope: Scope;
}

/** An entry type as the window names it (`debugging_method` is "debugging method"). */
export function typeLabel(type: EntryType): string {
  return type.replaceAll('_', ' ');
}

/** A place an entry may apply, as the edit form offers it: the scope the core stores, what the
 * choice is called, and what it means for agents' briefs. */
export interface ScopeChoice {
  value: Scope;
  label: string;
  means: string;
}

/**
 * The scopes the edit form offers an entry. A scope names no place of its own: the core reads a
 * branch scope as the entry's own branch (the one its session ran on), a global one as every
 * repository (`memory::global`: after each repository's own notes) and anything between as its
 * whole repository (`memory::applies`), so the choices are those three, named by the entry's
 * branch and project, and nothing typed. The branch is offered only when the entry has one (the
 * core refuses a branch scope otherwise). A scope extraction or an import wrote that is none of
 * them (file, tool, …) is offered as it is, saying it applies as widely as the repository does.
 */
export function scopeChoices(entry: Pick<Entry, 'scope' | 'project' | 'git_branch'>): ScopeChoice[] {
  const repository = entry.project.trim() ? `this repository (${entry.project})` : 'this repository';
  const everyBranch = `Agents' briefs include it on every branch of ${repository}.`;
  const choices: ScopeChoice[] = [];
  const branch = entry.git_branch.trim();
  if (branch) {
    choices.push({ value: 'branch', label: `Only on branch ${branch}`, means: `Agents' briefs include it only in sessions on ${branch}.` });
  }
  choices.push({ value: 'project', label: `All of ${repository}`, means: everyBranch });
  choices.push({
    value: 'global',
    label: 'Every repository',
    means: "Agents' briefs in every repository include it, after that repository's own notes: for what holds wherever you work.",
  });
  if (!choices.some((c) => c.value === entry.scope)) {
    const means = entry.scope === 'branch' ? 'No branch is known for it, so it applies nowhere: choose the repository.' : everyBranch;
    choices.push({ value: entry.scope, label: `As it is: ${entry.scope}`, means });
  }
  return choices;
}

export class RecallStore {
  tab: RecallTab = $state('corpus');

  // The corpus.
  text = $state('');
  type: EntryType | 'all' = $state('all');
  scope: Scope | 'all' = $state('all');
  show: CorpusShow = $state('served');
  /** Entries whose evidence comes from this agent's sessions ('all': any agent's). */
  agent: AgentFilter = $state('all');
  corpus = new Resource<Entry[]>();
  /** Why a query found nothing trusted, and how many untrusted entries matched. */
  miss = $state('');
  untrustedMatches = $state(0);
  /** Entries the last query searched by words only, their vectors not computed yet. */
  vectorsPending = $state(0);
  /** Why the last query searched by words only (meaning search unavailable), or ''. */
  wordsOnly = $state('');
  /** The entry whose detail is shown. */
  detailId: string | null = $state(null);
  /** What the last archive from the list did, what Undo does, and the last one's failure. */
  corpusNotice: string | null = $state(null);
  corpusUndo: Undo | null = $state(null);
  corpusProblem: Problem | null = $state(null);

  // The inbox.
  inbox = new Resource<InboxItem[]>();
  cursor = $state(0);
  /** Ids ticked for a bulk action. */
  picked = new SvelteSet<string>();
  draft: Draft | null = $state(null);
  /** A review action in flight, and the last one's failure. */
  busy = $state(false);
  actionProblem: Problem | null = $state(null);
  /** What the last review did to an entry that left the inbox with it, said once it is done: a
   * single key press accepts or rejects, and the entry would otherwise vanish without a word. */
  notice: string | null = $state(null);
  /** How Undo takes back the last single accept or reject (null: nothing to take back). */
  undo: Undo | null = $state(null);
  /** The field an edit starts in; the inbox focuses it when the form opens. */
  editFocus = $state(0);
  /** A staleness check in flight (its button says so; `busy` holds the other reviews). */
  checking = $state(false);

  /** The last review's failure message (`actionProblem` has its hint too). */
  get actionError(): string | null {
    return this.actionProblem?.message ?? null;
  }

  /** The entry under the cursor laid out for review: why, quoted evidence, near-duplicates. */
  proposal = new Resource<Proposal>();
  #proposalFor: string | null = null;

  // The ledger's agent view: which entries agents used and how they rated them.
  agentUsage = new Resource<AgentUsage[]>();

  // One session's entries (the session view's panel).
  ofSession = new Resource<Entry[]>();
  #sessionKey: string | null = null;

  #api: RecallApi;

  constructor(backend: RecallApi = api) {
    this.#api = backend;
  }

  /** Only entries a person reviewed and agents are served. */
  get trustedOnly(): boolean {
    return this.show === 'trusted';
  }

  get filters(): RecallFilters {
    // Trusted-only serves accepted entries; the core refuses the combination otherwise.
    const filters: RecallFilters = {
      trusted_only: this.show === 'trusted',
      status: this.show === 'archived' ? 'archived' : 'accepted',
      limit: LIST_LIMIT,
    };
    // What extraction and agents propose; an entry calibrated or from an evaluation shows under
    // "All but archived".
    if (this.show === 'unreviewed') filters.review_state = 'unreviewed_auto';
    if (this.type !== 'all') filters.type = this.type;
    if (this.scope !== 'all') filters.scope = this.scope;
    if (this.agent !== 'all') filters.agent = this.agent;
    return filters;
  }

  get entries(): Entry[] {
    return this.corpus.data ?? [];
  }

  get detail(): Entry | null {
    return this.entries.find((e) => e.id === this.detailId) ?? null;
  }

  /** Load the corpus: a ranked query when there are words, else the filtered list. */
  async loadCorpus(): Promise<void> {
    const text = this.text.trim();
    const filters = this.filters;
    this.miss = '';
    this.untrustedMatches = 0;
    this.vectorsPending = 0;
    this.wordsOnly = '';
    if (text === '') {
      await this.corpus.load(() => this.#api.recallList(filters), { keep: true });
      return;
    }
    await this.corpus.load(
      async () => {
        // By meaning and words (hybrid); by words alone when meaning search is unavailable (no
        // model, no vectors built yet), saying why.
        let outcome = await this.#api.recallQuery({ text, mode: 'hybrid', filters, context: false });
        if (outcome.status === 'error' && outcome.error.kind === 'unavailable') {
          const why = outcome.error.message;
          outcome = await this.#api.recallQuery({ text, mode: 'lexical', filters, context: false });
          if (outcome.status === 'ok') this.wordsOnly = why;
        }
        if (outcome.status === 'error') return outcome;
        this.miss = outcome.data.miss_reason;
        this.untrustedMatches = outcome.data.untrusted_matches;
        this.vectorsPending = outcome.data.vectors_pending;
        return { status: 'ok', data: outcome.data.results.map((r) => r.entry) };
      },
      { keep: true },
    );
  }

  showDetail(id: string | null): void {
    this.detailId = id;
  }

  /** Archive an entry a person accepted, from the list (the core's reject: no longer served),
   * saying so with an Undo; the list reloads. False when it failed (the message is kept). */
  archive(id: string): Promise<boolean> {
    const title = this.entries.find((e) => e.id === id)?.title ?? id;
    return this.#actOnCorpus(async () => {
      const outcome = await this.#api.recallReject(id);
      if (outcome.status === 'ok') {
        const { reinstated } = outcome.data;
        this.corpusNotice = `Archived “${title}”: agents' briefs leave it out now${handedBack([reinstated])}`;
        this.corpusUndo = { action: 'restore', id };
      }
      return outcome;
    });
  }

  /** Take the last archive from the list back: the entry is served again as it was. */
  undoArchive(): Promise<boolean> {
    const undo = this.corpusUndo;
    if (!undo) return Promise.resolve(false);
    return this.#actOnCorpus(async () => {
      const outcome = await this.#run(undo);
      if (outcome.status === 'ok') this.corpusNotice = outcome.notice;
      return outcome;
    });
  }

  dismissCorpusNotice(): void {
    this.corpusNotice = null;
    this.corpusUndo = null;
  }

  async #actOnCorpus(action: () => Promise<{ status: 'ok' } | { status: 'error'; error: CommandError }>): Promise<boolean> {
    this.busy = true;
    this.corpusProblem = null;
    this.corpusNotice = null;
    this.corpusUndo = null;
    try {
      const outcome = await action();
      if (outcome.status === 'error') {
        this.corpusProblem = problemOf(outcome.error);
        return false;
      }
      return true;
    } catch (error) {
      this.corpusProblem = problemOf(error);
      return false;
    } finally {
      this.busy = false;
      await this.loadCorpus();
    }
  }

  /** Take `undo` back; the notice says what there is more to say than the entry being back (a
   * replacement restored replaces another again, an accept taken back hands a replaced entry its
   * place back or keeps an edit), else none. */
  async #run(undo: Undo): Promise<{ status: 'ok'; notice: string | null } | { status: 'error'; error: CommandError }> {
    if (undo.action === 'unaccept') {
      const outcome = await this.#api.recallUnaccept(undo.id, undo.previous);
      if (outcome.status === 'error') return outcome;
      return { status: 'ok', notice: unacceptedNotice(outcome.data, undo.edited === true) };
    }
    const outcome = await this.#api.recallRestore(undo.id);
    return outcome.status === 'ok' ? { status: 'ok', notice: replacesAgain(outcome.data) } : outcome;
  }

  // The inbox.

  get items(): InboxItem[] {
    return this.inbox.data ?? [];
  }

  get current(): InboxItem | null {
    return this.items[this.cursor] ?? null;
  }

  async loadAgentUsage(): Promise<void> {
    await this.agentUsage.load(() => this.#api.recallAgentUsage(USAGE_LIMIT), { keep: true });
  }

  /** The entry the cursor goes to after the next reload (an Undo's, back in the inbox). */
  #follow: string | null = null;

  /** Load the inbox again. The cursor stays on its entry where the reload moved it (entries are
   * ordered by when they changed), else at its place (the entry after one reviewed). */
  async loadInbox(): Promise<void> {
    const keep = this.#follow ?? this.current?.entry.id ?? null;
    this.#follow = null;
    await this.inbox.load(() => this.#api.recallInbox(INBOX_LIMIT), { keep: true });
    const at = keep === null ? -1 : this.items.findIndex((i) => i.entry.id === keep);
    this.cursor = at >= 0 ? at : Math.min(this.cursor, Math.max(this.items.length - 1, 0));
    const ids = this.items.map((i) => i.entry.id);
    for (const id of [...this.picked]) if (!ids.includes(id)) this.picked.delete(id);
    await this.loadProposal(true);
  }

  move(delta: number): void {
    if (this.items.length === 0) return;
    this.cursor = Math.min(Math.max(this.cursor + delta, 0), this.items.length - 1);
    void this.loadProposal();
  }

  select(index: number): void {
    this.cursor = index;
    void this.loadProposal();
  }

  /** Load the cursor's entry laid out for review (again with `fresh`: its duplicates may have
   * changed with a review). */
  async loadProposal(fresh = false): Promise<void> {
    const id = this.current?.entry.id ?? null;
    if (id === null) {
      this.#proposalFor = null;
      this.proposal.reset();
      return;
    }
    if (id === this.#proposalFor && !fresh) return;
    const same = id === this.#proposalFor;
    this.#proposalFor = id;
    await this.proposal.load(() => this.#api.recallProposal(id), { keep: same });
  }

  togglePick(id: string): void {
    if (!this.picked.delete(id)) this.picked.add(id);
  }

  pickAll(on: boolean): void {
    this.picked.clear();
    if (on) for (const item of this.items) this.picked.add(item.entry.id);
  }

  /** Start editing the entry under the cursor (or `id`). */
  edit(id?: string): void {
    const item = id ? this.items.find((i) => i.entry.id === id) : this.current;
    if (!item) return;
    const { entry } = item;
    this.draft = { id: entry.id, title: entry.title, body: entry.body, trigger: entry.trigger, type: entry.type, scope: entry.scope };
    // Each edit asks for the focus in its Title field, so `e` leads straight to typing.
    this.editFocus++;
  }

  cancelEdit(): void {
    this.draft = null;
  }

  /** Run one review action, then reload the inbox; false when it failed (the message is kept). */
  async #act(action: () => Promise<{ status: 'ok' } | { status: 'error'; error: CommandError }>): Promise<boolean> {
    this.busy = true;
    this.actionProblem = null;
    this.notice = null;
    this.undo = null;
    try {
      const outcome = await action();
      if (outcome.status === 'error') {
        this.actionProblem = problemOf(outcome.error);
        return false;
      }
      return true;
    } catch (error) {
      this.actionProblem = problemOf(error);
      return false;
    } finally {
      this.busy = false;
      await this.loadInbox();
    }
  }

  /** Accept `id` (default: the cursor's), with the draft's edit when it is that entry's. */
  accept(id?: string): Promise<boolean> {
    const target = id ?? this.current?.entry.id;
    if (!target) return Promise.resolve(false);
    let edit: Edit | null = null;
    const draft = this.draft;
    if (draft && draft.id === target) {
      const entry = this.items.find((i) => i.entry.id === target)?.entry;
      edit = {};
      if (draft.title.trim() !== entry?.title) edit.title = draft.title.trim();
      if (draft.body.trim() !== entry?.body) edit.body = draft.body.trim();
      if (draft.trigger.trim() !== entry?.trigger) edit.trigger = draft.trigger.trim();
      if (draft.type !== entry?.type) edit.type = draft.type;
      if (draft.scope !== entry?.scope) edit.scope = draft.scope;
      if (Object.keys(edit).length === 0) edit = null;
    }
    // How it was shown before, read now: Undo puts it back so. One a person had reviewed (back
    // for being stale) has no accept of its own to take back.
    const previous = this.items.find((i) => i.entry.id === target)?.entry.review_state;
    return this.#act(async () => {
      const outcome = await this.#api.recallAccept(target, edit);
      if (outcome.status === 'ok') {
        if (this.draft?.id === target) this.draft = null;
        const accepted = outcome.data;
        // Narrowed to its branch, the notice says which briefs it joined.
        const briefs = accepted.scope === 'branch' && accepted.git_branch ? `agents' briefs on ${accepted.git_branch}` : "agents' briefs";
        this.notice = `Accepted “${accepted.title}”${accepted.trusted ? `: ${briefs} include it now` : ''}`;
        if (previous && previous !== 'human_reviewed') {
          this.undo = edit ? { action: 'unaccept', id: target, previous, edited: true } : { action: 'unaccept', id: target, previous };
        }
      }
      return outcome;
    });
  }

  reject(id?: string): Promise<boolean> {
    const target = id ?? this.current?.entry.id;
    if (!target) return Promise.resolve(false);
    // Its title is read now: once rejected it is no longer in the inbox to be named.
    const title = this.items.find((i) => i.entry.id === target)?.entry.title ?? target;
    return this.#act(async () => {
      const outcome = await this.#api.recallReject(target);
      if (outcome.status === 'ok') {
        const { reinstated } = outcome.data;
        this.notice = `Rejected “${title}”${handedBack([reinstated])}`;
        this.undo = { action: 'restore', id: target };
      }
      return outcome;
    });
  }

  /** Take the last single accept or reject back: the entry is where it was (one never
   * reviewed, in the inbox again, under the cursor). */
  undoReview(): Promise<boolean> {
    const undo = this.undo;
    if (!undo) return Promise.resolve(false);
    this.#follow = undo.id;
    return this.#act(async () => {
      const outcome = await this.#run(undo);
      if (outcome.status === 'ok') this.notice = outcome.notice;
      return outcome;
    });
  }

  dismissNotice(): void {
    this.notice = null;
    this.undo = null;
  }

  /** Check the accepted entries' cited files against the commits made since the last check (what
   * every sync does too), say what it flagged in words, and reload the inbox, where what it
   * flagged now waits. */
  async checkStale(): Promise<boolean> {
    this.checking = true;
    try {
      return await this.#act(async () => {
        const outcome = await this.#api.recallCheckStale();
        if (outcome.status === 'ok') this.notice = staleNotice(outcome.data);
        return outcome;
      });
    } finally {
      this.checking = false;
    }
  }

  /** `old` is replaced by the newer `replacement`. */
  supersede(old: string, replacement: string): Promise<boolean> {
    return this.#act(() => this.#api.recallSupersede(old, replacement));
  }

  /** Fold `duplicate` into `keep`: its evidence joins `keep`, it leaves the inbox; nobody's trust
   * changes. */
  merge(duplicate: string, keep: string): Promise<boolean> {
    return this.#act(() => this.#api.recallMerge(duplicate, keep));
  }

  /** Merge the cursor's entry into `keep` (default: its nearest duplicate in the corpus). */
  mergeIntoDuplicate(keep?: string): Promise<boolean> {
    const id = this.current?.entry.id;
    const proposal = this.proposal.data;
    const target = keep ?? (proposal?.entry.id === id ? proposal?.duplicates[0]?.id : undefined);
    if (!id) return Promise.resolve(false);
    if (!target) {
      this.actionProblem = { message: 'No near-duplicate to merge into: accept, edit or reject it instead.', hint: null, kind: null };
      return Promise.resolve(false);
    }
    return this.merge(id, target);
  }

  /** Accept or reject every ticked entry, one review each; stops at the first failure. */
  bulk(action: 'accept' | 'reject'): Promise<boolean> {
    const ids = this.items.map((i) => i.entry.id).filter((id) => this.picked.has(id));
    return this.#act(async () => {
      let done = 0;
      // The entries rejected replacements handed their places back to.
      const back: (Entry | null)[] = [];
      for (const id of ids) {
        const outcome = action === 'accept' ? await this.#api.recallAccept(id, null) : await this.#api.recallReject(id);
        if (outcome.status === 'error') {
          const problem = problemOf(outcome.error);
          if (action === 'reject' && done > 0) this.notice = `Rejected ${count(done, 'entry')}${handedBack(back)}`;
          return { status: 'error', error: { ...problem, message: `${id}: ${problem.message}` } };
        }
        if ('reinstated' in outcome.data) back.push(outcome.data.reinstated);
        done++;
      }
      this.notice =
        action === 'reject'
          ? `Rejected ${count(done, 'entry')}${handedBack(back)}`
          : `Accepted ${count(done, 'entry')}: agents' briefs include ${done === 1 ? 'it' : 'them'} now`;
      this.picked.clear();
      return { status: 'ok' };
    });
  }

  // One session.

  loadForSession(sessionKey: string): Promise<boolean> {
    if (sessionKey !== this.#sessionKey) this.ofSession.reset();
    this.#sessionKey = sessionKey;
    return this.ofSession.load(() => this.#api.recallForSession(sessionKey), { keep: true });
  }
}

export const recall = new RecallStore();
