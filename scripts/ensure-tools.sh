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

. "$(dirname "$0")/apt-install.sh"
apt_install ensure-tools "compose lint, Web UI test" \
  "install them (docker-compose v1 for 'docker-compose config'; chromium at /usr/bin/chromium) and run make test again" "${missing[@]}"
for p in "${missing[@]}"; do
  case $p in
    docker-compose) docker-compose version ;;
    chromium) /usr/bin/chromium --version ;;
  esac
done
