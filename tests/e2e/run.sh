#!/usr/bin/env bash
# End-to-end: the real cairn-desktop binary, with the UI embedded, driven over WebDriver
# (tauri-driver + WebKitWebDriver) under Xvfb, on a data dir seeded from tests/fixtures by the
# real `cairn sync`. Screenshots land in test-artifacts/e2e/.
#
# Needs what scripts/setup.sh installs (webkit2gtk-driver, xvfb, tauri-driver, node_modules).
set -euo pipefail
cd "$(dirname "$0")/../.."

target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
started=$SECONDS

# Pitfall P6: only `tauri build` embeds ui/dist (feature custom-protocol). A plain `cargo build`
# binary loads the Vite dev server instead and shows "Could not connect". Both write the same
# target/debug/cairn-desktop, so always rebuild here; a flip between the two costs seconds.
npx tauri build --debug --no-bundle
cargo build --locked -p cairn-cli

data_dir="$(mktemp -d -t cairn-e2e.XXXXXX)"
trap 'rm -rf "$data_dir"' EXIT
CLAUDE_PROJECTS_DIR="$PWD/tests/fixtures/claude" CODEX_SESSIONS_DIR="$PWD/tests/fixtures/codex" \
  "$target_dir/debug/cairn" --data-dir "$data_dir" sync

mkdir -p test-artifacts/e2e
# tauri-driver (spawned by the test) passes its environment down to WebKitWebDriver and the app,
# so CAIRN_DATA_DIR reaches cairn-desktop.
export CAIRN_DATA_DIR="$data_dir"
export CAIRN_E2E_APP="$target_dir/debug/cairn-desktop"
export CAIRN_E2E_CLI="$target_dir/debug/cairn"
echo "e2e: built and seeded in $((SECONDS - started)) s; driving the app under Xvfb"
xvfb-run -a -s "-screen 0 1280x800x24" node --test --test-concurrency=1 tests/e2e/
echo "e2e: done in $((SECONDS - started)) s"
