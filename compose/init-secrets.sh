#!/usr/bin/env sh
# Makes the secrets the compose variants mount, in compose/secrets/ (ignored by git; never commit it):
#   api-key                             the API key callers send in X-Api-Key (role admin); printed once below
#   Authentication__ApiKeys__0__Hash    its SHA-256, which is all the service is given
#   postgres-password                   the PostgreSQL password (postgres variants)
#   Store__ConnectionString             the service's connection string with that password (postgres variants)
#   redis-password                      the Redis password (postgres-redis variant)
#   WakeUp__Redis__ConnectionString     the service's Redis configuration string with that password (postgres-redis)
# Run it once before the first `docker compose up`: it makes the key and the passwords that are missing and keeps those
# that are there (a folder made by an older release gains the newer variants' secrets); the files derived from them
# are written anew each time. --force replaces the key and the passwords; PostgreSQL keeps the password it was created
# with in its data volume, so remove that too (`docker compose down -v`: it deletes the data) or change it in PostgreSQL.
set -eu
case "${1:-}" in
  "" | --force) ;;
  *) echo "usage: $0 [--force]" >&2; exit 2 ;;
esac
dir="${WORKFLOW_COMPOSE_SECRETS:-$(cd "$(dirname "$0")" && pwd)/secrets}"
mkdir -p "$dir"
chmod 700 "$dir"
umask 077
random() { head -c "$1" /dev/urandom | base64 | tr -d '=+/\n'; }
# Prints the secret in file $1, made (of $2 random bytes) when it is missing or --force was given.
secret() {
  if [ "${force:-}" = "--force" ] || [ ! -s "$dir/$1" ]; then
    random "$2" > "$dir/$1"
  fi
  cat "$dir/$1"
}
force="${1:-}"

new_key=no
if [ "$force" = "--force" ] || [ ! -s "$dir/api-key" ]; then new_key=yes; fi
key=$(secret api-key 32)
printf %s "$key" | sha256sum | cut -d' ' -f1 | tr -d '\n' > "$dir/Authentication__ApiKeys__0__Hash"
postgres=$(secret postgres-password 24)
printf %s "Host=postgres;Port=5432;Database=workflow;Username=workflow;Password=$postgres" > "$dir/Store__ConnectionString"
redis=$(secret redis-password 24)
printf %s "redis:6379,password=$redis" > "$dir/WakeUp__Redis__ConnectionString"

# The container's non-root user (uid 1654) reads the mounted files; on the host only their owner can reach them.
chmod 644 "$dir/Authentication__ApiKeys__0__Hash" "$dir/postgres-password" "$dir/Store__ConnectionString" \
  "$dir/redis-password" "$dir/WakeUp__Redis__ConnectionString"
chmod 600 "$dir/api-key"  # the key itself stays with the operator; only its hash is mounted
if [ "$new_key" = yes ]; then
  echo "API key (send it as X-Api-Key; also in $dir/api-key): $key"
else
  echo "kept the API key in $dir/api-key (run $0 --force to replace every secret)"
fi
