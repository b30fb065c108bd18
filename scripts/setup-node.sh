#!/usr/bin/env bash
# Install the official TypeScript MCP clients the tests drive deskpilot with (tests/ts), pinned
# by tests/ts/package-lock.json, with `npm ci`. The lock also pins the Node.js the tests run
# them on (the npm package "node", 20.x: @modelcontextprotocol/client 2.x needs Node >= 20 and
# Debian 12's nodejs is 18), so only some node + npm are needed here. Uses npm's cache, so a
# second install works offline.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
if ! command -v node >/dev/null; then
  echo "setup-node: node is missing: install Debian's nodejs (scripts/apt-packages.txt lists it)" >&2
  exit 1
fi
if ! command -v npm >/dev/null; then
  echo "setup-node: npm is missing: installing Debian's npm"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends npm
fi
cd "$here/tests/ts"
echo "setup-node: npm ci in tests/ts (TypeScript MCP SDK 1.x and 2.x, Node 20 for the tests)"
npm ci --no-audit --no-fund --prefer-offline --loglevel=error
test -x node_modules/.bin/node || { echo "setup-node: the pinned Node did not install" >&2; exit 1; }
echo "setup-node: $(node_modules/.bin/node --version) ready for the TypeScript client tests"
