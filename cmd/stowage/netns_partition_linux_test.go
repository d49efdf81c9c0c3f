package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// Member ports inside each namespace: every member has an address of its
// own, so they all use the same ports.
const (
	labMemberPort    = 5801 // memberlist (gossip, failure detection), TCP and UDP
	labTransportPort = 5701 // the member transport: map operations, backups, tables
	labHTTPPort      = 8080
)

// partitionCluster is n `stowage node` processes, each in its own
// network namespace of a netLab, persisting to one shared storage (a
// local directory, or an HDFS the lab runs), with split-brain protection
// on the engine maps: a map operation needs a majority of the members in
// the member's view.
type partitionCluster struct {
	t      *testing.T
	lab    *netLab
	dir    string
	client *http.Client

	mu    sync.Mutex
	nodes []*child // index i-1 is member i; nil when not running
	// lastAck is, per member address, when it last acknowledged a write.
	lastAck map[string]time.Time
	// faulty is the member whose network is failing, 0 for none: the
	// ordinary clients leave it alone (only the probes go on asking it).
	faulty int
	probes []probeWrite
	// nodeArgs are added to every member's command line.
	nodeArgs []string
}

// probeWrite is one write of a probe: a key of its own, written once
// through one member.
type probeWrite struct {
	key, value string
	acked      bool
}

// labStorage is where the members of a partitionCluster persist: the
// map store's and the checkpoints' namespaces and the storage properties.
type labStorage struct {
	imap, checkpoint string
	props            map[string]string
}

// localLabStorage is one shared local directory under dir.
func localLabStorage(_ *netLab, dir string) labStorage {
	return labStorage{imap: filepath.Join(dir, "data", "imap"), checkpoint: filepath.Join(dir, "data", "checkpoint") + "/",
		props: map[string]string{"storage.type": "hdfs", "fs.defaultFS": "file:///"}}
}

// newPartitionCluster creates the lab for n members and their config
// directories; storage, called once the lab exists, says where they
// persist (and may start a server in the lab for it).
func newPartitionCluster(t *testing.T, n int, storage func(lab *netLab, dir string) labStorage) *partitionCluster {
	t.Helper()
	lab := newNetLab(t, n)
	c := &partitionCluster{t: t, lab: lab, dir: t.TempDir(), nodes: make([]*child, n), lastAck: map[string]time.Time{}}
	st := storage(lab, c.dir)
	c.client = &http.Client{Timeout: 20 * time.Second,
		Transport: &http.Transport{DialContext: dialIn(lab.client), MaxIdleConnsPerHost: 16}}
	var members []string
	for i := 1; i <= n; i++ {
		members = append(members, fmt.Sprintf("          - %s:%d\n", lab.memberIP(i), labMemberPort))
	}
	for i := 1; i <= n; i++ {
		cfg := filepath.Join(c.dir, fmt.Sprintf("config-%d", i))
		err := writeConfigDirOn(cfg, "netsplit", st.imap, st.checkpoint,
			netSpec{Port: labMemberPort, Ports: 1, MinSize: n, TransportPort: labTransportPort}, st.props)
		if err != nil {
			t.Fatal(err)
		}
		hz := filepath.Join(cfg, "hazelcast.yaml")
		b, err := os.ReadFile(hz)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		loop := fmt.Sprintf("          - 127.0.0.1:%d-%d\n", labMemberPort, labMemberPort)
		edits := []struct{ old, new string }{
			{loop, strings.Join(members, "")},
			{"  properties:\n", "  properties:\n    hazelcast.local.localAddress: " + lab.memberIP(i) + "\n"},
			{"  map:\n", fmt.Sprintf("  split-brain-protection:\n    majority:\n      enabled: true\n      minimum-cluster-size: %d\n  map:\n", n/2+1)},
			{"    engine*:\n", "    engine*:\n      split-brain-protection-ref: majority\n"},
		}
		for _, e := range edits {
			if !strings.Contains(s, e.old) {
				t.Fatalf("the written hazelcast.yaml has no %q:\n%s", e.old, s)
			}
			s = strings.Replace(s, e.old, e.new, 1)
		}
		if err := os.WriteFile(hz, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Registered after newNetLab's cleanup and storage's, so it runs
	// before them: the processes die before their storage server and
	// their namespaces.
	t.Cleanup(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		for i, n := range c.nodes {
			if n != nil {
				n.kill()
				c.nodes[i] = nil
			}
		}
		keep := os.Getenv("STOWAGE_TEST_NODE_DEBUG")
		if t.Failed() || keep != "" {
			for i := 1; i <= len(c.nodes); i++ {
				b, _ := os.ReadFile(filepath.Join(c.dir, fmt.Sprintf("member-%d.log", i)))
				if keep != "" {
					_ = os.WriteFile(filepath.Join(keep, fmt.Sprintf("%s-member-%d.log", t.Name(), i)), b, 0o600)
				}
				if !t.Failed() {
					continue
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

// start starts member i inside its namespace.
func (c *partitionCluster) start(ctx context.Context, i int) {
	c.t.Helper()
	exe, err := os.Executable()
	if err != nil {
		c.t.Fatal(err)
	}
	argv := []string{"ip", "netns", "exec", c.lab.member[i-1], exe, "node",
		"--config-dir", filepath.Join(c.dir, fmt.Sprintf("config-%d", i)),
		"--http", fmt.Sprintf("%s:%d", c.lab.httpIP(i), labHTTPPort),
		// The API listens on the point-to-point link to the test's client
		// namespace, which nothing else can reach.
		"--insecure-http"}
	argv = append(argv, c.nodeArgs...)
	if os.Getenv("STOWAGE_TEST_NODE_DEBUG") != "" {
		argv = append(argv, "-v")
	}
	n, err := startNodeCommand(ctx, filepath.Join(c.dir, fmt.Sprintf("member-%d.log", i)), argv)
	if err != nil {
		c.t.Fatal(err)
	}
	c.mu.Lock()
	c.nodes[i-1] = n
	c.mu.Unlock()
}

// addrs lists the HTTP addresses of the running members.
func (c *partitionCluster) addrs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, n := range c.nodes {
		if n != nil {
			out = append(out, n.addr)
		}
	}
	return out
}

// serving lists the HTTP addresses of the running members whose network
// is sound.
func (c *partitionCluster) serving() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for i, n := range c.nodes {
		if n != nil && i+1 != c.faulty {
			out = append(out, n.addr)
		}
	}
	return out
}

func (c *partitionCluster) setFaulty(i int) {
	c.mu.Lock()
	c.faulty = i
	c.mu.Unlock()
}

// probe writes, through member i, a new key every few milliseconds until
// ctx is done, each once, into the history h: a key written once has a
// history porcupine checks at once whatever the write's outcome, and the
// acknowledged ones are read back at the end.
func (c *partitionCluster) probe(ctx context.Context, h *linHistory, i int) {
	for n := 0; ctx.Err() == nil; n++ {
		w := probeWrite{key: fmt.Sprintf("probe-%d-%05d", i, n), value: fmt.Sprintf("m%d-%d", i, n)}
		w.acked = h.do(ctx, 100+i, c.addr(i), linIn{Op: "put", Key: w.key, Value: w.value})
		c.mu.Lock()
		c.probes = append(c.probes, w)
		c.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// readProbes reads every probe key back through addr into the history and
// returns how many acknowledged probe writes it did not find; with report
// set, each one fails the test.
func (c *partitionCluster) readProbes(ctx context.Context, h *linHistory, addr string, report bool) (acked, lost int) {
	c.mu.Lock()
	ws := append([]probeWrite(nil), c.probes...)
	c.mu.Unlock()
	for _, w := range ws {
		resp, err := h.client.Get("http://" + addr + "/v1/maps/" + h.mapName + "/entries/" + w.key)
		got, status := "", ""
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			got, status = string(b), resp.Status
		}
		if w.acked {
			acked++
			if got != w.value {
				lost++
				if report {
					c.t.Errorf("probe write %s=%q was acknowledged but reads back as %s %q (%v)", w.key, w.value, status, got, err)
				}
			}
		}
	}
	return acked, lost
}

// explain logs, for each key whose own history is not linearizable, its
// operations in call order (times relative to t0).
func (c *partitionCluster) explain(ops []porcupine.Operation, t0 time.Time) {
	byKey := map[string][]porcupine.Operation{}
	for _, op := range ops {
		k := op.Input.(linIn).Key
		byKey[k] = append(byKey[k], op)
	}
	names := map[string]string{}
	for i := 1; i <= len(c.nodes); i++ {
		names[c.addr(i)] = fmt.Sprintf("m%d", i)
	}
	shown := 0
	for k, kops := range byKey {
		if porcupine.CheckOperationsTimeout(kvModel, kops, 20*time.Second) != porcupine.Illegal || shown >= 2 {
			continue
		}
		shown++
		sort.Slice(kops, func(a, b int) bool { return kops[a].Call < kops[b].Call })
		var b strings.Builder
		for _, op := range kops {
			in := op.Input.(linIn)
			fmt.Fprintf(&b, "  %8.3fs..%8.3fs c%-3d %s via %s\n", float64(op.Call-t0.UnixNano())/1e9, float64(op.Return-t0.UnixNano())/1e9,
				op.ClientId, kvModel.DescribeOperation(op.Input, op.Output), names[in.Via])
		}
		c.t.Logf("key %s is not linearizable:\n%s", k, b.String())
	}
}

func (c *partitionCluster) addr(i int) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nodes[i-1].addr
}

func (c *partitionCluster) noteAck(addr string, _ linIn, ret time.Time) {
	c.mu.Lock()
	if ret.After(c.lastAck[addr]) {
		c.lastAck[addr] = ret
	}
	c.mu.Unlock()
}

func (c *partitionCluster) lastAckOf(i int) time.Time {
	a := c.addr(i)
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastAck[a]
}

// info is member i's /v1/cluster.
func (c *partitionCluster) info(ctx context.Context, i int) (benchClusterInfo, error) {
	var ci benchClusterInfo
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+c.addr(i)+"/v1/cluster", nil)
	if err != nil {
		return ci, err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return ci, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return ci, fmt.Errorf("GET /v1/cluster at member %d: %s", i, resp.Status)
	}
	return ci, json.NewDecoder(resp.Body).Decode(&ci)
}

// converged waits until every member in ms sees all of ms, every one of
// them owns partitions and the table is loaded and backed up, and
// returns how long that took.
func (c *partitionCluster) converged(ctx context.Context, limit time.Duration, ms ...int) (time.Duration, error) {
	start := time.Now()
	var last string
	for time.Since(start) < limit {
		ok := true
		for _, i := range ms {
			ci, err := c.info(ctx, i)
			if err != nil {
				ok, last = false, err.Error()
				break
			}
			owners := 0
			for _, n := range ci.PartitionsPerMember {
				if n > 0 {
					owners++
				}
			}
			if len(ci.Members) != len(ms) || owners != len(ms) || !ci.Safe {
				ok, last = false, fmt.Sprintf("member %d sees %d members, %d owners, safe %v", i, len(ci.Members), owners, ci.Safe)
				break
			}
		}
		if ok {
			return time.Since(start), nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return 0, fmt.Errorf("members %v not converged within %s: %s", ms, limit, last)
}

// quiet waits until member i has acknowledged no write for the span
// `for` and returns how long after `since` its last acknowledgement came.
func (c *partitionCluster) quiet(i int, since time.Time, span, limit time.Duration) (time.Duration, error) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		last := c.lastAckOf(i)
		if time.Since(last) >= span && time.Since(since) >= span {
			return max(0, last.Sub(since)), nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return 0, fmt.Errorf("member %d still acknowledged writes %s after the cut", i, limit)
}

// partitionRun is a partitionCluster of three under clients: six that
// write and read shared keys through the members whose network is sound,
// and one probe per member that writes keys of its own through it whatever
// its state.
type partitionRun struct {
	*linRun
	c *partitionCluster
}

// startPartitionRun starts three members in their namespaces, persisting
// to storage (see newPartitionCluster), with nodeArgs added to their
// command lines, and the clients, and waits for 300 acknowledged writes.
func startPartitionRun(t *testing.T, storage func(lab *netLab, dir string) labStorage, nodeArgs ...string) *partitionRun {
	t.Helper()
	ctx := context.Background()
	c := newPartitionCluster(t, 3, storage)
	c.nodeArgs = nodeArgs
	for i := 1; i <= 3; i++ {
		c.start(ctx, i)
	}
	if _, err := c.converged(ctx, 90*time.Second, 1, 2, 3); err != nil {
		t.Fatal(err)
	}
	h := newLinHistory("engine_runningJobState", 12)
	h.client = c.client
	h.onAck = c.noteAck
	wctx, stop := context.WithCancel(ctx)
	r := &linRun{h: h, stop: stop, done: make(chan struct{})}
	var probes sync.WaitGroup
	for i := 1; i <= 3; i++ {
		probes.Add(1)
		go func() { defer probes.Done(); c.probe(wctx, h, i) }()
	}
	go func() { h.run(wctx, 6, c.serving, uint64(time.Now().UnixNano())); probes.Wait(); close(r.done) }()
	t.Cleanup(func() { r.stop(); <-r.done })
	r.progress(t, "writes before any fault", 300)

	return &partitionRun{linRun: r, c: c}
}

// check stops the clients, reads every key back, checks the whole history
// with porcupine and reads back every acknowledged probe write: an
// acknowledged write that was lost, or one acknowledged by a minority and
// never seen by the majority, fails the test.
func (pr *partitionRun) check(t *testing.T, t0 time.Time) {
	t.Helper()
	ctx, c, r, h := context.Background(), pr.c, pr.linRun, pr.h
	r.stop()
	<-r.done
	h.readAll(ctx, c.addr(1))
	res, _, ops := h.check(2 * time.Minute)
	t.Logf("%d operations, %d acknowledged writes, linearizable: %s", len(ops), h.acked(), res)
	if res != porcupine.Ok {
		c.explain(ops, t0)
		t.Errorf("the history is not linearizable (%s)", res)
	}
	acked, lost := c.readProbes(ctx, h, c.addr(2), true)
	t.Logf("%d acknowledged probe writes read back, lost %d", acked, lost)
}

// Three members, each in its own network namespace, joined by a bridge;
// the engine maps have split-brain protection (a majority of 2) and
// persist to one shared local directory. Member 3's link to the bridge
// goes down: it must stop acknowledging writes within a bounded time
// while members 1 and 2 carry on; when the link comes back it must rejoin
// and the three converge. The whole history must be linearizable per key
// and every acknowledged write must read back.
func TestClusterNetworkPartitionMinority(t *testing.T) {
	partitionMinority(t, startPartitionRun(t, localLabStorage), linkDown)
}

// minorityCut is a way to cut member 3 off from the others, and to heal
// the cut.
type minorityCut struct {
	what      string
	cut, heal func(c *partitionCluster)
}

// linkDown takes member 3's link to the bridge down: it loses the other
// members and everything else on the bridge.
var linkDown = minorityCut{
	what: "member 3's link down",
	cut:  func(c *partitionCluster) { c.lab.ip("-n", c.lab.bridge, "link", "set", "b3", "down") },
	heal: func(c *partitionCluster) { c.lab.ip("-n", c.lab.bridge, "link", "set", "b3", "up") },
}

// membersApart drops every packet between member 3 and the other members
// (policy routing blackholes in the members' namespaces, both ways), and
// nothing else: a server on the bridge (the HDFS) stays reachable from
// both sides.
var membersApart = minorityCut{
	what: "member 3 apart from the members",
	cut:  func(c *partitionCluster) { c.blackhole3("add") },
	heal: func(c *partitionCluster) { c.blackhole3("del") },
}

// blackhole3 adds (or deletes) the rules that drop every packet between
// member 3 and members 1 and 2.
func (c *partitionCluster) blackhole3(op string) {
	for i := 1; i <= 2; i++ {
		c.lab.ip("-n", c.lab.member[i-1], "rule", op, "to", c.lab.memberIP(3), "blackhole")
		c.lab.ip("-n", c.lab.member[2], "rule", op, "to", c.lab.memberIP(i), "blackhole")
	}
}

// partitionMinority cuts member 3 off in each way of cuts in turn and
// checks that it stops acknowledging and that the majority serves, heals
// the cut, and checks convergence; at the end it checks the history and
// the probe writes.
func partitionMinority(t *testing.T, pr *partitionRun, cuts ...minorityCut) {
	t.Helper()
	ctx := context.Background()
	c, r, h := pr.c, pr.linRun, pr.h
	var first time.Time
	for _, m := range cuts {
		// A minority of one.
		c.setFaulty(3)
		cut := time.Now()
		if first.IsZero() {
			first = cut
		}
		m.cut(c)
		acking, err := c.quiet(3, cut, 3*time.Second, 60*time.Second)
		if err != nil {
			t.Fatalf("%s: %v", m.what, err)
		}
		t.Logf("%s: the minority member acknowledged writes for %v after the cut", m.what, acking.Round(time.Millisecond))
		if _, err := c.converged(ctx, 60*time.Second, 1, 2); err != nil {
			t.Fatalf("%s: the majority did not take member 3's partitions over: %v", m.what, err)
		}
		r.progress(t, m.what+": writes on the majority side", 300)
		if last := c.lastAckOf(3); last.After(cut.Add(acking)) {
			t.Fatalf("%s: the minority member acknowledged a write %v after the cut, after it had been quiet", m.what, last.Sub(cut))
		}
		acked, lost := c.readProbes(ctx, h, c.addr(1), false)
		t.Logf("%s: during the cut: %d acknowledged probe writes read back, lost %d", m.what, acked, lost)
		m.heal(c)
		took, err := c.converged(ctx, 90*time.Second, 1, 2, 3)
		if err != nil {
			t.Fatalf("%s: after the heal: %v", m.what, err)
		}
		t.Logf("%s: converged %v after the heal", m.what, took.Round(time.Millisecond))
		c.setFaulty(0)
		r.progress(t, m.what+": writes after the heal", 300)
	}
	pr.check(t, first)
}

// Member 2 can send but not receive (a queue that drops every frame on
// the bridge's side of its link): the others carry on without it; when
// the loss ends it rejoins. Nothing acknowledged is lost and the history
// is linearizable.
func TestClusterNetworkOneWayLoss(t *testing.T) {
	ctx := context.Background()
	pr := startPartitionRun(t, localLabStorage)
	c, r := pr.c, pr.linRun
	// One-way loss: member 2 sends but receives nothing.
	c.setFaulty(2)
	cut := time.Now()
	// A pfifo queue that holds nothing drops every frame the bridge sends
	// to member 2 (netem and tc filters need kernel modules that are not
	// always there; pfifo is built in).
	c.lab.bridgeTC("qdisc", "add", "dev", "b2", "root", "pfifo", "limit", "0")
	acking, err := c.quiet(2, cut, 3*time.Second, 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("member 2, deaf, acknowledged writes for %v after the loss began", acking.Round(time.Millisecond))
	if _, err := c.converged(ctx, 60*time.Second, 1, 3); err != nil {
		t.Fatalf("the others did not take the deaf member's partitions over: %v", err)
	}
	r.progress(t, "writes while member 2 is deaf", 300)
	c.lab.bridgeTC("qdisc", "del", "dev", "b2", "root")
	took, err := c.converged(ctx, 90*time.Second, 1, 2, 3)
	if err != nil {
		t.Fatalf("after the loss ended: %v", err)
	}
	t.Logf("converged %v after the loss ended", took.Round(time.Millisecond))
	c.setFaulty(0)
	r.progress(t, "writes after the one-way loss", 300)

	pr.check(t, cut)
}

// Member 3 answers gossip but not the member-transport port: the cluster
// goes on serving, and when the port is reachable again the three
// converge. Nothing acknowledged is lost and the history is linearizable.
func TestClusterNetworkDataPortBlocked(t *testing.T) {
	ctx := context.Background()
	pr := startPartitionRun(t, localLabStorage)
	c, r := pr.c, pr.linRun
	// Member 3 answers gossip but not the data protocol: inside its
	// namespace, policy routing blackholes every packet to or from the
	// member-transport port (tc filters and nftables need kernel modules
	// that are not always there; routing rules are built in).
	c.setFaulty(3)
	ns3 := c.lab.member[2]
	port := fmt.Sprint(labTransportPort)
	c.lab.ip("-n", ns3, "rule", "add", "dport", port, "blackhole")
	c.lab.ip("-n", ns3, "rule", "add", "sport", port, "blackhole")
	start := time.Now()
	r.progress(t, "writes while member 3 answers gossip only", 300)
	t.Logf("300 writes acknowledged %v after member 3 stopped answering the data protocol", time.Since(start).Round(time.Millisecond))
	c.lab.ip("-n", ns3, "rule", "del", "dport", port, "blackhole")
	c.lab.ip("-n", ns3, "rule", "del", "sport", port, "blackhole")
	took, err := c.converged(ctx, 90*time.Second, 1, 2, 3)
	if err != nil {
		t.Fatalf("after the data protocol came back: %v", err)
	}
	t.Logf("converged %v after the data protocol came back", took.Round(time.Millisecond))
	c.setFaulty(0)
	r.progress(t, "writes after the data protocol came back", 300)

	pr.check(t, start)
}
