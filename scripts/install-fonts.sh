#!/usr/bin/env bash
# Copies the web fonts Web/style.css names (url("/fonts/...")) from Debian's fonts-dseg and
# fonts-inter into a folder the server serves at /fonts (--fonts-path), with each package's
# copyright file as LICENSE-<package>.txt. No font file is committed to the repository.
# Idempotent: installs the packages only when missing, copies only what changed.
# Usage: scripts/install-fonts.sh [folder]   (default data/fonts under the working directory,
# which git ignores at the repository root; the server's --fonts-path default is the same)
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
target=${1:-data/fonts}
packages=(fonts-dseg fonts-inter)
# The file names the stylesheet asks for, read from it so the two can't drift apart.
mapfile -t fonts < <(grep -o 'url("/fonts/[^"]*")' "$repo/Web/style.css" | sed 's|^url("/fonts/||; s|")$||' | sort -u)
if [ ${#fonts[@]} -eq 0 ]; then
    echo "install-fonts: Web/style.css names no url(\"/fonts/...\")" >&2
    exit 1
fi

"$repo/scripts/install-deps.sh" "${packages[@]}"
mkdir -p "$target"

installed=$(dpkg -L "${packages[@]}")
for font in "${fonts[@]}"; do
    source=$(grep -m1 "/$font\$" <<<"$installed" || true)
    if [ -z "$source" ] || [ ! -f "$source" ]; then
        echo "install-fonts: $font is in neither ${packages[*]} (dpkg -L)" >&2
        exit 1
    fi
    cp -pu "$source" "$target/$font"
done
for package in "${packages[@]}"; do
    cp -pu "/usr/share/doc/$package/copyright" "$target/LICENSE-$package.txt"
done
