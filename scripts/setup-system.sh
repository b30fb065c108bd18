#!/usr/bin/env bash
# Install deskpilot's system packages (Debian 12). Idempotent: does nothing when all are present.
#   scripts/setup-system.sh                      the packages deskpilot needs (apt-packages.txt)
#   scripts/setup-system.sh LIST [--install-recommends]
#                                                another list, e.g. apt-desktop-like.txt (make
#                                                desktop-like), optionally with its recommends
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
list=${1:-$here/apt-packages.txt}
recommends=--no-install-recommends
[ "${2:-}" = "--install-recommends" ] && recommends=--install-recommends
mapfile -t pkgs < <(grep -v '^\s*#' "$list" | grep -v '^\s*$')
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-system: all ${#pkgs[@]} system packages of $(basename "$list") present"
  exit 0
fi
echo "setup-system: installing ${#missing[@]} packages: ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q "$recommends" "${missing[@]}"
