// The UI's only door to the backend: the generated bindings, re-exported under the names the
// UI uses. Nothing else in ui/ imports @tauri-apps/api for commands or events.
import { commands, events } from './bindings';
import type { CommandError } from './errors';
import { inert } from './format';
import type {
  Agent,
  AgentCount,
  AppInfo_Serialize,
  ErrorKind,
  ErrorReport_Serialize,
  ArchiveChanged,
  BranchActivity_Serialize,
  CorrectionAction,
  PullReport_Serialize,
  ResumeCommand_Serialize,
  Check,
  DirOrigin,
  DoctorReport,
  Evidence,
  HookInstall_Serialize,
  HookStatus,
  HooksOverview_Serialize,
  McpInstall_Serialize,
  McpStatus_Serialize,
  LiveStatus_Serialize,
  LiveCapture_Serialize,
  LiveStep,
  OutboundPreview,
  RecordView_Serialize,
  ReindexReport,
  RepoBranches_Serialize,
  SearchAnswer_Serialize,
  SearchHit_Serialize,
  SearchQuery_Deserialize,
  SessionDetail_Serialize,
  SessionQuery_Deserialize,
  SessionSummary_Serialize,
  SessionTimeline_Serialize,
  SkimSession_Serialize,
  SkimTurn_Serialize,
  SkimView_Serialize,
  SourceDirStatus_Serialize,
  SourceUnreadable,
  SubagentSummary_Serialize,
  SyncProgress,
  SyncReport_Serialize,
  TimelineTurn_Serialize,
  TokenUsage,
  TurnRecords_Serialize,
  UiMilestone,
  WhyRelated_Serialize,
  WhyAnswer_Serialize,
  WhySession_Serialize,
  WhyPlace,
  Entry_Serialize,
  RecallEvidence_Serialize,
  InboxItem_Serialize,
  Restored_Serialize,
  Unaccepted_Serialize,
  Proposal_Serialize,
  AgentUsage,
  ProposedBy_Serialize,
  InboxReason,
  Edit_Deserialize,
  Filters_Deserialize,
  QueryRequest_Deserialize,
  QueryResponse_Serialize,
  Ranked_Serialize,
  RecallStats,
  EntryType,
  Scope,
  ReviewState,
  RecallStatus,
  GenerateRequest_Deserialize,
  SliceRequest_Deserialize,
  Automation,
  Preview_Serialize,
  InsightSummary_Serialize,
  Insight_Serialize,
  Template_Serialize,
  Generated_Serialize,
  Phase,
  ExportFormat,
  ExportedSession,
  ForgetPlan_Serialize,
  SessionExportFormat,
  ExportedReport,
  InsightProgress,
  ExtractStatus_Serialize,
  ExtractDoctor_Serialize,
  DoctorCheck,
  Generation_Serialize,
  GenState,
  ProjectCoverage,
  RunLog_Serialize,
  ExtractFinished_Serialize,
  ExtractProgress,
  ExtractPreview_Serialize,
  ExtractSetup_Serialize,
  DetectedGenerator_Serialize,
  DetectedKind,
  Schedule,
  OpenLink,
  LinkRefused,
  TeamConfig_Serialize,
  TeamStatus_Serialize,
  TeamCheck_Serialize,
  TeamInit,
  TeamMembership_Serialize,
  LastPush,
  TeamPushReport,
  TeamPushProgress,
  TeamRemembered,
  KeyringState_Serialize,
  TeamSearchHit_Serialize,
  TeamSkim_Serialize,
  TeamShow_Serialize,
  TeamRecord_Serialize,
  MeaningStatus_Serialize,
  MeaningProgress,
  MeaningFinished_Serialize,
  AgentProgram_Serialize,
} from './bindings';

// What the backend sends: every field present, `null` when unknown.
export type { Agent, AgentCount, ArchiveChanged, Check, DirOrigin, DoctorReport, Evidence, HookStatus, OutboundPreview };
export type { SourceUnreadable, SyncProgress, TokenUsage, UiMilestone };
/** An agent's source dir: found, not there, or there but not readable (`unreadable`, with the fix). */
export type SourceDirStatus = SourceDirStatus_Serialize;
export type AppInfo = AppInfo_Serialize;
export type LiveStatus = LiveStatus_Serialize;
/** Live capture went wrong (`problem`), or `step` went well again after it did (`problem: null`). */
export type LiveCapture = LiveCapture_Serialize;
export type { LiveStep };
export type Session = SessionSummary_Serialize;
export type Repo = RepoBranches_Serialize;
export type Branch = BranchActivity_Serialize;
export type SkimView = SkimView_Serialize;
export type SkimSession = SkimSession_Serialize;
export type SkimTurn = SkimTurn_Serialize;
export type WhyRelated = WhyRelated_Serialize;
export type WhyAnswer = WhyAnswer_Serialize;
export type WhySession = WhySession_Serialize;
export type { WhyPlace };
export type SessionDetail = SessionDetail_Serialize;
export type Subagent = SubagentSummary_Serialize;
export type SessionTimeline = SessionTimeline_Serialize;
export type TimelineTurn = TimelineTurn_Serialize;
export type TurnRecords = TurnRecords_Serialize;
export type RecordView = RecordView_Serialize;
export type SearchAnswer = SearchAnswer_Serialize;
export type SearchHit = SearchHit_Serialize;
export type SyncReport = SyncReport_Serialize;
export type HooksOverview = HooksOverview_Serialize;
export type HookInstall = HookInstall_Serialize;
export type McpInstall = McpInstall_Serialize;
export type McpStatus = McpStatus_Serialize;
/** The filters the UI sends; omitted fields mean "any". */
export type SessionQuery = SessionQuery_Deserialize;
export type SearchQuery = SearchQuery_Deserialize;

// Recall and Generated insights.
export type { EntryType, Scope, ReviewState, RecallStatus, InboxReason, RecallStats, Automation, Phase, AgentUsage };
export type { ExportFormat, ExportedReport, ExportedSession, InsightProgress, SessionExportFormat };
export type ForgetPlan = ForgetPlan_Serialize;
export type { ReindexReport };
export type { CorrectionAction };
export type PullReport = PullReport_Serialize;
export type ResumeCommand = ResumeCommand_Serialize;
export type { DoctorCheck, GenState, ProjectCoverage };
export type ExtractStatus = ExtractStatus_Serialize;
export type ExtractDoctor = ExtractDoctor_Serialize;
export type Generation = Generation_Serialize;
export type RunLog = RunLog_Serialize;
export type ExtractFinished = ExtractFinished_Serialize;
export type { ExtractProgress };
export type ExtractPreview = ExtractPreview_Serialize;
export type ExtractSetup = ExtractSetup_Serialize;
export type DetectedGenerator = DetectedGenerator_Serialize;
export type { DetectedKind, Schedule };
/** An agent CLI a generator runs: the program named in config.toml, and the one that runs. */
export type AgentProgram = AgentProgram_Serialize;
export type Entry = Entry_Serialize;
export type RecallEvidence = RecallEvidence_Serialize;
export type InboxItem = InboxItem_Serialize;
export type Restored = Restored_Serialize;
export type Unaccepted = Unaccepted_Serialize;
export type Proposal = Proposal_Serialize;
export type ProposedBy = ProposedBy_Serialize;
export type Ranked = Ranked_Serialize;
export type QueryResponse = QueryResponse_Serialize;
export type Preview = Preview_Serialize;
export type InsightSummary = InsightSummary_Serialize;
export type Insight = Insight_Serialize;
export type Template = Template_Serialize;
export type Generated = Generated_Serialize;
/** What the UI sends; omitted fields mean "any". */
export type Edit = Edit_Deserialize;
export type RecallFilters = Filters_Deserialize;
export type QueryRequest = QueryRequest_Deserialize;
export type GenerateRequest = GenerateRequest_Deserialize;
export type SliceRequest = SliceRequest_Deserialize;

// The team archive (PostgreSQL), read-only in the window.
export type TeamConfig = TeamConfig_Serialize;
export type TeamStatus = TeamStatus_Serialize;
export type TeamCheck = TeamCheck_Serialize;
export type { TeamInit };
export type TeamMembership = TeamMembership_Serialize;
export type { LastPush, TeamPushReport, TeamPushProgress };
export type { TeamRemembered };
export type KeyringState = KeyringState_Serialize;
export type TeamSearchHit = TeamSearchHit_Serialize;
export type TeamSkim = TeamSkim_Serialize;
export type TeamShow = TeamShow_Serialize;
export type TeamRecord = TeamRecord_Serialize;

// Search by meaning: the turns' vectors, computed on this machine by the built-in model.
export type MeaningStatus = MeaningStatus_Serialize;
export type MeaningFinished = MeaningFinished_Serialize;
export type { MeaningProgress };

/** Why a command failed: its kind, the message, and the fix when the core knows one. */
export type ErrorReport = ErrorReport_Serialize;
export type { ErrorKind };

/** The outcome of a command whose Rust side returns `Result<T, ErrorReport>` (`errors.ts` reads
 * it, and a plain message too). */
export type Outcome<T> = { status: 'ok'; data: T } | { status: 'error'; error: CommandError };

/** Every command, as generated, each answer cleaned whole (`inert`). Stores take the slice they
 * need, so tests pass small fakes. */
export type Api = typeof commands;
export const api: Api = inertAnswers(commands);

/** `commands` with each one's answer (its data, or its error) passed through `inert`. */
export function inertAnswers<T extends object>(commands: T): T {
  const out: Record<string, unknown> = {};
  for (const [name, command] of Object.entries(commands)) {
    out[name] =
      typeof command === 'function'
        ? (...args: unknown[]) => Promise.resolve(command(...args)).then((answer: unknown) => inert(answer))
        : command;
  }
  return out as T;
}

/** Subscribe to an event; resolves to the function that unsubscribes. */
export type Subscribe<T> = (handler: (payload: T) => void) => Promise<() => void>;

export const onSyncProgress: Subscribe<SyncProgress> = (handler) =>
  events.syncProgress.listen((event) => handler(inert(event.payload)));
export const onArchiveChanged: Subscribe<ArchiveChanged> = (handler) =>
  events.archiveChanged.listen((event) => handler(inert(event.payload)));
/** Live capture failed, waits for a lock another process holds, cannot watch a folder, or went
 * well again after one of those. */
export const onLiveCapture: Subscribe<LiveCapture> = (handler) =>
  events.liveCapture.listen((event) => handler(inert(event.payload)));

/** An extraction pass ended: the Recall inbox may hold new entries. */
export const onExtractFinished: Subscribe<ExtractFinished> = (handler) =>
  events.extractFinished.listen((event) => handler(inert(event.payload)));

/** A running extraction pass moved on (a session started, a unit was read, a session ended). */
export const onExtractProgress: Subscribe<ExtractProgress> = (handler) =>
  events.extractProgress.listen((event) => handler(inert(event.payload)));

export const onInsightProgress: Subscribe<InsightProgress> = (handler) =>
  events.insightProgress.listen((event) => handler(inert(event.payload)));

/** A running "Push now" moved on: sessions done of those to look at. */
export const onTeamPushProgress: Subscribe<TeamPushProgress> = (handler) =>
  events.teamPushProgress.listen((event) => handler(inert(event.payload)));

/** A running build of the turns' vectors moved on: turns embedded so far of this pass. */
export const onMeaningProgress: Subscribe<MeaningProgress> = (handler) =>
  events.meaningProgress.listen((event) => handler(inert(event.payload)));

/** A build of the turns' vectors ended (its error, when it stopped short). */
export const onMeaningFinished: Subscribe<MeaningFinished> = (handler) =>
  events.meaningFinished.listen((event) => handler(inert(event.payload)));

/** A second launch of the app handed its `cairn://` link to this window. */
export type { OpenLink };
// Not cleaned: the router judges the link as it came, and refuses one holding a hidden character.
export const onOpenLink: Subscribe<OpenLink> = (handler) => events.openLink.listen((event) => handler(event.payload));

/** A second launch passed a link the shell refused: why ("it names no place in Cairn"), never the
 * link. */
export type { LinkRefused };
export const onLinkRefused: Subscribe<LinkRefused> = (handler) =>
  events.linkRefused.listen((event) => handler(inert(event.payload)));

// Kept for the session list store's tests, which predate `Api`.
export interface SessionsBackend {
  listSessions(query: SessionQuery): Promise<Outcome<Session[]>>;
}
export interface AppInfoBackend {
  appInfo(): Promise<AppInfo>;
}
export const backend: SessionsBackend & AppInfoBackend = api;
