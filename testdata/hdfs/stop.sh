#!/usr/bin/env bash
# Stops the MiniDFSCluster that start.sh started ("single" by default, or
# "ha"; "all" for both). Safe to run twice.
set -uo pipefail

stop_one() {
	local run=${STOWAGE_RUN_DIR:-/tmp/stowage-run}/hdfs-$1
	local pidfile=$run/pid
	[[ -s $pidfile ]] || return 0
	local pid
	pid=$(cat "$pidfile")
	if kill -0 "$pid" 2>/dev/null; then
		echo "hdfs-fixture($1): stopping pid $pid" >&2
		kill -TERM "$pid" 2>/dev/null
		for _ in $(seq 1 60); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.5
		done
		if kill -0 "$pid" 2>/dev/null; then
			echo "hdfs-fixture($1): pid $pid did not stop in 30s, killing it" >&2
			kill -KILL "$pid" 2>/dev/null
		fi
	fi
	rm -f "$pidfile" "$run/ready"
}

case "${1:-single}" in
all) stop_one single; stop_one ha; stop_one kerberos ;;
single | ha | kerberos) stop_one "$1" ;;
*) echo "usage: stop.sh [single|ha|all]" >&2; exit 2 ;;
esac
exit 0
