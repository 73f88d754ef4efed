// The UI's only door to the backend: the generated bindings, re-exported under the names the
// UI uses. Nothing else in ui/ imports @tauri-apps/api for commands.
import { commands } from './bindings';
import type { Agent, AppInfo, SessionQuery_Deserialize, SessionSummary_Serialize } from './bindings';

export type { Agent, AppInfo };
/** A session as the backend sends it (every field present, `null` when unknown). */
export type Session = SessionSummary_Serialize;
/** The filter the UI sends; omitted fields mean "any". */
export type SessionQuery = SessionQuery_Deserialize;

/** The outcome of a command whose Rust side returns `Result<T, String>`. */
export type Outcome<T> = { status: 'ok'; data: T } | { status: 'error'; error: string };

/** What the session store needs from the backend; tests pass a fake. */
export interface SessionsBackend {
  listSessions(query: SessionQuery): Promise<Outcome<Session[]>>;
}

export interface AppInfoBackend {
  appInfo(): Promise<AppInfo>;
}

export const backend: SessionsBackend & AppInfoBackend = commands;
