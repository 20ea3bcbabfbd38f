#!/usr/bin/env bash
# Fails when a target imports a module docs/ARCHITECTURE.md ("Targets and what each may
# import") says it must not:
#   - CLibWebSockets and CLibEV: only Sources/RetroRapidLWS (libwebsockets in one place);
#   - CSQLite3: only Sources/RetroRapidSQLite (the SQLite backend);
#   - CLibPQ: only Sources/RetroRapidPostgreSQL (the PostgreSQL backend);
#   - RetroRapidSQLite and RetroRapidPostgreSQL: only Sources/RetroRapidStorage (the factory
#     that picks a backend) and the tests; the server, the executable and the domain never
#     name a backend;
#   - Sources/RetroRapidDomain imports only Foundation and RetroRapidRules;
#   - CLibFuzzer: only Sources/RetroRapidFuzz;
#   - Sources/RetroRapidRules imports nothing at all (pure Swift, not even Foundation);
#   - RetroRapidSQL (the one SQL layer): only the two backends, Sources/RetroRapidStorage (the
#     copier moves rows from one backend to the other as its values) and the tests, and it
#     imports only Foundation, the domain and the rules itself.
# Every Swift file under Sources/ and Tests/ is checked, whatever form the import takes
# (`@testable import`, `import struct M.T`, `public import`, `@_implementationOnly import`).
# Usage: scripts/check-imports.sh   (from anywhere inside the repository)
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
failed=0

# The modules each Swift file imports, as "path:line:module".
imports() {
    { grep -rnE --include='*.swift' \
        '^[[:space:]]*(@[A-Za-z_]+[[:space:]]+)*((public|package|internal|fileprivate|private)[[:space:]]+)?import[[:space:]]' \
        "$@" 2>/dev/null || true; } | {
    sed -E 's/^([^:]+:[0-9]+):[[:space:]]*(@[A-Za-z_]+[[:space:]]+)*((public|package|internal|fileprivate|private)[[:space:]]+)?import[[:space:]]+((typealias|struct|class|enum|protocol|let|var|func)[[:space:]]+)?([A-Za-z_][A-Za-z0-9_]*).*/\1:\7/'
    }
}

# only MODULE ALLOWED_DIR...: MODULE may be imported under the given folders only.
only() {
    local module=$1; shift
    local found
    found=$(imports Sources Tests | awk -F: -v m="$module" '$3 == m' | while IFS=: read -r path line name; do
        allowed=0
        for dir in "$@"; do
            case "$path" in "$dir"/*) allowed=1 ;; esac
        done
        [ "$allowed" = 1 ] || echo "$path:$line: import $name"
    done)
    if [ -n "$found" ]; then
        echo "Only $* may import $module (docs/ARCHITECTURE.md):" >&2
        echo "$found" >&2
        failed=1
    fi
}

only CLibWebSockets Sources/RetroRapidLWS
only CLibEV Sources/RetroRapidLWS
only CSQLite3 Sources/RetroRapidSQLite
only CLibPQ Sources/RetroRapidPostgreSQL
only RetroRapidSQLite Sources/RetroRapidStorage Tests
only RetroRapidPostgreSQL Sources/RetroRapidStorage Tests
only CLibFuzzer Sources/RetroRapidFuzz
only RetroRapidSQL Sources/RetroRapidSQLite Sources/RetroRapidPostgreSQL Sources/RetroRapidStorage Tests

rules=$(imports Sources/RetroRapidRules)
if [ -n "$rules" ]; then
    echo "Sources/RetroRapidRules imports nothing (docs/ARCHITECTURE.md):" >&2
    echo "$rules" >&2
    failed=1
fi

sql=$(imports Sources/RetroRapidSQL | awk -F: '$3 != "Foundation" && $3 != "RetroRapidDomain" && $3 != "RetroRapidRules"')
if [ -n "$sql" ]; then
    echo "Sources/RetroRapidSQL imports only Foundation, RetroRapidDomain and RetroRapidRules (docs/ARCHITECTURE.md):" >&2
    echo "$sql" >&2
    failed=1
fi

domain=$(imports Sources/RetroRapidDomain | awk -F: '$3 != "Foundation" && $3 != "RetroRapidRules"')
if [ -n "$domain" ]; then
    echo "Sources/RetroRapidDomain imports only Foundation and RetroRapidRules (docs/ARCHITECTURE.md):" >&2
    echo "$domain" >&2
    failed=1
fi

# The check must see the files it judges: an empty result from a wrong folder would pass.
if [ -z "$(imports Sources/RetroRapidLWS | awk -F: '$3 == "CLibWebSockets"')" ]; then
    echo "scripts/check-imports.sh found no import of CLibWebSockets in Sources/RetroRapidLWS: is the pattern broken?" >&2
    failed=1
fi

exit $failed
