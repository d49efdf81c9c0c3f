package config_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stowage/stowage/config"
)

const okStore = "          type: hdfs\n          namespace: /tmp/imap\n          clusterName: c\n          storage.type: hdfs\n          fs.defaultFS: file:///\n"

func mapStore(props string, extra ...string) string {
	return "hazelcast:\n  map:\n    engine*:\n      map-store:\n        enabled: true\n        initial-mode: EAGER\n" +
		strings.Join(extra, "") + "        properties:\n" + props
}

func checkpoint(body string) string {
	return "seatunnel:\n  engine:\n    checkpoint:\n" + body
}

func TestValidateRules(t *testing.T) {
	if _, err := config.Parse(nil, []byte(mapStore(okStore))); err != nil {
		t.Fatalf("valid map store refused: %v", err)
	}
	ms := "hazelcast.map.engine*.map-store."
	msp := ms + "properties."
	cases := []struct {
		name, st, hz, key string
	}{
		{"clusterName missing", "", mapStore(strings.Replace(okStore, "          clusterName: c\n", "", 1)), msp + "clusterName: required"},
		{"clusterName with slash", "", mapStore(strings.Replace(okStore, "clusterName: c", "clusterName: a/b", 1)), msp + "clusterName:"},
		{"clusterName dotdot", "", mapStore(strings.Replace(okStore, "clusterName: c", "clusterName: ..", 1)), msp + "clusterName:"},
		{"clusterName NUL", "", mapStore(strings.Replace(okStore, "clusterName: c", `clusterName: "a\0b"`, 1)), msp + "clusterName:"},
		{"namespace missing", "", mapStore(strings.Replace(okStore, "          namespace: /tmp/imap\n", "", 1)), msp + "namespace: required"},
		{"namespace relative", "", mapStore(strings.Replace(okStore, "/tmp/imap", "tmp/imap", 1)), msp + "namespace:"},
		{"namespace dotdot", "", mapStore(strings.Replace(okStore, "/tmp/imap", "/tmp/../etc", 1)), msp + "namespace:"},
		{"storage.type unknown", "", mapStore(strings.Replace(okStore, "storage.type: hdfs", "storage.type: ftp", 1)), msp + "storage.type:"},
		{"fs.defaultFS scheme", "", mapStore(strings.Replace(okStore, "file:///", "ftp://x/", 1)), msp + "fs.defaultFS:"},
		{"block.size word", "", mapStore(okStore + "          block.size: big\n"), msp + "block.size:"},
		{"block.size zero", "", mapStore(okStore + "          block.size: 0\n"), msp + "block.size:"},
		{"snapshot.retain", "", mapStore(okStore + "          snapshot.retain: 5\n"), msp + "snapshot.retain:"},
		{"commit-delay word", "", mapStore(okStore + "          stowage.commit-delay: soon\n"), msp + `stowage.commit-delay: "soon" is not a duration`},
		{"commit-delay negative", "", mapStore(okStore + "          stowage.commit-delay: -1ms\n"), msp + "stowage.commit-delay:"},
		{"commit-delay too long", "", mapStore(okStore + "          stowage.commit-delay: 1s\n"), msp + "stowage.commit-delay:"},
		{"open-files zero", "", mapStore(okStore + "          stowage.hdfs.open-files: 0\n"), msp + `stowage.hdfs.open-files: "0" is not a number of files from 1 to 8`},
		{"open-files too many", "", mapStore(okStore + "          stowage.hdfs.open-files: 9\n"), msp + "stowage.hdfs.open-files:"},
		{"open-files word", "", mapStore(okStore + "          stowage.hdfs.open-files: two\n"), msp + "stowage.hdfs.open-files:"},
		{"bbolt without path", "", mapStore("          type: bbolt\n"), msp + "path: required"},
		{"unknown store type", "", mapStore(strings.Replace(okStore, "type: hdfs\n", "type: redis\n", 1)), msp + `type: unknown map store "redis" (known: hdfs, bbolt)`},
		{"initial-mode", "", strings.Replace(mapStore(okStore), "EAGER", "SOON", 1), ms + "initial-mode:"},
		{"negative write-delay-seconds", "", mapStore(okStore, "        write-delay-seconds: -1\n"), ms + "write-delay-seconds:"},
		{"write-batch-size", "", mapStore(okStore, "        write-batch-size: 0\n"), ms + "write-batch-size:"},
		{"map backup-count", "", "hazelcast:\n  map:\n    m:\n      backup-count: 7\n", "hazelcast.map.m.backup-count:"},
		{"negative time-to-live-seconds", "", "hazelcast:\n  map:\n    m:\n      time-to-live-seconds: -1\n", "hazelcast.map.m.time-to-live-seconds:"},
		{"negative max-idle-seconds", "", "hazelcast:\n  map:\n    m:\n      max-idle-seconds: -5\n", "hazelcast.map.m.max-idle-seconds:"},
		{"map negative backup-count", "", "hazelcast:\n  map:\n    m:\n      backup-count: -1\n", "hazelcast.map.m.backup-count:"},
		{"backups over 6", "", "hazelcast:\n  map:\n    m:\n      backup-count: 4\n      async-backup-count: 3\n", "hazelcast.map.m.async-backup-count:"},
		{"two stars", "", "hazelcast:\n  map:\n    a*b*: {}\n", "hazelcast.map.a*b*:"},
		{"ambiguous patterns", "", "hazelcast:\n  map:\n    ab*: {}\n    \"*yz\": {}\n    a*z: {}\n", "hazelcast.map.ab*: matches some map names exactly as well as *yz"},
		{"port zero", "", "hazelcast:\n  network:\n    port: 0\n", "hazelcast.network.port:"},
		{"port too big", "", "hazelcast:\n  network:\n    port:\n      port: 70000\n", "hazelcast.network.port:"},
		{"port-count", "", "hazelcast:\n  network:\n    port:\n      port: 65535\n      auto-increment: true\n      port-count: 10\n", "hazelcast.network.port.port-count:"},
		{"cluster-name empty", "", "hazelcast:\n  cluster-name: ''\n", "hazelcast.cluster-name:"},
		{"engine backup-count", "seatunnel:\n  engine:\n    backup-count: 7\n", "", "seatunnel.engine.backup-count:"},
		{"queue-type", "seatunnel:\n  engine:\n    queue-type: ring\n", "", "seatunnel.engine.queue-type:"},
		{"history-job-expire-minutes", "seatunnel:\n  engine:\n    history-job-expire-minutes: 0\n", "", "seatunnel.engine.history-job-expire-minutes:"},
		{"slot-num", "seatunnel:\n  engine:\n    slot-service:\n      dynamic-slot: false\n      slot-num: 0\n", "", "seatunnel.engine.slot-service.slot-num:"},
		{"interval", checkpoint("      interval: 0\n"), "", "seatunnel.engine.checkpoint.interval:"},
		{"timeout", checkpoint("      timeout: -5\n"), "", "seatunnel.engine.checkpoint.timeout:"},
		{"checkpoint storage type with a scheme", checkpoint("      storage:\n        type: ftp://x\n"), "", "seatunnel.engine.checkpoint.storage.type: \"ftp://x\" is not a checkpoint storage name"},
		{"checkpoint storage type with a space", checkpoint("      storage:\n        type: my store\n"), "", "seatunnel.engine.checkpoint.storage.type:"},
		{"checkpoint storage type empty", checkpoint("      storage:\n        type: \"\"\n"), "", "seatunnel.engine.checkpoint.storage.type:"},
		{"checkpoint storage type from a digit", checkpoint("      storage:\n        type: 3fs\n"), "", "seatunnel.engine.checkpoint.storage.type:"},
		{"namespace checked for a custom type", checkpoint("      storage:\n        type: my-store\n        plugin-config:\n          namespace: ck/\n"), "", "seatunnel.engine.checkpoint.storage.plugin-config.namespace:"},
		{"max-retained", checkpoint("      storage:\n        max-retained: 0\n"), "", "seatunnel.engine.checkpoint.storage.max-retained:"},
		{"checkpoint namespace empty", checkpoint("      storage:\n        plugin-config:\n          namespace: \"\"\n"), "", "seatunnel.engine.checkpoint.storage.plugin-config.namespace:"},
		{"checkpoint namespace relative", checkpoint("      storage:\n        plugin-config:\n          namespace: ck/\n"), "", "seatunnel.engine.checkpoint.storage.plugin-config.namespace:"},
		{"checkpoint namespace dotdot", checkpoint("      storage:\n        plugin-config:\n          namespace: /a/../b/\n"), "", "seatunnel.engine.checkpoint.storage.plugin-config.namespace:"},
		{"checkpoint storage.type", checkpoint("      storage:\n        plugin-config:\n          storage.type: nfs\n"), "", "seatunnel.engine.checkpoint.storage.plugin-config.storage.type:"},
		{"checkpoint fs.defaultFS", checkpoint("      storage:\n        plugin-config:\n          fs.defaultFS: ftp://x\n"), "", "seatunnel.engine.checkpoint.storage.plugin-config.fs.defaultFS:"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := config.Parse([]byte(tc.st), []byte(tc.hz))
			if err == nil {
				t.Fatal("accepted")
			}
			if !errors.Is(err, config.ErrInvalid) {
				t.Fatalf("error %q is not ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), tc.key) {
				t.Fatalf("error %q does not name %q", err, tc.key)
			}
		})
	}
}

// A disabled map store is not checked: its properties may be a template.
func TestDisabledMapStoreIsNotChecked(t *testing.T) {
	c, err := config.Parse(nil, []byte(strings.Replace(mapStore("          type: redis\n"), "enabled: true", "enabled: false", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if mc, _ := c.Hazelcast.MapFor("engine_x"); mc.MapStore == nil || mc.MapStore.Enabled {
		t.Fatalf("map store = %+v", mc.MapStore)
	}
}

// Validate reports every problem at once, and works on a configuration
// built in code (no file, no line).
func TestValidateBuiltInCode(t *testing.T) {
	c := config.Default()
	c.Engine.BackupCount = 9
	c.Engine.Checkpoint.Interval = 0
	c.Engine.Checkpoint.Storage.Namespace = "/no/slash"
	c.Hazelcast.Maps = append(c.Hazelcast.Maps, config.MapConfig{Pattern: "m", BackupCount: 1, MapStore: &config.MapStoreConfig{Enabled: true, InitialMode: "lazy", WriteBatchSize: 1}})
	err := c.Validate()
	if err == nil {
		t.Fatal("accepted")
	}
	for _, key := range []string{
		"stowage/config: seatunnel.engine.backup-count:",
		"seatunnel.engine.checkpoint.interval:",
		"seatunnel.engine.checkpoint.storage.plugin-config.namespace: \"/no/slash\" must end with '/'",
		"hazelcast.map.m.map-store.properties.namespace: required",
		"hazelcast.map.m.map-store.properties.clusterName: required",
	} {
		if !strings.Contains(err.Error(), key) {
			t.Errorf("error does not contain %q:\n%v", key, err)
		}
	}
	if strings.Contains(err.Error(), "initial-mode") {
		t.Errorf("lower-case initial-mode refused: %v", err)
	}
	want(t, "unchanged namespace", c.Engine.Checkpoint.Storage.Namespace, "/no/slash")

	ok := config.Default()
	ok.Engine.Checkpoint.Interval = time.Second
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
}

// checkpoint.storage.type may name a factory config does not know (one a
// user registers with checkpoint.Register): any well-formed name parses,
// and such a type's plugin-config reaches the factory unchecked, whereas
// the built-in types still have their back-end keys checked.
func TestCheckpointStorageTypeCustom(t *testing.T) {
	const custom = "seatunnel:\n  engine:\n    checkpoint:\n      storage:\n        type: My-Store.v2\n" +
		"        plugin-config:\n          storage.type: cassandra\n          fs.defaultFS: cql://db:9042\n          keyspace: ck\n"
	c, err := config.Parse([]byte(custom), nil)
	if err != nil {
		t.Fatalf("custom checkpoint storage type refused: %v", err)
	}
	s := c.Engine.Checkpoint.Storage
	want(t, "type", s.Type, "my-store.v2")
	want(t, "namespace", s.Namespace, config.DefaultCheckpointNamespace)
	for k, v := range map[string]string{"storage.type": "cassandra", "fs.defaultFS": "cql://db:9042", "keyspace": "ck"} {
		want(t, "plugin-config "+k, s.PluginConfig[k], v)
	}
	for _, builtin := range []string{"hdfs", "localfile", "HDFS"} {
		_, err := config.Parse([]byte(strings.Replace(custom, "My-Store.v2", builtin, 1)), nil)
		if err == nil || !strings.Contains(err.Error(), "seatunnel.engine.checkpoint.storage.plugin-config.storage.type:") {
			t.Errorf("type %s with plugin-config storage.type cassandra: err %v, want one naming plugin-config.storage.type", builtin, err)
		}
	}
	// Validate on a configuration built in code lower-cases as Parse does.
	d := config.Default()
	d.Engine.Checkpoint.Storage.Type = "In-Memory"
	d.Engine.Checkpoint.Storage.PluginConfig = map[string]string{"storage.type": "nowhere"}
	if err := d.Validate(); err != nil {
		t.Fatalf("custom type built in code: %v", err)
	}
}

func TestValidCheckpointStorageName(t *testing.T) {
	for name, ok := range map[string]bool{
		"hdfs": true, "localfile": true, "in-memory": true, "My_Store.v2": true, "a": true,
		strings.Repeat("a", 64): true, strings.Repeat("a", 65): false,
		"": false, "-x": false, "1x": false, "a b": false, "a/b": false, "s3://b": false, "é": false, "a\x00": false,
	} {
		if got := config.ValidCheckpointStorageName(name); got != ok {
			t.Errorf("ValidCheckpointStorageName(%q) = %v, want %v", name, got, ok)
		}
	}
}

// TestUmaskChecked: a map store's fs.permissions.umask-mode must be an
// octal umask; the error names the key.
func TestUmaskChecked(t *testing.T) {
	hz := `hazelcast:
  map:
    engine*:
      map-store:
        enabled: true
        properties:
          type: hdfs
          namespace: /imap
          clusterName: c
          fs.permissions.umask-mode: "%s"
`
	if _, err := config.Parse(nil, []byte(fmt.Sprintf(hz, "027"))); err != nil {
		t.Fatalf("umask 027: %v", err)
	}
	_, err := config.Parse(nil, []byte(fmt.Sprintf(hz, "rw-r")))
	if err == nil || !strings.Contains(err.Error(), "fs.permissions.umask-mode") {
		t.Fatalf("umask rw-r: err = %v, want one naming fs.permissions.umask-mode", err)
	}
}
