// The git half of the team, for the "pull teammates' sessions" journey: a teammate works on
// feature/login in their own clone, then publishes the whole session with `cairn publish --full`
// and pushes it into a bare repository that the app user's seeded repository has as `origin`.
//
//   node tests/e2e/git-seed.mjs <seed.mjs's root> <work dir>
//
// Runs the CLI ($CAIRN_E2E_CLI) as the teammate, with an archive, HOME and source dirs of their
// own: nothing of the app user's archive is touched. Prints a JSON summary.
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const [machine, work] = process.argv.slice(2).map((p) => resolve(p ?? ''));
if (!process.argv[3]) throw new Error('usage: node tests/e2e/git-seed.mjs <seed root> <work dir>');
const cli = process.env.CAIRN_E2E_CLI;
if (!cli) throw new Error('CAIRN_E2E_CLI is not set');

const publisher = { name: 'Mia Mate', email: 'mia@example.invalid' };
const gitEnv = {
  ...process.env,
  GIT_AUTHOR_NAME: publisher.name,
  GIT_AUTHOR_EMAIL: publisher.email,
  GIT_COMMITTER_NAME: publisher.name,
  GIT_COMMITTER_EMAIL: publisher.email,
};
const git = (dir, ...args) => execFileSync('git', ['-C', dir, ...args], { env: gitEnv, encoding: 'utf8' });

// The team's remote: the app user's repository pushes its branches there and names it origin.
mkdirSync(work, { recursive: true });
const bare = join(work, 'shop.git');
execFileSync('git', ['init', '-q', '--bare', '-b', 'main', bare]);
const userRepo = join(machine, 'shop');
git(userRepo, 'remote', 'add', 'origin', bare);
git(userRepo, 'push', '-q', 'origin', 'main', 'feature/login');

// The teammate's clone, on feature/login, with their git identity (the publisher it names).
const mate = join(work, 'mate');
const cloneDir = join(mate, 'shop');
mkdirSync(mate, { recursive: true });
execFileSync('git', ['clone', '-q', bare, cloneDir], { env: gitEnv });
const clone = realpathSync(cloneDir);
git(clone, 'checkout', '-q', 'feature/login');
git(clone, 'config', 'user.name', publisher.name);
git(clone, 'config', 'user.email', publisher.email);

// Their Claude Code session: a word nothing else holds, an edit and a commit made for real.
const session = '5a1d0c3e-4444-4aaa-8bbb-0000000000e4';
const project = join(mate, 'claude', '-mate-shop');
mkdirSync(project, { recursive: true });
const path = join(project, `${session}.jsonl`);
let clock = Date.now() + 5_000;
let n = 0;
const line = (value) => {
  n += 1;
  clock = Math.max(clock + 1_000, Date.now());
  const full = { ...value, sessionId: session, cwd: clone, gitBranch: 'feature/login', uuid: `${session}-${n}`, timestamp: new Date(clock).toISOString(), version: '2.1.39' };
  appendFileSync(path, `${JSON.stringify(full)}\n`);
};
const say = (text) =>
  line({ type: 'assistant', message: { id: `msg_${n}`, role: 'assistant', model: 'claude-sonnet-4-5', content: [{ type: 'text', text }] } });
const tool = (name, input, output) => {
  const id = `toolu_mate_${n}`;
  line({ type: 'assistant', message: { id: `msg_${n}`, role: 'assistant', model: 'claude-sonnet-4-5', content: [{ type: 'tool_use', id, name, input }] } });
  line({ type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: output }] } });
};
line({ type: 'user', message: { role: 'user', content: 'Remember the quokka accounts on login, and commit' } });
writeFileSync(join(clone, 'quokka.js'), 'export const remembered = new Set(["quokka"]);\n');
tool('Write', { file_path: join(clone, 'quokka.js'), content: 'export const remembered = new Set(["quokka"]);\n' }, 'File created.');
const command = 'git add -A && git commit -m "Login remembers quokka accounts"';
const output = execFileSync('sh', ['-c', command], { cwd: clone, env: gitEnv, encoding: 'utf8' });
tool('Bash', { command, description: 'Commit' }, output);
say('Committed: login now remembers quokka accounts.');
git(clone, 'push', '-q', 'origin', 'feature/login');

// The teammate's Cairn: capture, publish the branch's sessions in full, push them.
const mateEnv = {
  ...process.env,
  CAIRN_DATA_DIR: join(mate, 'data'),
  HOME: join(mate, 'home'),
  CLAUDE_PROJECTS_DIR: join(mate, 'claude'),
  CODEX_SESSIONS_DIR: join(mate, 'codex'),
};
mkdirSync(mateEnv.HOME, { recursive: true });
const cairn = (...args) => JSON.parse(execFileSync(cli, ['--json', '-C', clone, ...args], { env: mateEnv, encoding: 'utf8' }));
cairn('sync');
const published = cairn('publish', 'feature/login', '--full');
if (published.transcripts !== 1) throw new Error(`the teammate published ${JSON.stringify(published)}`);
cairn('push', 'origin');

process.stdout.write(
  `${JSON.stringify({ remote: bare, publisher: `${publisher.name} <${publisher.email}>`, title: 'Remember the quokka accounts on login', session })}\n`,
);
