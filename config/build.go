package config

import "github.com/stowage/stowage/fsbackend"

// Building a configuration in Go, without YAML: start from Default, add
// map entries with AddMap (each naming a map or a pattern and, for a
// persisted map, its map store), then hand the Config to stowage.Open.
// The fields are those of hazelcast.yaml and seatunnel.yaml, so
// everything a file can say can be said here; Open validates the result
// as it validates a parsed file.
//
//	cfg := config.Default()
//	cfg.AddMap(config.MapConfig{Pattern: "engine*", MapStore: config.LocalMapStore("/var/lib/stowage", "seatunnel")})

// LocalMapStore returns an enabled, EAGER map-store block that keeps a
// map's data on local disk under dir/clusterName/<map name>/: what
// hazelcast.yaml says with type hdfs, storage.type hdfs and fs.defaultFS
// file:/// (SeaTunnel's FileMapStore on a local path). Set further
// properties (block.size, snapshot.retain, …) on the returned block's
// Properties; for HDFS or an object store, set storage.type and its keys
// instead.
func LocalMapStore(dir, clusterName string) *MapStoreConfig {
	return &MapStoreConfig{
		Enabled:         true,
		InitialMode:     "EAGER",
		WriteBatchSize:  1,
		WriteCoalescing: true,
		Properties: fsbackend.Properties{
			"type": StoreHDFS, "namespace": dir, "clusterName": clusterName,
			"storage.type": "hdfs", "fs.defaultFS": "file:///",
		},
	}
}

// AddMap appends a map entry, which then applies to the maps its Pattern
// matches (a name, a pattern with one '*', or "default"), as an entry of
// hazelcast.yaml's map block in file order. An entry built in Go keeps
// seatunnel.engine.backup-count for its backups unless SetBackupCount
// was called on it.
func (c *Config) AddMap(m MapConfig) {
	c.Hazelcast.Maps = append(c.Hazelcast.Maps, m)
}

// SetBackupCount sets backup-count, the map's synchronous backups, in
// place of seatunnel.engine.backup-count.
func (m *MapConfig) SetBackupCount(n int) {
	m.BackupCount, m.backupCountSet = n, true
}
