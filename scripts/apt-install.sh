# Sourced by the ensure-*.sh scripts: apt_install installs Debian packages the tests need.
#
#   apt_install SCRIPT WHY HINT PKG...
#
# installs PKG... with apt-get (through sudo when not root), saying WHY they are needed;
# where there is no apt-get, or no root and no sudo, it prints HINT (what to install by
# hand) after SCRIPT: and exits 1.
apt_install() {
  local script=$1 why=$2 hint=$3
  shift 3
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "$script: missing $* and this is not a Debian-like system;" >&2
    echo "$script: $hint" >&2
    exit 1
  fi
  local sudo=""
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
      echo "$script: missing $*; run as root or install them: apt-get install $*" >&2
      exit 1
    fi
  fi
  echo "$script: installing Debian's $* ($why)"
  export DEBIAN_FRONTEND=noninteractive NEEDRESTART_SUSPEND=1
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}
