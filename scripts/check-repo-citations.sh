#!/usr/bin/env bash
# Fails when the repository cites a document that is not in it, so that a person who clones it
# can follow every pointer (docs/ARCHITECTURE.md). It looks for:
#   - citations of the product brief or the libwebsockets notes kept outside the repository
#     (the patterns in step 1; ours are docs/ARCHITECTURE.md and docs/LIBWEBSOCKETS-4.1.6.md);
#   - `docs/NAME.md` / `docs/NAME.json` named anywhere that does not exist;
#   - relative links in README.md and docs/*.md whose target does not exist;
#   - a source file named by its path (`Sources/…/X.swift`, `Tests/…/X.swift`) that does not
#     exist (a file moved without its mentions);
#   - "issue N", "session N" or "ACCESSIBILITY #N": the tracker, work sessions and checklist
#     they name are not in the repository, so a comment or document says the reason itself.
# Tracked and new (untracked, not ignored) files are checked; the work tree, not the index.
# Usage: scripts/check-repo-citations.sh   (from anywhere inside the repository)
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
self=scripts/check-repo-citations.sh
# Released migrations are frozen: the migrator checks each applied file's checksum, so even a
# comment edit would make every existing database refuse to start (docs/OPERATIONS.md,
# "Migrate"). These four predate this check and still cite the old brief; new ones are checked.
frozen=(":!Migrations/0001_initial.sql" ":!Migrations/0002_link_codes.sql"
        ":!Migrations/0003_plays_codes_orders.sql" ":!Migrations/0004_settings_games_scores.sql")
failed=0

# 1. Documents outside the repository: the product brief by its name or its section signs, the
#    shared folder, the libwebsockets notes by their bare name (ours, docs/LIBWEBSOCKETS-4.1.6.md,
#    does not match).
outside=$(git grep --untracked -nIE 'DESIGN ?§|DESIGN\.md|\.\./shared/|/work/shared|LIBWEBSOCKETS\.md' \
              -- . ":!$self" "${frozen[@]}" || true)
if [ -n "$outside" ]; then
    echo "Citations of documents that are not in the repository (point at docs/ instead):" >&2
    echo "$outside" >&2
    failed=1
fi

# 2. docs/ files named anywhere must exist.
while IFS= read -r hit; do
    location=${hit%%:docs/*}
    target=docs/${hit#*:docs/}
    if [ ! -e "$target" ]; then
        echo "$location: cites $target, which does not exist" >&2
        failed=1
    fi
done < <(git grep --untracked -nIoE 'docs/[A-Za-z0-9_-]+\.(md|json)' -- . ":!$self" || true)

# 3. Relative Markdown links in README.md and docs/ must reach a file.
while IFS= read -r hit; do
    file=${hit%%:*}
    rest=${hit#*:}; rest=${rest#*:}          # drop the line number
    link=${rest#*](}; link=${link%)}; link=${link%%#*}
    case $link in ''|http://*|https://*|mailto:*) continue ;; esac
    if [ ! -e "$(dirname "$file")/$link" ]; then
        echo "$file: links to $link, which does not exist" >&2
        failed=1
    fi
done < <(git grep --untracked -nIoE '\]\([^) ]+\)' -- README.md 'docs/*.md' || true)

# 4. Source files named by their path must exist.
while IFS= read -r hit; do
    location=${hit%:*}; location=${location%:*}
    target=${hit##*:}
    if [ ! -e "$target" ]; then
        echo "$location: names $target, which does not exist" >&2
        failed=1
    fi
done < <(git grep --untracked -nIoE '(Sources|Tests)/[A-Za-z0-9_/.-]+\.swift' -- . ":!$self" "${frozen[@]}" || true)

# 5. Issue, session and checklist numbers ("issue 17", "Issues 3", "session 8", "ACCESSIBILITY
#    #27") in the code, the docs, the build and the migrations. Released migrations that cite an
#    issue keep it (frozen, as above); a new migration is checked.
frozen_numbered=("${frozen[@]}" ":!Migrations/0005_game_ids_running_games.sql"
                 ":!Migrations/0006_order_checkout.sql" ":!Migrations/0007_cluster_nodes.sql"
                 ":!Migrations/0008_play_together.sql" ":!Migrations/postgresql/0003_play_together.sql")
numbered=$(git grep --untracked -nIiE '\bissues? #?[0-9]+|\bsession #?[0-9]+|ACCESSIBILITY #[0-9]+' \
               -- Sources Tests Web scripts Deploy docs README.md Makefile .ci Migrations \
                  ":!$self" "${frozen_numbered[@]}" || true)
if [ -n "$numbered" ]; then
    echo "Issue, session or checklist numbers (say the reason instead; the tracker is not in the repository):" >&2
    echo "$numbered" >&2
    failed=1
fi

if [ "$failed" -ne 0 ]; then
    exit 1
fi
echo "check-repo-citations: every cited document is in the repository, and no issue, session or checklist numbers"
