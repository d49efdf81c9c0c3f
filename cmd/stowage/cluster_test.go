package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// testCluster writes a config directory for members on free 127.0.0.1
// ports that share a local data directory, and returns the members'
// controller (stopped at the end of the test, logs shown on failure).
func testCluster(t *testing.T, name string, minSize int) *demoCluster {
	t.Helper()
	return testClusterSSL(t, name, minSize, false)
}

// testClusterSSL is testCluster whose members, with ssl set, have
// hazelcast.network.ssl on with a cluster secret.
func testClusterSSL(t *testing.T, name string, minSize int, ssl bool) *demoCluster {
	t.Helper()
	dir := t.TempDir()
	sslBlk := ""
	if ssl {
		sslBlk = sslBlock(writeSecret(t, dir, "cluster.secret", "c0ffee0123456789abcdef-linearizable-tls"))
	}
	base, err := freeMemberPorts(10)
	if err != nil {
		t.Fatal(err)
	}
	cfgDir := filepath.Join(dir, "config")
	err = writeConfigDirOn(cfgDir, name, filepath.Join(dir, "data", "imap"), filepath.Join(dir, "data", "checkpoint")+"/",
		netSpec{Port: base, Ports: 10, MinSize: minSize, SSL: sslBlk}, map[string]string{"storage.type": "hdfs", "fs.defaultFS": "file:///"})
	if err != nil {
		t.Fatal(err)
	}
	c := &demoCluster{cfgDir: cfgDir, logDir: dir}
	t.Cleanup(func() {
		c.killAll()
		if t.Failed() {
			for i := 1; i <= c.n; i++ {
				b, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("member-%d.log", i)))
				if keep := os.Getenv("STOWAGE_TEST_NODE_DEBUG"); keep != "" {
					_ = os.WriteFile(filepath.Join(keep, fmt.Sprintf("member-%d.log", i)), b, 0o600)
				}
				if len(b) > 6000 {
					b = b[len(b)-6000:]
				}
				t.Logf("member %d log (tail):\n%s", i, b)
			}
		}
	})
	return c
}

// startMembers starts k members and waits until the cluster is loaded.
func startMembers(t *testing.T, c *demoCluster, k int) {
	t.Helper()
	if err := c.start(context.Background(), k); err != nil {
		t.Fatal(err)
	}
}

// linRun runs clients against the cluster's members until stopped.
type linRun struct {
	h    *linHistory
	stop context.CancelFunc
	done chan struct{}
}

func runClients(h *linHistory, c *demoCluster) *linRun {
	ctx, stop := context.WithCancel(context.Background())
	r := &linRun{h: h, stop: stop, done: make(chan struct{})}
	go func() { h.run(ctx, 6, c.addrs, uint64(time.Now().UnixNano())); close(r.done) }()
	return r
}

// progress waits for n more acknowledged writes.
func (r *linRun) progress(t *testing.T, what string, n int) {
	t.Helper()
	from := r.h.acked()
	deadline := time.Now().Add(90 * time.Second)
	for r.h.acked() < from+n {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d more writes not acknowledged within 90s", what, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// finish stops the clients, reads every key through addr and checks the
// whole history.
func (r *linRun) finish(t *testing.T, addr string) {
	t.Helper()
	r.stop()
	<-r.done
	r.h.readAll(context.Background(), addr)
	res, info, ops := r.h.check(2 * time.Minute)
	t.Logf("%d operations, %d acknowledged writes, linearizable: %s", len(ops), r.h.acked(), res)
	if res != porcupine.Ok {
		out := filepath.Join(t.TempDir(), "linearizability.html")
		if err := porcupine.VisualizePath(kvModel, info, out); err == nil {
			t.Logf("visualization: %s", out)
		}
		t.Fatalf("the history is not linearizable (%s)", res)
	}
}

// Three member processes on 127.0.0.1 under concurrent clients: one is
// SIGKILLed (its partitions fail over), then all are SIGKILLed and started
// again (EAGER load from the shared directory), then a fourth joins under
// load. The whole history of puts, gets and deletes, through every member,
// must be linearizable (checked with porcupine): no acknowledged write is
// lost, none resurrects, and reads never go back in time.
func TestClusterProcessesLinearizable(t *testing.T) {
	linearizableUnderKills(t, testCluster(t, "lin", 3))
}

// The same with member TLS (a cluster secret) on every member.
func TestClusterProcessesLinearizableTLS(t *testing.T) {
	linearizableUnderKills(t, testClusterSSL(t, "lin", 3, true))
}

func linearizableUnderKills(t *testing.T, c *demoCluster) {
	startMembers(t, c, 3)
	r := runClients(newLinHistory("engine_runningJobState", 12), c)
	r.progress(t, "writes before any failure", 300)

	// One member dies: writes go on once its partitions failed over.
	c.kill(c.nodes[1])
	start := time.Now()
	r.progress(t, "writes after one member was SIGKILLed", 300)
	t.Logf("300 writes acknowledged %v after the SIGKILL", time.Since(start).Round(time.Millisecond))

	// Every member dies; the cluster is started again.
	c.killAll()
	startMembers(t, c, 3)
	r.progress(t, "writes after the whole cluster was SIGKILLed and started again", 300)

	// A fourth member joins under load.
	startMembers(t, c, 1)
	r.progress(t, "writes after a member joined", 300)
	r.finish(t, c.addrs()[0])
}

// A member stopped with SIGTERM hands its partitions over before it
// leaves: the others go on serving every key, nothing acknowledged is
// lost, and the history stays linearizable.
func TestClusterProcessLeavesGracefully(t *testing.T) {
	c := testCluster(t, "leave", 3)
	startMembers(t, c, 3)
	r := runClients(newLinHistory("engine_runningJobInfo", 12), c)
	r.progress(t, "writes before the leave", 300)
	leaving := c.nodes[2]
	c.mu.Lock()
	c.nodes = c.nodes[:2]
	c.mu.Unlock()
	start := time.Now()
	if err := leaving.stop(); err != nil {
		t.Fatalf("the leaving member exited with %v", err)
	}
	t.Logf("the member handed its partitions over and exited in %v", time.Since(start).Round(time.Millisecond))
	r.progress(t, "writes after a member left", 300)
	r.finish(t, c.addrs()[0])
}

// A member that hangs (SIGSTOP: its connections stay open, nothing is
// refused) is declared dead and taken over; when it resumes (SIGCONT) it
// still holds the old table and its old copies, and clients go through it
// again at once. Whatever it served from its stale state would show in the
// history, which must stay linearizable.
func TestClusterProcessFrozenAndResumed(t *testing.T) {
	c := testCluster(t, "zombie", 3)
	startMembers(t, c, 3)
	r := runClients(newLinHistory("engine_pendingJobs", 12), c)
	r.progress(t, "writes before the freeze", 300)

	z := c.nodes[1]
	c.mu.Lock()
	c.nodes = slices.DeleteFunc(c.nodes, func(x *child) bool { return x == z })
	c.mu.Unlock()
	if err := z.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	r.progress(t, "writes while a member hangs", 300)
	t.Logf("300 writes acknowledged %v after the SIGSTOP", time.Since(start).Round(time.Millisecond))
	// Until failure detection declared it dead on both others and their
	// table gives it no partition.
	survivors := slices.Clone(c.nodes)
	err := benchWaitCluster(context.Background(), survivors, 60*time.Second, func(ci benchClusterInfo) bool {
		owners := 0
		for _, n := range ci.PartitionsPerMember {
			if n > 0 {
				owners++
			}
		}
		return len(ci.Members) == 2 && owners == 2
	})
	if err != nil {
		t.Fatalf("the others did not drop the stopped member: %v", err)
	}
	t.Logf("dropped %v after the SIGSTOP", time.Since(start).Round(time.Millisecond))

	if err := z.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	c.nodes = append(c.nodes, z)
	c.mu.Unlock()
	r.progress(t, "writes after it resumed", 600)
	r.finish(t, c.addrs()[0])
}
