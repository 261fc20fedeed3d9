#!/bin/sh
# The database backup (docs/deploy.md, "Backups"): one pg_dump in PostgreSQL's
# custom format (compressed, restored table by table with pg_restore), written
# under a temporary name and renamed when complete, so that a dump cut short
# never looks like a backup; dumps older than BACKUP_KEEP_DAYS are removed.
# Run by spades-backup.service with DATABASE_URL from the environment file.
# Redis is not backed up: nothing in it is needed to recover (docs/deploy.md).
set -eu
umask 077  # a dump holds accounts and recruitment IDs: its owner's alone
: "${DATABASE_URL:?DATABASE_URL is not set}"
dir="${BACKUP_DIR:-/var/backups/spades}"
keep="${BACKUP_KEEP_DAYS:-14}"
# pg_dump reads postgresql:// URLs; dj-database-url's postgres:// is the same.
url="postgresql://${DATABASE_URL#*://}"
stamp=$(date -u +%Y%m%d-%H%M%S)
mkdir -p "$dir"
pg_dump --format=custom --no-owner --file="$dir/.spades-$stamp.partial" --dbname="$url"
mv "$dir/.spades-$stamp.partial" "$dir/spades-$stamp.dump"
find "$dir" -maxdepth 1 -name 'spades-*.dump' -mtime +"$keep" -delete
echo "backup: $dir/spades-$stamp.dump"
