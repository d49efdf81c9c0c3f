#!/usr/bin/env bash
# Stops the KDC that start.sh started. Safe to run twice.
set -uo pipefail
run=${STOWAGE_RUN_DIR:-/tmp/stowage-run}/kdc
[[ -s $run/pid ]] || exit 0
pid=$(cat "$run/pid")
if kill -0 "$pid" 2>/dev/null; then
	kill -TERM "$pid" 2>/dev/null
	for _ in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
	kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
fi
rm -f "$run/pid" "$run/ready"
