package config_test

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stowage/stowage/config"
)

func TestDefault(t *testing.T) {
	a, b := config.Default(), config.Default()
	a.Hazelcast.Properties["x"] = "y"
	a.Engine.Checkpoint.Storage.PluginConfig["x"] = "y"
	if len(b.Hazelcast.Properties) != 0 || len(b.Engine.Checkpoint.Storage.PluginConfig) != 0 {
		t.Fatal("Default shares maps between calls")
	}
	d := config.Default()
	if err := d.Validate(); err != nil {
		t.Fatalf("Default does not validate: %v", err)
	}
	want(t, "backup-count", d.Engine.BackupCount, 1)
	want(t, "history-job-expire-minutes", d.Engine.HistoryJobExpireMinutes, 1440)
	want(t, "interval", d.Engine.Checkpoint.Interval, 300*time.Second)
	want(t, "timeout", d.Engine.Checkpoint.Timeout, 30*time.Second)
	want(t, "storage type", d.Engine.Checkpoint.Storage.Type, "hdfs")
	want(t, "max-retained", d.Engine.Checkpoint.Storage.MaxRetained, 20)
	want(t, "namespace", d.Engine.Checkpoint.Storage.Namespace, "/seatunnel/checkpoint/")
	want(t, "cluster-name", d.Hazelcast.ClusterName, "seatunnel")
	want(t, "port", d.Hazelcast.Network.Port, 5801)
	want(t, "maps", len(d.Hazelcast.Maps), 0)

	p, err := config.Parse(nil, []byte("# nothing but a comment\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p.Engine, d.Engine) || !reflect.DeepEqual(p.Hazelcast, d.Hazelcast) {
		t.Fatalf("empty files differ from Default:\n%+v\n%+v", p, d)
	}
}

func TestValuesAndYAMLForms(t *testing.T) {
	st := `seatunnel:
  engine:
    backup-count: 2
    queue-type: DISRUPTOR
    classloader-cache-mode: yes
    http: {enable-http: true, port: 8080}
    telemetry:
      metric:
        enabled: false
    checkpoint:
      interval: 6000
      storage:
        type: LocalFile
        plugin-config:
          namespace: /ck/
          storage.type: hdfs
          fs:
            defaultFS: hdfs://nn:9000
          seatunnel.hadoop.dfs.ha.namenodes.ns: [nn1, nn2]
`
	hz := `hazelcast:
  cluster-name: prod
  instance-name: a
  jet: {enabled: true}
  network:
    rest-api: {enabled: true}
    join:
      multicast: {enabled: false}
      tcp-ip:
        enabled: true
        member-list: 10.0.0.1, 10.0.0.2:5802
    port: 5901
  properties:
    hazelcast.initial.min.cluster.size: 2
  map:
    base: &store
      backup-count: 2
      map-store:
        enabled: true
        initial-mode: eager
        properties:
          type: hdfs
          namespace: /tmp/imap
          clusterName: c1
          fs.defaultFS: file:///
    engine*:
      <<: *store
      async-backup-count: 1
`
	c, err := config.Parse([]byte(st), []byte(hz))
	if err != nil {
		t.Fatal(err)
	}
	e := c.Engine
	want(t, "backup-count", e.BackupCount, 2)
	want(t, "queue-type", e.QueueType, "disruptor")
	want(t, "classloader-cache-mode", e.ClassloaderCacheMode, true)
	want(t, "interval", e.Checkpoint.Interval, 6*time.Second)
	want(t, "storage type", e.Checkpoint.Storage.Type, "localfile")
	want(t, "namespace", e.Checkpoint.Storage.Namespace, "/ck/")
	want(t, "plugin namespace", pc(c, "namespace"), "/ck/")
	want(t, "nested fs.defaultFS", pc(c, "fs.defaultFS"), "hdfs://nn:9000")
	want(t, "list", pc(c, "seatunnel.hadoop.dfs.ha.namenodes.ns"), "nn1,nn2")
	h := c.Hazelcast
	want(t, "cluster-name", h.ClusterName, "prod")
	want(t, "port", h.Network.Port, 5901)
	want(t, "members", strings.Join(h.Network.MemberList, "|"), "10.0.0.1|10.0.0.2:5802")
	want(t, "property", h.Properties["hazelcast.initial.min.cluster.size"], "2")
	mc, ok := h.MapFor("engine_jobInfo")
	if !ok || mc.MapStore == nil {
		t.Fatalf("engine_jobInfo: %+v", mc)
	}
	want(t, "merged backup-count", mc.BackupCount, 2)
	want(t, "own async-backup-count", mc.AsyncBackupCount, 1)
	want(t, "initial-mode", mc.MapStore.InitialMode, "EAGER")
	want(t, "clusterName", mc.MapStore.ClusterName(), "c1")
}

func TestNamespaceSlashIsAddedWithAWarning(t *testing.T) {
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	defer slog.SetDefault(old)
	st := "seatunnel:\n  engine:\n    checkpoint:\n      storage:\n        plugin-config:\n          namespace: /tmp/seatunnel/checkpoint_snapshot\n"
	c, err := config.Parse([]byte(st), nil)
	if err != nil {
		t.Fatal(err)
	}
	want(t, "namespace", c.Engine.Checkpoint.Storage.Namespace, "/tmp/seatunnel/checkpoint_snapshot/")
	if !strings.Contains(buf.String(), "level=WARN") || !strings.Contains(buf.String(), "plugin-config.namespace") {
		t.Fatalf("no warning naming the key was logged: %q", buf.String())
	}
}

func TestDecodeErrors(t *testing.T) {
	engine := func(body string) string { return "seatunnel:\n  engine:\n" + body }
	cases := []struct {
		name     string
		st, hz   string
		kind     error
		contains []string
	}{
		{"top-level seatunnel.yaml", "seatunel:\n  engine: {}\n", "", config.ErrUnknownKey, []string{"seatunnel.yaml:1:", "seatunel: unknown top-level key"}},
		{"top-level hazelcast.yaml", "", "map:\n  engine*: {}\n", config.ErrUnknownKey, []string{"hazelcast.yaml:1:", "map: unknown top-level key", "under hazelcast:"}},
		{"under seatunnel", "seatunnel:\n  engin: {}\n", "", config.ErrUnknownKey, []string{"seatunnel.engin: unknown key (did you mean engine?)"}},
		{"engine key, suggestion", engine("    backup-cont: 1\n"), "", config.ErrUnknownKey, []string{"seatunnel.yaml:3:", "seatunnel.engine.backup-cont: unknown key (did you mean backup-count?)"}},
		{"checkpoint key", engine("    checkpoint:\n      intervall: 5\n"), "", config.ErrUnknownKey, []string{"seatunnel.engine.checkpoint.intervall", "did you mean interval?"}},
		{"storage key", engine("    checkpoint:\n      storage:\n        max-retain: 5\n"), "", config.ErrUnknownKey, []string{"seatunnel.engine.checkpoint.storage.max-retain"}},
		{"ignored block is still checked", engine("    http:\n      enable-htp: true\n"), "", config.ErrUnknownKey, []string{"seatunnel.engine.http.enable-htp"}},
		{"slot-service key", engine("    slot-service:\n      slots: 3\n"), "", config.ErrUnknownKey, []string{"seatunnel.engine.slot-service.slots"}},
		{"hazelcast section", "", "hazelcast:\n  netwrok: {}\n", config.ErrUnknownKey, []string{"hazelcast.netwrok", "did you mean network?"}},
		{"map-store misspelt", "", "hazelcast:\n  map:\n    engine*:\n      map-stor:\n        enabled: true\n", config.ErrUnknownKey, []string{"hazelcast.yaml:4:", "hazelcast.map.engine*.map-stor"}},
		{"map-store key", "", "hazelcast:\n  map:\n    m:\n      map-store:\n        initial-mod: EAGER\n", config.ErrUnknownKey, []string{"hazelcast.map.m.map-store.initial-mod"}},
		{"tcp-ip key", "", "hazelcast:\n  network:\n    join:\n      tcp-ip:\n        member: [a]\n", config.ErrUnknownKey, []string{"hazelcast.network.join.tcp-ip.member"}},
		{"not a number", engine("    backup-count: two\n"), "", config.ErrType, []string{"seatunnel.yaml:3:", "seatunnel.engine.backup-count", `"two" is not a whole number`}},
		{"huge number", engine("    checkpoint:\n      interval: 99999999999999999999\n"), "", config.ErrType, []string{"seatunnel.engine.checkpoint.interval"}},
		{"not a bool", engine("    classloader-cache-mode: maybe\n"), "", config.ErrType, []string{"classloader-cache-mode", "not true or false"}},
		{"mapping for a value", engine("    backup-count: {a: 1}\n"), "", config.ErrType, []string{"seatunnel.engine.backup-count", "want a single value"}},
		{"value for a mapping", engine("    checkpoint: 5\n"), "", config.ErrType, []string{"seatunnel.engine.checkpoint", "want a mapping"}},
		{"port not a number", "", "hazelcast:\n  network:\n    port:\n      port: x\n", config.ErrType, []string{"hazelcast.network.port.port"}},
		{"root is a list", "- a\n", "", config.ErrType, []string{"seatunnel.yaml:1:", "want a mapping"}},
		{"key given twice", engine("    backup-count: 1\n    backup-count: 2\n"), "", config.ErrSyntax, []string{"seatunnel.yaml:4:", "seatunnel.engine.backup-count", "given twice (first at line 3)"}},
		{"flattened key twice", engine("    checkpoint:\n      storage:\n        plugin-config:\n          fs.defaultFS: a\n          fs:\n            defaultFS: b\n"), "", config.ErrSyntax, []string{"fs.defaultFS given twice"}},
		{"broken YAML", "seatunnel:\n  engine: [\n", "", config.ErrSyntax, []string{"seatunnel.yaml:", "not valid YAML"}},
		{"tab indentation", "", "hazelcast:\n\tcluster-name: x\n", config.ErrSyntax, []string{"hazelcast.yaml:2:", "not valid YAML"}},
		{"two documents", "", "hazelcast: {}\n---\nhazelcast: {}\n", config.ErrSyntax, []string{"more than one YAML document"}},
		{"recursive alias", engine("    checkpoint:\n      storage:\n        plugin-config: &a\n          x: *a\n"), "", config.ErrSyntax, []string{"seatunnel.engine.checkpoint.storage.plugin-config"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := config.Parse([]byte(tc.st), []byte(tc.hz))
			if err == nil {
				t.Fatal("accepted")
			}
			if !errors.Is(err, tc.kind) {
				t.Fatalf("error %q is not %v", err, tc.kind)
			}
			var ce *config.Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %T is not a *config.Error", err)
			}
			for _, s := range tc.contains {
				if !strings.Contains(err.Error(), s) {
					t.Fatalf("error %q does not contain %q", err, s)
				}
			}
		})
	}
}

// A few hundred bytes of anchors must not expand into billions of values.
func TestAliasExpansionIsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("seatunnel:\n  engine:\n    checkpoint:\n      storage:\n        plugin-config:\n")
	b.WriteString("          l0: &l0 {a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8, i: 9}\n")
	for i := 1; i < 10; i++ {
		fmt.Fprintf(&b, "          l%d: &l%d {", i, i)
		for j := 0; j < 9; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "k%d: *l%d", j, i-1)
		}
		b.WriteString("}\n")
	}
	_, err := config.Parse([]byte(b.String()), nil)
	if !errors.Is(err, config.ErrSyntax) || !strings.Contains(err.Error(), "alias expansion") {
		t.Fatalf("err = %v, want the expansion limit", err)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	c, err := config.Load(dir)
	if err != nil {
		t.Fatalf("empty directory: %v", err)
	}
	want(t, "cluster-name", c.Hazelcast.ClusterName, "seatunnel")

	st := filepath.Join(dir, "seatunnel.yaml")
	if err := os.WriteFile(st, []byte("seatunnel:\n  engine:\n    backup-count: 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, err = config.Load(dir); err != nil || c.Engine.BackupCount != 3 {
		t.Fatalf("seatunnel.yaml only: %v, %v", c, err)
	}
	hz := filepath.Join(dir, "hazelcast.yaml")
	if err := os.WriteFile(hz, []byte("hazelcast:\n  cluster-name: a\n  network:\n    port:\n      port: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = config.Load(dir)
	if err == nil || !strings.Contains(err.Error(), hz+":") || !errors.Is(err, config.ErrSyntax) {
		t.Fatalf("broken file: err = %v, want it to name %s and its line", err, hz)
	}
	if err := os.WriteFile(hz, []byte("hazelcast:\n  map:\n    m:\n      backup-count: 9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = config.Load(dir)
	if err == nil || !strings.Contains(err.Error(), hz+":4: hazelcast.map.m.backup-count:") {
		t.Fatalf("validation error %v does not point at %s:4", err, hz)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub", "seatunnel.yaml"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := config.Load(filepath.Join(dir, "sub")); err == nil {
		t.Fatal("a directory named seatunnel.yaml was read as a file")
	}
}

func TestParseClient(t *testing.T) {
	c, err := config.ParseClient(nil)
	if err != nil || c.ClusterName != "seatunnel" || len(c.ClusterMembers) != 0 {
		t.Fatalf("empty: %+v, %v", c, err)
	}
	_, err = config.ParseClient([]byte("hazelcast-client:\n  netwrk: {}\n"))
	if !errors.Is(err, config.ErrUnknownKey) || !strings.Contains(err.Error(), "hazelcast-client.netwrk") {
		t.Fatalf("unknown key: %v", err)
	}
	_, err = config.ParseClient([]byte("hazelcast:\n  cluster-name: x\n"))
	if !errors.Is(err, config.ErrUnknownKey) {
		t.Fatalf("member file as client file: %v", err)
	}
}
