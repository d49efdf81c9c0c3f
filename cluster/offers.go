package cluster

import (
	"context"
	"time"

	"github.com/stowage/stowage/internal/parallel"

	"github.com/stowage/stowage/partition"
)

// The tables the members offer a new master.
//
// A member that becomes the master, or a master whose members changed (a
// healed split), asks every member for its table: the previous master
// may have pushed a table to some members and died before the others
// took it, and the next table must be above every version in use, or the
// members that took it refuse the next one.
//
// Every member holds the cluster's credentials, so an offer says nothing
// of where its table came from: a member may offer a table it made up
// (itself owning every partition, itself first in the admission order, a
// version near the top). So the master takes from an offer
//
//   - the assignment only if the offered table is exactly what Assign
//     computes from the master's own table for the members it names, and
//     those include every live member the master's table admitted, the
//     master itself aside (partition.Table.Succeeds): the table any master holding this one
//     would have published, whoever offers it; repeated, so that a chain
//     of such tables (the previous master pushed two in a row) is
//     followed;
//   - otherwise its version only, as a floor that the next table's
//     version is above, and only when it is at most maxTableJump above
//     the master's own; an offer further above is logged and ignored.
//
// A master without a table of its own (before the first, or a member
// ranked first by its start time before it took one) takes the table the
// most members offer alike, the newest on a tie.

// maxTableJump is how far above the master's own table version one offer
// may move the next version: far more tables than a master makes while
// some members miss them (one per membership change, or one per turn of
// the master loop while too few members take them), and small enough
// that no offer makes the versions run out.
const maxTableJump = 1 << 20

// recollectEvery is how often a master shown newer table versions by
// the members collects their tables again.
const recollectEvery = time.Second

// offer is the table one member answered gettab with.
type offer struct {
	from string
	t    *partition.Table
}

// collectTables asks the members ms, this one excepted, for their
// tables newer than version above, FanOut at a time: one at a time, a
// join at 100 members waited for 99 round trips in turn before the
// master computed its table.
func (pr *Protocol) collectTables(ms []Member, above int64) []offer {
	ask := make([]Member, 0, len(ms))
	for _, m := range ms {
		if m.ID != pr.self && m.RPC != "" {
			ask = append(ask, m)
		}
	}
	got := make([]*partition.Table, len(ask))
	req := Encode(getTabReq{Above: above})
	parallel.Do(FanOut, len(ask), func(i int) {
		ctx, cancel := context.WithTimeout(pr.ctx, 2*time.Second)
		b, err := pr.Call(ctx, ask[i].RPC, mGetTab, req)
		cancel()
		if err != nil {
			return
		}
		var tm tableMsg
		if Decode(b, &tm) == nil && tm.Version > 0 && tm.Version <= MaxTableVersion && len(tm.Owners) == pr.count {
			got[i] = tm.table()
		}
	})
	var out []offer
	for i, t := range got {
		if t != nil {
			out = append(out, offer{from: ask[i].ID, t: t})
		}
	}
	return out
}

// takeOffers installs what this master takes of the members' tables (see
// above) and raises its version floor.
func (pr *Protocol) takeOffers(ms []Member) {
	// Only tables above this member's own are of use (the chain below
	// starts from it, and a floor only counts above it); without a table
	// of its own, every member's.
	var own int64
	if t, _ := pr.Table(); t != nil {
		own = t.Version
	}
	offers := pr.collectTables(ms, own)
	cur, _ := pr.Table()
	if cur == nil {
		if t := mostOffered(offers); t != nil {
			pr.install(t)
		}
		return
	}
	live := make(map[string]bool, len(ms))
	for _, m := range ms {
		if !m.Draining {
			live[m.ID] = true
		}
	}
	// Follow the chain of tables that succeed this member's.
	for progress := true; progress; {
		progress = false
		var best *partition.Table
		for _, o := range offers {
			if o.t.Version > cur.Version && (best == nil || o.t.Version > best.Version) && pr.succeeds(o.t, cur, live) {
				best = o.t
			}
		}
		if best != nil && pr.install(best) {
			pr.log.Info("stowage: took the partition table the previous master published", "version", best.Version)
			cur, progress = best, true
		}
	}
	var floor int64
	for _, o := range offers {
		switch v := o.t.Version; {
		case v <= cur.Version:
		case v-cur.Version > maxTableJump:
			pr.log.Warn("stowage: a member offered a partition table version too far above this master's: ignored",
				"member", o.from, "version", v, "own", cur.Version, "most", cur.Version+maxTableJump)
		default:
			pr.log.Warn("stowage: a member offered a partition table that does not follow this master's: only its version is taken",
				"member", o.from, "version", v, "own", cur.Version)
			floor = max(floor, v)
		}
	}
	pr.mu.Lock()
	pr.floor = max(pr.floor, floor)
	pr.mu.Unlock()
}

// succeeds reports whether t is the table a master holding cur publishes
// for members that include every live member cur admitted, this member
// aside: a master that stopped answering for a while (a paused process,
// a cut link) and is back finds the table the others made without it,
// and must continue from that one, not from its own older table.
func (pr *Protocol) succeeds(t, cur *partition.Table, live map[string]bool) bool {
	ids, ok := t.Succeeds(cur, pr.replicas-1)
	if !ok {
		return false
	}
	named := make(map[string]bool, len(ids))
	for _, id := range ids {
		named[id] = true
	}
	for _, id := range cur.Order {
		if live[id] && !named[id] && id != pr.Self() {
			return false
		}
	}
	return true
}

// mostOffered returns the table the most offers hold alike, the newest on
// a tie, or nil without offers.
func mostOffered(offers []offer) *partition.Table {
	var best *partition.Table
	bestN := 0
	for i, o := range offers {
		n := 0
		for _, p := range offers[i:] {
			if p.t.Equal(o.t) {
				n++
			}
		}
		if n > bestN || (n == bestN && o.t.Version > best.Version) {
			best, bestN = o.t, n
		}
	}
	return best
}
