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
// seatunnel.yaml: seatunnel.engine — backup-count, queue-type, the print
// and metrics intervals, history-job-expire-minutes, classloader-cache-mode,
// slot-service, and checkpoint (interval, timeout, storage.type,
// storage.max-retained, storage.plugin-config). The other blocks SeaTunnel
// 2.3 knows (http, telemetry, jar-storage, event-report-http,
// coordinator-service, ...) are checked and ignored.
//
// hazelcast.yaml: hazelcast — cluster-name, network.port (mapping or
// `port: 5801`), network.join.tcp-ip, properties, and map.<name or pattern>
// with backup-count, async-backup-count and map-store (enabled,
// initial-mode, factory-class-name, properties). Every other Hazelcast 5
// section is accepted and ignored. Without map entries nothing is persisted.
//
// hazelcast-client.yaml is read by ParseClient.
//
// # Errors
//
// Every error is an *Error naming the file, line and YAML key path, e.g.
//
//	stowage/config: hazelcast.yaml:14: hazelcast.map.engine*.map-store.properties.clusterName: required
//
// and wrapping one of ErrSyntax, ErrUnknownKey, ErrType (decoding, which
// stops at the first) or ErrInvalid (Validate, which reports all). Values of
// secret keys (fsbackend.IsSecretKey) never appear in errors nor in Dump or
// String, which print YAML with those values redacted.
//
// # Choices where SeaTunnel is silent or lenient
//
//   - Unknown keys under seatunnel.engine, under a map entry and under
//     map-store are errors (SeaTunnel only logs a warning), so that a
//     misspelt key cannot silently disable persistence. Top-level keys
//     other than seatunnel / hazelcast are errors; the documents' `map:`
//     snippets belong under `hazelcast:`.
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
//   - write-delay-seconds must be 0: stowage writes through and
//     acknowledges a write only once it is durable.
//   - MapFor follows Hazelcast: exact name, then the pattern with the most
//     literal characters, then "default"; two patterns that could match a
//     name equally well are refused by Validate instead of failing later.
//   - network.port.auto-increment defaults to false, as SeaTunnel ships
//     hazelcast.yaml.
package config
