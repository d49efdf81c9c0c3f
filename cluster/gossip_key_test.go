package cluster_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/stowage/stowage/cluster"
)

// TestGossipKeyRefusesOthers: with a gossip key, nodes with another key
// or none are not admitted, however often they try, while a node with
// the key joins.
func TestGossipKeyRefusesOthers(t *testing.T) {
	base := freePorts(t, 4)
	list := []string{addr(base), addr(base + 1), addr(base + 2), addr(base + 3)}
	key := (&cluster.Security{Secret: secretA}).GossipKey()
	if len(key) != 32 || bytes.Equal(key, (&cluster.Security{Secret: []byte("another secret, another cluster")}).GossipKey()) {
		t.Fatalf("gossip key %d bytes, or the same for two secrets", len(key))
	}

	wrong := testConfig("seatunnel", base+2, list...)
	wrong.GossipKey = (&cluster.Security{Secret: []byte("another secret, another cluster")}).GossipKey()
	none := testConfig("seatunnel", base+3, list...)
	join(t, wrong)
	join(t, none)

	ca := testConfig("seatunnel", base, list...)
	ca.GossipKey = key
	a := join(t, ca)
	cb := testConfig("seatunnel", base+1, list...)
	cb.GossipKey = key
	b := join(t, cb)
	waitExactly(t, a, 2)
	waitExactly(t, b, 2)
	// Several rejoin and push/pull rounds of the others.
	time.Sleep(1500 * time.Millisecond)
	for _, c := range []*cluster.Cluster{a, b} {
		if ms := c.Members(); len(ms) != 2 {
			t.Errorf("%s sees %d members, want the 2 with the key: %v", c.Self().ID, len(ms), ms)
		}
	}
}
