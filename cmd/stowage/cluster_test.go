package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

func freePortRange(t *testing.T, n int) int {
	t.Helper()
	base, err := freeMemberPorts(n)
	if err != nil {
		t.Fatal(err)
	}
	return base
}

// members is a set of member processes started from one config directory.
type members struct {
	t      *testing.T
	cfgDir string
	logDir string
	mu     sync.Mutex
	nodes  []*child
	n      int
}

func (ms *members) start(k int) []*child {
	ms.t.Helper()
	out := make([]*child, k)
	errs := make([]error, k)
	var wg sync.WaitGroup
	for i := 0; i < k; i++ {
		ms.mu.Lock()
		ms.n++
		log := filepath.Join(ms.logDir, "member-"+strconv.Itoa(ms.n)+".log")
		ms.mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i], errs[i] = startNode(context.Background(), ms.cfgDir, log)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			ms.t.Fatal(err)
		}
	}
	ms.mu.Lock()
	ms.nodes = append(ms.nodes, out...)
	ms.mu.Unlock()
	return out
}

func (ms *members) addrs() []string {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	out := make([]string, 0, len(ms.nodes))
	for _, c := range ms.nodes {
		out = append(out, c.addr)
	}
	return out
}

func (ms *members) kill(c *child) {
	ms.mu.Lock()
	for i, x := range ms.nodes {
		if x == c {
			ms.nodes = append(ms.nodes[:i], ms.nodes[i+1:]...)
			break
		}
	}
	ms.mu.Unlock()
	c.kill()
}

func (ms *members) waitHealthy() {
	ms.t.Helper()
	ms.mu.Lock()
	nodes := append([]*child(nil), ms.nodes...)
	ms.mu.Unlock()
	for _, c := range nodes {
		if _, err := c.waitHealthy(context.Background(), 90*time.Second); err != nil {
			ms.t.Fatal(err)
		}
	}
}

// Three member processes on 127.0.0.1 under concurrent clients: one is
// SIGKILLed (its partitions fail over), then all are SIGKILLed and started
// again (EAGER load from the shared directory), then a fourth joins under
// load. The whole history of puts, gets and deletes, through every member,
// must be linearizable (checked with porcupine): no acknowledged write is
// lost, none resurrects, and reads never go back in time.
func TestClusterProcessesLinearizable(t *testing.T) {
	dir := t.TempDir()
	base := freePortRange(t, 10)
	cfgDir := filepath.Join(dir, "config")
	err := writeConfigDirOn(cfgDir, "lin", filepath.Join(dir, "data", "imap"), filepath.Join(dir, "data", "checkpoint")+"/",
		netSpec{Port: base, Ports: 10, MinSize: 3}, map[string]string{"storage.type": "hdfs", "fs.defaultFS": "file:///"})
	if err != nil {
		t.Fatal(err)
	}
	ms := &members{t: t, cfgDir: cfgDir, logDir: dir}
	t.Cleanup(func() {
		for _, c := range ms.nodes {
			c.kill()
		}
		if t.Failed() {
			for i := 1; i <= ms.n; i++ {
				b, _ := os.ReadFile(filepath.Join(dir, "member-"+strconv.Itoa(i)+".log"))
				if len(b) > 6000 {
					b = b[len(b)-6000:]
				}
				t.Logf("member %d log (tail):\n%s", i, b)
			}
		}
	})
	ms.start(3)
	ms.waitHealthy()

	h := newLinHistory("engine_runningJobState", 12)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { h.run(ctx, 6, ms.addrs, uint64(time.Now().UnixNano())); close(done) }()
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(90 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 90s", what)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	progress := func(what string, n int) {
		t.Helper()
		from := h.acked()
		waitFor(what, func() bool { return h.acked() >= from+n })
	}
	progress("writes before any failure", 300)

	// One member dies: writes go on once its partitions failed over.
	killed := ms.nodes[1]
	ms.kill(killed)
	start := time.Now()
	progress("writes after one member was SIGKILLed", 300)
	t.Logf("300 writes acknowledged %v after the SIGKILL", time.Since(start).Round(time.Millisecond))

	// Every member dies; the cluster is started again.
	for _, c := range append([]*child(nil), ms.nodes...) {
		ms.kill(c)
	}
	ms.start(3)
	ms.waitHealthy()
	progress("writes after the whole cluster was SIGKILLed and started again", 300)

	// A fourth member joins under load.
	ms.start(1)
	ms.waitHealthy()
	progress("writes after a member joined", 300)
	stop()
	<-done
	h.readAll(context.Background(), ms.addrs()[0])

	res, info, ops := h.check(2 * time.Minute)
	t.Logf("%d operations, %d acknowledged writes, linearizable: %s", len(ops), h.acked(), res)
	if res != porcupine.Ok {
		out := filepath.Join(os.TempDir(), "stowage-linearizability.html")
		if err := porcupine.VisualizePath(kvModel, info, out); err == nil {
			t.Logf("visualization: %s", out)
		}
		t.Fatalf("the history is not linearizable (%s)", res)
	}
}

// A member stopped with SIGTERM hands its partitions over before it
// leaves: the others go on serving every key, nothing acknowledged is
// lost, and the history stays linearizable.
func TestClusterProcessLeavesGracefully(t *testing.T) {
	dir := t.TempDir()
	base := freePortRange(t, 10)
	cfgDir := filepath.Join(dir, "config")
	err := writeConfigDirOn(cfgDir, "leave", filepath.Join(dir, "data", "imap"), filepath.Join(dir, "data", "checkpoint")+"/",
		netSpec{Port: base, Ports: 10, MinSize: 3}, map[string]string{"storage.type": "hdfs", "fs.defaultFS": "file:///"})
	if err != nil {
		t.Fatal(err)
	}
	ms := &members{t: t, cfgDir: cfgDir, logDir: dir}
	t.Cleanup(func() {
		for _, c := range ms.nodes {
			c.kill()
		}
	})
	ms.start(3)
	ms.waitHealthy()
	h := newLinHistory("engine_runningJobInfo", 12)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { h.run(ctx, 6, ms.addrs, uint64(time.Now().UnixNano())); close(done) }()
	for from := h.acked(); h.acked() < from+300; {
		time.Sleep(20 * time.Millisecond)
	}
	leaving := ms.nodes[2]
	ms.mu.Lock()
	ms.nodes = ms.nodes[:2]
	ms.mu.Unlock()
	start := time.Now()
	if err := leaving.stop(); err != nil {
		t.Fatalf("the leaving member exited with %v", err)
	}
	t.Logf("the member handed its partitions over and exited in %v", time.Since(start).Round(time.Millisecond))
	deadline := time.Now().Add(90 * time.Second)
	for from := h.acked(); h.acked() < from+300; {
		if time.Now().After(deadline) {
			t.Fatal("writes did not go on after a member left")
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	<-done
	h.readAll(context.Background(), ms.addrs()[0])
	res, info, ops := h.check(2 * time.Minute)
	t.Logf("%d operations, %d acknowledged writes, linearizable: %s", len(ops), h.acked(), res)
	if res != porcupine.Ok {
		out := filepath.Join(os.TempDir(), "stowage-linearizability-leave.html")
		if err := porcupine.VisualizePath(kvModel, info, out); err == nil {
			t.Logf("visualization: %s", out)
		}
		t.Fatalf("the history is not linearizable (%s)", res)
	}
}
