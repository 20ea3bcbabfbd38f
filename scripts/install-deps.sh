#!/usr/bin/env bash
# Installs the Debian packages RetroRapid needs, only those missing (idempotent).
# Usage: scripts/install-deps.sh [extra-package ...]
set -euo pipefail

# libwebsockets-dev pulls in libev-dev and the libev plugin (libwebsockets-evlib-ev) the
# server runs on; they are named too so that nothing depends on that packaging detail.
# libcurl4: Foundation's URLSession on Linux (FoundationNetworking) is built on it; the server
# calls the payment provider with it (docs/OPERATIONS.md, "Selling unlimited play").
# libpq-dev: the server links libpq for its PostgreSQL backend, so even `make run` (SQLite, no
# database server installed) builds against it; the server itself (postgresql) is a test package.
packages=(pkg-config libwebsockets-dev libwebsockets-evlib-ev libev-dev libsqlite3-dev libcurl4 libpq-dev "$@")
# The end-to-end tests make a virtual environment: Debian's own python3 needs python3-venv
# for that (a python3 with venv and ensurepip built in, like pyenv's, does not).
if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
    packages+=(python3 python3-venv)
fi
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    sudo=(sudo)
else
    sudo=()
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
