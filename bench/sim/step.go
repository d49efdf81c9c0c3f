package sim

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// change applies one membership change and measures it until the cluster
// converged, then watches the idle cluster's control traffic.
func (s *sim) change(ctx context.Context, what string, do func() error) (Step, error) {
	before := s.tableOf(s.live())
	oldMaster := ""
	if live := s.live(); len(live) > 0 {
		oldMaster = live[0].id
	}
	t0, l0, d0 := s.table.Load(), s.lease.Load(), s.data.Load()
	s.mu.Lock()
	s.changedAt = time.Time{}
	s.mu.Unlock()
	if err := do(); err != nil {
		return Step{}, fmt.Errorf("sim: %s: %w", what, err)
	}
	// The change starts when the others could see it: a member joins
	// once it started and the views show it, a member fails once the
	// views lose it (the time to start or stop a member is not the
	// cluster's convergence).
	s.mu.Lock()
	start := s.changedAt
	s.mu.Unlock()
	if start.IsZero() {
		start = time.Now()
	}
	st := Step{What: what, Members: len(s.live())}
	var newMaster time.Duration
	for {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		live := s.live()
		if newMaster == 0 && what == "kill master" && s.sameTableFrom(live, oldMaster, before.version) {
			newMaster = time.Since(start)
		}
		same := s.sameTable(live)
		switch {
		case !same:
			st.Tables = 0
		case st.Tables == 0:
			st.Tables = time.Since(start)
		}
		if same && s.converged(ctx, live) {
			break
		}
		if time.Since(start) > 2*time.Minute {
			return st, fmt.Errorf("sim: %s to %d members: not converged within 2 minutes", what, len(live))
		}
		time.Sleep(2 * time.Millisecond) // polling interval
	}
	st.Converge = time.Since(start)
	st.NewMaster = newMaster
	st.TableBytes, st.LeaseBytes, st.DataBytes = s.table.Load()-t0, s.lease.Load()-l0, s.data.Load()-d0
	after := s.tableOf(s.live())
	st.Owners, st.Copies = moved(before.owners, after.owners)
	st.Ideal = ideal(what, before.owners, after.owners, s.live(), s.o.Backups)
	t1, l1 := s.table.Load(), s.lease.Load()
	time.Sleep(s.o.Quiet)
	per := float64(len(s.live())) * s.o.Quiet.Seconds()
	st.QuietTable, st.QuietLease = float64(s.table.Load()-t1)/per, float64(s.lease.Load()-l1)/per
	st.ControlPerMember = st.QuietTable + st.QuietLease
	return st, nil
}

type tableView struct {
	version int64
	owners  [][]string
}

// tableOf returns the table of the newest member that has one.
func (s *sim) tableOf(live []*member) tableView {
	var tv tableView
	for _, m := range live {
		pt := m.node.PartitionTable()
		if pt.Version > tv.version {
			tv = tableView{version: pt.Version, owners: pt.Replicas}
		}
	}
	return tv
}

// converged reports whether every live member has the same table, naming
// only live members, serves every partition it owns and has every backup
// filled. The first member's Safe asks every other member (N-1 calls) for
// exactly that against its own table version; asking every member's
// Loaded and Safe in turn would make each poll N² calls, which at 100
// members takes longer than the change it measures and loads the
// members it waits for.
func (s *sim) converged(ctx context.Context, live []*member) bool {
	if !s.sameTable(live) {
		return false
	}
	return len(live) > 0 && live[0].node.Safe(ctx)
}

// sameTable reports whether every live member has installed the same
// table version, one naming only live members and, where it has a slot
// for each, every live member: a member that joined may fetch the
// table before the master made one with it (from an answer that showed
// it), and the cluster has not taken the join in before the master's
// next table.
func (s *sim) sameTable(live []*member) bool {
	var v int64
	ids := map[string]bool{}
	for _, m := range live {
		ids[m.id] = true
	}
	for i, m := range live {
		pt := m.node.PartitionTable()
		if i == 0 {
			v = pt.Version
			named := map[string]bool{}
			slots := 0
			for _, rs := range pt.Replicas {
				slots += len(rs)
				for _, id := range rs {
					if !ids[id] {
						return false
					}
					named[id] = true
				}
			}
			if slots >= len(live) && len(named) < len(live) {
				return false
			}
		}
		if pt.Version != v || pt.Version == 0 {
			return false
		}
	}
	return true
}

// sameTableFrom reports whether every live member has a table newer than
// old that does not name the dead master.
func (s *sim) sameTableFrom(live []*member, dead string, old int64) bool {
	for _, m := range live {
		pt := m.node.PartitionTable()
		if pt.Version <= old {
			return false
		}
		for _, rs := range pt.Replicas {
			if slices.Contains(rs, dead) {
				return false
			}
		}
	}
	return true
}

// moved counts the partitions whose owner changed and the replica slots
// held by a member that was not a replica of the partition before.
func moved(before, after [][]string) (owners, copies int) {
	for p, rs := range after {
		var prev []string
		if p < len(before) {
			prev = before[p]
		}
		if len(rs) > 0 && (len(prev) == 0 || prev[0] != rs[0]) {
			owners++
		}
		for _, m := range rs {
			if !slices.Contains(prev, m) {
				copies++
			}
		}
	}
	return owners, copies
}

// ideal is the least number of copies a change needs: on a join the new
// member's share of the replicas, on a failure the replicas the failed
// members held (each must be made again elsewhere).
func ideal(what string, before, after [][]string, live []*member, backups int) float64 {
	ids := map[string]bool{}
	for _, m := range live {
		ids[m.id] = true
	}
	if what == "join" {
		r := min(backups+1, len(live))
		return float64(len(after)*r) / float64(len(live))
	}
	lost := 0
	for _, rs := range before {
		for _, m := range rs {
			if !ids[m] {
				lost++
			}
		}
	}
	return float64(lost)
}
