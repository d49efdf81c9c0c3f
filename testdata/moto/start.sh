#!/usr/bin/env bash
# Starts a moto S3 server (https://pypi.org/project/moto/) on 127.0.0.1 for
# the s3 and cos back-end tests, detached, and prints on stdout only
#   export STOWAGE_TEST_S3_ENDPOINT=http://127.0.0.1:PORT
# so that CI can run: eval "$(bash testdata/moto/start.sh)"
#
# Variables (all optional):
#   STOWAGE_RUN_DIR     pid and log files          (default /tmp/stowage-run)
#   STOWAGE_CACHE_DIR   where the Python venv lives (default $HOME/.cache/stowage)
#   STOWAGE_MOTO_PORT   port to listen on           (default: a free port)
#   STOWAGE_MOTO_VERSION moto version to install    (default pinned below)
#
# Progress goes to stderr. Safe to run twice: a running server is reused.
set -euo pipefail

MOTO_VERSION="${STOWAGE_MOTO_VERSION:-5.2.5}"
RUN_DIR="${STOWAGE_RUN_DIR:-/tmp/stowage-run}"
CACHE_DIR="${STOWAGE_CACHE_DIR:-$HOME/.cache/stowage}"
VENV="$CACHE_DIR/moto-$MOTO_VERSION"
PID_FILE="$RUN_DIR/moto.pid"
PORT_FILE="$RUN_DIR/moto.port"
LOG_FILE="$RUN_DIR/moto.log"

log() { echo "moto: $*" >&2; }

mkdir -p "$RUN_DIR" "$CACHE_DIR"

ready() { # ready PORT: moto answers S3 ListBuckets
	curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:$1/" 2>/dev/null
}

if [[ -f "$PID_FILE" && -f "$PORT_FILE" ]] && kill -0 "$(cat "$PID_FILE")" 2>/dev/null && ready "$(cat "$PORT_FILE")"; then
	log "already running (pid $(cat "$PID_FILE"), port $(cat "$PORT_FILE"))"
	echo "export STOWAGE_TEST_S3_ENDPOINT=http://127.0.0.1:$(cat "$PORT_FILE")"
	exit 0
fi

if ! command -v curl >/dev/null; then
	log "installing curl"
	(apt-get update -qq && apt-get install -y -qq curl) >&2
fi

if [[ ! -x "$VENV/bin/moto_server" ]]; then
	log "creating venv $VENV and installing moto[server]==$MOTO_VERSION"
	if ! python3 -m venv "$VENV" >&2 2>&1; then
		log "python3 -m venv failed; installing python3-venv"
		(apt-get update -qq && apt-get install -y -qq python3-venv) >&2
		rm -rf "$VENV"
		python3 -m venv "$VENV" >&2
	fi
	"$VENV/bin/pip" install -q --disable-pip-version-check "moto[server]==$MOTO_VERSION" >&2
fi

PORT="${STOWAGE_MOTO_PORT:-}"
if [[ -z "$PORT" ]]; then
	PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
fi

log "starting moto_server on 127.0.0.1:$PORT (log $LOG_FILE)"
# Dummy credentials: moto checks no signatures, but boto-style clients and
# moto itself look for them.
AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing AWS_DEFAULT_REGION=us-east-1 \
	setsid nohup "$VENV/bin/moto_server" -H 127.0.0.1 -p "$PORT" >"$LOG_FILE" 2>&1 </dev/null &
echo $! >"$PID_FILE"
echo "$PORT" >"$PORT_FILE"

deadline=$((SECONDS + 180))
until ready "$PORT"; do
	if ! kill -0 "$(cat "$PID_FILE")" 2>/dev/null; then
		log "moto_server exited before it was ready; log tail:"
		tail -n 30 "$LOG_FILE" >&2 || true
		rm -f "$PID_FILE" "$PORT_FILE"
		exit 1
	fi
	if ((SECONDS >= deadline)); then
		log "moto_server not ready after 180 s; log tail:"
		tail -n 30 "$LOG_FILE" >&2 || true
		kill "$(cat "$PID_FILE")" 2>/dev/null || true
		rm -f "$PID_FILE" "$PORT_FILE"
		exit 1
	fi
	sleep 0.5
done
log "ready on 127.0.0.1:$PORT"
echo "export STOWAGE_TEST_S3_ENDPOINT=http://127.0.0.1:$PORT"
