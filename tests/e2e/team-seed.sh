#!/usr/bin/env bash
# A teammate's archive in the team archive, for the Team journey: run by tests/e2e/run.sh inside
# scripts/with-postgres.sh (which sets CAIRN_TEST_PG_ADMIN_URL), then runs the rest of its
# command line (the journeys) with the team's address in the environment.
#
#   bash scripts/with-postgres.sh bash tests/e2e/team-seed.sh <work dir> COMMAND [ARGS…]
#
# On the throwaway cluster: database cairn_e2e_team and its team's role cairn_e2e_team_members;
# members `mate`, the teammate, who syncs one transcript into an archive of its own and pushes it
# with the CLI, and `reviewer`, who the desktop connects as (Settings → Team). Their random
# passwords go in MATE_PW and CAIRN_E2E_TEAM_PW: the journey names the variable in the form,
# never the password.
set -euo pipefail
work="$1"; shift
cli="${CAIRN_E2E_CLI:?CAIRN_E2E_CLI is not set}"
admin="${CAIRN_TEST_PG_ADMIN_URL:?run through scripts/with-postgres.sh}"
at="${admin##*@}"; at="${at%%/*}"           # 127.0.0.1:PORT
host="${at%:*}"; port="${at##*:}"
pw() { od -An -N12 -tx1 /dev/urandom | tr -d ' \n'; }
mate_pw="$(pw)"; reviewer_pw="$(pw)"; owner_pw="$(pw)"
psql "$admin" -X -q -v ON_ERROR_STOP=1 <<SQL
CREATE ROLE team_owner LOGIN PASSWORD '$owner_pw';
CREATE DATABASE cairn_e2e_team OWNER team_owner;
-- The team: cairn team init grants the archive (and CONNECT) to this role alone.
CREATE ROLE cairn_e2e_team_members NOLOGIN;
CREATE ROLE mate LOGIN PASSWORD '$mate_pw' IN ROLE cairn_e2e_team_members;
CREATE ROLE reviewer LOGIN PASSWORD '$reviewer_pw' IN ROLE cairn_e2e_team_members;
SQL
# The database's owner sets the team archive up once (the tables' owner is no teammate).
mkdir -p "$work/owner"
env -u CAIRN_TEAM_URL CAIRN_DATA_DIR="$work/owner/data" HOME="$work/owner" PGPASSWORD="$owner_pw" \
  "$cli" team init --to "postgres://team_owner@$host:$port/cairn_e2e_team" >/dev/null

# The teammate's machine: one Claude Code session about a word nothing else holds.
mkdir -p "$work/mate/claude/-srv-shop" "$work/mate/data"
session=7e4d2c10-5a5a-4b4b-8c8c-0000000000e2
{
  printf '{"type":"user","sessionId":"%s","uuid":"m1","timestamp":"2026-05-01T09:00:00Z","cwd":"/srv/shop","gitBranch":"feature/quokka","message":{"role":"user","content":"Plan the quokka inventory migration for the shop"}}\n' "$session"
  printf '{"type":"assistant","sessionId":"%s","uuid":"m2","timestamp":"2026-05-01T09:00:04Z","message":{"id":"a1","role":"assistant","model":"claude-e2e","content":[{"type":"text","text":"The quokka migration moves stock counts into one table."}]}}\n' "$session"
} > "$work/mate/claude/-srv-shop/$session.jsonl"
mate() {
  env -u CAIRN_TEAM_URL CAIRN_DATA_DIR="$work/mate/data" HOME="$work/mate" \
    CLAUDE_PROJECTS_DIR="$work/mate/claude" CODEX_SESSIONS_DIR="$work/mate/codex" \
    PGPASSWORD="$mate_pw" "$cli" "$@"
}
mate sync >/dev/null
mate team push --to "postgres://mate@$host:$port/cairn_e2e_team"
# Pushed from a repository of its own (its folder is none here): a root commit no repository of
# the journeys' machine has, so a skim kept to the shop repository leaves it out.
psql "${admin%/*}/cairn_e2e_team" -X -q -v ON_ERROR_STOP=1 -c "UPDATE cairn.sessions SET repo = repeat('e', 40)"
# Its key, for the journey's cairn://team link.
team_session="$(mate --json sessions | python3 -c 'import json, sys; print(json.load(sys.stdin)[0]["session_key"])')"

export CAIRN_E2E_TEAM_HOST="$host" CAIRN_E2E_TEAM_PORT="$port" CAIRN_E2E_TEAM_DB=cairn_e2e_team
export CAIRN_E2E_TEAM_USER=reviewer CAIRN_E2E_TEAM_PW="$reviewer_pw" CAIRN_E2E_TEAM_PUBLISHER=mate
export CAIRN_E2E_TEAM_SESSION="$team_session"
exec "$@"
