#!/usr/bin/env sh
# Writes the files an overlay's secretGenerator turns into the workflow-service-secrets Secret, in
# deploy/overlays/<overlay>/secrets/ (ignored by git; never commit it). Each file is one setting, named like its
# variable; the Secret is mounted in /run/secrets, where the service reads one setting per file:
#   Authentication__ApiKeys__0__Hash   the SHA-256 of a new API key (role admin); the key is printed once and kept in
#                                      secrets/api-key, which is not put in the Secret
#   Store__ConnectionString            postgres only: the value of WORKFLOW_STORE_CONNECTION_STRING
#
#   deploy/init-secrets.sh embedded
#   WORKFLOW_STORE_CONNECTION_STRING='Host=db;Database=workflow;Username=workflow;Password=...' deploy/init-secrets.sh postgres
#
# The connection string is read from the environment, not from an argument, so that it stays out of the shell history
# and the process list (`read -rs WORKFLOW_STORE_CONNECTION_STRING; export WORKFLOW_STORE_CONNECTION_STRING`).
# Existing files are kept; run with --force to replace them.
set -eu
usage="usage: $0 embedded|postgres [--force]"
overlay="${1:?$usage}"
case "$overlay" in
  embedded | postgres) ;;
  *) echo "$usage" >&2; exit 2 ;;
esac
dir="$(cd "$(dirname "$0")" && pwd)/overlays/$overlay/secrets"
if [ -e "$dir/Authentication__ApiKeys__0__Hash" ] && [ "${2:-}" != "--force" ]; then
  echo "$dir already holds secrets; keep them, or run $0 $overlay --force to make new ones" >&2
  exit 0
fi
if [ "$overlay" = postgres ] && [ -z "${WORKFLOW_STORE_CONNECTION_STRING:-}" ]; then
  echo "set WORKFLOW_STORE_CONNECTION_STRING to the service's PostgreSQL connection string" \
    "(Host=...;Database=workflow;Username=workflow;Password=...)" >&2
  exit 2
fi
mkdir -p "$dir"
chmod 700 "$dir"
umask 077
key=$(head -c 32 /dev/urandom | base64 | tr -d '=+/\n')
printf %s "$key" > "$dir/api-key"
printf %s "$key" | sha256sum | cut -d' ' -f1 | tr -d '\n' > "$dir/Authentication__ApiKeys__0__Hash"
if [ "$overlay" = postgres ]; then
  printf %s "$WORKFLOW_STORE_CONNECTION_STRING" > "$dir/Store__ConnectionString"
fi
echo "API key (send it as X-Api-Key; also in $dir/api-key): $key"
