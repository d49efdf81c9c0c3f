#!/usr/bin/env bash
# Starts a real HDFS (MiniDFSCluster from Maven Central) on 127.0.0.1 for the
# fsbackend/hdfs tests and prints `export VAR=value` lines on stdout, so that
#   eval "$(bash testdata/hdfs/start.sh)"        # one NameNode + one DataNode
#   eval "$(bash testdata/hdfs/start.sh ha)"     # two NameNodes (HA) + one DataNode
#   eval "$(bash testdata/hdfs/start.sh kerberos)"  # single, with Kerberos
# sets STOWAGE_TEST_HDFS, _CONF, _CTL (or STOWAGE_TEST_HDFS_HA, _NS, _CONF, _CTL;
# or STOWAGE_TEST_HDFS_KRB, _CONF, _CTL). "kerberos" needs the KDC of
# testdata/kdc/start.sh: STOWAGE_TEST_KDC_KRB5CONF and STOWAGE_TEST_KDC_DIR.
# Everything else goes to stderr. Needs Java 17 (javac) and Maven; installs
# them with apt-get when missing. Maven's repository cache is ~/.m2.
set -euo pipefail

mode=${1:-single}
case "$mode" in
single | ha) ;;
kerberos)
	if [[ -z ${STOWAGE_TEST_KDC_KRB5CONF:-} || -z ${STOWAGE_TEST_KDC_DIR:-} ]]; then
		echo "start.sh kerberos: start the KDC first: eval \"\$(bash testdata/kdc/start.sh)\"" >&2
		exit 2
	fi
	;;
*) echo "usage: start.sh [single|ha|kerberos]" >&2; exit 2 ;;
esac

here=$(cd "$(dirname "$0")" && pwd)
run=${STOWAGE_RUN_DIR:-/tmp/stowage-run}/hdfs-$mode
cache=$here/.cache
timeout=${STOWAGE_HDFS_START_TIMEOUT:-180}
log() { echo "hdfs-fixture($mode): $*" >&2; }

if ! command -v javac >/dev/null || ! command -v mvn >/dev/null; then
	log "installing openjdk-17-jdk-headless and maven with apt-get"
	{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jdk-headless maven; } >&2
fi

mkdir -p "$run" "$cache"
pidfile=$run/pid
ready=$run/ready

# Already running: print its variables again.
if [[ -s $pidfile ]] && kill -0 "$(cat "$pidfile")" 2>/dev/null && [[ -s $ready ]]; then
	log "already running (pid $(cat "$pidfile"))"
	cat "$ready"
	exit 0
fi
bash "$here/stop.sh" "$mode" >/dev/null 2>&1 || true

# Classpath and class files are cached by the hash of their sources.
key=$(cat "$here/pom.xml" "$here/MiniHdfs.java" | sha256sum | cut -c1-16)
build=$cache/$key
if [[ ! -s $build/classpath || ! -f $build/classes/MiniHdfs.class ]]; then
	log "resolving the Hadoop classpath with Maven (first run downloads ~150 MB into ~/.m2)"
	rm -rf "$build" && mkdir -p "$build/classes"
	(cd "$here" && mvn -B -q -Dstyle.color=never dependency:build-classpath -Dmdep.outputFile="$build/classpath.tmp") >&2
	log "compiling MiniHdfs.java"
	javac -nowarn -cp "$(cat "$build/classpath.tmp")" -d "$build/classes" "$here/MiniHdfs.java" >&2
	mv "$build/classpath.tmp" "$build/classpath"
fi

krb=()
if [[ $mode == kerberos ]]; then
	krb=(-Djava.security.krb5.conf="$STOWAGE_TEST_KDC_KRB5CONF" -Dstowage.krb.realm=STOWAGE.TEST
		-Dstowage.krb.keytab="$STOWAGE_TEST_KDC_DIR/hdfs.keytab")
fi

rm -rf "$run/data" "$run/conf" "$ready"
mkdir -p "$run/data" "$run/conf"
log "starting MiniDFSCluster, log in $run/log"
# The JVM's options are in jvm.options (a Java argument file), shared with
# the Go tests that start the fixture inside a network namespace.
setsid nohup java @"$here/jvm.options" "${krb[@]}" \
	-Dlog4j.configuration="file:$here/log4j.properties" -Dstowage.hdfs.log="${STOWAGE_HDFS_LOG:-WARN}" \
	-cp "$build/classes:$(cat "$build/classpath")" \
	MiniHdfs "$mode" "$run/data" "$run/conf" "$ready" </dev/null >"$run/log" 2>&1 &
echo $! >"$pidfile"

deadline=$((SECONDS + timeout))
until [[ -s $ready ]]; do
	if ! kill -0 "$(cat "$pidfile")" 2>/dev/null; then
		log "MiniDFSCluster exited before it was ready; last lines of $run/log:"
		tail -n 40 "$run/log" >&2
		exit 1
	fi
	if ((SECONDS >= deadline)); then
		log "MiniDFSCluster not ready after ${timeout}s; last lines of $run/log:"
		tail -n 40 "$run/log" >&2
		bash "$here/stop.sh" "$mode" >&2 || true
		exit 1
	fi
	sleep 0.5
done
log "ready in ${SECONDS}s"
cat "$ready"
