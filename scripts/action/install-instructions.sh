#!/usr/bin/env bash
# Installs what instruction counts need: Valgrind (Debian/Ubuntu packages) and the
# gungraun-runner matching the project's gungraun (crates.io, `cargo install --locked`).
# Inputs arrive as environment variables only.
set -euo pipefail

version="${INPUT_GUNGRAUN_VERSION:-0.20.0}"
if ! command -v valgrind >/dev/null 2>&1; then
    echo "benchgate: installing valgrind"
    sudo=""
    if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq valgrind >/dev/null
fi
if gungraun-runner --version 2>/dev/null | grep -qF "$version"; then
    echo "benchgate: gungraun-runner $version is installed"
else
    echo "benchgate: installing gungraun-runner $version"
    cargo install --locked gungraun-runner --version "$version"
fi
valgrind --version
