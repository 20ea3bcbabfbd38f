#!/bin/sh
# One backup of the live database into RETRORAPID_BACKUP_DIR, then only the newest
# RETRORAPID_BACKUP_KEEP backups are kept (retrorapid-backup.service runs it; so can you).
# A backup that fails leaves the older ones alone and exits non-zero, so systemd reports it.
set -eu
binary=${RETRORAPID_BINARY:-retrorapid}
folder=${RETRORAPID_BACKUP_DIR:?set RETRORAPID_BACKUP_DIR to the folder for backups}
keep=${RETRORAPID_BACKUP_KEEP:-14}
case $keep in
    ''|*[!0-9]*|0) echo "retrorapid-backup: RETRORAPID_BACKUP_KEEP must be a whole number from 1, not '$keep'" >&2; exit 64 ;;
esac
mkdir -p "$folder"
# UTC and sortable: the newest is last in name order too.
file="$folder/retrorapid-$(date -u +%Y%m%dT%H%M%SZ).sqlite"
partial="$file.partial"
rm -f "$partial"
"$binary" backup "$partial"
mv "$partial" "$file"
echo "retrorapid-backup: wrote $file"
# Remove all but the newest $keep (names hold no spaces: they are made above).
ls -1 "$folder" | grep -E '^retrorapid-[0-9]{8}T[0-9]{6}Z\.sqlite$' | sort | head -n "-$keep" | while read -r old; do
    rm -f "$folder/$old"
    echo "retrorapid-backup: removed $folder/$old (keeping $keep)"
done
