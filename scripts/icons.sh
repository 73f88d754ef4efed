#!/usr/bin/env bash
# Render the app icons from their source, icons/cairn.svg. Run after editing the SVG and commit
# the PNGs; builds never run this (they read the committed PNGs). Needs ImageMagick.
set -euo pipefail
cd "$(dirname "$0")/.."
for size in 32 128 256; do
  # PNG32: always 8-bit RGBA, which Tauri requires for window and bundle icons.
  convert -background none -density 192 icons/cairn.svg -resize "${size}x${size}" "PNG32:icons/${size}x${size}.png"
done
convert -background none -density 192 icons/cairn.svg -resize 512x512 PNG32:icons/icon.png
