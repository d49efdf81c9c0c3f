// Package config reads a SeaTunnel engine configuration directory —
// seatunnel.yaml and hazelcast.yaml, exactly as SeaTunnel users write them —
// into typed, validated values.
//
// # Use
//
//	cfg, err := config.Load("/opt/seatunnel/config") // or config.Parse(st, hz)
//	mc, ok := cfg.Hazelcast.MapFor("engine_runningJobInfo")
//	if ok && mc.MapStore != nil && mc.MapStore.Enabled { ... persist ... }
//
// Load and Parse decode and then Validate; Default gives what an empty
// directory means. A Config is a plain value, safe for concurrent reads; it
// is not to be modified once handed to a node.
//
// # What is read
//
// Every key of SeaTunnel's seatunnel.yaml, hazelcast.yaml,
// hazelcast-master.yaml, hazelcast-worker.yaml and hazelcast-client.yaml,
// as SeaTunnel ships them and as its documents describe them, is
// accepted. The tables are in schema_seatunnel.go, schema_hazelcast.go
// and schema_client.go; each key is marked as one stowage acts on or not.
//
// seatunnel.yaml: stowage acts on seatunnel.engine.backup-count,
// checkpoint.storage (type, max-retained, plugin-config) and the security
// keys of http (HTTP, http_security.go; docs/security.md): SeaTunnel's
// enable-https, https-port, key-store-path, key-store-password,
// key-manager-password (equal to key-store-password), trust-store-path,
// trust-store-password, enable-basic-auth, basic-auth-username and
// basic-auth-password, and stowage's own cert-file, key-file and
// client-ca-file (PEM instead of PKCS#12) and bearer-token-file or
// bearer-token-env (a bearer token instead of, or besides, basic
// authentication). http's enable-http, port, context-path and dynamic
// ports have no effect (stowage node --http gives the address). The other
// values Engine holds (queue-type, the print and metrics intervals,
// history-job-expire-minutes, classloader-cache-mode, slot-service,
// checkpoint interval and timeout) are read and validated for a program
// that embeds stowage, but have no effect in stowage itself.
//
// hazelcast.yaml: cluster-name, network.port (mapping or `port: 5801`),
// network.public-address, network.join.tcp-ip, the properties
// hazelcast.initial.min.cluster.size, hazelcast.local.localAddress,
// stowage.transport.port and stowage.namespace.lease.ttl (how long a
// cluster's lease on a map store's namespace/clusterName lasts unless
// renewed; docs/security.md), hazelcast.map.write.behind.queue.capacity
// (the most records a write-behind map's queue holds on a member, default
// 50000), map.<name or pattern> (backup-count,
// async-backup-count, split-brain-protection-ref, map-store) and
// split-brain-protection. Without map entries nothing is persisted.
// LoadRole reads hazelcast-master.yaml or hazelcast-worker.yaml instead,
// as seatunnel-cluster.sh -r master|worker does.
//
// hazelcast-client.yaml is read by ParseClient (cluster-name,
// network.cluster-members).
//
// Every other key present is accepted and listed by Config.Ignored (and
// Client.Ignored): a block none of whose keys stowage reads once by its
// own path, a Hazelcast property by its name. `stowage node` logs the list
// once at start, in one line.
//
// # Errors
//
// Every error is an *Error naming the file, line and YAML key path, e.g.
//
//	stowage/config: hazelcast.yaml:14: hazelcast.map.engine*.map-store.properties.clusterName: required
//
// and wrapping one of ErrSyntax, ErrUnknownKey, ErrType, ErrUnsupported
// (decoding, which stops at the first) or ErrInvalid (Validate, which
// reports all). An unknown key names the nearest known one:
//
//	stowage/config: seatunnel.yaml:3: seatunnel.engine.backup-cont: unknown key (did you mean backup-count?)
//
// Values of
// secret keys (fsbackend.IsSecretKey) and the user information of URIs
// (fsbackend.RedactURIs) never appear in errors nor in Dump or String,
// which print YAML with those values redacted.
//
// A map store's properties and the checkpoint plugin-config may set
// fs.permissions.umask-mode (an octal umask, default 077: files 0600,
// directories 0700 on local disk and HDFS).
//
// # Choices where SeaTunnel is silent or lenient
//
//   - A key that is neither SeaTunnel's nor Hazelcast's is an error
//     (SeaTunnel only logs a warning), so that a misspelt key cannot
//     silently fall back to a default or disable persistence. Top-level
//     keys other than seatunnel / hazelcast are errors; the documents'
//     `map:` snippets belong under `hazelcast:`. Hazelcast sections
//     SeaTunnel does not use (cache, queue, wan-replication, ...) are
//     accepted whole, as are the blocks below a few keys whose contents
//     are free-form (plugin-config, headers, discovery strategies).
//   - Hazelcast accepts any property name, and so does stowage, except a
//     name one or two edits from one Hazelcast defines
//     (hazelcast.initial.min.cluster.sise): that is refused as misspelt.
//   - Security switches stowage does not implement are refused when on
//     (ErrUnsupported), as open-source Hazelcast refuses Enterprise
//     security: hazelcast.security.enabled,
//     network.symmetric-encryption.enabled and the ssl of
//     advanced-network, and hazelcast-client network.ssl.enabled. The
//     message says to turn them off and firewall the member ports. Off,
//     they are accepted.
//   - hazelcast.network.ssl is implemented (MemberSSL, member_security.go):
//     PEM files or a shared cluster secret; Java key stores, encrypted
//     keys, protocols other than TLS 1.3 and optional mutual
//     authentication are refused, naming what to use instead.
//   - seatunnel.engine.http: enable-https needs a key store or PEM files;
//     enable-basic-auth needs basic-auth-password (SeaTunnel defaults it
//     to admin; stowage has no default password). The TLS keys are
//     checked only when enable-https is on. Passwords are redacted in
//     Dump; the key store, PEM files and token file are read when the
//     server is built (httpapi.TLSConfig, httpapi.SecurityFrom).
//   - A key with no value (`namespace:` followed by a comment, as in the
//     documents' templates) keeps its default. In plugin-config and
//     map-store properties such keys are left out; nested mappings are
//     flattened with dots and lists joined with commas.
//   - A checkpoint namespace without its trailing "/" (SeaTunnel's own
//     shipped seatunnel.yaml has one) gets it added, with a slog warning;
//     empty, relative or "."/".." namespaces are errors.
//   - Defaults follow SeaTunnel's ServerConfigOptions where the documents
//     give none: checkpoint.timeout 30000 ms, max-retained 20,
//     job-metrics-backup-interval 10 s. Where the documents state one they
//     win: classloader-cache-mode false. checkpoint.storage.type defaults
//     to hdfs (SeaTunnel's localfile is deprecated); localfile is accepted
//     and kept so that the caller can warn.
//   - checkpoint.storage.type may name any well-formed factory name
//     (ValidCheckpointStorageName), so that a factory registered with
//     checkpoint.Register can be selected; config does not know the
//     registry, and building the storage fails on an unregistered name.
//     plugin-config's back-end keys are checked only for hdfs and
//     localfile; the namespace is checked for every type.
//   - Booleans accept true/false/yes/no/on/off in any case; YAML anchors,
//     aliases and merge keys work; a key given twice is an error.
//   - write-delay-seconds 0 (the default) writes through: a write is
//     acknowledged once it is durable. More than 0 is write-behind: a
//     write is acknowledged once it is in memory on the owner and its sync
//     backups, and stored that many seconds later, write-batch-size
//     records per store call, write-coalescing keeping only a key's
//     latest write queued (docs/write-behind.md).
//   - MapFor follows Hazelcast: exact name, then the pattern with the most
//     literal characters, then "default"; two patterns that could match a
//     name equally well are refused by Validate instead of failing later.
//   - network.port.auto-increment defaults to false, as SeaTunnel ships
//     hazelcast.yaml.
package config
