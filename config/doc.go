// Package config reads a SeaTunnel engine configuration directory —
// seatunnel.yaml and hazelcast.yaml, exactly as SeaTunnel users write them
// — into typed, validated values.
//
// seatunnel.yaml: seatunnel.engine.backup-count, slot-service, checkpoint
// (interval, timeout, storage.type, storage.max-retained, plugin-config),
// history-job-expire-minutes and the other engine keys. Unknown keys under
// seatunnel.engine are an error naming the key; blocks SeaTunnel has that
// stowage does not use (http, telemetry, jar-storage, ...) are accepted and
// ignored.
//
// hazelcast.yaml: cluster-name, network.port, network.join.tcp-ip, the
// properties block, and map.<name-or-pattern> with backup-count,
// async-backup-count and map-store (enabled, initial-mode,
// factory-class-name, properties). Other Hazelcast sections are accepted
// and ignored. Maps whose names match an entry with an enabled map-store
// are persisted; others stay in memory.
//
// Errors name the file, line and YAML key path, e.g.
// `hazelcast.map.engine*.map-store.properties.clusterName: required`.
// Secret values never appear in errors or in String.
package config
