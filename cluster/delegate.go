package cluster

import (
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/memberlist"
)

// delegate plugs the Cluster into memberlist: it publishes the metadata,
// refuses members of other clusters and turns node changes into events.
// memberlist calls it from its own goroutines; it must not block.
type delegate struct {
	c     *Cluster
	start time.Time
	mu    sync.Mutex
	flags byte
}

func (d *delegate) NodeMeta(limit int) []byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	return encodeMeta(meta{cluster: d.c.cfg.ClusterName, start: d.start, flags: d.flags, rpc: d.c.cfg.RPCAddr, run: d.c.cfg.Run})
}

func (d *delegate) setFlag(f byte) {
	d.mu.Lock()
	d.flags |= f
	d.mu.Unlock()
}

// NotifyMsg takes a user message of the gossip: a suspicion (msgSuspect).
func (d *delegate) NotifyMsg(b []byte) {
	if len(b) > 1 && b[0] == msgSuspect {
		d.c.heardSuspect(string(b[1:]))
	}
}

// GetBroadcasts hands memberlist the suspicions to gossip.
func (d *delegate) GetBroadcasts(overhead, limit int) [][]byte {
	if d.c.bcast == nil {
		return nil
	}
	return d.c.bcast.GetBroadcasts(overhead, limit)
}

func (d *delegate) LocalState(join bool) []byte            { return nil }
func (d *delegate) MergeRemoteState(buf []byte, join bool) {}

// AckPayload and NotifyPingComplete make the delegate memberlist's ping
// delegate: an acknowledged probe clears the member's suspicion.
func (d *delegate) AckPayload() []byte { return nil }
func (d *delegate) NotifyPingComplete(n *memberlist.Node, _ time.Duration, _ []byte) {
	d.c.probeAcked(n.Name)
}

func (d *delegate) NotifyJoin(n *memberlist.Node)   { d.c.notify(MemberJoined, n) }
func (d *delegate) NotifyUpdate(n *memberlist.Node) { d.c.notify(0, n) }
func (d *delegate) NotifyLeave(n *memberlist.Node) {
	kind := MemberFailed
	if m, err := decodeMeta(n.Meta); err == nil && m.flags&flagLeaving != 0 {
		kind = MemberLeft
	}
	d.c.notify(kind, n)
}

// NotifyAlive refuses gossip about a member of another cluster.
func (d *delegate) NotifyAlive(n *memberlist.Node) error { return d.check(n) }

// NotifyMerge refuses a push/pull (a join either way) with a member of
// another cluster.
func (d *delegate) NotifyMerge(peers []*memberlist.Node) error {
	for _, n := range peers {
		if err := d.check(n); err != nil {
			return err
		}
	}
	return nil
}

func (d *delegate) check(n *memberlist.Node) error {
	m, err := decodeMeta(n.Meta)
	name := m.cluster
	want := d.c.cfg.ClusterName
	if err == nil && name == want {
		if err = plausibleStart(m.start); err == nil {
			return nil
		}
	}
	reason := fmt.Sprintf("cluster-name %q differs from ours %q", name, want)
	if err != nil {
		reason = err.Error()
	}
	d.c.mu.Lock()
	first := !d.c.refused[n.Name]
	d.c.refused[n.Name] = true
	d.c.mu.Unlock()
	if first {
		d.c.cfg.Logger.Warn("stowage/cluster: refused member", "member", n.Name, "reason", reason)
	}
	if err != nil {
		return fmt.Errorf("stowage/cluster: member %s refused: %w", n.Name, err)
	}
	return fmt.Errorf("stowage/cluster: member %s refused: cluster-name %q, want %q", n.Name, name, want)
}

// earliestStart is before any stowage member ran.
var earliestStart = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// plausibleStart refuses a start time no member can have: the oldest
// member is the master, so a node claiming to have started in 1970 (or
// far in the future, to stay out of it) would take or dodge the role. It
// does not stop a node that holds the gossip key from claiming a
// plausible time: that is what the key is for.
func plausibleStart(start time.Time) error {
	if start.Before(earliestStart) || start.After(time.Now().Add(time.Hour)) {
		return fmt.Errorf("stowage/cluster: member metadata claims a start time of %s", start.UTC().Format(time.RFC3339Nano))
	}
	return nil
}
