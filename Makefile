# The README's commands. Every target that builds or tests installs what is missing first
# (scripts/setup.sh is idempotent and takes about a second when nothing is missing).
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

# Where cargo puts binaries (CI keeps a persistent CARGO_TARGET_DIR outside the clone).
TARGET_DIR := $(or $(CARGO_TARGET_DIR),$(CURDIR)/target)
DESKTOP := $(TARGET_DIR)/release/cairn-desktop

.PHONY: help setup setup-app app desktop dev test test-ui test-rust test-e2e fmt-check ui-checks svelte-check lint vitest rust-checks clippy rust-tests bindings-check bench-notes-check e2e bench measure-startup
# Order matters (the bindings check reads what cargo test wrote).
.NOTPARALLEL:

help:
	@echo "make app      build the desktop app (release, UI embedded) and open it"
	@echo "make test     every check CI runs: fmt, bench notes, clippy, cargo test, bindings drift, svelte-check, eslint, vitest, short fuzz, e2e"
	@echo "make desktop  build $(DESKTOP) only"
	@echo "make dev      tauri dev: the window over the Vite dev server, with hot reload"
	@echo "make test-ui  svelte-check, eslint, vitest"
	@echo "make test-rust clippy, cargo test, bindings drift"
	@echo "make test-e2e the end-to-end test alone (real binary, WebDriver, Xvfb)"
	@echo "make bench    run the benchmarks (scripts/bench.sh)"
	@echo "make fuzz     libFuzzer on every fuzz target, FUZZ_SECONDS each (default 60; scripts/fuzz.sh)"
	@echo "make measure-startup  desktop cold start and idle cost on ~2,000 synced sessions"

setup:
	@bash scripts/setup.sh

# What building and opening the app needs, without the test tools (PostgreSQL, Xvfb, tauri-driver,
# the reference clients in .venv/) that `setup` adds.
setup-app:
	@bash scripts/setup.sh app

# `tauri build` runs `npm run build:ui` first and embeds ui/dist in the binary. The CLI is built
# beside it: Settings installs hooks that run the `cairn` next to `cairn-desktop`.
desktop: setup-app
	npx tauri build --no-bundle
	cargo build --release --locked -p cairn-cli

app: desktop
	@if [ -n "$${DISPLAY:-}$${WAYLAND_DISPLAY:-}" ]; then \
	  echo "Opening $(DESKTOP) (data: $${CAIRN_DATA_DIR:-default data dir})"; \
	  "$(DESKTOP)"; \
	else \
	  echo "No display (DISPLAY/WAYLAND_DISPLAY unset): running under xvfb-run, so the window is off-screen. Ctrl-C to stop."; \
	  xvfb-run -a -s "-screen 0 1280x800x24" "$(DESKTOP)"; \
	fi

dev: setup-app
	npx tauri dev

# The checks run in this order, cheapest first. `make -k test` runs every one and reports all failures.
test: setup
	@$(MAKE) --no-print-directory fmt-check bench-notes-check ui-checks rust-checks bindings-check fuzz-short e2e

test-ui: setup
	@$(MAKE) --no-print-directory ui-checks

test-rust: setup
	@$(MAKE) --no-print-directory rust-checks bindings-check

test-e2e: setup
	@$(MAKE) --no-print-directory e2e

fmt-check:
	cargo fmt --all --check

ui-checks: svelte-check lint vitest

svelte-check:
	npm run -s check

lint:
	npm run -s lint

vitest:
	npm run -s test:ui

rust-checks: clippy rust-tests

clippy:
	cargo clippy --workspace --all-targets --locked -- -D warnings

# The team archive's tests need a real PostgreSQL and a real Secret Service: scripts/with-postgres.sh
# starts a throwaway cluster on loopback for the run, scripts/with-keyring.sh a private D-Bus session
# with a throwaway GNOME Keyring, and both stop after (the tests fail without them).
rust-tests:
	bash scripts/with-postgres.sh bash scripts/with-keyring.sh cargo test --workspace --locked --no-fail-fast

# `cargo test` re-exports the TypeScript bindings (src-tauri's export_bindings_test); a diff
# means a command or a view type changed without the committed bindings being updated.
bindings-check:
	@if ! git ls-files --error-unmatch ui/src/lib/bindings.ts >/dev/null 2>&1; then \
	  if [ -n "$${CI:-}" ]; then echo "ui/src/lib/bindings.ts is not committed"; exit 1; fi; \
	  echo "bindings-check: ui/src/lib/bindings.ts is not committed yet (a failure under CI)"; \
	else \
	  git diff --exit-code -- ui/src/lib/bindings.ts \
	    || { echo "ui/src/lib/bindings.ts is out of date: commit the regenerated file"; exit 1; }; \
	fi

# `make bench` rewrites bench/RESULTS.md as its tables followed by bench/NOTES.md: a hand-run
# section written into RESULTS.md alone would be lost.
bench-notes-check:
	python3 bench/bench.py --check-notes

e2e:
	bash tests/e2e/run.sh

measure-startup: setup
	bash scripts/measure-startup.sh

bench:
	@if [ -x scripts/bench.sh ]; then bash scripts/bench.sh; else echo "make bench: scripts/bench.sh does not exist yet"; fi

# Fuzzing (scripts/fuzz.sh): `fuzz-short` is the seconds-per-target run on stable Rust that
# `make test` includes; `fuzz` runs libFuzzer (cargo-fuzz, installed if missing) for
# FUZZ_SECONDS per target (default 60).
.PHONY: fuzz fuzz-short
fuzz-short:
	bash scripts/fuzz.sh short

fuzz: setup
	bash scripts/fuzz.sh long
