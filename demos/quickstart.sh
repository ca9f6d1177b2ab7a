#!/bin/sh
# malloc_freq quick start on a fresh Debian machine: installs the build dependencies, builds,
# profiles the multi-threaded demo and prints the report. Run from the source tree:
#     sh demos/quickstart.sh
set -e
cd "$(dirname "$0")/.."
packages="build-essential g++ autoconf automake libtool pkg-config libunwind-dev uthash-dev \
libdw-dev libelf-dev libiberty-dev zlib1g-dev"
if [ "$(id -u)" = 0 ]; then sudo=""; elif command -v sudo >/dev/null; then sudo=sudo; else
	echo "quickstart: run as root (or install sudo) to install: $packages" >&2
	exit 1
fi
echo "quickstart: installing $packages"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $packages >/dev/null
echo "quickstart: building"
[ -x configure ] || autoreconf -fi >/dev/null 2>&1
[ -f Makefile ] || ./configure -q
make -j"$(nproc)" >/dev/null
make demo
