// One open session: its details (model, tokens, sub-agents), its turn timeline, the turns
// expanded to their records, and the record an anchor points at.
//
// The timeline is flattened into rows for the virtual list: a row per turn, and under an
// expanded turn a row per record (or one row saying the records are loading or failed).
import { SvelteMap, SvelteSet } from 'svelte/reactivity';
import {
  api,
  type Api,
  type RecordView,
  type ResumeCommand,
  type SessionDetail,
  type ForgetPlan,
  type SessionExportFormat,
  type SessionTimeline,
  type TimelineTurn,
} from '../api';
import type { TurnRecords } from '../api';
import { problemOf, type Problem } from '../errors';
import { displayText } from '../format';
import { Resource } from './resource.svelte';

export type SessionApi = Pick<
  Api,
  | 'sessionDetail'
  | 'sessionTimeline'
  | 'turnRecords'
  | 'recordTurn'
  | 'sessionExport'
  | 'forgetPreview'
  | 'forgetSessions'
  | 'sessionResume'
>;

/** Below this window height (CSS pixels) the header's secondary parts start folded: open, with
 * a few edited files, sub-agents and the resume line, they would leave the timeline a third of
 * an 800×600 window. */
export const TALL_WINDOW = 800;

export type TimelineRow =
  | { type: 'turn'; turn: TimelineTurn; expanded: boolean }
  | { type: 'record'; turn: TimelineTurn; record: RecordView }
  | { type: 'records-state'; turn: TimelineTurn; records: Resource<TurnRecords> };

export class SessionStore {
  key: string | null = $state(null);
  detail = new Resource<SessionDetail>();
  timeline = new Resource<SessionTimeline>();
  /** The command that continues the session in its agent, to copy. */
  resume = new Resource<ResumeCommand>();
  /** Expanded turns by turn index, each with its records. */
  expanded = new SvelteMap<number, Resource<TurnRecords>>();
  /** The record an anchor points at, highlighted. */
  highlight: number | null = $state(null);
  /** Why an anchor could not be followed. */
  anchorProblem: Problem | null = $state(null);
  /** Records whose long bodies are unfolded, by ordinal (kept across virtual-list recycling). */
  unfolded = new SvelteSet<number>();
  selected = $state(-1);
  /** Asks the list to bring a row to the middle; the token makes repeated asks count. */
  scrollRequest: { index: number; token: number } | null = $state(null);
  /** The last export of this session: the file written and what it left out, or why not. */
  exported: { text: string; error: boolean } | null = $state(null);
  exporting = $state(false);
  /** What forgetting this session would remove, shown before the destructive button. */
  forgetPlan: ForgetPlan | null = $state(null);
  forgetting = $state(false);
  /** After a forget: what went (the session is gone), or why the forget failed. */
  forgotten: { text: string; error: boolean } | null = $state(null);
  /** This session was forgotten from this page: the archive no longer holds it, so the page says
   * so as it does for a stale link, and loads nothing more for it. Its data was dropped, and
   * without this the page waited for a load that never came. */
  gone = $state(false);
  /** The person's last choice to show or fold the header's secondary parts, kept from session to
   * session as a disclosure in a native window is; null until they choose (the window decides). */
  detailsChoice: boolean | null = $state(null);
  #api: SessionApi;
  #token = 0;
  #loading = new WeakMap<Resource<TurnRecords>, Promise<void>>();

  /** Why an anchor could not be followed, in words (`anchorProblem` has its hint too). */
  get anchorError(): string | null {
    return this.anchorProblem?.message ?? null;
  }

  /** Why the session cannot be shown when it is not in the archive (a stale link, a session
   * forgotten since): the page then says so alone, with nothing to export or forget. */
  get missing(): Problem | null {
    if (this.gone) return { kind: 'not_found', message: `session "${this.key ?? ''}" was forgotten`, hint: null };
    for (const resource of [this.timeline, this.detail]) {
      if (resource.status === 'error' && resource.problem?.kind === 'not_found') return resource.problem;
    }
    return null;
  }

  /** Whether the header's secondary parts show in a window `windowHeight` tall. */
  showsDetails(windowHeight: number): boolean {
    return this.detailsChoice ?? windowHeight >= TALL_WINDOW;
  }

  toggleDetails(windowHeight: number): void {
    this.detailsChoice = !this.showsDetails(windowHeight);
  }

  constructor(backend: SessionApi = api) {
    this.#api = backend;
  }

  rows: TimelineRow[] = $derived.by(() => {
    const out: TimelineRow[] = [];
    for (const turn of this.timeline.data?.turns ?? []) {
      const records = this.expanded.get(turn.turn_index);
      out.push({ type: 'turn', turn, expanded: records !== undefined });
      if (records === undefined) continue;
      if (records.data) {
        for (const record of records.data.records) out.push({ type: 'record', turn, record });
      } else {
        out.push({ type: 'records-state', turn, records });
      }
    }
    return out;
  });

  /** Open session `key`; with `record`, scroll to that record and highlight it; with `turn`,
   * expand that turn and scroll to it. */
  async open(key: string, target: { record?: number | null; turn?: number | null } = {}): Promise<void> {
    if (key !== this.key) {
      this.key = key;
      this.expanded.clear();
      this.unfolded.clear();
      this.selected = -1;
      this.detail.reset();
      this.timeline.reset();
      this.resume.reset();
      this.exported = null;
      this.forgetPlan = null;
      this.forgotten = null;
      this.gone = false;
    }
    this.highlight = null;
    this.anchorProblem = null;
    // A scroll asked for by an earlier open is done with: left standing, the next timeline list
    // mounted (this session or another) would jump to its row again.
    this.scrollRequest = null;
    void this.detail.load(() => this.#api.sessionDetail(key), { keep: true });
    void this.resume.load(() => this.#api.sessionResume(key), { keep: true });
    await this.timeline.load(() => this.#api.sessionTimeline(key), { keep: true });
    if (this.key !== key || this.timeline.status !== 'ready') return;
    if (target.record !== undefined && target.record !== null) await this.focusRecord(target.record);
    else if (target.turn !== undefined && target.turn !== null) await this.focusTurn(target.turn, true);
    else if (this.selected < 0 && this.rows.length > 0) this.selected = 0;
  }

  /** Export the open session (all turns) into the Downloads folder; the core cleans it and
   * names the file. Says where it went and what it left out. */
  async exportAs(format: SessionExportFormat): Promise<void> {
    const key = this.key;
    if (key === null || this.exporting || this.gone) return;
    this.exporting = true;
    try {
      const outcome = await this.#api.sessionExport(key, { format, turns: null, max_output_bytes: 0 });
      if (this.key !== key) return;
      this.exported =
        outcome.status === 'ok'
          ? { text: `Saved ${outcome.data.file_name} (${outcome.data.path}). ${outcome.data.left_out_text}`, error: false }
          : { text: problemOf(outcome.error).message, error: true };
    } finally {
      this.exporting = false;
    }
  }

  #forgetRequest(key: string) {
    return { session: key, project: null, before: null, agent: null, allow_reimport: false };
  }

  /** Load what forgetting the open session would remove (nothing is removed yet). */
  async askForget(): Promise<void> {
    const key = this.key;
    if (key === null || this.forgetting || this.gone) return;
    this.forgotten = null;
    const outcome = await this.#api.forgetPreview(this.#forgetRequest(key));
    if (this.key !== key) return;
    if (outcome.status === 'ok') this.forgetPlan = outcome.data;
    else this.forgotten = { text: problemOf(outcome.error).message, error: true };
  }

  cancelForget(): void {
    this.forgetPlan = null;
  }

  /** Forget the open session (after `askForget` showed the list). */
  async confirmForget(): Promise<void> {
    const key = this.key;
    if (key === null || this.forgetPlan === null || this.forgetting) return;
    this.forgetting = true;
    try {
      // The plan shown goes back: only what it lists is forgotten.
      const outcome = await this.#api.forgetSessions(this.#forgetRequest(key), $state.snapshot(this.forgetPlan));
      if (outcome.status === 'ok') {
        const n = outcome.data.removed.sessions.length;
        const aside = setAsideNote(outcome.data.set_aside ?? []);
        this.forgotten = {
          text: `Forgot ${n} session${n === 1 ? '' : 's'} and ${outcome.data.removed.records} records.${aside ? ` ${aside}` : ''}`,
          error: false,
        };
        this.forgetPlan = null;
        this.gone = true;
        this.expanded.clear();
        this.timeline.reset();
        this.detail.reset();
        this.resume.reset();
      } else {
        this.forgotten = { text: problemOf(outcome.error).message, error: true };
      }
    } finally {
      this.forgetting = false;
    }
  }

  /** Reload what is on screen (the archive changed), keeping expanded turns and the place. */
  async refresh(): Promise<void> {
    const key = this.key;
    if (key === null || this.gone) return;
    void this.detail.retry();
    await this.timeline.retry();
    for (const records of this.expanded.values()) void records.retry();
  }

  /** Expand a turn (loading its records) or collapse it. */
  toggle(turnIndex: number): Promise<void> {
    if (this.expanded.has(turnIndex)) {
      this.expanded.delete(turnIndex);
      this.#keepSelectionOnTurn(turnIndex);
      return Promise.resolve();
    }
    return this.expand(turnIndex);
  }

  /** Expand a turn and load its records; resolves when they are loaded (or failed). */
  async expand(turnIndex: number): Promise<void> {
    const key = this.key;
    if (key === null) return;
    let records = this.expanded.get(turnIndex);
    if (records === undefined) {
      records = new Resource<TurnRecords>();
      this.expanded.set(turnIndex, records);
    }
    if (records.status === 'ready') return;
    const inFlight = this.#loading.get(records);
    if (inFlight) return inFlight;
    const loading = records.load(() => this.#api.turnRecords(key, turnIndex)).then(() => {
      this.#loading.delete(records);
    });
    this.#loading.set(records, loading);
    return loading;
  }

  /** Follow a record anchor: find its turn, expand it, select, highlight and centre the record. */
  async focusRecord(ordinal: number): Promise<void> {
    const key = this.key;
    if (key === null) return;
    this.highlight = ordinal;
    let outcome;
    try {
      outcome = await this.#api.recordTurn(key, ordinal);
    } catch (error) {
      outcome = { status: 'error' as const, error: problemOf(error) };
    }
    if (this.key !== key) return;
    if (outcome.status === 'error') {
      this.anchorProblem = problemOf(outcome.error);
      return;
    }
    if (outcome.data === null) {
      this.anchorProblem = problemOf(`This session has no record #${ordinal}; it may not have been captured yet.`);
      return;
    }
    await this.expand(outcome.data);
    const index = this.rows.findIndex((r) => r.type === 'record' && r.record.ordinal === ordinal);
    if (index < 0) {
      this.anchorProblem = problemOf(`Record #${ordinal} could not be shown.`);
      return;
    }
    this.selected = index;
    this.#scrollTo(index);
  }

  /** Select (and optionally expand) turn `turnIndex` and bring it into view. */
  async focusTurn(turnIndex: number, expand: boolean): Promise<void> {
    if (expand) await this.expand(turnIndex);
    const index = this.rows.findIndex((r) => r.type === 'turn' && r.turn.turn_index === turnIndex);
    if (index < 0) {
      this.anchorProblem = problemOf(`This session has no turn #${turnIndex}.`);
      return;
    }
    this.selected = index;
    this.#scrollTo(index);
  }

  #scrollTo(index: number): void {
    this.scrollRequest = { index, token: ++this.#token };
  }

  #keepSelectionOnTurn(turnIndex: number): void {
    const index = this.rows.findIndex((r) => r.type === 'turn' && r.turn.turn_index === turnIndex);
    if (index >= 0) this.selected = index;
  }

  select(index: number): void {
    this.selected = this.rows.length === 0 ? -1 : Math.min(Math.max(index, 0), this.rows.length - 1);
  }

  move(delta: number): void {
    if (this.rows.length === 0) return;
    this.select(this.selected < 0 ? (delta > 0 ? 0 : this.rows.length - 1) : this.selected + delta);
  }

  /** Enter on the selected row: a turn expands or collapses; a record unfolds or folds. */
  activate(index = this.selected): void {
    const row = this.rows[index];
    if (row === undefined) return;
    if (row.type === 'turn') void this.toggle(row.turn.turn_index);
    else if (row.type === 'record') this.toggleFold(row.record.ordinal);
    else void row.records.retry({ keep: false });
  }

  toggleFold(ordinal: number): void {
    if (this.unfolded.has(ordinal)) this.unfolded.delete(ordinal);
    else this.unfolded.add(ordinal);
  }
}

export const session = new SessionStore();

/** A database a forget reaches beyond the archive: one a rebuild set aside, or one a rebuild
 * that did not finish left (`ForgetSetAside`). */
type SetAsideLike = { path: string; rm?: string; sessions?: number; fate: 'removed' | 'holds' | 'may_hold' | 'deleted'; why?: string | null };

/**
 * What a forget did in the databases a rebuild set aside (`cairn.db.damaged-…`): removed there
 * too, or still there, named with the fix, as the CLI says it; and what a rebuild that did not
 * finish left, deleted. Empty when none held them.
 */
export function setAsideNote(aside: SetAsideLike[]): string {
  const removed = aside.filter((a) => a.fate === 'removed').length;
  const parts = removed > 0 ? [`Also removed from ${removed === 1 ? 'a database' : `${removed} databases`} a rebuild set aside.`] : [];
  for (const a of aside.filter((a) => a.fate === 'holds' || a.fate === 'may_hold')) {
    const holds = a.fate === 'holds' ? 'still holds them' : 'may still hold them';
    parts.push(`${displayText(a.path)}, set aside by a rebuild, ${holds}${a.why ? ` (${displayText(a.why)})` : ''}: delete it once the rebuilt archive is checked.`);
  }
  for (const a of aside.filter((a) => a.fate === 'deleted')) {
    parts.push(`Deleted ${displayText(a.path)}, left by a rebuild that did not finish.`);
  }
  return parts.join(' ');
}

/**
 * Before a forget is confirmed (the plan's `set_aside`): the databases it removes the session
 * from too, what a rebuild that did not finish left that it deletes, and each database set
 * aside it cannot clean, with why and the command that deletes it (`rm`). The CLI's list says
 * the same.
 */
export function setAsidePlan(aside: SetAsideLike[]): { text: string; rm: string | null }[] {
  const paths = (fate: SetAsideLike['fate']) =>
    aside
      .filter((a) => a.fate === fate)
      .map((a) => displayText(a.path))
      .join(', ');
  const lines: { text: string; rm: string | null }[] = [];
  const removed = aside.filter((a) => a.fate === 'removed').length;
  if (removed > 0)
    lines.push({ text: `Also removed from ${removed === 1 ? 'a database' : `${removed} databases`} a rebuild set aside: ${paths('removed')}.`, rm: null });
  if (aside.some((a) => a.fate === 'deleted'))
    lines.push({ text: `Also deleted: ${paths('deleted')}, left by a rebuild that did not finish (a half-made copy of the archive).`, rm: null });
  for (const a of aside.filter((a) => a.fate === 'holds' || a.fate === 'may_hold')) {
    const holds = a.fate === 'holds' ? 'it holds this session' : 'it may hold this session';
    lines.push({
      // The core's command names the file byte for byte; one made here from the shown name
      // would name another file once cleaning or a name that is not UTF-8 changed it.
      text: `${displayText(a.path)}, set aside by a rebuild, cannot be cleaned: ${holds}${a.why ? ` (${displayText(a.why)})` : ''}. Delete it once the rebuilt archive is checked${a.rm ? ':' : '.'}`,
      rm: a.rm ? a.rm : null,
    });
  }
  return lines;
}
