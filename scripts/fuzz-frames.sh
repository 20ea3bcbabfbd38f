#!/usr/bin/env bash
# The live frame fuzzer (Tests/python/frame_fuzzer.py) for FUZZ_SECONDS against a release
# build of the server on a loopback port with a throwaway SQLite database (docs/FUZZING.md,
# "The live frame fuzzer"). A batch that breaks the node is saved under
# .build/fuzz/artifacts/frames/; copy it into Tests/Fuzz/frames/ once fixed, and `make test`
# sends it again on every run. Environment: FUZZ_SECONDS (60), FRAME_FUZZ_SEED (random).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
swift build -c release --product retrorapid
make --no-print-directory python-test-deps
folder=$(mktemp -d)
artifacts=.build/fuzz/artifacts/frames
mkdir -p "$artifacts"
port=$(.build/venv/bin/python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
.build/release/retrorapid serve --host 127.0.0.1 --port "$port" --database-url "sqlite:$folder/retrorapid.sqlite" \
    --new-players-per-address 100000/600 --new-players-per-server 100000/600 >"$folder/server.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$folder"' EXIT
for _ in $(seq 100); do
    curl -fs "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
    sleep 0.1
done
echo "== live frame fuzzer: ${seconds}s against port $port"
status=0
.build/venv/bin/python Tests/python/frame_fuzzer.py --base-url "http://127.0.0.1:$port" --seconds "$seconds" \
    ${FRAME_FUZZ_SEED:+--seed "$FRAME_FUZZ_SEED"} --artifacts "$artifacts" || status=$?
if ! kill -0 "$server" 2>/dev/null; then
    echo "fuzz-frames: the server stopped; the end of its log:" >&2
    tail -40 "$folder/server.log" >&2
    status=1
fi
exit "$status"
