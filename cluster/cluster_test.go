package cluster_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/stowage/stowage/cluster"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// longStop bounds every wait; it is a safety net, not a timing assertion.
const longStop = 20 * time.Second

// freePorts returns the first of n consecutive ports free for both TCP
// and UDP on 127.0.0.1.
func freePorts(t *testing.T, n int) int {
	t.Helper()
	for attempt := 0; attempt < 50; attempt++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		base := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if base+n > 65535 {
			continue
		}
		ok := true
		for p := base; p < base+n && ok; p++ {
			a := "127.0.0.1:" + strconv.Itoa(p)
			tl, err := net.Listen("tcp", a)
			if err != nil {
				ok = false
				break
			}
			ul, err := net.ListenPacket("udp", a)
			tl.Close()
			if err != nil {
				ok = false
				break
			}
			ul.Close()
		}
		if ok {
			return base
		}
	}
	t.Fatal("no free ports")
	return 0
}

func addr(p int) string { return "127.0.0.1:" + strconv.Itoa(p) }

func testConfig(name string, port int, list ...string) cluster.Config {
	return cluster.Config{
		ClusterName: name, Port: port, MemberList: list,
		Timing: cluster.Timing{
			ProbeInterval: 200 * time.Millisecond, ProbeTimeout: 100 * time.Millisecond,
			SuspicionMult: 2, GossipInterval: 20 * time.Millisecond,
			PushPullInterval: 500 * time.Millisecond, TCPTimeout: time.Second,
			RejoinInterval: 200 * time.Millisecond,
		},
	}
}

func join(t *testing.T, cfg cluster.Config) *cluster.Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), longStop)
	defer cancel()
	c, err := cluster.Join(ctx, cfg)
	if err != nil {
		t.Fatalf("Join port %d: %v", cfg.Port, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func waitSize(t *testing.T, c *cluster.Cluster, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), longStop)
	defer cancel()
	if err := c.WaitForSize(ctx, n); err != nil {
		t.Fatalf("%s: %v", c.Self().ID, err)
	}
}

// waitExactly polls until c sees exactly n members.
func waitExactly(t *testing.T, c *cluster.Cluster, n int) []cluster.Member {
	t.Helper()
	deadline := time.Now().Add(longStop)
	for {
		ms := c.Members()
		if len(ms) == n {
			return ms
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s sees %d members, want %d: %v", c.Self().ID, len(ms), n, ms)
		}
		time.Sleep(10 * time.Millisecond) // polling interval, not a wait for an outcome
	}
}

func waitEvent(t *testing.T, c *cluster.Cluster, kind cluster.EventKind, id string) {
	t.Helper()
	timer := time.NewTimer(longStop)
	defer timer.Stop()
	for {
		select {
		case e, ok := <-c.Events():
			if !ok {
				t.Fatal("events closed")
			}
			if e.Kind == kind && e.Member.ID == id {
				return
			}
		case <-timer.C:
			t.Fatalf("%s: no %v event for %s", c.Self().ID, kind, id)
		}
	}
}

func ids(ms []cluster.Member) string {
	s := make([]string, len(ms))
	for i, m := range ms {
		s[i] = m.ID
	}
	return strings.Join(s, ",")
}

// start starts three members on consecutive ports in the given order,
// each listing all three addresses, and returns them indexed by port
// offset once all see three members.
func start(t *testing.T, order []int) []*cluster.Cluster {
	t.Helper()
	base := freePorts(t, 3)
	list := []string{addr(base), addr(base + 1), addr(base + 2)}
	cs := make([]*cluster.Cluster, 3)
	for _, i := range order {
		cs[i] = join(t, testConfig("seatunnel", base+i, list...))
	}
	for _, c := range cs {
		waitSize(t, c, 3)
	}
	return cs
}

func TestJoinInAnyOrder(t *testing.T) {
	for _, order := range [][]int{{0, 1, 2}, {2, 1, 0}, {1, 2, 0}} {
		t.Run(fmt.Sprint(order), func(t *testing.T) {
			cs := start(t, order)
			first := cs[order[0]]
			want := ids(first.Members())
			for i, c := range cs {
				ms := waitExactly(t, c, 3)
				if got := ids(ms); got != want {
					t.Fatalf("member %d sees %s, member %d sees %s", i, got, order[0], want)
				}
				for j := 1; j < len(ms); j++ {
					if ms[j].Started.Before(ms[j-1].Started) {
						t.Fatalf("members not oldest first: %v", ms)
					}
				}
				if m := c.Master(); m.ID != first.Self().ID {
					t.Fatalf("member %d: master %s, want the first started %s", i, m.ID, first.Self().ID)
				}
				if !strings.HasPrefix(c.Self().ID, c.Self().Addr+"-") {
					t.Fatalf("member id %q does not start with its address %q", c.Self().ID, c.Self().Addr)
				}
			}
			if !first.IsMaster() || cs[order[1]].IsMaster() {
				t.Fatal("IsMaster disagrees with Master")
			}
		})
	}
}

func TestMasterMovesToNextOldest(t *testing.T) {
	cs := start(t, []int{0, 1, 2})
	old := cs[0].Self().ID
	ctx, cancel := context.WithTimeout(context.Background(), longStop)
	defer cancel()
	if err := cs[0].Leave(ctx); err != nil {
		t.Fatal(err)
	}
	for _, c := range cs[1:] {
		waitEvent(t, c, cluster.MemberLeft, old)
		waitExactly(t, c, 2)
		if m := c.Master(); m.ID != cs[1].Self().ID {
			t.Fatalf("master %s, want next oldest %s", m.ID, cs[1].Self().ID)
		}
	}
	if err := cs[0].Leave(ctx); err != cluster.ErrClosed && !strings.Contains(fmt.Sprint(err), "closed") {
		t.Fatalf("second Leave: %v, want ErrClosed", err)
	}
}

func TestFailedMemberDetected(t *testing.T) {
	cs := start(t, []int{0, 1, 2})
	dead := cs[2].Self().ID
	if err := cs[2].Close(); err != nil { // no leave message
		t.Fatal(err)
	}
	for _, c := range cs[:2] {
		waitEvent(t, c, cluster.MemberFailed, dead)
		ms := waitExactly(t, c, 2)
		for _, m := range ms {
			if m.ID == dead {
				t.Fatalf("dead member %s still listed", dead)
			}
		}
	}
}

func TestUnreachableMemberListEntry(t *testing.T) {
	base := freePorts(t, 3) // base+2 is never started
	list := []string{addr(base + 2), addr(base), addr(base + 1)}
	a := join(t, testConfig("seatunnel", base, list...))
	b := join(t, testConfig("seatunnel", base+1, list...))
	for _, c := range []*cluster.Cluster{a, b} {
		ms := waitExactly(t, c, 2)
		if ms[0].ID != a.Self().ID {
			t.Fatalf("master %s, want %s", ms[0].ID, a.Self().ID)
		}
	}
}

func TestInitialMinClusterSize(t *testing.T) {
	base := freePorts(t, 2)
	list := []string{addr(base), addr(base + 1)}
	cfg := testConfig("seatunnel", base, list...)
	cfg.InitialMinClusterSize = 2
	type result struct {
		c   *cluster.Cluster
		err error
	}
	done := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), longStop)
		defer cancel()
		c, err := cluster.Join(ctx, cfg)
		done <- result{c, err}
	}()
	b := join(t, testConfig("seatunnel", base+1, list...))
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	defer r.c.Close()
	if n := len(r.c.Members()); n < 2 {
		t.Fatalf("Join returned with %d members, want 2", n)
	}
	waitSize(t, b, 2)

	// A context that ends first is reported.
	cfg2 := testConfig("seatunnel", freePorts(t, 1))
	cfg2.InitialMinClusterSize = 2
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if c, err := cluster.Join(ctx, cfg2); err == nil {
		c.Close()
		t.Fatal("Join with a cancelled context and min size 2 succeeded")
	}
}

// recorder is a slog handler that keeps warnings.
type recorder struct {
	mu    sync.Mutex
	lines []string
	hit   chan struct{}
}

func newRecorder() *recorder { return &recorder{hit: make(chan struct{}, 1)} }

func (r *recorder) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	var b strings.Builder
	b.WriteString(rec.Message)
	rec.Attrs(func(a slog.Attr) bool { fmt.Fprintf(&b, " %s=%v", a.Key, a.Value); return true })
	r.mu.Lock()
	r.lines = append(r.lines, b.String())
	r.mu.Unlock()
	select {
	case r.hit <- struct{}{}:
	default:
	}
	return nil
}
func (r *recorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *recorder) WithGroup(string) slog.Handler      { return r }

// wait waits for a line containing all of subs.
func (r *recorder) wait(t *testing.T, subs ...string) string {
	t.Helper()
	timer := time.NewTimer(longStop)
	defer timer.Stop()
	for {
		r.mu.Lock()
		for _, l := range r.lines {
			all := true
			for _, s := range subs {
				all = all && strings.Contains(l, s)
			}
			if all {
				r.mu.Unlock()
				return l
			}
		}
		r.mu.Unlock()
		select {
		case <-r.hit:
		case <-timer.C:
			t.Fatalf("no log line with %q in %q", subs, r.lines)
		}
	}
}

func TestClusterNameMismatchRefused(t *testing.T) {
	base := freePorts(t, 2)
	list := []string{addr(base), addr(base + 1)}
	ra, rb := newRecorder(), newRecorder()
	ca := testConfig("seatunnel", base, list...)
	ca.Logger = slog.New(ra)
	a := join(t, ca)
	cb := testConfig("other", base+1, list...)
	cb.Logger = slog.New(rb)
	b := join(t, cb)

	rb.wait(t, "refused member", a.Self().ID, `cluster-name "seatunnel" differs from ours "other"`)
	ra.wait(t, "refused member", b.Self().ID, `cluster-name "other" differs from ours "seatunnel"`)
	for _, c := range []*cluster.Cluster{a, b} {
		if ms := c.Members(); len(ms) != 1 || ms[0].ID != c.Self().ID {
			t.Fatalf("%s sees %v, want only itself", c.Self().ID, ms)
		}
	}
}

func TestPortAutoIncrement(t *testing.T) {
	base := freePorts(t, 2)
	a := join(t, testConfig("seatunnel", base))
	cfg := testConfig("seatunnel", base, addr(base))
	if _, err := cluster.Join(context.Background(), cfg); err == nil {
		t.Fatal("second member on a taken port without auto-increment joined")
	}
	cfg.PortAutoIncrement, cfg.PortCount = true, 2
	b := join(t, cfg)
	if b.Self().Addr != addr(base+1) {
		t.Fatalf("auto-increment bound %s, want %s", b.Self().Addr, addr(base+1))
	}
	waitSize(t, a, 2)
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  cluster.Config
		want string // "" means valid
	}{
		{"ok", cluster.Config{ClusterName: "seatunnel", MemberList: []string{"127.0.0.1", "127.0.0.1:5801", "h:5801-5803"}}, ""},
		{"no name", cluster.Config{}, "cluster-name"},
		{"bad port", cluster.Config{ClusterName: "x", Port: 70000}, "network.port"},
		{"bad entry port", cluster.Config{ClusterName: "x", MemberList: []string{"h:abc"}}, `"h:abc"`},
		{"bad range", cluster.Config{ClusterName: "x", MemberList: []string{"h:5803-5801"}}, "member-list"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate() = %v, want an error naming %s", err, tc.want)
			}
		})
	}
}

// A member that stops answering is listed as suspect by the members
// whose probes it leaves unanswered, until failure detection declares it
// dead; the answering members never are.
func TestUnansweringMemberSuspected(t *testing.T) {
	base := freePorts(t, 3)
	list := []string{addr(base), addr(base + 1), addr(base + 2)}
	cs := make([]*cluster.Cluster, 3)
	for i := range cs {
		cfg := testConfig("seatunnel", base+i, list...)
		cfg.Timing.SuspicionMult = 5 // a suspicion long enough to be seen
		cs[i] = join(t, cfg)
	}
	for _, c := range cs {
		waitSize(t, c, 3)
	}
	for _, c := range cs {
		for _, m := range c.Members() {
			if m.Suspect {
				t.Fatalf("%s suspects %s before anything failed", c.Self().ID, m.ID)
			}
		}
	}
	dead := cs[2].Self().ID
	if err := cs[2].Close(); err != nil { // no leave message
		t.Fatal(err)
	}
	suspected := map[string]bool{}
	deadline := time.Now().Add(longStop)
	for listed := true; listed && len(suspected) < 2 && time.Now().Before(deadline); {
		listed = false
		for _, c := range cs[:2] {
			for _, m := range c.Members() {
				listed = listed || m.ID == dead
				switch {
				case m.Suspect && m.ID != dead:
					t.Fatalf("%s suspects %s, which answers", c.Self().ID, m.ID)
				case m.Suspect:
					suspected[c.Self().ID] = true
				}
			}
		}
		time.Sleep(5 * time.Millisecond) // polling interval
	}
	if len(suspected) == 0 {
		t.Fatalf("no member listed %s as suspect before it was declared dead", dead)
	}
	for _, c := range cs[:2] {
		waitExactly(t, c, 2)
		for _, m := range c.Members() {
			if m.Suspect {
				t.Errorf("%s still suspects %s after the dead member left", c.Self().ID, m.ID)
			}
		}
	}
}

// A suspicion travels by gossip: a member whose own probes of another
// were all answered lists it as suspect once a third member's probe went
// unanswered, and stops after one suspicion timeout when the suspected
// member stays alive (it refuted, or the probe was a fluke).
func TestSuspicionHeardByGossip(t *testing.T) {
	cs := start(t, []int{0, 1, 2})
	victim := cs[2].Self().ID
	suspects := func(c *cluster.Cluster) bool {
		for _, m := range c.Members() {
			if m.ID == victim {
				return m.Suspect
			}
		}
		t.Fatalf("%s no longer lists %s", c.Self().ID, victim)
		return false
	}
	cs[0].NoteUnansweredProbe(victim)
	deadline := time.Now().Add(longStop)
	for !suspects(cs[1]) {
		if time.Now().After(deadline) {
			t.Fatalf("%s never heard that %s was suspected", cs[1].Self().ID, victim)
		}
		time.Sleep(5 * time.Millisecond) // polling interval
	}
	for _, m := range cs[2].Members() {
		if m.Suspect {
			t.Fatalf("the suspected member lists %s as suspect", m.ID)
		}
	}
	for suspects(cs[1]) {
		if time.Now().After(deadline) {
			t.Fatalf("%s still suspects %s, alive, after the suspicion timeout", cs[1].Self().ID, victim)
		}
		time.Sleep(5 * time.Millisecond) // polling interval
	}
}
