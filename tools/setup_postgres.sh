#!/usr/bin/env bash
# `sudo make postgres INSTRUCTOR=<login>`: a local PostgreSQL gradebook for the course.
# Debian's PostgreSQL (installed if missing) is started; a role and a database for this
# course, named from its course id (CourseDirectory.course_id: `backward-course` gives the
# role grader_backward_course and the database gradebook_backward_course), the role with a
# random password; so each course on the machine has its own, and setting up one never
# touches another's. The password goes into the instructor's ~/.pgpass (mode 0600: libpq
# reads it, nobody else can); clients authenticate with that password over 127.0.0.1
# (Debian's pg_hba.conf: scram-sha-256), so a student on the machine cannot open the
# gradebook. Last, the course's site_config.py gets the db_url (unless it sets one
# already: then it says what to set). Idempotent: run it again to reset this course's
# password (the database is kept). A role of that name made for another course id (two
# ids can give one name) is refused.
# Another server than Debian's cluster: PGHOST (its socket folder) and PGPORT, its
# superuser PGUSER, run as the account PG_ACCOUNT (default postgres).
set -euo pipefail
usage="usage: setup_postgres.sh <instructor login> <course folder> <course venv's python> [database]"
instructor="${1:?$usage}"
course="${2:?$usage}"
python="${3:?$usage}"
[ "$(id -u)" = 0 ] || { echo "error: run as root: sudo make postgres INSTRUCTOR=$instructor" >&2; exit 2; }
home="$(getent passwd "$instructor" | cut -d: -f6)"
[ -n "$home" ] || { echo "error: no local account $instructor" >&2; exit 2; }
course_id="$("$python" -c 'import sys; from pathlib import Path
from autograder.sandbox.settings import load_config
print(load_config(Path(sys.argv[1])).CourseDirectory.get("course_id", ""))' "$course")"
[ -n "$course_id" ] || { echo "error: $course/nbgrader_config.py sets no CourseDirectory.course_id" >&2; exit 2; }
name="$(printf '%s' "$course_id" | tr 'A-Z' 'a-z' | tr -c 'a-z0-9' '_' | cut -c1-50)"
role="grader_$name"
database="${4:-gradebook_$name}"

if [ -n "${PGHOST:-}" ]; then
  port="${PGPORT:?PGHOST names another server: set PGPORT too}"
else
  if ! command -v pg_lsclusters >/dev/null; then
    source "$(dirname "$0")/apt.sh"
    can_install || { echo "error: PostgreSQL is missing and cannot be installed here" >&2; exit 2; }
    apt_install postgresql
  fi
  read -r version cluster port status _ < <(pg_lsclusters --no-header | head -n 1)
  [ "$status" = online ] || pg_ctlcluster "$version" "$cluster" start
fi
as_postgres() { runuser -u "${PG_ACCOUNT:-postgres}" -- "$@"; }
sql() { as_postgres psql -p "$port" -d postgres -v ON_ERROR_STOP=1 -tAq "$@"; }

password="$(head -c 24 /dev/urandom | base64 | tr -d '/+=')"
mark="course ${course_id//\'/\'\'}"  # as an SQL string's content
if [ "$(sql -c "SELECT 1 FROM pg_roles WHERE rolname = '$role'")" = 1 ]; then
  made_for="$(sql -c "SELECT shobj_description(oid, 'pg_authid') FROM pg_roles WHERE rolname = '$role'")"
  if [ "$made_for" != "$mark" ]; then
    echo "error: the role $role was made for ${made_for:-something else}, not $mark: name the database with DATABASE= and set up the role by hand, or change the course id" >&2
    exit 2
  fi
  sql -c "ALTER ROLE $role WITH LOGIN PASSWORD '$password'"
else
  sql -c "CREATE ROLE $role WITH LOGIN PASSWORD '$password'"
  sql -c "COMMENT ON ROLE $role IS '$mark'"
fi
if [ "$(sql -c "SELECT 1 FROM pg_database WHERE datname = '$database'")" != 1 ]; then
  sql -c "CREATE DATABASE $database OWNER $role"
fi
sql -c "REVOKE ALL ON DATABASE $database FROM PUBLIC"

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
echo "PostgreSQL gradebook of $course_id ready: role $role (password in $pgpass), database $database."
echo "Record the assignments into it as $instructor: make assign"
