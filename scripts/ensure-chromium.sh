#!/usr/bin/env bash
# Installs Debian's Chromium for the docs page tests (test/docs/pages.test.ts), which drive it
# with playwright-core instead of downloading a browser build. Idempotent: a no-op when present.
set -euo pipefail

CHROMIUM=/usr/bin/chromium

if [ -x "$CHROMIUM" ]; then
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "ensure-chromium: $CHROMIUM is missing and installing it needs root." >&2
  echo "ensure-chromium: run 'sudo apt-get update && sudo apt-get install -y chromium chromium-driver', then retry." >&2
  exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-chromium: $CHROMIUM is missing and apt-get is not available; install Chromium at $CHROMIUM by hand." >&2
  exit 1
fi

echo "ensure-chromium: installing chromium with apt-get (one-off, takes a while)" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update
# fonts-liberation is only a Recommends of chromium, but without any font the screenshots show no text.
apt-get install -y --no-install-recommends chromium chromium-driver fonts-liberation

if [ ! -x "$CHROMIUM" ]; then
  echo "ensure-chromium: apt-get finished but $CHROMIUM is still missing." >&2
  exit 1
fi
