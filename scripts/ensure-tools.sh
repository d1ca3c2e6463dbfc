#!/usr/bin/env bash
# Installs what `make test` needs besides Go, with apt when missing:
#   docker-compose                 to lint docker-compose.yml (`docker-compose config`; no Docker engine)
#   chromium                       headless browser for the Web UI tests (internal/integration/webui*_test.go,
#                                  driven by chromedp over the DevTools protocol: no chromedriver)
set -eu

missing=()
if ! command -v docker-compose >/dev/null 2>&1; then
  missing+=(docker-compose)
fi
if [ ! -x /usr/bin/chromium ]; then
  missing+=(chromium)
fi
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-tools: missing ${missing[*]} and this is not a Debian-like system;" >&2
  echo "ensure-tools: install them (docker-compose v1 for 'docker-compose config'; chromium at" >&2
  echo "ensure-tools: /usr/bin/chromium) and run make test again" >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
    echo "ensure-tools: missing ${missing[*]}; run as root or install them: apt-get install ${missing[*]}" >&2
    exit 1
  fi
fi
echo "ensure-tools: installing Debian's ${missing[*]} (compose lint, Web UI test)"
export DEBIAN_FRONTEND=noninteractive NEEDRESTART_SUSPEND=1
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
for p in "${missing[@]}"; do
  case $p in
    docker-compose) docker-compose version ;;
    chromium) /usr/bin/chromium --version ;;
  esac
done
