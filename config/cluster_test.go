package config_test

import (
	"strings"
	"testing"

	"github.com/stowage/stowage/config"
)

const clusterYAML = `hazelcast:
  cluster-name: prod
  network:
    public-address: 10.0.0.7
    join:
      tcp-ip:
        enabled: true
        member-list: [10.0.0.7, 10.0.0.8]
  split-brain-protection:
    majority:
      enabled: true
      minimum-cluster-size: 2
    reads:
      enabled: true
      minimum-cluster-size: 3
      protect-on: read
  map:
    engine*:
      split-brain-protection-ref: majority
    explicit:
      backup-count: 2
`

func TestClusterKeys(t *testing.T) {
	c, err := config.Parse([]byte("seatunnel:\n  engine:\n    backup-count: 3\n"), []byte(clusterYAML))
	if err != nil {
		t.Fatal(err)
	}
	h := c.Hazelcast
	if h.Network.PublicAddress != "10.0.0.7" {
		t.Errorf("public-address = %q", h.Network.PublicAddress)
	}
	if sb := h.SplitBrainProtection["majority"]; !sb.Enabled || sb.MinimumClusterSize != 2 || sb.ProtectOn != "READ_WRITE" {
		t.Errorf("majority = %+v", sb)
	}
	if sb := h.SplitBrainProtection["reads"]; sb.ProtectOn != "READ" || sb.MinimumClusterSize != 3 {
		t.Errorf("reads = %+v", sb)
	}
	engine, _ := h.MapFor("engine_runningJobInfo")
	if engine.SplitBrainProtectionRef != "majority" {
		t.Errorf("engine* split-brain-protection-ref = %q", engine.SplitBrainProtectionRef)
	}
	// An entry without backup-count takes seatunnel.engine.backup-count;
	// one that sets it keeps its own; a map with no entry takes the engine's.
	if got := engine.SyncBackups(c.Engine.BackupCount); got != 3 {
		t.Errorf("engine* sync backups = %d, want the engine's 3", got)
	}
	explicit, _ := h.MapFor("explicit")
	if got := explicit.SyncBackups(c.Engine.BackupCount); got != 2 {
		t.Errorf("explicit sync backups = %d, want 2", got)
	}
	other, _ := h.MapFor("other")
	if got := other.SyncBackups(c.Engine.BackupCount); got != 3 {
		t.Errorf("unmatched map sync backups = %d, want 3", got)
	}
	// The dump reads back to the same configuration.
	st, hz := split(t, c.String())
	back, err := config.Parse(st, hz)
	if err != nil {
		t.Fatalf("dump does not parse: %v\n%s", err, c)
	}
	if b, _ := back.Hazelcast.MapFor("engine_x"); b.SyncBackups(1) != 1 || b.SplitBrainProtectionRef != "majority" {
		t.Errorf("dump lost engine*: %+v", b)
	}
	if b, _ := back.Hazelcast.MapFor("explicit"); b.SyncBackups(1) != 2 {
		t.Errorf("dump lost explicit backup-count: %+v", b)
	}
}

func TestClusterKeysRefused(t *testing.T) {
	for _, tc := range []struct{ name, yaml, key string }{
		{"dangling ref", "hazelcast:\n  map:\n    m:\n      split-brain-protection-ref: nope\n", "hazelcast.map.m.split-brain-protection-ref"},
		{"size one", "hazelcast:\n  split-brain-protection:\n    q:\n      enabled: true\n      minimum-cluster-size: 1\n", "hazelcast.split-brain-protection.q.minimum-cluster-size"},
		{"protect-on", "hazelcast:\n  split-brain-protection:\n    q:\n      enabled: true\n      minimum-cluster-size: 2\n      protect-on: always\n", "hazelcast.split-brain-protection.q.protect-on"},
		{"unknown key", "hazelcast:\n  split-brain-protection:\n    q:\n      minimum-size: 2\n", "minimum-size"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := config.Parse(nil, []byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.key) {
				t.Fatalf("error %v does not name %s", err, tc.key)
			}
		})
	}
}
