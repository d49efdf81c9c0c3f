package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stowage/stowage/config"
)

// shippedFiles are the files of SeaTunnel's config folder that a member
// or client reads.
var shippedFiles = []string{config.SeatunnelFile, config.HazelcastFile, config.MasterFile, config.WorkerFile, config.ClientFile}

// writeShippedConfig writes SeaTunnel's shipped configuration
// (testdata/config/seatunnel-shipped/current) into dir with only its
// ports and paths adapted: 5801 and 5802 become base and base+1,
// localhost 127.0.0.1, and the checkpoint directory one below dataDir.
// edit, when not nil, changes seatunnel.yaml further.
func writeShippedConfig(t *testing.T, dir string, base int, dataDir string, edit func(string) string) {
	t.Helper()
	r := strings.NewReplacer(
		"5801", strconv.Itoa(base),
		"5802", strconv.Itoa(base+1),
		"localhost", "127.0.0.1",
		"/tmp/seatunnel/checkpoint_snapshot", filepath.Join(dataDir, "checkpoint_snapshot"),
		"file:///tmp/", "file:///",
	)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range shippedFiles {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "config", "seatunnel-shipped", "current", name))
		if err != nil {
			t.Fatal(err)
		}
		s := r.Replace(string(b))
		if name == config.SeatunnelFile && edit != nil {
			s = edit(s)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// showLogs prints the tail of each log when the test failed.
func showLogs(t *testing.T, paths ...string) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, p := range paths {
			b, _ := os.ReadFile(p)
			if len(b) > 4000 {
				b = b[len(b)-4000:]
			}
			t.Logf("%s (tail):\n%s", p, b)
		}
	})
}

// noEffectLine returns the one log line that lists the keys without
// effect, failing unless there is exactly one.
func noEffectLine(t *testing.T, logPath string) string {
	t.Helper()
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "accepted, no effect: ") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 {
		t.Fatalf("%d log lines list the keys without effect, want 1:\n%s", len(lines), b)
	}
	if !strings.Contains(lines[0], "level=INFO") {
		t.Fatalf("the keys without effect are not logged at INFO: %s", lines[0])
	}
	return lines[0]
}

func putGet(t *testing.T, writeAddr, readAddr, key, value string) {
	t.Helper()
	url := func(addr string) string { return "http://" + addr + "/v1/maps/engine_runningJobInfo/entries/" + key }
	req, _ := http.NewRequest(http.MethodPut, url(writeAddr), strings.NewReader(value))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("PUT %s through %s: %s", key, writeAddr, resp.Status)
	}
	resp, err = http.Get(url(readAddr))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != value {
		t.Fatalf("GET %s through %s = %s %q, want %q", key, readAddr, resp.Status, body, value)
	}
}

// A member starts from SeaTunnel's config folder taken unchanged (ports
// and paths aside): seatunnel.yaml with metrics-fetch-timeout-ms and
// hazelcast.yaml with its tuning properties. The keys stowage does not act
// on are logged once, in one line at INFO, and those it acts on are not.
func TestNodeFromShippedConfig(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	base, err := freeMemberPorts(3)
	if err != nil {
		t.Fatal(err)
	}
	cfgDir := filepath.Join(dir, "config")
	writeShippedConfig(t, cfgDir, base, filepath.Join(dir, "data"), nil)
	logPath := filepath.Join(dir, "node.log")
	showLogs(t, logPath)

	n, err := startNode(ctx, cfgDir, logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer n.kill()
	if _, err := n.waitHealthy(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	ci, err := benchClusterInfoOf(ctx, n.addr)
	if err != nil {
		t.Fatal(err)
	}
	if ci.ClusterName != "seatunnel" || len(ci.Members) != 1 || ci.ReplicaCount != 2 {
		t.Fatalf("cluster = %+v, want cluster seatunnel, one member, owner plus backup-count 1", ci)
	}
	putGet(t, n.addr, n.addr, "job-1", "RUNNING")

	line := noEffectLine(t, logPath)
	for _, k := range []string{
		"seatunnel.engine.metrics-fetch-timeout-ms", "seatunnel.engine.classloader-cache-mode",
		"seatunnel.engine.http", "seatunnel.engine.telemetry", "seatunnel.engine.checkpoint.interval",
		"hazelcast.network.rest-api", "hazelcast.properties.hazelcast.tcp.join.port.try.count",
		"hazelcast.properties.hazelcast.logging.type",
	} {
		if !strings.Contains(line, k) {
			t.Errorf("the no-effect line lacks %s: %s", k, line)
		}
	}
	for _, k := range []string{"backup-count", "checkpoint.storage", "cluster-name", "tcp-ip", "network.port"} {
		if strings.Contains(line, k) {
			t.Errorf("the no-effect line names %s, which stowage acts on: %s", k, line)
		}
	}
}

// A master and a worker start from SeaTunnel's hazelcast-master.yaml and
// hazelcast-worker.yaml (--role, as seatunnel-cluster.sh -r), find each
// other through the shipped member list and serve one map.
func TestMasterWorkerFromShippedConfig(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	base, err := freeMemberPorts(2)
	if err != nil {
		t.Fatal(err)
	}
	cfgDir := filepath.Join(dir, "config")
	writeShippedConfig(t, cfgDir, base, filepath.Join(dir, "data"), nil)
	masterLog, workerLog := filepath.Join(dir, "master.log"), filepath.Join(dir, "worker.log")
	showLogs(t, masterLog, workerLog)

	master, err := startNode(ctx, cfgDir, masterLog, "--role", "master")
	if err != nil {
		t.Fatal(err)
	}
	defer master.kill()
	worker, err := startNode(ctx, cfgDir, workerLog, "--role", "worker")
	if err != nil {
		t.Fatal(err)
	}
	defer worker.kill()
	for _, c := range []*child{master, worker} {
		if _, err := c.waitHealthy(ctx, 2*time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	err = benchWaitCluster(ctx, []*child{master, worker}, 2*time.Minute, func(ci benchClusterInfo) bool {
		return len(ci.Members) == 2 && ci.Loaded
	})
	if err != nil {
		t.Fatalf("master and worker did not form one cluster: %v", err)
	}
	putGet(t, worker.addr, master.addr, "job-2", "SCHEDULED")
	putGet(t, master.addr, worker.addr, "job-3", "FINISHED")

	if line := noEffectLine(t, masterLog); !strings.Contains(line, "hazelcast.properties.hazelcast.shutdownhook.policy") {
		t.Errorf("the master's no-effect line lacks its own property: %s", line)
	}
	// The worker's file ships "50l" as a thread count; stowage does not
	// read it and says so.
	if line := noEffectLine(t, workerLog); !strings.Contains(line, "hazelcast.properties.hazelcast.operation.generic.thread.count") {
		t.Errorf("the worker's no-effect line lacks the thread count: %s", line)
	}
	b, _ := os.ReadFile(workerLog)
	if !strings.Contains(string(b), "role worker holds partitions like a master") {
		t.Errorf("the worker does not say that it holds partitions:\n%s", b)
	}
	// The shipped client file finds the master.
	cb, err := os.ReadFile(filepath.Join(cfgDir, config.ClientFile))
	if err != nil {
		t.Fatal(err)
	}
	cl, err := config.ParseClient(cb)
	if err != nil {
		t.Fatal(err)
	}
	if want := "127.0.0.1:" + strconv.Itoa(base); !slices.Equal(cl.ClusterMembers, []string{want}) {
		t.Fatalf("client cluster-members = %v, want the master %s", cl.ClusterMembers, want)
	}
}

// A misspelt key in the shipped seatunnel.yaml stops the node at start
// with the file, line and key, and the key it is nearest to; so does an
// HTTP security switch turned on without what it needs (a key store, a
// password; the line is then the http block's).
func TestNodeRefusesShippedConfigWithBadKey(t *testing.T) {
	for _, tc := range []struct {
		key  string // the key written, whose line the error names
		edit func(string) string
		want []string
	}{
		{"backup-cont", func(s string) string { return strings.Replace(s, "backup-count: 1", "backup-cont: 1", 1) },
			[]string{"seatunnel.engine.backup-cont: unknown key (did you mean backup-count?)"}},
		{"enable-https", func(s string) string {
			return strings.Replace(s, "      enable-dynamic-port: false\n", "      enable-dynamic-port: false\n      enable-https: true\n", 1)
		}, []string{"seatunnel.engine.http.enable-https: true needs key-store-path (PKCS#12) or cert-file and key-file (PEM)"}},
		{"http", func(s string) string {
			return strings.Replace(s, "      # enable-basic-auth: true\n", "      enable-basic-auth: true\n", 1)
		}, []string{"seatunnel.engine.http.basic-auth-password: enable-basic-auth needs a password"}},
	} {
		t.Run(tc.key, func(t *testing.T) {
			dir := t.TempDir()
			writeShippedConfig(t, dir, 5801, t.TempDir(), tc.edit)
			st, err := os.ReadFile(filepath.Join(dir, config.SeatunnelFile))
			if err != nil {
				t.Fatal(err)
			}
			line := 0
			for i, l := range strings.Split(string(st), "\n") {
				if strings.HasPrefix(l, "      "+tc.key+":") || strings.HasPrefix(l, "    "+tc.key+":") {
					line = i + 1
				}
			}
			if line == 0 {
				t.Fatalf("the edited file has no %s", tc.key)
			}
			var o, e bytes.Buffer
			if code := run([]string{"node", "--config-dir", dir, "--http", "127.0.0.1:0"}, &o, &e); code != 1 {
				t.Fatalf("exit %d, want 1; stderr %q", code, e.String())
			}
			where := filepath.Join(dir, config.SeatunnelFile) + ":" + strconv.Itoa(line) + ": "
			for _, w := range append([]string{where + tc.want[0]}, tc.want[1:]...) {
				if !strings.Contains(e.String(), w) {
					t.Fatalf("stderr %q does not contain %q", e.String(), w)
				}
			}
			if strings.Contains(o.String(), "listening") {
				t.Fatalf("the node started: %q", o.String())
			}
		})
	}
}
