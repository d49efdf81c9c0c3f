package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stowage/stowage/config"
)

func shippedDir(version string) string {
	return filepath.Join("..", "testdata", "config", "seatunnel-shipped", version)
}

func readShipped(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "config", "seatunnel-shipped", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// SeaTunnel's config folder, taken unchanged, loads in every role; the
// keys stowage acts on keep their values, and every other key present is
// listed once as having no effect, in file order.
func TestShippedConfigCurrent(t *testing.T) {
	c, err := config.Load(shippedDir("current"))
	if err != nil {
		t.Fatal(err)
	}
	e, h := c.Engine, c.Hazelcast
	want(t, "backup-count", e.BackupCount, 1)
	want(t, "classloader-cache-mode", e.ClassloaderCacheMode, true)
	want(t, "interval", e.Checkpoint.Interval, 10*time.Second)
	want(t, "max-retained", e.Checkpoint.Storage.MaxRetained, 3)
	want(t, "namespace", e.Checkpoint.Storage.Namespace, "/tmp/seatunnel/checkpoint_snapshot/")
	want(t, "fs.defaultFS", pc(c, "fs.defaultFS"), "file:///tmp/")
	want(t, "cluster-name", h.ClusterName, "seatunnel")
	want(t, "port", h.Network.Port, 5801)
	want(t, "auto-increment", h.Network.PortAutoIncrement, false)
	want(t, "tcp-ip", h.Network.TCPIPEnabled, true)
	want(t, "member-list", strings.Join(h.Network.MemberList, ","), "localhost")
	want(t, "logging", h.Properties["hazelcast.logging.type"], "log4j2")

	wantIgnored := []string{
		"seatunnel.engine.classloader-cache-mode",
		"seatunnel.engine.queue-type",
		"seatunnel.engine.print-execution-info-interval",
		"seatunnel.engine.print-job-metrics-info-interval",
		"seatunnel.engine.metrics-fetch-timeout-ms",
		"seatunnel.engine.slot-service",
		"seatunnel.engine.checkpoint.interval",
		"seatunnel.engine.checkpoint.timeout",
		"seatunnel.engine.telemetry",
		"seatunnel.engine.http.enable-http",
		"seatunnel.engine.http.port",
		"seatunnel.engine.http.enable-dynamic-port",
		"hazelcast.network.rest-api",
		"hazelcast.properties.hazelcast.invocation.max.retry.count",
		"hazelcast.properties.hazelcast.tcp.join.port.try.count",
		"hazelcast.properties.hazelcast.logging.type",
		"hazelcast.properties.hazelcast.operation.generic.thread.count",
	}
	if got := c.Ignored(); !slices.Equal(got, wantIgnored) {
		t.Fatalf("Ignored() =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantIgnored, "\n"))
	}
	// The list is a copy.
	c.Ignored()[0] = "x"
	want(t, "first ignored", c.Ignored()[0], wantIgnored[0])

	master, err := config.LoadRole(shippedDir("current"), config.RoleMaster)
	if err != nil {
		t.Fatal(err)
	}
	want(t, "master port", master.Hazelcast.Network.Port, 5801)
	want(t, "master members", strings.Join(master.Hazelcast.Network.MemberList, ","), "localhost:5801,localhost:5802")
	if ig := master.Ignored(); !slices.Contains(ig, "hazelcast.properties.hazelcast.shutdownhook.policy") || !slices.Contains(ig, "hazelcast.network.rest-api") {
		t.Errorf("master Ignored() = %v", ig)
	}

	// The worker file ships "50l" as a thread count: stowage does not read
	// that property, so the file is taken as it is.
	worker, err := config.LoadRole(shippedDir("current"), config.RoleWorker)
	if err != nil {
		t.Fatal(err)
	}
	want(t, "worker port", worker.Hazelcast.Network.Port, 5802)
	want(t, "worker members", strings.Join(worker.Hazelcast.Network.MemberList, ","), "localhost:5801,localhost:5802")
	want(t, "worker thread count as written", worker.Hazelcast.Properties["hazelcast.operation.generic.thread.count"], "50l")
	if !slices.Contains(worker.Ignored(), "hazelcast.properties.hazelcast.heartbeat.phiaccrual.failuredetector.min.std.dev.millis") {
		t.Errorf("worker Ignored() = %v", worker.Ignored())
	}

	cl, err := config.ParseClient(readShipped(t, "current/hazelcast-client.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want(t, "client members", strings.Join(cl.ClusterMembers, ","), "localhost:5801")
	want(t, "client logging", cl.Properties["hazelcast.logging.type"], "log4j2")
	if got, w := cl.Ignored(), []string{"hazelcast-client.properties", "hazelcast-client.connection-strategy"}; !slices.Equal(got, w) {
		t.Errorf("client Ignored() = %v, want %v", got, w)
	}
}

// The files SeaTunnel shipped before (no metrics-fetch-timeout-ms, the
// phi-accrual detector in hazelcast.yaml) load as well.
func TestShippedConfigEarlier(t *testing.T) {
	for _, role := range []string{config.RoleHybrid, config.RoleMaster, config.RoleWorker} {
		c, err := config.LoadRole(shippedDir("earlier"), role)
		if err != nil {
			t.Fatalf("role %q: %v", role, err)
		}
		if !slices.Contains(c.Ignored(), "hazelcast.properties.hazelcast.heartbeat.failuredetector.type") {
			t.Errorf("role %q: Ignored() = %v", role, c.Ignored())
		}
		if slices.Contains(c.Ignored(), "seatunnel.engine.metrics-fetch-timeout-ms") {
			t.Errorf("role %q lists a key its file does not have", role)
		}
	}
	if _, err := config.ParseClient(readShipped(t, "earlier/hazelcast-client.yaml")); err != nil {
		t.Fatal(err)
	}
}

// Every engine option SeaTunnel documents, and the Hazelcast keys next to
// the ones SeaTunnel uses, are accepted; what stowage acts on is read,
// the rest is listed, and secret values never appear in the list.
func TestDocumentedOptionsAccepted(t *testing.T) {
	c, err := config.Parse(readShipped(t, "documented-engine-options.yaml"), readShipped(t, "documented-hazelcast-keys.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want(t, "backup-count", c.Engine.BackupCount, 2)
	want(t, "queue-type", c.Engine.QueueType, "disruptor")
	want(t, "slot-num", c.Engine.SlotService.SlotNum, 20)
	want(t, "max-retained", c.Engine.Checkpoint.Storage.MaxRetained, 5)
	want(t, "port-count", c.Hazelcast.Network.PortCount, 10)
	want(t, "public-address", c.Hazelcast.Network.PublicAddress, "127.0.0.1:5801")
	mc, _ := c.Hazelcast.MapFor("engine_x")
	want(t, "initial-mode", mc.MapStore.InitialMode, "EAGER")

	ig := c.Ignored()
	for _, k := range []string{
		"seatunnel.engine.metrics-fetch-timeout-ms", "seatunnel.engine.jar-storage", "seatunnel.engine.http.context-path",
		"seatunnel.engine.event-report-http", "seatunnel.engine.coordinator-service", "seatunnel.engine.autoscaler",
		"seatunnel.engine.managed-source-runtime", "seatunnel.engine.openlineage", "seatunnel.engine.checkpoint.min-pause",
		"hazelcast.lite-member", "hazelcast.member-attributes", "hazelcast.network.ssl", "hazelcast.network.symmetric-encryption",
		"hazelcast.network.join.multicast", "hazelcast.security", "hazelcast.advanced-network",
		"hazelcast.network.join.tcp-ip.connection-timeout-seconds", "hazelcast.properties.hazelcast.partition.count",
		"hazelcast.map.engine*.in-memory-format", "hazelcast.map.engine*.map-store.factory-class-name",
	} {
		if !slices.Contains(ig, k) {
			t.Errorf("Ignored() lacks %s", k)
		}
	}
	for _, k := range []string{
		"seatunnel.engine.backup-count", "seatunnel.engine.checkpoint", "seatunnel.engine.checkpoint.storage",
		"hazelcast.cluster-name", "hazelcast.network.port", "hazelcast.network.join.tcp-ip",
		"hazelcast.properties.hazelcast.initial.min.cluster.size", "hazelcast.map.engine*.map-store.properties",
		"hazelcast.map.engine*.backup-count", "hazelcast.network.http.enable-http",
		"hazelcast.map.engine*.map-store.write-batch-size",
		"seatunnel.engine.http", "seatunnel.engine.http.enable-https", "seatunnel.engine.http.key-store-password",
	} {
		if slices.Contains(ig, k) {
			t.Errorf("Ignored() lists %s, which stowage acts on", k)
		}
	}
	if s := strings.Join(ig, " "); strings.Contains(s, "secret") || strings.Contains(s, "8443") {
		t.Errorf("Ignored() shows a value: %s", s)
	}
}

// A key that is neither SeaTunnel's nor Hazelcast's is an error naming the
// file, line and key with the nearest known key; a property one or two
// edits from a known one is taken for a misspelling.
func TestUnknownKeysSuggestNearest(t *testing.T) {
	engine := func(body string) string { return "seatunnel:\n  engine:\n" + body }
	for _, tc := range []struct {
		name, st, hz string
		contains     []string
	}{
		{"backup-cont", engine("    backup-cont: 1\n"), "", []string{"seatunnel.yaml:3: seatunnel.engine.backup-cont: unknown key (did you mean backup-count?)"}},
		{"metrics timeout without unit", engine("    metrics-fetch-timeout: 3000\n"), "", []string{"seatunnel.yaml:3:", "did you mean metrics-fetch-timeout-ms?"}},
		{"allocation strategy", engine("    slot-service:\n      slot-allocation-strategy: RANDOM\n"), "", []string{"seatunnel.yaml:4:", "seatunnel.engine.slot-service.slot-allocation-strategy", "did you mean slot-allocate-strategy?"}},
		{"https misspelt", engine("    http:\n      enable-htps: true\n"), "", []string{"seatunnel.engine.http.enable-htps", "did you mean enable-https?"}},
		{"not SeaTunnel's at all", engine("    frobnicate: 1\n"), "", []string{"seatunnel.yaml:3: seatunnel.engine.frobnicate: unknown key"}},
		{"rest-api", "", "hazelcast:\n  network:\n    rest-api:\n      enabeld: true\n", []string{"hazelcast.yaml:4:", "hazelcast.network.rest-api.enabeld", "did you mean enabled?"}},
		{"member-lists", "", "hazelcast:\n  network:\n    join:\n      tcp-ip:\n        member-lists: [a]\n", []string{"hazelcast.yaml:5:", "did you mean member-list?"}},
		{"property misspelt", "", "hazelcast:\n  properties:\n    hazelcast.initial.min.cluster.sise: 2\n", []string{"hazelcast.yaml:3: hazelcast.properties.hazelcast.initial.min.cluster.sise: unknown property (did you mean hazelcast.initial.min.cluster.size?)"}},
		{"property case", "", "hazelcast:\n  properties:\n    hazelcast.local.localaddress: 10.0.0.1\n", []string{"did you mean hazelcast.local.localAddress?"}},
		{"nested property misspelt", "", "hazelcast:\n  properties:\n    hazelcast:\n      logging.typ: log4j2\n", []string{"hazelcast.yaml:4:", "did you mean hazelcast.logging.type?"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := config.Parse([]byte(tc.st), []byte(tc.hz))
			if !errors.Is(err, config.ErrUnknownKey) {
				t.Fatalf("err = %v, want ErrUnknownKey", err)
			}
			for _, s := range tc.contains {
				if !strings.Contains(err.Error(), s) {
					t.Fatalf("error %q does not contain %q", err, s)
				}
			}
		})
	}
	_, err := config.ParseClient([]byte("hazelcast-client:\n  connection-strategy:\n    connection-retry:\n      cluster-connect-timeout-milis: 1\n"))
	if !errors.Is(err, config.ErrUnknownKey) || !strings.Contains(err.Error(), "hazelcast-client.yaml:4:") || !strings.Contains(err.Error(), "did you mean cluster-connect-timeout-millis?") {
		t.Fatalf("client: %v", err)
	}

	// A property of the user's own, far from every known name, is
	// accepted (Hazelcast accepts any) and listed.
	c, err := config.Parse(nil, []byte("hazelcast:\n  properties:\n    my.team.setting: x\n    hazelcast.partition.count: 271\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got, w := c.Ignored(), []string{"hazelcast.properties.my.team.setting", "hazelcast.properties.hazelcast.partition.count"}; !slices.Equal(got, w) {
		t.Fatalf("Ignored() = %v, want %v", got, w)
	}
}

// A security switch stowage does not implement is refused when on,
// naming the key and saying what to do instead; off it is accepted.
func TestSecuritySwitches(t *testing.T) {
	for _, tc := range []struct {
		name, st, hz, client, key, listed string
	}{
		{"hazelcast security", "", "hazelcast:\n  security:\n    enabled: %s\n", "", "hazelcast.yaml:3: hazelcast.security.enabled", "hazelcast.security"},
		{"symmetric encryption", "", "hazelcast:\n  network:\n    symmetric-encryption:\n      enabled: %s\n      password: pw-secret\n", "", "hazelcast.yaml:4: hazelcast.network.symmetric-encryption.enabled", "hazelcast.network.symmetric-encryption"},
		{"advanced-network TLS", "", "hazelcast:\n  advanced-network:\n    member-server-socket-endpoint-config:\n      ssl:\n        enabled: %s\n", "", "hazelcast.yaml:5: hazelcast.advanced-network.member-server-socket-endpoint-config.ssl.enabled", "hazelcast.advanced-network"},
		{"client TLS", "", "", "hazelcast-client:\n  network:\n    ssl:\n      enabled: %s\n", "hazelcast-client.yaml:4: hazelcast-client.network.ssl.enabled", "hazelcast-client.network.ssl"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parse := func(v string) ([]string, error) {
				f := func(s string) []byte {
					if s == "" {
						return nil
					}
					return []byte(strings.Replace(s, "%s", v, 1))
				}
				if tc.client != "" {
					c, err := config.ParseClient(f(tc.client))
					if err != nil {
						return nil, err
					}
					return c.Ignored(), nil
				}
				c, err := config.Parse(f(tc.st), f(tc.hz))
				if err != nil {
					return nil, err
				}
				return c.Ignored(), nil
			}
			for _, on := range []string{"true", "yes", "On"} {
				_, err := parse(on)
				if !errors.Is(err, config.ErrUnsupported) {
					t.Fatalf("%s: err = %v, want ErrUnsupported", on, err)
				}
				msg := err.Error()
				for _, s := range []string{tc.key + ": true is not supported yet", "set it to false", "firewall the member port"} {
					if !strings.Contains(msg, s) {
						t.Fatalf("error %q does not contain %q", msg, s)
					}
				}
				if strings.Contains(msg, "secret") {
					t.Fatalf("error shows a secret: %s", msg)
				}
			}
			ig, err := parse("false")
			if err != nil {
				t.Fatalf("turned off: %v", err)
			}
			if !slices.Contains(ig, tc.listed) {
				t.Fatalf("turned off: Ignored() = %v, want %s listed", ig, tc.listed)
			}
			if _, err := parse("maybe"); !errors.Is(err, config.ErrType) {
				t.Fatalf("a switch that is not a boolean: err = %v, want ErrType", err)
			}
		})
	}
}

func TestLoadRole(t *testing.T) {
	if _, err := config.LoadRole(shippedDir("current"), "coordinator"); !errors.Is(err, config.ErrInvalid) || !strings.Contains(err.Error(), `"coordinator"`) {
		t.Fatalf("unknown role: %v", err)
	}
	dir := t.TempDir()
	if _, err := config.LoadRole(dir, config.RoleWorker); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, config.WorkerFile)+": missing") {
		t.Fatalf("missing worker file: %v", err)
	}
	bad := "hazelcast:\n  network:\n    port:\n      prot: 5802\n"
	if err := os.WriteFile(filepath.Join(dir, config.WorkerFile), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := config.LoadRole(dir, config.RoleWorker)
	if !errors.Is(err, config.ErrUnknownKey) || !strings.Contains(err.Error(), filepath.Join(dir, config.WorkerFile)+":4: hazelcast.network.port.prot") {
		t.Fatalf("error in the worker file: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, config.MasterFile), []byte("map:\n  m: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := config.LoadRole(dir, config.RoleMaster); err == nil || !strings.Contains(err.Error(), "hazelcast-master.yaml holds one block") {
		t.Fatalf("top-level key in the master file: %v", err)
	}
	if c := config.Default(); c.Ignored() != nil {
		t.Fatalf("Default().Ignored() = %v", c.Ignored())
	}
}
