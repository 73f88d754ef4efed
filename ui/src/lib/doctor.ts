// Doctor's checks as Settings › Data and retention shows them. The core words them for `cairn
// doctor` in a terminal; where one says less than the window knows, it is said the window's way
// here. A check the core rewords is shown as it came: this table can fall behind, never garble.
import type { DoctorReport } from './api';

export type Check = DoctorReport['checks'][number];

/** An agent that keeps its history inside each repository it ran in, and its file there. */
const IN_REPOSITORIES: Record<string, string> = {
  aider: '.aider.chat.history.md',
  crush: '.crush/crush.db',
};

/** What the window says of `check`. Doctor says Aider's and Crush's sources are "none set"
 * when no folder is named, but a sync reads their files in every repository a captured session
 * ran in (`Cairn::discover`, `discover::in_repositories`); the folders only add more. */
export function checkDetail(check: Check): string {
  const agent = /^(\w+) sources$/.exec(check.name)?.[1];
  const file = agent === undefined ? undefined : IN_REPOSITORIES[agent];
  if (file !== undefined && check.detail.startsWith('none set:')) {
    return `no folder named: read from every repository a captured session ran in (its ${file}); Change… under Transcript folders names more repositories, or folders of them`;
  }
  return check.detail;
}
