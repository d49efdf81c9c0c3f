package cluster

import (
	"slices"
	"time"

	"github.com/stowage/stowage/partition"
)

// Members away: a member that leaves the table's replica sets without a
// graceful leave (it failed, or was cut off) may come back soon with its
// copies still in memory. The master holds its backup slots for
// ProtocolConfig.BackupGrace (partition.AssignHolding): the partitions
// it owned are owned by their first live backup at once, the others run
// with a backup fewer meanwhile (not safe), and a member back in time
// takes its slots again and is filled by a delta against its copy
// instead of a whole one. After the grace the slots go to the others, as
// without it. This is Elasticsearch's delayed allocation of a departed
// node's replicas (index.unassigned.node_left.delayed_timeout).

// awayState is the master's record of members away: since when each is
// gone, and the earliest end of a grace (zero: none running).
type awayState struct {
	since map[string]time.Time
	next  time.Time
}

// awayMembers returns the members cur names (in a replica set, or away)
// that are not among ms (the live members, leaving or not) and whose
// grace has not run out at now, and notes since when each is gone. Only
// the master loop calls it.
func (pr *Protocol) awayMembers(cur *partition.Table, ms []Member, now time.Time) []string {
	if pr.grace <= 0 || cur == nil {
		pr.away = awayState{}
		return nil
	}
	live := make(map[string]bool, len(ms))
	for _, m := range ms {
		live[m.ID] = true
	}
	named := map[string]bool{}
	for p, rs := range cur.Owners {
		for _, id := range rs {
			named[id] = true
		}
		for _, id := range cur.AwayFrom(p) {
			named[id] = true
		}
	}
	since := pr.away.since
	if since == nil {
		since = map[string]time.Time{}
	}
	for id := range since {
		if live[id] || !named[id] {
			delete(since, id) // back, or no longer in the table
		}
	}
	var out []string
	var next time.Time
	for id := range named {
		if live[id] {
			continue
		}
		t0, ok := since[id]
		if !ok {
			t0 = now
			since[id] = now
		}
		if end := t0.Add(pr.grace); now.Before(end) {
			out = append(out, id)
			if next.IsZero() || end.Before(next) {
				next = end
			}
		}
	}
	slices.Sort(out)
	pr.away = awayState{since: since, next: next}
	return out
}

// graceTimer returns a channel that fires when the earliest grace runs
// out (nil when none runs), for the master loop to publish the table
// that gives the slots away.
func (pr *Protocol) graceTimer() (<-chan time.Time, func()) {
	if pr.away.next.IsZero() {
		return nil, func() {}
	}
	t := time.NewTimer(max(time.Until(pr.away.next), 0) + time.Millisecond)
	return t.C, func() { t.Stop() }
}

func sameAway(a, b *partition.Table) bool {
	for p := range max(len(a.Away), len(b.Away), len(a.AwayOwner), len(b.AwayOwner)) {
		if !slices.Equal(a.AwayFrom(p), b.AwayFrom(p)) || a.AwayOwnerOf(p) != b.AwayOwnerOf(p) {
			return false
		}
	}
	return true
}
