#!/usr/bin/env bash
# `sudo make postgres INSTRUCTOR=<login>`: a local PostgreSQL gradebook for the course.
# Debian's PostgreSQL (installed if missing) is started; a role `grader` with a random
# password and a database (default: gradebook) owned by it are created; the password goes
# into the instructor's ~/.pgpass (mode 0600: libpq reads it, nobody else can); clients
# authenticate with that password over 127.0.0.1 (Debian's pg_hba.conf: scram-sha-256),
# so a student on the machine cannot open the gradebook. Last, the course's
# site_config.py gets the db_url (unless it sets one already: then it says what to set).
# Idempotent: run it again to reset the password (the database is kept).
set -euo pipefail
instructor="${1:?usage: setup_postgres.sh <instructor login> [course folder] [database]}"
course="${2:-$(pwd)}"
database="${3:-gradebook}"
role=grader
[ "$(id -u)" = 0 ] || { echo "error: run as root: sudo make postgres INSTRUCTOR=$instructor" >&2; exit 2; }
home="$(getent passwd "$instructor" | cut -d: -f6)"
[ -n "$home" ] || { echo "error: no local account $instructor" >&2; exit 2; }

command -v pg_lsclusters >/dev/null || apt-get install -y --no-install-recommends postgresql
read -r version cluster port status _ < <(pg_lsclusters --no-header | head -n 1)
[ "$status" = online ] || pg_ctlcluster "$version" "$cluster" start
as_postgres() { runuser -u postgres -- "$@"; }

password="$(head -c 24 /dev/urandom | base64 | tr -d '/+=')"
if as_postgres psql -p "$port" -tAc "SELECT 1 FROM pg_roles WHERE rolname = '$role'" | grep -q 1; then
  as_postgres psql -p "$port" -q -c "ALTER ROLE $role WITH LOGIN PASSWORD '$password'"
else
  as_postgres psql -p "$port" -q -c "CREATE ROLE $role WITH LOGIN PASSWORD '$password'"
fi
if ! as_postgres psql -p "$port" -tAc "SELECT 1 FROM pg_database WHERE datname = '$database'" | grep -q 1; then
  as_postgres createdb -p "$port" -O "$role" "$database"
fi
as_postgres psql -p "$port" -q -c "REVOKE ALL ON DATABASE $database FROM PUBLIC"

pgpass="$home/.pgpass"
touch "$pgpass"
grep -v ":$database:$role:" "$pgpass" > "$pgpass.new" || true
echo "127.0.0.1:$port:$database:$role:$password" >> "$pgpass.new"
mv "$pgpass.new" "$pgpass"
chown "$instructor": "$pgpass"
chmod 600 "$pgpass"

url="postgresql://$role@127.0.0.1:$port/$database"
site="$course/site_config.py"
if [ -f "$site" ] && grep -q "db_url" "$site"; then
  echo "site_config.py sets a db_url already; for this database set:"
  echo "  c.CourseDirectory.db_url = \"$url\""
else
  [ -f "$site" ] || { echo "c = get_config()" > "$site"; chown "$instructor": "$site"; }
  echo "c.CourseDirectory.db_url = \"$url\"  # make postgres" >> "$site"
  echo "site_config.py: c.CourseDirectory.db_url = \"$url\""
fi
echo "PostgreSQL gradebook ready: role $role (password in $pgpass), database $database."
echo "Record the assignments into it as $instructor: make assign"
