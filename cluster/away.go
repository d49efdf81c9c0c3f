package cluster

import (
	"maps"
	"slices"
	"strings"
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
//
// The table keeps, per member away, since when it is gone and its
// address (partition.Table.Departed): a new master continues the grace
// where the old one left it, and a member back under a new id at the
// same address (a restart: the id carries the start time) takes the
// slots held for its old id.

// awayState is the master's record of members away: since when each is
// gone, the last address seen of each member live or named by the
// table, and the
// earliest end of a grace (zero: none running).
type awayState struct {
	since map[string]time.Time
	addr  map[string]string
	next  time.Time
	// handOver: the table being made holds the slots of a member that
	// a member at its address replaces (reclaim); once it is installed
	// the master makes the next one at once, which hands them over.
	handOver bool
}

// awayMembers returns the members cur names (in a replica set, or away)
// that are not among live (the live members, leaving or not) and whose
// grace has not run out at now, and notes since when each is gone: from
// this master's own record, else from the table (a master before it
// saw it go), else now. It notes the address of every member of view
// (live, or shown by the member list after it restarted). Only the
// master loop calls it.
func (pr *Protocol) awayMembers(cur *partition.Table, view, ms []Member, now time.Time) []string {
	if pr.grace <= 0 {
		pr.away = awayState{}
		return nil
	}
	if pr.away.addr == nil {
		pr.away.addr = map[string]string{}
	}
	for _, m := range view {
		if m.Addr != "" {
			pr.away.addr[m.ID] = m.Addr
		}
	}
	if cur == nil {
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
	since, addr := pr.away.since, pr.away.addr
	if since == nil {
		since = map[string]time.Time{}
	}
	for id := range since {
		if live[id] || !named[id] {
			delete(since, id) // back, or no longer in the table
		}
	}
	inView := make(map[string]bool, len(view))
	for _, m := range view {
		inView[m.ID] = true
	}
	for id := range addr {
		if !named[id] && !inView[id] {
			delete(addr, id)
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
			t0 = pr.goneSince(cur, id, now)
			since[id] = t0
		}
		if _, ok := addr[id]; !ok {
			if a := cur.Departed[id].Addr; a != "" {
				addr[id] = a
			} else if a := addrInID(id); a != "" {
				addr[id] = a
			}
		}
		if end := t0.Add(pr.grace); now.Before(end) {
			out = append(out, id)
			if next.IsZero() || end.Before(next) {
				next = end
			}
		}
	}
	slices.Sort(out)
	pr.away.since, pr.away.next = since, next
	return out
}

// goneSince is since when member id is gone per the table cur (the
// wall time the master that first saw it gone recorded), or now when
// the table does not say. Masters are other processes with other
// clocks: a time after now is taken as now, and one more than a grace
// back as the grace run out.
func (pr *Protocol) goneSince(cur *partition.Table, id string, now time.Time) time.Time {
	d, ok := cur.Departed[id]
	if !ok || d.Since <= 0 {
		return now
	}
	t := time.Unix(0, d.Since)
	switch {
	case t.After(now):
		return now
	case t.Before(now.Add(-pr.grace)):
		return now.Add(-pr.grace)
	}
	return t
}

// addrInID is the address a member id made by Cluster starts with
// ("host:port-<start Unix nanos>"), or "" for an id of another form.
func addrInID(id string) string {
	i := strings.LastIndexByte(id, '-')
	if i <= 0 || i == len(id)-1 || strings.Trim(id[i+1:], "0123456789") != "" || !strings.Contains(id[:i], ":") {
		return ""
	}
	return id[:i]
}

// noteDeparted sets next.Departed from this master's record of the
// members next holds slots for.
func (pr *Protocol) noteDeparted(next *partition.Table) {
	ids := next.AwayMembers()
	if len(ids) == 0 {
		next.Departed = nil
		return
	}
	out := make(map[string]partition.Departed, len(ids))
	for _, id := range ids {
		d := next.Departed[id]
		if t, ok := pr.away.since[id]; ok {
			d.Since = t.UnixNano()
		}
		if a := pr.away.addr[id]; a != "" && len(a) <= partition.MaxDepartedAddr {
			d.Addr = a
		}
		out[id] = d
	}
	next.Departed = out
}

// reclaim hands the slots held for a member away to a live member at the
// same address that the table names nowhere yet: the member restarted
// within its grace and came back under a new id. Only slots already held
// (in base's Away) are handed over. Each away member's
// slots go to one live member, and a live member takes one away
// member's slots, only when the address names exactly one of each; the
// old id is then no longer away. It returns the table to assign from
// and the members still away.
func (pr *Protocol) reclaim(base *partition.Table, ms []Member, away []string) (*partition.Table, []string) {
	pr.away.handOver = false
	if base == nil || len(away) == 0 {
		return base, away
	}
	named := map[string]bool{}
	for p, rs := range base.Owners {
		for _, id := range rs {
			named[id] = true
		}
		for _, id := range base.AwayFrom(p) {
			named[id] = true
		}
	}
	fresh := map[string][]string{} // address -> live members the table does not name
	for _, m := range ms {
		if !named[m.ID] && !m.Draining && m.Addr != "" {
			fresh[m.Addr] = append(fresh[m.Addr], m.ID)
		}
	}
	held := map[string]bool{}
	for _, id := range base.AwayMembers() {
		held[id] = true
	}
	gone := map[string][]string{} // address -> members away
	for _, id := range away {
		if a := pr.away.addr[id]; a != "" {
			gone[a] = append(gone[a], id)
		}
	}
	out := away
	for a, ids := range gone {
		news := fresh[a]
		if len(ids) != 1 || len(news) != 1 {
			continue
		}
		if !held[ids[0]] {
			// Still in replica sets: the table being made moves it to
			// the held slots (and the member at its address, new to the
			// table, gets none meanwhile); the next one hands them over.
			// Renaming a replica would make the new id a replica since
			// the old one's time, with a copy it does not have.
			pr.away.handOver = true
			continue
		}
		old, now := ids[0], news[0]
		base = base.Reclaimed(old, now)
		out = slices.DeleteFunc(slices.Clone(out), func(id string) bool { return id == old })
		delete(pr.away.since, old)
		delete(pr.away.addr, old)
		pr.log.Info("stowage: a member back under a new id takes the slots held for its old one", "member", now, "was", old, "addr", a)
	}
	return base, out
}

// handOverNext makes the master loop run again at once when the table
// just installed holds slots that reclaim hands over in the next one.
func (pr *Protocol) handOverNext() {
	if pr.away.handOver {
		pr.kickLoop()
	}
}

// restartedOver returns ms without the members that another member of
// ms at the same address started after: one process listens at an
// address, so the older is a process that is gone (killed and started
// again) and that failure detection has not declared dead yet. Its
// slots are held for the member at its address (reclaim) at once. Only
// with a grace; never this member itself.
func (pr *Protocol) restartedOver(ms []Member) []Member {
	if pr.grace <= 0 {
		return ms
	}
	newest := map[string]Member{}
	for _, m := range ms {
		if l, ok := newest[m.Addr]; m.Addr != "" && (!ok || m.Started.After(l.Started)) {
			newest[m.Addr] = m
		}
	}
	out := make([]Member, 0, len(ms))
	for _, m := range ms {
		if l, ok := newest[m.Addr]; ok && m.ID != pr.self && l.Started.After(m.Started) {
			continue
		}
		out = append(out, m)
	}
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
	return maps.Equal(a.Departed, b.Departed)
}
