#!/usr/bin/env bash
# Runs a command with a throwaway PostgreSQL server (scripts/test-postgres.sh) beside it:
# starts one, exports its admin URL as RETRORAPID_TEST_POSTGRES_URL, runs the command, always
# stops the server (also on failure or Ctrl-C), and exits with the command's status. If the
# server does not start, the command does not run and this exits 1.
# Usage: scripts/with-test-postgres.sh COMMAND [ARGUMENT ...]
# The cluster lives in RETRORAPID_TEST_POSTGRES_DIR (default: .build/test-postgres in the
# repository); one server per folder at a time.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 COMMAND [ARGUMENT ...]" >&2; exit 64; }
scripts=$(cd "$(dirname "$0")" && pwd)
dir=${RETRORAPID_TEST_POSTGRES_DIR:-$scripts/../.build/test-postgres}

url=$("$scripts/test-postgres.sh" start "$dir") || { echo "with-test-postgres: the PostgreSQL test server did not start" >&2; exit 1; }
trap '"$scripts/test-postgres.sh" stop "$dir" || true' EXIT
export RETRORAPID_TEST_POSTGRES_URL=$url
# In the background so that a signal reaches this script at once (bash runs traps only between
# commands) and is passed on; stdin stays the command's (<&0).
"$@" <&0 &
child=$!
trap 'kill -INT "$child" 2>/dev/null || true' INT
trap 'kill -TERM "$child" 2>/dev/null || true' TERM
trap 'kill -HUP "$child" 2>/dev/null || true' HUP
status=0
wait "$child" || status=$?
# Above 128, a signal may have cut the wait short: wait again for the command's own status (bash
# keeps it once the command has ended); the server stops only after the command has.
while [ "$status" -gt 128 ]; do
    status=0
    wait "$child" || status=$?
    kill -0 "$child" 2>/dev/null || break
done
exit "$status"
