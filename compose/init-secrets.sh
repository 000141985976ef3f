#!/usr/bin/env sh
# Makes the secrets the compose variants mount, in compose/secrets/ (ignored by git; never commit it):
#   api-key                             the API key callers send in X-Api-Key (role admin); printed once below
#   Authentication__ApiKeys__0__Hash    its SHA-256, which is all the service is given
#   postgres-password                   the PostgreSQL password (postgres variant)
#   Store__ConnectionString             the service's connection string with that password (postgres variant)
# Run it once before the first `docker compose up`; run it with --force to replace existing secrets.
set -eu
dir="$(cd "$(dirname "$0")" && pwd)/secrets"
if [ -e "$dir/api-key" ] && [ "${1:-}" != "--force" ]; then
  echo "compose/secrets already exists; keep it, or run $0 --force to make new secrets" >&2
  exit 0
fi
mkdir -p "$dir"
chmod 700 "$dir"
umask 077
key=$(head -c 32 /dev/urandom | base64 | tr -d '=+/\n')
password=$(head -c 24 /dev/urandom | base64 | tr -d '=+/\n')
printf %s "$key" > "$dir/api-key"
printf %s "$key" | sha256sum | cut -d' ' -f1 | tr -d '\n' > "$dir/Authentication__ApiKeys__0__Hash"
printf %s "$password" > "$dir/postgres-password"
printf %s "Host=postgres;Port=5432;Database=workflow;Username=workflow;Password=$password" > "$dir/Store__ConnectionString"
# The container's non-root user (uid 1654) reads the mounted files; on the host only their owner can reach them.
chmod 644 "$dir"/*
chmod 700 "$dir"
chmod 600 "$dir/api-key"  # the key itself stays with the operator; only its hash is mounted
echo "API key (send it as X-Api-Key; also in compose/secrets/api-key): $key"
