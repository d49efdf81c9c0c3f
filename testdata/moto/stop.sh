#!/usr/bin/env bash
# Stops the moto server started by start.sh. Safe to run twice.
set -uo pipefail
RUN_DIR="${STOWAGE_RUN_DIR:-/tmp/stowage-run}"
PID_FILE="$RUN_DIR/moto.pid"
if [[ ! -f "$PID_FILE" ]]; then
	echo "moto: not running" >&2
	exit 0
fi
pid="$(cat "$PID_FILE")"
if kill -0 "$pid" 2>/dev/null; then
	kill "$pid" 2>/dev/null || true
	for _ in $(seq 1 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		echo "moto: pid $pid did not stop; sending SIGKILL" >&2
		kill -9 "$pid" 2>/dev/null || true
	fi
fi
rm -f "$PID_FILE" "$RUN_DIR/moto.port"
echo "moto: stopped" >&2
