#!/usr/bin/env bash
# Installs the Debian 12 packages nexttok builds and tests with (idempotent; needs root or sudo).
set -euo pipefail
PKGS=(build-essential cmake ninja-build pkg-config clang lld libclang-rt-14-dev
      libgtest-dev libgmock-dev libbenchmark-dev libpcre2-dev nlohmann-json3-dev
      libcli11-dev libcpp-httplib-dev libcurl4-openssl-dev curl ca-certificates
      prometheus  # prometheus: its promtool validates the server's /metrics text in the tests
      chromium)   # chromium: scripts/browser_test.sh opens the bench reports in it, headless
missing=()
# Tools that may come from outside Debian's packages (pyenv, nodesource): only installed when absent.
command -v python3 >/dev/null 2>&1 || PKGS+=(python3)
command -v npm >/dev/null 2>&1 || PKGS+=(npm)
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all ${#PKGS[@]} packages present" >&2
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "deps: installing ${missing[*]}" >&2
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
