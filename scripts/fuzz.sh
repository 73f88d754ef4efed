#!/usr/bin/env bash
# Fuzz Cairn's input-facing code: the agent adapters (Claude, Codex, Copilot), the redactor, Recall's analyzer,
# the reviewed-JSONL import, the hooks/MCP settings edits, the parser of a model's extraction
# answer and the reader of the retained copies (target bodies: fuzz/src/lib.rs, seeds:
# tests/fixtures and fuzz/src/bin/drive.rs).
#
#   scripts/fuzz.sh short              a few seconds per target on stable Rust (make test)
#   scripts/fuzz.sh long               libFuzzer via cargo-fuzz, FUZZ_SECONDS per target (make fuzz)
#   scripts/fuzz.sh replay TARGET FILE run one saved input through TARGET
#
# `short` uses the stable driver (fuzz/src/bin/drive.rs): every fixture seed replayed, then a
# seeded mutation loop through the same target functions, no nightly needed. `long` installs
# cargo-fuzz if missing and runs it on stable with RUSTC_BOOTSTRAP=1 (libFuzzer needs -Z flags);
# if that cannot build, it falls back to the stable driver for the same time.
# Env: FUZZ_SECONDS (per target; short 3, long 60), FUZZ_SEED (short; default fixed, so CI is
# reproducible), FUZZ_PROFILE (driver build profile; short dev, long fallback release),
# FUZZ_SANITIZER (long; address, or none when ASan is unavailable), FUZZ_TARGETS (a space-separated
# subset of the targets below, e.g. "redact database_units"; default all).
# `long` runs every target even after one fails, then lists each failure and its saved input.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
mode=${1:-short}
TARGETS=(claude codex copilot qwen droid kimi pi grok antigravity vibe iflow gptme posit gemini gemini_document cline_document hermes_document qwenpaw_document vscopilot_traces cursor aider database_units redact analyze import settings model_answer retained_copy published_document ai_note)
if [ -n "${FUZZ_TARGETS:-}" ]; then
  for t in $FUZZ_TARGETS; do
    [[ " ${TARGETS[*]} " == *" $t "* ]] || { echo "fuzz: no target '$t' (FUZZ_TARGETS); targets: ${TARGETS[*]}"; exit 2; }
  done
  read -r -a TARGETS <<<"$FUZZ_TARGETS"
fi
# Shares the workspace's target dir, so the dependencies cairn-core needs are built once.
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
# FUZZ_PROFILE: dev (default) reuses what `cargo test` built, so the short run in `make test`
# compiles only the driver; release runs several times more executions per second.
PROFILE=${FUZZ_PROFILE:-dev}
DRIVE=(cargo run --quiet --profile "$PROFILE" --locked --manifest-path "$ROOT/fuzz/Cargo.toml" --bin drive --)

short() {
  local secs=${FUZZ_SECONDS:-3} seed=${FUZZ_SEED:-12648430}
  echo "fuzz (stable driver, $PROFILE profile): ${secs}s per target, seed $seed"
  "${DRIVE[@]}" --seconds "$secs" --seed "$seed" "${TARGETS[@]}"
}

long() {
  local secs=${FUZZ_SECONDS:-60} san=${FUZZ_SANITIZER:-address}
  PROFILE=${FUZZ_PROFILE:-release}
  DRIVE=(cargo run --quiet --profile "$PROFILE" --locked --manifest-path "$ROOT/fuzz/Cargo.toml" --bin drive --)
  if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "installing cargo-fuzz"
    cargo install cargo-fuzz --locked || { echo "cargo-fuzz did not install; using the stable driver"; FUZZ_SECONDS=$secs short; return; }
  fi
  # Seeds: the same fixture windows the stable driver uses, plus whatever libFuzzer found before.
  "${DRIVE[@]}" --write-corpus "$ROOT/fuzz/corpus"
  export RUSTC_BOOTSTRAP=1
  unset CARGO_TARGET_DIR # cargo-fuzz builds with its own flags into fuzz/target
  cd "$ROOT/fuzz"
  if ! cargo fuzz build --release --sanitizer "$san" --features libfuzzer; then
    echo "cargo fuzz could not build (sanitizer $san); using the stable driver"
    cd "$ROOT"; export CARGO_TARGET_DIR=$ROOT/target; FUZZ_SECONDS=$secs short; return
  fi
  local total=0 failed=()
  for t in "${TARGETS[@]}"; do
    local log
    log=$(mktemp)
    # Each target gets its whole time even after another failed: one run lists every failure.
    if ! cargo fuzz run --release --sanitizer "$san" --features libfuzzer "$t" "corpus/$t" \
        -- -max_total_time="$secs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 2>"$log"; then
      tail -40 "$log"
      local input
      input=$(grep -oE "artifacts/$t/[A-Za-z0-9_-]+" "$log" | tail -1 || true)
      echo "fuzz $t: FAILED (input: fuzz/${input:-artifacts/$t/}; replay: scripts/fuzz.sh replay $t fuzz/${input:-artifacts/$t/<file>})"
      failed+=("$t: fuzz/${input:-artifacts/$t/}")
      rm -f "$log"
      continue
    fi
    local runs
    runs=$(grep -oE 'Done [0-9]+ runs' "$log" | grep -oE '[0-9]+' | tail -1 || echo 0)
    echo "fuzz $t: ${runs:-0} executions in ${secs}s (libFuzzer)"
    total=$((total + ${runs:-0}))
    rm -f "$log"
  done
  echo "fuzz: $total executions in all"
  if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: ${#failed[@]} of ${#TARGETS[@]} targets FAILED:"
    printf '  %s\n' "${failed[@]}"
    exit 1
  fi
}

case "$mode" in
  short) short ;;
  long) long ;;
  replay)
    [ $# -eq 3 ] || { echo "usage: scripts/fuzz.sh replay TARGET FILE"; exit 2; }
    "${DRIVE[@]}" --replay "$2" "$3" ;;
  *) echo "usage: scripts/fuzz.sh short|long|replay TARGET FILE"; exit 2 ;;
esac
