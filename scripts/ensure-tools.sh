#!/usr/bin/env bash
# Installs what `make test` needs besides Go: Debian's docker-compose package, used only
# to lint docker-compose.yml (`docker-compose config`; no Docker engine is needed).
set -eu

if command -v docker-compose >/dev/null 2>&1; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-tools: docker-compose is missing and this is not a Debian-like system;" >&2
  echo "ensure-tools: install docker-compose (v1, 'docker-compose config') and run make test again" >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
    echo "ensure-tools: docker-compose is missing; run as root or install it: apt-get install docker-compose" >&2
    exit 1
  fi
fi
echo "ensure-tools: installing Debian's docker-compose (for the compose lint)"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends docker-compose >/dev/null
docker-compose version
