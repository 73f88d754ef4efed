// Builds what a person's machine looks like before Cairn's first run: a git repository where
// agents worked on branches (edits and commits made for real), the agents' transcripts of that
// work in their source dirs, and the repository's real fixture transcripts beside them.
//
//   node tests/e2e/seed.mjs <root> [<home>]
//
// Writes <root>/repo (git), <root>/claude/<project>/<session>.jsonl, <root>/codex/..., with
// <home> the real fixtures of six more agents in their default folders under that home (the
// agent filters then hold more agents than fit as buttons), and prints a JSON summary (the
// session ids, branch names and the record to deep-link to).
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, appendFileSync, writeFileSync, realpathSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(process.argv[2] ?? '');
if (!process.argv[2]) throw new Error('usage: node tests/e2e/seed.mjs <root> [<home>]');
const home = process.argv[3] ? resolve(process.argv[3]) : null;
const fixtures = resolve('tests/fixtures');

const gitEnv = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Agent',
  GIT_AUTHOR_EMAIL: 'agent@example.invalid',
  GIT_COMMITTER_NAME: 'Agent',
  GIT_COMMITTER_EMAIL: 'agent@example.invalid',
};
const git = (dir, ...args) => execFileSync('git', ['-C', dir, ...args], { env: gitEnv, encoding: 'utf8' });

// The repository, with one commit on main.
const repoDir = join(root, 'shop');
mkdirSync(repoDir, { recursive: true });
git(repoDir, 'init', '-q', '-b', 'main');
writeFileSync(join(repoDir, 'README.md'), '# shop\n');
writeFileSync(join(repoDir, 'login.js'), 'export function login(user) {\n  return false;\n}\n');
git(repoDir, 'add', '.');
// Made well before the sessions: association allows an hour of clock skew, and the init commit
// must not count as the sessions' work.
const past = new Date(Date.now() - 3 * 24 * 3600 * 1000).toISOString();
execFileSync('git', ['-C', repoDir, 'commit', '-q', '-m', 'init'], { env: { ...gitEnv, GIT_AUTHOR_DATE: past, GIT_COMMITTER_DATE: past } });
const repo = realpathSync(repoDir);

const claudeDir = join(root, 'claude');
const codexDir = join(root, 'codex');
const project = join(claudeDir, '-shop');
mkdirSync(project, { recursive: true });

// Transcript times follow the real clock, so the commits the seed makes fall inside the sessions
// (the init commit above comes before them all).
let clock = Date.now() + 1_000;
const tick = () => new Date((clock = Math.max(clock + 1_000, Date.now()))).toISOString();

/** A Claude Code transcript, written line by line as the agent would. */
function transcript(session, branch) {
  const path = join(project, `${session}.jsonl`);
  let n = 0;
  const line = (value) => {
    n += 1;
    const full = { ...value, sessionId: session, cwd: repo, gitBranch: branch, uuid: `${session}-${n}`, timestamp: tick(), version: '2.1.39' };
    appendFileSync(path, `${JSON.stringify(full)}\n`);
    return n;
  };
  return {
    user: (text) => line({ type: 'user', message: { role: 'user', content: text } }),
    say: (text) =>
      line({ type: 'assistant', message: { id: `msg_${session}_${n}`, role: 'assistant', model: 'claude-sonnet-4-5', content: [{ type: 'text', text }], usage: { input_tokens: 1200, output_tokens: 340 } } }),
    tool(name, input, output) {
      const id = `toolu_${session}_${n}`;
      const call = line({ type: 'assistant', message: { id: `msg_${session}_${n}`, role: 'assistant', model: 'claude-sonnet-4-5', content: [{ type: 'tool_use', id, name, input }] } });
      line({ type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: output }] } });
      return call;
    },
    edit(file, oldText, newText) {
      const full = join(repo, file);
      execFileSync('sed', ['-i', `s/${oldText}/${newText}/`, full]);
      return this.tool('Edit', { file_path: full, old_string: oldText, new_string: newText }, 'The file has been updated.');
    },
    run(command) {
      let output;
      try {
        output = execFileSync('sh', ['-c', command], { cwd: repo, env: gitEnv, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      } catch (error) {
        output = `${error.stdout ?? ''}${error.stderr ?? ''}`;
      }
      return this.tool('Bash', { command, description: `Run ${command.split(' ')[0]}` }, output);
    },
  };
}

// Session 1: implements login on feature/login and commits it (strong evidence).
git(repo, 'checkout', '-q', '-b', 'feature/login');
const s1 = '5a1d0c3e-1111-4aaa-8bbb-000000000001';
const one = transcript(s1, 'feature/login');
one.user('Make login accept any known user, with a test');
one.say('I will change login() to check the user and add a test.');
one.edit('login.js', 'return false;', 'return user !== null;');
one.run('printf "test login ... ok\\n"');
one.say('Implemented: login now accepts known users. The tests pass.');
one.user('Commit it');
// `tool` returns the call's 1-based line number, which is the 0-based ordinal of the result line
// after it: the record holding the commit's output, the evidence of the link.
const commitOrdinal = one.run('git add -A && git commit -m "Login accepts known users"');
one.say('Committed the change on feature/login.');

// Session 2: only talked while feature/login was checked out (a weak link).
const s2 = '5a1d0c3e-2222-4aaa-8bbb-000000000002';
const two = transcript(s2, 'feature/login');
two.user('What does the login function return for a null user?');
two.say('It returns false for a null user, because of the `user !== null` check.');

// Session 3: fixes the README on main and commits.
git(repo, 'checkout', '-q', 'main');
const s3 = '5a1d0c3e-3333-4aaa-8bbb-000000000003';
const three = transcript(s3, 'main');
three.user('Fix the README title');
three.edit('README.md', '# shop', '# Shop');
three.run('git commit -qam "README: title case" && git log --oneline -1');
three.say('Done: the README title is fixed and committed.');

// A session an agent opened and wrote nothing to: the first sync says so, once.
writeFileSync(join(project, '5a1d0c3e-4444-4aaa-8bbb-000000000004.jsonl'), '');

// The real fixture transcripts, as the agents lay them out.
cpSync(join(fixtures, 'claude'), join(claudeDir, '-home-USER-projects-spotter'), { recursive: true });
mkdirSync(join(codexDir, '2026/08/03'), { recursive: true });
cpSync(join(fixtures, 'codex'), join(codexDir, '2026/08/03'), { recursive: true });

// More agents, each in its default folder under the home the app runs with.
const otherAgents = [];
if (home !== null) {
  const place = (agent, from, to) => {
    mkdirSync(join(home, to, '..'), { recursive: true });
    cpSync(join(fixtures, from), join(home, to), { recursive: true });
    if (!otherAgents.includes(agent)) otherAgents.push(agent);
  };
  place('gemini', 'gemini/stage0', '.gemini/tmp/stage0');
  place('copilot', 'copilot/small.jsonl', '.copilot/session-state/small.jsonl');
  place('qwen', 'qwen/019f0000-0000-7000-8000-000000000001.jsonl', '.qwen/projects/-tmp-q/chats/019f0000-0000-7000-8000-000000000001.jsonl');
  place('droid', 'droid/session_store_small.jsonl', '.factory/sessions/-tmp-d/session_store_small.jsonl');
  place('cursor', 'cursor/-tmp-repo/agent-transcripts/test-session.jsonl', '.cursor/projects/-tmp-repo/agent-transcripts/test-session.jsonl');
  place('kimi', 'kimi/sessions', '.kimi/sessions');
}

process.stdout.write(
  `${JSON.stringify({ repo, claudeDir, codexDir, otherAgents, sessions: { login: s1, question: s2, readme: s3 }, commitOrdinal })}\n`,
);
