#!/usr/bin/env bash
# Starts a real MIT Kerberos KDC (Debian krb5-kdc) for realm STOWAGE.TEST on
# 127.0.0.1 (a free TCP and UDP port, its own krb5.conf and kdc.conf in the
# run directory, nothing under /etc) and prints `export VAR=value` lines:
#   STOWAGE_TEST_KDC_KRB5CONF  the krb5.conf that clients use (KRB5_CONFIG)
#   STOWAGE_TEST_KDC_DIR       directory of the keytabs below
# Principals (realm STOWAGE.TEST) and keytabs in STOWAGE_TEST_KDC_DIR:
#   hdfs/localhost, HTTP/localhost  hdfs.keytab   NameNode, DataNode, web
#   stowage/localhost               stowage.keytab  the client under test
#   short/localhost                 short.keytab    tickets live 10 s, not renewable
#   stale/localhost                 stale.keytab    key changed since: a wrong keytab
#   stalepre/localhost              stalepre.keytab the same, and the KDC requires
#                                                   pre-authentication (as AD and FreeIPA do)
#   ghost/localhost                 ghost.keytab    principal deleted: unknown to the KDC
# Installs krb5-kdc, krb5-admin-server and krb5-user with apt-get when missing.
set -euo pipefail

run=${STOWAGE_RUN_DIR:-/tmp/stowage-run}/kdc
realm=STOWAGE.TEST
log() { echo "kdc-fixture: $*" >&2; }

if ! command -v krb5kdc >/dev/null && ! [ -x /usr/sbin/krb5kdc ]; then
	log "installing krb5-kdc, krb5-admin-server and krb5-user with apt-get"
	{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq krb5-kdc krb5-admin-server krb5-user; } >&2
fi
PATH=$PATH:/usr/sbin

if [[ -s $run/pid ]] && kill -0 "$(cat "$run/pid")" 2>/dev/null && [[ -s $run/ready ]]; then
	log "already running (pid $(cat "$run/pid"))"
	cat "$run/ready"
	exit 0
fi
bash "$(dirname "$0")/stop.sh" >/dev/null 2>&1 || true
rm -rf "$run" && mkdir -p "$run/db" "$run/keytabs"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

cat >"$run/krb5.conf" <<CONF
[libdefaults]
	default_realm = $realm
	dns_lookup_realm = false
	dns_lookup_kdc = false
	rdns = false
	udp_preference_limit = 1
	ticket_lifetime = 10h
	renew_lifetime = 1d
	default_tkt_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96
	default_tgs_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96
	permitted_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96
[realms]
	$realm = {
		kdc = 127.0.0.1:$port
	}
[domain_realm]
	localhost = $realm
CONF

cat >"$run/kdc.conf" <<CONF
[kdcdefaults]
	kdc_listen = 127.0.0.1:$port
	kdc_tcp_listen = 127.0.0.1:$port
[realms]
	$realm = {
		database_name = $run/db/principal
		key_stash_file = $run/db/stash
		acl_file = $run/db/kadm5.acl
		max_life = 10h
		max_renewable_life = 1d
		supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
	}
[logging]
	kdc = FILE:$run/kdc.log
CONF
: >"$run/db/kadm5.acl"

export KRB5_CONFIG=$run/krb5.conf KRB5_KDC_PROFILE=$run/kdc.conf
# The master password protects only this throw-away database.
kdb5_util create -s -r "$realm" -P "stowage-test-master" >&2 2>"$run/create.log" || { cat "$run/create.log" >&2; exit 1; }
k() { kadmin.local -r "$realm" -q "$1" >>"$run/kadmin.log" 2>&1 || { log "kadmin.local: $1 failed"; tail -5 "$run/kadmin.log" >&2; exit 1; }; }
kt=$run/keytabs
for p in hdfs/localhost HTTP/localhost stowage/localhost stale/localhost ghost/localhost; do
	k "addprinc -randkey $p@$realm"
done
k "addprinc -randkey +requires_preauth stalepre/localhost@$realm"
k "addprinc -randkey -maxlife 10s -maxrenewlife 0 short/localhost@$realm"
k "ktadd -k $kt/hdfs.keytab hdfs/localhost@$realm HTTP/localhost@$realm"
k "ktadd -k $kt/stowage.keytab stowage/localhost@$realm"
k "ktadd -k $kt/short.keytab short/localhost@$realm"
k "ktadd -k $kt/stale.keytab stale/localhost@$realm"
# ktadd gives the principal new keys: stale.keytab now holds outdated ones.
k "ktadd -k $run/db/discard.keytab stale/localhost@$realm"
k "ktadd -k $kt/stalepre.keytab stalepre/localhost@$realm"
k "ktadd -k $run/db/discard.keytab stalepre/localhost@$realm"
k "ktadd -k $kt/ghost.keytab ghost/localhost@$realm"
k "delprinc -force ghost/localhost@$realm"

log "starting krb5kdc on 127.0.0.1:$port, log in $run/kdc.log"
setsid nohup krb5kdc -n -P "$run/kdc.pid" </dev/null >"$run/stdout" 2>&1 &
echo $! >"$run/pid"
for _ in $(seq 1 50); do
	if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
		break
	fi
	if ! kill -0 "$(cat "$run/pid")" 2>/dev/null; then
		log "krb5kdc exited:"; cat "$run/stdout" "$run/kdc.log" >&2 2>/dev/null; exit 1
	fi
	sleep 0.2
done
{
	echo "export STOWAGE_TEST_KDC_KRB5CONF=$run/krb5.conf"
	echo "export STOWAGE_TEST_KDC_DIR=$kt"
} >"$run/ready"
log "ready"
cat "$run/ready"
