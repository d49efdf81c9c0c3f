package cluster

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"
)

// rawDelegate publishes whatever metadata a test forges.
type rawDelegate struct{ meta []byte }

func (r rawDelegate) NodeMeta(int) []byte                  { return r.meta }
func (rawDelegate) NotifyMsg([]byte)                       {}
func (rawDelegate) GetBroadcasts(int, int) [][]byte        { return nil }
func (rawDelegate) LocalState(bool) []byte                 { return nil }
func (rawDelegate) MergeRemoteState(buf []byte, join bool) {}

// rawNode starts a bare memberlist node publishing meta and joins addr.
func rawNode(t *testing.T, meta []byte, key []byte, addr string) *memberlist.Memberlist {
	t.Helper()
	mc := memberlist.DefaultLANConfig()
	mc.Name = "raw-" + strconv.FormatInt(time.Now().UnixNano(), 10)
	mc.BindAddr, mc.BindPort = "127.0.0.1", 0
	mc.Delegate = rawDelegate{meta}
	mc.SecretKey = key
	mc.LogOutput = discard{}
	mc.ProbeInterval, mc.GossipInterval, mc.PushPullInterval = 100*time.Millisecond, 20*time.Millisecond, 200*time.Millisecond
	ml, err := memberlist.Create(mc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ml.Shutdown() })
	ml.Join([]string{addr}) // refused or not: the member's view is what counts
	return ml
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func rawTestMember(t *testing.T, key []byte) *Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Join(ctx, Config{ClusterName: "seatunnel", Port: freePort(t), GossipKey: key,
		Timing: Timing{ProbeInterval: 100 * time.Millisecond, GossipInterval: 20 * time.Millisecond, PushPullInterval: 200 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestRawNodeNotAdmitted: a bare memberlist node that publishes the
// right cluster name is not a member when gossip is keyed, nor, keyed or
// not, when it claims to have started at 1 ns to become the master.
func TestRawNodeNotAdmitted(t *testing.T) {
	key := (&Security{Secret: []byte("a shared secret of the cluster, 1")}).GossipKey()
	keyed := rawTestMember(t, key)
	plain := rawTestMember(t, nil)
	honest := encodeMeta(meta{cluster: "seatunnel", start: time.Now(), rpc: "127.0.0.1:1"})
	oldest := encodeMeta(meta{cluster: "seatunnel", start: time.Unix(0, 1), rpc: "127.0.0.1:1"})
	rawNode(t, honest, nil, keyed.Self().Addr)
	rawNode(t, oldest, nil, plain.Self().Addr)
	// A node with the key joins, which shows the joins were heard.
	want := map[*Cluster]string{
		keyed: rawNode(t, honest, key, keyed.Self().Addr).LocalNode().Name,
		plain: rawNode(t, honest, nil, plain.Self().Addr).LocalNode().Name,
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(keyed.Members()) < 2 || len(plain.Members()) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the keyed member sees %d, the plain one %d; want the admitted node in each", len(keyed.Members()), len(plain.Members()))
		}
		time.Sleep(10 * time.Millisecond) // polling interval
	}
	time.Sleep(600 * time.Millisecond) // a few more push/pull rounds
	for _, c := range []*Cluster{keyed, plain} {
		if ms := c.Members(); len(ms) != 2 || ms[0].ID != c.Self().ID || ms[1].ID != want[c] {
			t.Errorf("%s sees %v; want itself (the master) and the one admitted node", c.Self().ID, ms)
		}
	}
}
