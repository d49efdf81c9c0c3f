package config_test

import (
	"testing"

	"github.com/stowage/stowage/config"
)

// A configuration built in Go validates like a parsed file and says the
// same thing as the YAML it stands for.
func TestBuiltInGoMatchesYAML(t *testing.T) {
	built := config.Default()
	mc := config.MapConfig{Pattern: "engine*", MapStore: config.LocalMapStore("/data/st", "c1")}
	mc.SetBackupCount(2)
	built.AddMap(mc)
	if err := built.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	parsed, err := config.Parse(nil, []byte(`hazelcast:
  map:
    engine*:
      backup-count: 2
      map-store:
        enabled: true
        initial-mode: EAGER
        properties:
          type: hdfs
          namespace: /data/st
          clusterName: c1
          storage.type: hdfs
          fs.defaultFS: file:///
`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := built.Hazelcast.MapFor("engine_x")
	p, _ := parsed.Hazelcast.MapFor("engine_x")
	if b.SyncBackups(1) != 2 || p.SyncBackups(1) != 2 {
		t.Errorf("sync backups: built %d, parsed %d, want 2", b.SyncBackups(1), p.SyncBackups(1))
	}
	bs, ps := b.MapStore, p.MapStore
	if bs == nil || ps == nil {
		t.Fatalf("map store: built %v, parsed %v", bs, ps)
	}
	if bs.Enabled != ps.Enabled || bs.InitialMode != ps.InitialMode || bs.StoreType() != ps.StoreType() ||
		bs.WriteBatchSize != ps.WriteBatchSize || bs.WriteCoalescing != ps.WriteCoalescing {
		t.Errorf("map store built %+v, parsed %+v", *bs, *ps)
	}
	for k, v := range ps.Properties {
		if bs.Properties[k] != v {
			t.Errorf("property %s: built %q, parsed %q", k, bs.Properties[k], v)
		}
	}
	if len(bs.Properties) != len(ps.Properties) {
		t.Errorf("properties: built %v, parsed %v", bs.Properties, ps.Properties)
	}
	without := config.MapConfig{Pattern: "m"}
	if without.SyncBackups(3) != 3 {
		t.Errorf("an entry without SetBackupCount keeps the engine's backup-count: got %d", without.SyncBackups(3))
	}
}
