#!/usr/bin/env sh
# Makes the secrets the compose variants mount, in compose/secrets/ (ignored by git; never commit it):
#   api-key                             the API key callers send in X-Api-Key (role admin); printed once below
#   Authentication__ApiKeys__0__Hash    its SHA-256, which is all the service is given
#   postgres-password                   the PostgreSQL password (postgres variants)
#   Store__ConnectionString             the service's connection string with that password (postgres variants)
#   redis-password                      the Redis password (postgres-redis variant)
#   WakeUp__Redis__ConnectionString     the service's Redis configuration string with that password (postgres-redis)
# Run it once before the first `docker compose up`: it writes what is missing and keeps what is there (a folder made
# by an older release gains the newer variants' secrets). Run it with --force to replace every secret.
set -eu
dir="${WORKFLOW_COMPOSE_SECRETS:-$(cd "$(dirname "$0")" && pwd)/secrets}"
mkdir -p "$dir"
chmod 700 "$dir"
umask 077
random() { head -c 24 /dev/urandom | base64 | tr -d '=+/\n'; }
missing() { [ "${1:-}" = "--force" ] || [ ! -s "$dir/$2" ]; }

if missing "${1:-}" api-key; then
  key=$(head -c 32 /dev/urandom | base64 | tr -d '=+/\n')
  printf %s "$key" > "$dir/api-key"
  printf %s "$key" | sha256sum | cut -d' ' -f1 | tr -d '\n' > "$dir/Authentication__ApiKeys__0__Hash"
  echo "API key (send it as X-Api-Key; also in compose/secrets/api-key): $key"
else
  echo "compose/secrets/api-key exists: kept (run $0 --force to make new secrets)"
fi
if missing "${1:-}" postgres-password; then
  password=$(random)
  printf %s "$password" > "$dir/postgres-password"
  printf %s "Host=postgres;Port=5432;Database=workflow;Username=workflow;Password=$password" > "$dir/Store__ConnectionString"
fi
if missing "${1:-}" redis-password; then
  password=$(random)
  printf %s "$password" > "$dir/redis-password"
  printf %s "redis:6379,password=$password" > "$dir/WakeUp__Redis__ConnectionString"
fi
# The container's non-root user (uid 1654) reads the mounted files; on the host only their owner can reach them.
chmod 644 "$dir"/*
chmod 700 "$dir"
chmod 600 "$dir/api-key"  # the key itself stays with the operator; only its hash is mounted
