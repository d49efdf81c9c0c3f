package cluster

import (
	"math"
	"time"

	"github.com/hashicorp/memberlist"
)

// Suspicion is followed here because memberlist keeps a node's state to
// itself. A member suspects another from its own probes (memberlist's log
// line, see logWriter) until a probe is acknowledged; it also gossips each
// unacknowledged probe to the others, which show the member as suspected
// for one suspicion timeout after they last heard of it. memberlist
// declares the member dead once its suspicion times out unless it
// refutes; either way the flag then ends by itself, so a refuted
// suspicion shows for at most that long.
//
// The gossip carries no incarnation: it drives what an operator sees
// (Member.Suspect), never a decision about partitions. Without gossip
// encryption any node that can send to the member's port could raise the
// flag for one timeout.

// msgSuspect starts a user message of memberlist's gossip: the member
// whose id follows went unacknowledged in the sender's probe.
const msgSuspect byte = 1

// suspectNote is one gossiped suspicion: a newer one of the same member
// replaces it in the queue.
type suspectNote struct {
	id  string
	msg []byte
}

func (s *suspectNote) Invalidates(b memberlist.Broadcast) bool {
	o, ok := b.(*suspectNote)
	return ok && o.id == s.id
}
func (s *suspectNote) Message() []byte { return s.msg }
func (s *suspectNote) Finished()       {}

// heardFor is how long a gossiped suspicion stands: memberlist's
// shortest suspicion timeout for the cluster's size (SuspicionMult ×
// max(1, log10 n) probe intervals), after which the member is dead,
// refuted or suspected again.
func (c *Cluster) heardFor() time.Duration {
	n := 1
	if c.ml != nil {
		n = c.ml.NumMembers()
	}
	scale := math.Max(1, math.Log10(math.Max(1, float64(n))))
	return time.Duration(float64(c.suspicionMult) * scale * float64(c.probeInterval))
}

// gossipSuspect queues the news that this member's probe of id went
// unacknowledged.
func (c *Cluster) gossipSuspect(id string) {
	if c.bcast == nil {
		return
	}
	c.bcast.QueueBroadcast(&suspectNote{id: id, msg: append([]byte{msgSuspect}, id...)})
}

// heardSuspect marks id suspected for heardFor, unless this member's own
// probe already suspects it (which stands until a probe is acknowledged).
func (c *Cluster) heardSuspect(id string) {
	until := time.Now().Add(c.heardFor())
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, live := c.live[id]; !live || id == c.self.ID {
		return
	}
	if cur, ok := c.suspect[id]; ok && cur.IsZero() {
		return
	}
	c.suspect[id] = until
}

// suspectedLocked says whether id is suspected now; c.mu is held.
func (c *Cluster) suspectedLocked(id string, now time.Time) bool {
	until, ok := c.suspect[id]
	return ok && (until.IsZero() || now.Before(until))
}
