# shellcheck shell=bash
# scripts/lib.sh - shared by scripts/test and scripts/demo (sourced).
# Installs what zkl needs on Debian 12 when it is missing, and bootstraps,
# configures and builds the tree out of source in build/.

# Debian packages: compiler and autotools, the threaded ZooKeeper C client,
# libuuid, Check, valgrind, and for the tests a real ZooKeeper server with
# a headless JRE, kazoo for the interop tests, the harness's tools, and
# libuv, libevent and libev for the event-loop adapters' examples.
ZKL_PACKAGES="gcc g++ make autoconf automake libtool pkg-config \
libzookeeper-mt-dev uuid-dev check valgrind zookeeper default-jre-headless \
python3 python3-kazoo default-jdk-headless libcurator-recipes-java iproute2 util-linux coreutils procps \
docker-compose gnuplot-nox man-db libuv1-dev libevent-dev libev-dev"

zkl_log() { printf '==> [%s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

# zkl_install_deps [PACKAGE...] - apt-get install those of the packages
# (default: $ZKL_PACKAGES) that are not installed yet.
zkl_install_deps() {
  local missing=() p
  # shellcheck disable=SC2086  # a list of words
  [ $# -gt 0 ] || set -- $ZKL_PACKAGES
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
      missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    zkl_log "all Debian packages present"
    return 0
  fi
  zkl_log "installing: ${missing[*]}"
  local sudo=
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
}

# zkl_build [CONFIGURE ARGS...] - bootstrap, configure in build/, make.
zkl_build() {
  local top
  top=$(pwd)
  mkdir -p m4
  if [ ! -x configure ] || [ configure.ac -nt configure ] || [ Makefile.am -nt Makefile.in ]; then
    zkl_log "autoreconf -fi"
    autoreconf -fi >/dev/null
  fi
  mkdir -p build
  cd build || return 1
  if [ ! -f Makefile ] || [ ../configure -nt config.status ]; then
    zkl_log "configure $*"
    ../configure -q "$@"
  fi
  zkl_log "make"
  make -s -j"$(nproc)"
  cd "$top" || return 1
}
