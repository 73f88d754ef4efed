#!/usr/bin/env bash
# End-to-end: the real cairn-desktop binary, with the UI embedded, driven over WebDriver
# (tauri-driver + WebKitWebDriver) under Xvfb through a person's journeys, starting from a first
# run on an empty data dir and source dirs seeded by tests/e2e/seed.mjs. Screenshots land in
# test-artifacts/e2e/.
#
# Needs what scripts/setup.sh installs (webkit2gtk-driver, xvfb, tauri-driver, node_modules,
# postgresql for the Team journey, gnome-keyring and libsecret-tools for its keyring journey).
set -euo pipefail
cd "$(dirname "$0")/../.."

target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
started=$SECONDS

# Pitfall P6: only a build with tauri's `custom-protocol` feature embeds ui/dist; without it the
# binary loads the Vite dev server and shows "Could not connect". `tauri build` is that feature
# after `npm run build:ui` (tauri.conf.json's beforeBuildCommand), so this runs the two itself,
# with --workspace: the binaries then share every dependency `cargo test --workspace` built, down
# to the feature set (a desktop-only build resolves other features for tokio, getrandom and
# cairn-core and recompiles the GTK stack and candle: minutes on a cold CI machine). The
# Recall journey writes an entry the way a reviewer's import does, with the CLI built beside it.
npm run -s build:ui
cargo build --locked --workspace --bin cairn-desktop --bin cairn --features tauri/custom-protocol

work="$(mktemp -d -t cairn-e2e.XXXXXX)"
trap 'rm -rf "$work"' EXIT
node tests/e2e/seed.mjs "$work/machine" "$work/home" > "$work/seed.json"
mkdir -p "$work/data" "$work/home" test-artifacts/e2e
rm -f test-artifacts/e2e/*.png

# tauri-driver (spawned by the test) passes its environment down to WebKitWebDriver and the app:
# an empty data dir (first run), the seeded source dirs, and a throwaway HOME so the agents'
# real settings (hooks, retention) are never read or written.
export CAIRN_DATA_DIR="$work/data"
export CLAUDE_PROJECTS_DIR="$work/machine/claude"
export CODEX_SESSIONS_DIR="$work/machine/codex"
export CAIRN_E2E_SEED="$work/seed.json"
export CAIRN_E2E_APP="$target_dir/debug/cairn-desktop"
export TAURI_DRIVER="${TAURI_DRIVER:-${CARGO_HOME:-$HOME/.cargo}/bin/tauri-driver}"
export HOME="$work/home"
export CAIRN_E2E_CLI="$target_dir/debug/cairn"
# The git half of the team: a teammate publishes a session in full into a bare repository the
# seeded repository has as origin (the "pull teammates' sessions" journey).
node tests/e2e/git-seed.mjs "$work/machine" "$work/git" > "$work/git-seed.json"
export CAIRN_E2E_GIT_SEED="$work/git-seed.json"
# The journeys run with WebKit's own rendering defaults. With the app's memory-saving ones
# (src-tauri/src/lib.rs `webkit_environment`), WebKitWebDriver's screenshots of a still page time
# out under Xvfb (UND_ERR_HEADERS_TIMEOUT): with compositing off, and also with compositing on but
# DMA-BUF and GTK's GL off. Only WebKit's full defaults passed.
# scripts/measure-startup.sh measures the app with its shipped settings.
# `CAIRN_WEBKIT_DEFAULTS=0 bash tests/e2e/run.sh` reproduces the hang.
export CAIRN_WEBKIT_DEFAULTS="${CAIRN_WEBKIT_DEFAULTS:-1}"
# A stand-in `claude` agent CLI for the generated-insights journey: the app finds it on PATH.
export PATH="$PWD/tests/e2e/bin:$PATH"
# The endpoint journey types the NAME of this variable into Settings as the API key variable; its
# fake OpenAI-compatible server (tests/e2e/fake-llm.mjs, on loopback) refuses requests without it.
export CAIRN_E2E_LLM_KEY="e2e-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
# A private D-Bus session bus (scripts/with-keyring.sh) with a throwaway GNOME Keyring on it: the
# app's single-instance hand-off (a second launch on the same archive passes its cairn:// link to
# the open window) goes over the bus, and the keyring journey stores the team password in that
# Secret Service, never the person's own. GTK's accessibility bridge stays off, as it was without
# a bus.
export NO_AT_BRIDGE=1
# The Team journey reads a teammate's archive from a real PostgreSQL: a throwaway cluster for the
# whole run (scripts/with-postgres.sh), into which tests/e2e/team-seed.sh has a teammate push
# with the CLI before the journeys start; it exports the address and the reviewer's password.
echo "e2e: built and seeded in $((SECONDS - started)) s; driving the app under Xvfb"
bash scripts/with-postgres.sh bash tests/e2e/team-seed.sh "$work/team" \
  bash scripts/with-keyring.sh xvfb-run -a -s "-screen 0 1280x800x24" node --test --test-concurrency=1 tests/e2e/
echo "e2e: done in $((SECONDS - started)) s; screenshots in test-artifacts/e2e/"
