package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stowage/stowage/config"
)

const pluginConfig = "seatunnel.engine.checkpoint.storage.plugin-config"

// nest puts a snippet under a dotted key path, the way the documents
// present their fragments.
func nest(fragment []byte, under string) []byte {
	if under == "" {
		return fragment
	}
	var b strings.Builder
	keys := strings.Split(under, ".")
	// plugin-config holds dotted keys of its own; the path here never does
	// beyond that, so rejoin the tail.
	if strings.HasPrefix(under, pluginConfig) {
		keys = append(strings.Split(strings.TrimSuffix(pluginConfig, ".plugin-config"), "."), "plugin-config")
	}
	for i, k := range keys {
		b.WriteString(strings.Repeat("  ", i) + k + ":\n")
	}
	pad := strings.Repeat("  ", len(keys))
	for _, l := range strings.SplitAfter(string(fragment), "\n") {
		if l != "" {
			b.WriteString(pad + l)
		}
	}
	return []byte(b.String())
}

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "config", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func pc(c *config.Config, k string) string { return c.Engine.Checkpoint.Storage.PluginConfig[k] }

type example struct {
	file  string
	kind  string // seatunnel, hazelcast or client
	under string // where a fragment belongs
	// invalid, when set, is the one key Validate must refuse (a
	// placeholder value in the document); decoding must still succeed.
	invalid string
	check   func(t *testing.T, c *config.Config)
}

func want[T comparable](t *testing.T, what string, got, w T) {
	t.Helper()
	if got != w {
		t.Errorf("%s = %v, want %v", what, got, w)
	}
}

var examples = []example{
	{file: "checkpoint-01-storage-template.yaml", kind: "seatunnel", check: func(t *testing.T, c *config.Config) {
		want(t, "type", c.Engine.Checkpoint.Storage.Type, "hdfs")
		want(t, "namespace", c.Engine.Checkpoint.Storage.Namespace, config.DefaultCheckpointNamespace)
		want(t, "K1", pc(c, "K1"), "V1")
		want(t, "K2", pc(c, "K2"), "V2")
		if _, ok := c.Engine.Checkpoint.Storage.PluginConfig["namespace"]; ok {
			t.Error("an empty namespace: must be left out of plugin-config")
		}
	}},
	{file: "checkpoint-02-oss-static-keys.yaml", kind: "seatunnel", check: func(t *testing.T, c *config.Config) {
		want(t, "interval", c.Engine.Checkpoint.Interval, 6*time.Second)
		want(t, "timeout", c.Engine.Checkpoint.Timeout, 7*time.Second)
		want(t, "max-retained", c.Engine.Checkpoint.Storage.MaxRetained, 3)
		want(t, "storage.type", pc(c, "storage.type"), "oss")
		want(t, "oss.bucket", pc(c, "oss.bucket"), "oss://your-bucket")
		want(t, "fs.oss.endpoint", pc(c, "fs.oss.endpoint"), "endpoint address")
	}},
	{file: "checkpoint-03-oss-env-credentials.yaml", kind: "seatunnel", check: func(t *testing.T, c *config.Config) {
		want(t, "namespace", c.Engine.Checkpoint.Storage.Namespace, "/seatunnel/checkpoint/")
		want(t, "provider", pc(c, "fs.oss.credentials.provider"), "com.aliyun.oss.common.auth.EnvironmentVariableCredentialsProvider")
	}},
	{file: "checkpoint-04-cos-static-keys.yaml", kind: "seatunnel", check: func(t *testing.T, c *config.Config) {
		want(t, "cos.bucket", pc(c, "cos.bucket"), "cosn://your-bucket")
		want(t, "region", pc(c, "fs.cosn.bucket.region"), "your-region")
	}},
	{file: "checkpoint-05-cos-env-credentials-fragment.yaml", kind: "seatunnel", under: pluginConfig, check: func(t *testing.T, c *config.Config) {
		want(t, "storage.type", pc(c, "storage.type"), "cos")
		want(t, "provider", pc(c, "fs.cosn.credentials.provider"), "org.apache.hadoop.fs.cosn.auth.EnvironmentVariableCredentialsProvider")
	}},
	{file: "checkpoint-06-gcs-keyfile.yaml", kind: "seatunnel", check: func(t *testing.T, c *config.Config) {
		want(t, "gcs.bucket", pc(c, "gcs.bucket"), "gs://your-bucket")
		want(t, "keyfile", pc(c, "fs.gs.auth.service.account.json.keyfile"), "/path/to/service-account-key.json")
	}},
	{file: "checkpoint-07-gcs-adc.yaml", kind: "seatunnel", check: func(t *testing.T, c *config.Config) {
		want(t, "storage.type", pc(c, "storage.type"), "gcs")
		want(t, "keys", len(c.Engine.Checkpoint.Storage.PluginConfig), 2)
	}},
	{file: "checkpoint-08-s3-static-keys.yaml", kind: "seatunnel", check: func(t *testing.T, c *config.Config) {
		want(t, "s3.bucket", pc(c, "s3.bucket"), "s3a://your-bucket")
		want(t, "access key", pc(c, "fs.s3a.access.key"), "your-access-key")
	}},
	{file: "checkpoint-09-s3-env-credentials-fragment.yaml", kind: "seatunnel", under: pluginConfig, check: func(t *testing.T, c *config.Config) {
		want(t, "provider", pc(c, "fs.s3a.aws.credentials.provider"), "com.amazonaws.auth.EnvironmentVariableCredentialsProvider")
	}},
	{file: "checkpoint-10-s3-instance-profile.yaml", kind: "seatunnel", check: func(t *testing.T, c *config.Config) {
		want(t, "provider", pc(c, "fs.s3a.aws.credentials.provider"), "com.amazonaws.auth.InstanceProfileCredentialsProvider")
		want(t, "endpoint", pc(c, "fs.s3a.endpoint"), "your-endpoint")
	}},
	{file: "checkpoint-11-s3-container-credentials.yaml", kind: "seatunnel", check: func(t *testing.T, c *config.Config) {
		want(t, "provider", pc(c, "fs.s3a.aws.credentials.provider"), "com.amazonaws.auth.ContainerCredentialsProvider")
	}},
	{file: "checkpoint-12-hdfs-kerberos.yaml", kind: "seatunnel", check: func(t *testing.T, c *config.Config) {
		want(t, "fs.defaultFS", pc(c, "fs.defaultFS"), "hdfs://localhost:9000")
		want(t, "principal", pc(c, "kerberosPrincipal"), "your-kerberos-principal")
		want(t, "keytab", pc(c, "kerberosKeytabFilePath"), "your-kerberos-keytab")
		want(t, "keys", len(c.Engine.Checkpoint.Storage.PluginConfig), 4) // the "// ..." line has no value
	}},
	{file: "checkpoint-13-hdfs-ha.yaml", kind: "seatunnel", check: func(t *testing.T, c *config.Config) {
		want(t, "namenodes", pc(c, "seatunnel.hadoop.dfs.ha.namenodes.usdp-bing"), "nn1,nn2")
		want(t, "nn2", pc(c, "seatunnel.hadoop.dfs.namenode.rpc-address.usdp-bing.nn2"), "usdp-bing-nn2:8020")
	}},
	{file: "checkpoint-14-localfile.yaml", kind: "seatunnel", check: func(t *testing.T, c *config.Config) {
		want(t, "fs.defaultFS", pc(c, "fs.defaultFS"), "file:///")
	}},
	{file: "checkpoint-15-cache-hdfs.yaml", kind: "seatunnel", check: func(t *testing.T, c *config.Config) {
		want(t, "disable.cache", pc(c, "disable.cache"), "false")
		want(t, "fs.defaultFS", pc(c, "fs.defaultFS"), "hdfs:///")
	}},
	{file: "checkpoint-16-cache-localfile.yaml", kind: "seatunnel", check: func(t *testing.T, c *config.Config) {
		want(t, "disable.cache", pc(c, "disable.cache"), "false")
		want(t, "fs.defaultFS", pc(c, "fs.defaultFS"), "file:///")
	}},
	{file: "hybrid-01-backup-count.yaml", kind: "seatunnel", check: func(t *testing.T, c *config.Config) {
		want(t, "backup-count", c.Engine.BackupCount, 1)
	}},
	{file: "hybrid-02-dynamic-slot.yaml", kind: "seatunnel", check: func(t *testing.T, c *config.Config) {
		want(t, "dynamic-slot", c.Engine.SlotService.DynamicSlot, true)
	}},
	{file: "hybrid-03-static-slot.yaml", kind: "seatunnel", check: func(t *testing.T, c *config.Config) {
		want(t, "dynamic-slot", c.Engine.SlotService.DynamicSlot, false)
		want(t, "slot-num", c.Engine.SlotService.SlotNum, 20)
	}},
	{file: "hybrid-04-checkpoint.yaml", kind: "seatunnel", check: func(t *testing.T, c *config.Config) {
		want(t, "print-execution-info-interval", c.Engine.PrintExecutionInfoInterval, 10)
		want(t, "interval", c.Engine.Checkpoint.Interval, 300*time.Second)
		want(t, "timeout", c.Engine.Checkpoint.Timeout, 10*time.Second)
	}},
	{file: "hybrid-05-history-job-expire.yaml", kind: "seatunnel", check: func(t *testing.T, c *config.Config) {
		want(t, "history-job-expire-minutes", c.Engine.HistoryJobExpireMinutes, 1440)
	}},
	{file: "hybrid-06-classloader-cache.yaml", kind: "seatunnel", check: func(t *testing.T, c *config.Config) {
		want(t, "classloader-cache-mode", c.Engine.ClassloaderCacheMode, true)
	}},
	{file: "hybrid-07-hazelcast-tcp-ip.yaml", kind: "hazelcast", check: func(t *testing.T, c *config.Config) {
		h := c.Hazelcast
		want(t, "cluster-name", h.ClusterName, "seatunnel")
		want(t, "tcp-ip.enabled", h.Network.TCPIPEnabled, true)
		want(t, "member-list", strings.Join(h.Network.MemberList, ","), "hostname1")
		want(t, "port", h.Network.Port, 5801)
		want(t, "auto-increment", h.Network.PortAutoIncrement, false)
		want(t, "logging", h.Properties["hazelcast.logging.type"], "log4j2")
		want(t, "maps", len(h.Maps), 0)
	}},
	{file: "hybrid-08-imap-hdfs-fragment.yaml", kind: "hazelcast", under: "hazelcast", check: func(t *testing.T, c *config.Config) {
		mc, ok := c.Hazelcast.MapFor("engine_runningJobInfo")
		if !ok || mc.MapStore == nil {
			t.Fatalf("engine_runningJobInfo has no map store: %+v", mc)
		}
		ms := mc.MapStore
		want(t, "enabled", ms.Enabled, true)
		want(t, "initial-mode", ms.InitialMode, "EAGER")
		want(t, "factory", ms.FactoryClassName, "org.apache.seatunnel.engine.server.persistence.FileMapStoreFactory")
		want(t, "type", ms.StoreType(), "hdfs")
		want(t, "namespace", ms.Namespace(), "/tmp/seatunnel/imap")
		want(t, "clusterName", ms.ClusterName(), "seatunnel-cluster")
		want(t, "fs.defaultFS", ms.Properties["fs.defaultFS"], "hdfs://localhost:9000")
	}},
	{file: "hybrid-09-imap-localfile-fragment.yaml", kind: "hazelcast", under: "hazelcast", check: func(t *testing.T, c *config.Config) {
		mc, _ := c.Hazelcast.MapFor("engine_pendingJob")
		want(t, "fs.defaultFS", mc.MapStore.Properties["fs.defaultFS"], "file:///")
	}},
	{file: "hybrid-10-imap-oss-fragment.yaml", kind: "hazelcast", under: "hazelcast", invalid: "hazelcast.map.engine*.map-store.properties.block.size"},
	{file: "hybrid-11-hazelcast-client.yaml", kind: "client"},
}

// TestReferenceExamples loads every YAML example of the reference
// documents, as testdata/config holds them.
func TestReferenceExamples(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "config", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(examples) {
		t.Fatalf("%d fixtures on disk, %d in the table: every fixture needs a row", len(files), len(examples))
	}
	for _, ex := range examples {
		t.Run(strings.TrimSuffix(ex.file, ".yaml"), func(t *testing.T) {
			b := nest(readFixture(t, ex.file), ex.under)
			if ex.kind == "client" {
				c, err := config.ParseClient(b)
				if err != nil {
					t.Fatal(err)
				}
				want(t, "cluster-name", c.ClusterName, "seatunnel")
				want(t, "cluster-members", strings.Join(c.ClusterMembers, ","), "hostname1:5801")
				want(t, "logging", c.Properties["hazelcast.logging.type"], "log4j2")
				return
			}
			var c *config.Config
			if ex.kind == "seatunnel" {
				c, err = config.Parse(b, nil)
			} else {
				c, err = config.Parse(nil, b)
			}
			if ex.invalid != "" {
				checkOnlyInvalid(t, err, ex.invalid)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ex.check != nil {
				ex.check(t, c)
			}
		})
	}
}

// checkOnlyInvalid asserts that err is a validation error about key alone:
// the document decoded, and only a placeholder value was refused.
func checkOnlyInvalid(t *testing.T, err error, key string) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted; want %s refused", key)
	}
	for _, kind := range []error{config.ErrSyntax, config.ErrUnknownKey, config.ErrType} {
		if errors.Is(err, kind) {
			t.Fatalf("decoding failed (%v): %v", kind, err)
		}
	}
	if !errors.Is(err, config.ErrInvalid) || !strings.Contains(err.Error(), key+":") {
		t.Fatalf("error %q does not name %s", err, key)
	}
	if n := strings.Count(err.Error(), "stowage/config:"); n != 1 {
		t.Fatalf("want one error, got %d: %v", n, err)
	}
}

// The OSS IMap example is a template: with a number in place of its
// "block size(bytes)" placeholder it is valid as it stands.
func TestOSSExampleWithRealBlockSize(t *testing.T) {
	b := nest(readFixture(t, "hybrid-10-imap-oss-fragment.yaml"), "hazelcast")
	b = []byte(strings.Replace(string(b), "block size(bytes)", "1048576", 1))
	c, err := config.Parse(nil, b)
	if err != nil {
		t.Fatal(err)
	}
	mc, _ := c.Hazelcast.MapFor("engine_x")
	n, err := mc.MapStore.BlockSize()
	if err != nil || n != 1048576 {
		t.Fatalf("BlockSize = %d, %v", n, err)
	}
	want(t, "storage.type", mc.MapStore.Properties["storage.type"], "oss")
	want(t, "oss.bucket", mc.MapStore.Properties["oss.bucket"], "oss://bucket name/")
}

// TestLoadReferenceDirectory loads a directory made of two examples.
func TestLoadReferenceDirectory(t *testing.T) {
	dir := t.TempDir()
	hz := nest(readFixture(t, "hybrid-08-imap-hdfs-fragment.yaml"), "hazelcast")
	if err := os.WriteFile(filepath.Join(dir, "seatunnel.yaml"), readFixture(t, "checkpoint-13-hdfs-ha.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "hazelcast.yaml"), hz, 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := config.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	want(t, "fs.defaultFS", pc(c, "fs.defaultFS"), "hdfs://usdp-bing")
	want(t, "maps", len(c.Hazelcast.Maps), 1)
	want(t, "pattern", c.Hazelcast.Maps[0].Pattern, "engine*")
}
