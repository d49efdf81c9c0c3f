package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stowage/stowage/config"
)

// Every YAML example of the SeaTunnel documents in shared/reference is a
// fixture; each must parse. The one with a placeholder block.size must be
// refused with an error naming that key.
func TestReferenceExamplesParse(t *testing.T) {
	files, _ := filepath.Glob("../testdata/config/*.yaml")
	if len(files) < 20 {
		t.Fatalf("found %d fixtures, want the 24 examples", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var cfg *config.Config
			if strings.Contains(f, "hazelcast") {
				cfg, err = config.Parse(nil, b)
			} else {
				cfg, err = config.Parse(b, nil)
			}
			if strings.Contains(string(b), "block size(bytes)") {
				if err == nil || !strings.Contains(err.Error(), "block.size") {
					t.Fatalf("placeholder block.size: err = %v, want one naming block.size", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Engine.Checkpoint.Storage.Namespace != config.DefaultCheckpointNamespace && !strings.HasSuffix(cfg.Engine.Checkpoint.Storage.Namespace, "/") {
				t.Fatalf("namespace %q does not end in /", cfg.Engine.Checkpoint.Storage.Namespace)
			}
		})
	}
}

func TestValues(t *testing.T) {
	st := `seatunnel:
  engine:
    backup-count: 2
    history-job-expire-minutes: 60
    slot-service:
      dynamic-slot: false
      slot-num: 20
    checkpoint:
      interval: 6000
      timeout: 7000
      storage:
        type: hdfs
        max-retained: 3
        plugin-config:
          namespace: /ck
          storage.type: hdfs
          fs.defaultFS: hdfs://nn:9000
          seatunnel.hadoop.dfs.replication: 2
`
	hz := `hazelcast:
  cluster-name: prod
  network:
    join:
      tcp-ip:
        enabled: true
        member-list:
          - 10.0.0.1
          - 10.0.0.2:5802
    port:
      auto-increment: false
      port: 5801
  properties:
    hazelcast.initial.min.cluster.size: 2
  map:
    engine*:
      backup-count: 2
      map-store:
        enabled: true
        initial-mode: eager
        properties:
          type: hdfs
          namespace: /tmp/seatunnel/imap
          clusterName: c1
          storage.type: hdfs
          fs.defaultFS: file:///
          block.size: 1048576
    engine_special:
      backup-count: 0
`
	c, err := config.Parse([]byte(st), []byte(hz))
	if err != nil {
		t.Fatal(err)
	}
	e := c.Engine
	if e.BackupCount != 2 || e.HistoryJobExpireMinutes != 60 || e.SlotService.DynamicSlot || e.SlotService.SlotNum != 20 {
		t.Fatalf("engine = %+v", e)
	}
	if e.Checkpoint.Interval != 6*time.Second || e.Checkpoint.Timeout != 7*time.Second || e.Checkpoint.Storage.MaxRetained != 3 {
		t.Fatalf("checkpoint = %+v", e.Checkpoint)
	}
	if e.Checkpoint.Storage.Namespace != "/ck/" {
		t.Fatalf("namespace %q, want /ck/ (normalised)", e.Checkpoint.Storage.Namespace)
	}
	if e.Checkpoint.Storage.PluginConfig["seatunnel.hadoop.dfs.replication"] != "2" {
		t.Fatalf("plugin-config = %v", e.Checkpoint.Storage.PluginConfig)
	}
	h := c.Hazelcast
	if h.ClusterName != "prod" || h.Network.Port != 5801 || len(h.Network.MemberList) != 2 || !h.Network.TCPIPEnabled {
		t.Fatalf("hazelcast = %+v", h)
	}
	if h.Properties["hazelcast.initial.min.cluster.size"] != "2" {
		t.Fatalf("properties = %v", h.Properties)
	}
	mc, ok := h.MapFor("engine_runningJobInfo")
	if !ok || mc.Pattern != "engine*" || mc.MapStore == nil || mc.MapStore.InitialMode != "EAGER" || mc.BackupCount != 2 {
		t.Fatalf("MapFor(engine_runningJobInfo) = %+v, %v", mc, ok)
	}
	if mc, _ := h.MapFor("engine_special"); mc.Pattern != "engine_special" || mc.MapStore != nil {
		t.Fatalf("exact name must win over the pattern: %+v", mc)
	}
	if _, ok := h.MapFor("other"); ok {
		t.Fatal("a map matching no entry got one")
	}
}

func TestErrorsNameTheKey(t *testing.T) {
	mapStore := func(props string) string {
		return "hazelcast:\n  map:\n    engine*:\n      map-store:\n        enabled: true\n        initial-mode: EAGER\n        properties:\n" + props
	}
	ok := "          type: hdfs\n          namespace: /tmp/imap\n          clusterName: c\n          storage.type: hdfs\n          fs.defaultFS: file:///\n"
	if _, err := config.Parse(nil, []byte(mapStore(ok))); err != nil {
		t.Fatalf("valid map store refused: %v", err)
	}
	cases := []struct {
		name, st, hz, key string
	}{
		{"missing clusterName", "", mapStore(strings.Replace(ok, "          clusterName: c\n", "", 1)), "clusterName"},
		{"clusterName escapes", "", mapStore(strings.Replace(ok, "clusterName: c", "clusterName: ../x", 1)), "clusterName"},
		{"unknown storage.type", "", mapStore(strings.Replace(ok, "storage.type: hdfs", "storage.type: ftp", 1)), "storage.type"},
		{"bad fs.defaultFS scheme", "", mapStore(strings.Replace(ok, "file:///", "ftp://x", 1)), "fs.defaultFS"},
		{"relative namespace", "", mapStore(strings.Replace(ok, "/tmp/imap", "tmp/imap", 1)), "namespace"},
		{"non-numeric block.size", "", mapStore(ok + "          block.size: big\n"), "block.size"},
		{"unknown store type", "", mapStore(strings.Replace(ok, "type: hdfs\n", "type: redis\n", 1)), "properties.type"},
		{"bbolt without path", "", mapStore("          type: bbolt\n"), "path"},
		{"bad initial-mode", "", strings.Replace(mapStore(ok), "EAGER", "SOON", 1), "initial-mode"},
		{"write-behind", "", strings.Replace(mapStore(ok), "initial-mode: EAGER", "initial-mode: EAGER\n        write-delay-seconds: 5", 1), "write-delay-seconds"},
		{"backup-count too high", "seatunnel:\n  engine:\n    backup-count: 7\n", "", "seatunnel.engine.backup-count"},
		{"unknown engine key", "seatunnel:\n  engine:\n    backup-cnt: 1\n", "", "seatunnel.engine.backup-cnt"},
		{"unknown checkpoint storage", "seatunnel:\n  engine:\n    checkpoint:\n      storage:\n        type: ftp\n", "", "checkpoint.storage.type"},
		{"relative checkpoint namespace", "seatunnel:\n  engine:\n    checkpoint:\n      storage:\n        plugin-config:\n          namespace: ck/\n", "", "plugin-config.namespace"},
		{"dotdot checkpoint namespace", "seatunnel:\n  engine:\n    checkpoint:\n      storage:\n        plugin-config:\n          namespace: /a/../b/\n", "", "plugin-config.namespace"},
		{"empty checkpoint namespace", "seatunnel:\n  engine:\n    checkpoint:\n      storage:\n        plugin-config:\n          namespace: \"\"\n", "", "plugin-config.namespace"},
		{"max-retained zero", "seatunnel:\n  engine:\n    checkpoint:\n      storage:\n        max-retained: 0\n", "", "max-retained"},
		{"checkpoint unknown storage.type", "seatunnel:\n  engine:\n    checkpoint:\n      storage:\n        plugin-config:\n          storage.type: nfs\n", "", "storage.type"},
		{"non-numeric interval", "seatunnel:\n  engine:\n    checkpoint:\n      interval: soon\n", "", "seatunnel.engine.checkpoint.interval"},
		{"bad port", "", "hazelcast:\n  network:\n    port:\n      port: 70000\n", "hazelcast.network.port"},
		{"unknown top-level", "", "hazelcst:\n  cluster-name: x\n", "hazelcst"},
		{"broken YAML", "seatunnel: [\n", "", "seatunnel.yaml"},
		{"backups over 6", "", "hazelcast:\n  map:\n    m:\n      backup-count: 4\n      async-backup-count: 3\n", "async-backup-count"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var st, hz []byte
			if tc.st != "" {
				st = []byte(tc.st)
			}
			if tc.hz != "" {
				hz = []byte(tc.hz)
			}
			_, err := config.Parse(st, hz)
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tc.key) {
				t.Fatalf("error %q does not name %q", err, tc.key)
			}
		})
	}
}

func TestSecretsNeverShown(t *testing.T) {
	st := "seatunnel:\n  engine:\n    checkpoint:\n      storage:\n        plugin-config:\n          storage.type: oss\n          oss.bucket: oss://b\n          fs.oss.accessKeyId: AKIDVISIBLEID\n          fs.oss.accessKeySecret: S3CR3T-VALUE-1\n"
	hz := "hazelcast:\n  map:\n    engine*:\n      map-store:\n        initial-mode: EAGER\n        properties:\n          type: hdfs\n          namespace: imap-relative\n          clusterName: c\n          storage.type: s3\n          fs.s3a.secret.key: S3CR3T-VALUE-2\n"
	c, err := config.Parse([]byte(st), nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := c.String(); strings.Contains(s, "S3CR3T-VALUE-1") || !strings.Contains(s, "******") {
		t.Fatalf("String shows a secret or redacts nothing:\n%s", s)
	}
	_, err = config.Parse([]byte(st), []byte(hz))
	if err == nil {
		t.Fatal("relative namespace accepted")
	}
	if strings.Contains(err.Error(), "S3CR3T") {
		t.Fatalf("error shows a secret: %v", err)
	}
}

func TestLoadDirectory(t *testing.T) {
	dir := t.TempDir()
	if c, err := config.Load(dir); err != nil || c.Hazelcast.ClusterName != "seatunnel" {
		t.Fatalf("empty directory: %+v, %v", c, err)
	}
	os.WriteFile(filepath.Join(dir, "hazelcast.yaml"), []byte("hazelcast:\n  cluster-name: [\n"), 0o644)
	_, err := config.Load(dir)
	if err == nil || !strings.Contains(err.Error(), "hazelcast.yaml") {
		t.Fatalf("broken file: err = %v, want it to name hazelcast.yaml", err)
	}
}

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("../testdata/config/*.yaml")
	for _, fn := range files {
		b, _ := os.ReadFile(fn)
		f.Add(b, b)
	}
	f.Fuzz(func(t *testing.T, st, hz []byte) {
		c, err := config.Parse(st, hz)
		if err == nil && c == nil {
			t.Fatal("nil config without error")
		}
	})
}
