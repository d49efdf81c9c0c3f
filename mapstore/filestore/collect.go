package filestore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/mapstore"
)

// shared reports whether other member runs may use the map directory at
// the same time (Options.IsLive is set).
func (s *Store) shared() bool { return s.opts.IsLive != nil }

// liveness is what Options.IsLive said about other runs, asked once per
// compaction. Nil means no other run is live (IsLive unset).
type liveness map[string]bool

// dead reports whether run is known to write no more. A run not asked
// about yet counts as live.
func (l liveness) dead(run string) bool {
	if l == nil {
		return true
	}
	live, asked := l[run]
	return asked && !live
}

// liveness asks Options.IsLive, without s.mu held, about every other run
// with log files known here, and updates which of those files count
// against the log budget: only those of runs that are not live, which
// this store may collect. It returns nil when IsLive is unset.
func (s *Store) liveness() liveness {
	if !s.shared() {
		return nil
	}
	s.mu.Lock()
	live := liveness{}
	for _, lf := range s.files {
		if !lf.own {
			live[lf.run] = true
		}
	}
	s.mu.Unlock()
	for run := range live {
		live[run] = s.opts.IsLive(run)
	}
	s.mu.Lock()
	for _, lf := range s.files {
		if lf.own {
			continue
		}
		if isLive, asked := live[lf.run]; asked && isLive == lf.counted {
			lf.counted = !isLive
			if lf.counted {
				s.logTotal += lf.size
			} else {
				s.logTotal -= lf.size
			}
		}
	}
	s.mu.Unlock()
	return live
}

// covered reports whether partition p's changes up to v are in the oldest
// snapshot kept, so log records up to v are no longer needed. s.mu held.
func (s *Store) covered(p int, v mapstore.Version) bool {
	sn := s.snaps[p]
	if len(sn) < s.opts.SnapshotRetain || len(sn) == 0 {
		return false
	}
	return !sn[len(sn)-s.opts.SnapshotRetain].upto.Less(v)
}

// collect deletes snapshots beyond SnapshotRetain and the log files this
// store may delete whose every record is covered by the snapshots kept.
// A log file may be deleted by this store if it is its own finished file,
// or belongs to a run that is not live and was read in full after that
// run ended. When files are held back only by partitions owned elsewhere,
// or by another run's files not read since it ended, a refresh (at most
// every RefreshInterval, and only when the directory is shared) learns
// what other runs wrote since and lets them go.
func (s *Store) collect(ctx context.Context, live liveness) error {
	if s.fenced() {
		return nil
	}
	logs, drop, waiting, need := s.collectable(live)
	var rerr error
	if s.refreshDue(need) {
		var more []string
		more, rerr = s.refresh(ctx, live, waiting)
		l2, d2, _, _ := s.collectable(live)
		s.refreshHelped(len(l2)+len(d2)+len(more) > 0)
		logs, drop = append(logs, l2...), append(append(drop, d2...), more...)
	}
	if s.tookStep(len(logs)+len(drop) > 0) {
		defer s.progressed()
	}
	// Log files go first: a snapshot is only dropped once nothing older
	// than the snapshots kept is left to fall back to. Another member may
	// remove the same file at the same time; a missing file is fine.
	// The fence is asked again before each removal: a compaction that
	// began before it came must not go on deleting after it. Files left
	// out here are found again by the next load.
	for _, name := range append(logs, drop...) {
		if s.fenced() {
			return rerr
		}
		if err := s.fs.Remove(ctx, name); err != nil && !errors.Is(err, fsbackend.ErrNotExist) {
			return fmt.Errorf("stowage/mapstore/filestore: remove %s: %w", name, err)
		}
	}
	return rerr
}

// collectable takes out of s.files the log files that may be deleted now
// and picks the snapshots beyond SnapshotRetain of the partitions this
// store manages. need reports whether a refresh could let more files go:
// some file is held back only by partitions this store does not own (those
// are waiting), or is another ended run's file not read since it ended.
func (s *Store) collectable(live liveness) (logs, drop []string, waiting map[int]bool, need bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for p := range s.snaps {
		if s.shared() && !s.owned[p] {
			continue // the owner manages them
		}
		if n := len(s.snaps[p]); n > s.opts.SnapshotRetain {
			for _, sf := range s.snaps[p][:n-s.opts.SnapshotRetain] {
				drop = append(drop, sf.name)
			}
			s.snaps[p] = append([]snapFile(nil), s.snaps[p][n-s.opts.SnapshotRetain:]...)
		}
	}
	var held int64
	for name, lf := range s.files {
		if lf.active {
			continue
		}
		if !lf.own {
			if !live.dead(lf.run) {
				continue // its run may still write it
			}
			if !lf.final {
				need, held = true, held+lf.size
				continue
			}
		}
		ok, elsewhere := true, true
		for p, v := range lf.maxVer {
			if !s.covered(p, v) {
				ok = false
				if s.owned[p] {
					elsewhere = false
					break
				}
			}
		}
		switch {
		case ok:
			logs = append(logs, name)
			if lf.counted {
				s.logTotal -= lf.size
			}
			delete(s.files, name)
		case elsewhere:
			need = true
			if lf.counted {
				held += lf.size
			}
			if !s.shared() {
				continue // nothing to wait for: no other run writes snapshots
			}
			if waiting == nil {
				waiting = map[int]bool{}
			}
			for p, v := range lf.maxVer {
				if !s.covered(p, v) {
					waiting[p] = true
				}
			}
		}
	}
	s.held = held
	return logs, drop, waiting, need
}

// logSlack is the most of the log budget that does not grow with the
// live bytes (the rest is CompactRatio of them): enough that a small map
// is not snapshotted after every few writes, small enough that its disk
// stays within a few MiB of its live bytes whatever the segment size.
const logSlack = 4 << 20

// slack is the part of the log budget that does not depend on the live
// bytes: logSlack, or half a segment if that is less.
func (s *Store) slack() int64 { return min(s.opts.SegmentSize/2, logSlack) }

// logBudget is the log size above which the segment being written is
// finished and every partition with records in the log is snapshotted,
// so that the log's dead records go: CompactRatio of the live bytes plus
// the slack. Admit holds writes back at twice the budget, so while a map
// is written its disk stays within about twice the live bytes plus twice
// the slack (invariant 5). s.mu held.
func (s *Store) logBudget(live int64) int64 {
	return int64(float64(live)*s.opts.CompactRatio) + s.slack()
}

// idleBudget is the log size a store that has written nothing for
// quietAfter brings its log under: CompactRatio of the live bytes, or
// minSnapshotLog if that is more. An idle map thus takes its snapshots
// (about its live bytes) plus at most that: within max(1.5x live, live +
// 64 KiB), so that a small map (a metrics map of 100 KB) does not keep a
// few MiB of dead records while nothing is written. The snapshots
// this takes write at most the live bytes of the partitions with records
// in the log, no more than twice what they free (see overIdleBudget), and
// only once per idle period. s.mu held.
func (s *Store) idleBudget(live int64) int64 {
	return max(int64(float64(live)*s.opts.CompactRatio), minSnapshotLog)
}

// overIdleBudget reports whether snapshotting every partition with
// records in the log would free more than the idle budget of the live
// bytes left: the log, plus what the deletes since the snapshots
// (expired entries, say) leave dead in them. s.mu held.
func (s *Store) overIdleBudget() bool {
	dead := s.deadInSnapshots()
	return s.collectableBytes()+dead > s.idleBudget(s.liveTotal()-dead)
}

// deadInSnapshots estimates the bytes of the newest snapshots that
// deletes written since have made dead, over the partitions liveTotal
// counts: per partition, its deletes times the mean entry of its
// snapshot, at most the snapshot's live bytes. A delete of a key written
// after the snapshot counts too; the estimate only decides when an idle
// map is snapshotted. s.mu held.
func (s *Store) deadInSnapshots() int64 {
	var dead int64
	for p, d := range s.deleted {
		if d == 0 || s.entries[p] == 0 || (s.shared() && !s.owned[p]) {
			continue
		}
		dead += int64(float64(min(d, s.entries[p])) / float64(s.entries[p]) * float64(s.liveBytes[p]))
	}
	return dead
}

// countDeletes notes the deletes among rs, once they are durable.
func (s *Store) countDeletes(rs []mapstore.Record, err error) {
	if err != nil {
		return
	}
	s.mu.Lock()
	for i := range rs {
		s.deleted[rs[i].Partition]++
	}
	s.mu.Unlock()
}

// liveTotal is the live bytes the log budget is measured against: of every
// partition, or, when the directory is shared, of the partitions this
// store owns (the others' logs are their owners' to bound). s.mu held.
func (s *Store) liveTotal() int64 {
	var live int64
	for p, b := range s.liveBytes {
		if !s.shared() || s.owned[p] {
			live += b
		}
	}
	return live
}

// collectableBytes is the log this store can shrink by snapshotting its
// own partitions. s.mu held.
func (s *Store) collectableBytes() int64 {
	if s.shared() {
		return s.logTotal - s.held
	}
	return s.logTotal
}

// tookStep reports whether this compaction made progress: it deletes
// files, or wrote a snapshot (which may have raised the budget).
func (s *Store) tookStep(deletes bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	step := deletes || s.snapped
	s.snapped = false
	return step
}

// progressed wakes writers waiting in Admit.
func (s *Store) progressed() {
	s.mu.Lock()
	close(s.progress)
	s.progress = make(chan struct{})
	s.mu.Unlock()
}

// Admit implements the map's write throttle: while the log is more than
// twice its budget (compaction has fallen behind the writers), a new write
// waits for compaction to make progress, for at most a second without
// progress, so that disk stays bounded whatever the overwrite rate. Only
// log files this store may collect count: its own, and those of runs that
// are not live, so another live member's files never hold it back; when
// the directory is shared, neither do files that wait only for snapshots
// of partitions owned elsewhere (their owners snapshot them soon after
// taking them over). The map calls it before it gives the write a
// version, so waiting writes never hold back the snapshots that would
// release them.
func (s *Store) Admit(ctx context.Context) error {
	for {
		s.mu.Lock()
		over := s.source != nil && !s.closed && s.deadEstimate() > 2*s.logBudget(s.liveTotal())
		ch := s.progress
		s.mu.Unlock()
		if !over {
			return nil
		}
		select {
		case s.compactC <- struct{}{}:
		default:
		}
		t := time.NewTimer(time.Second)
		select {
		case <-ch:
			t.Stop()
		case <-t.C:
			return nil // no progress: let the write through rather than stall forever
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
}

// fenced reports whether Options.Fence refuses background changes to
// storage now.
func (s *Store) fenced() bool {
	if s.opts.Fence == nil {
		return false
	}
	if err := s.opts.Fence(); err != nil {
		s.log.Debug("stowage/mapstore/filestore: compaction waits for the fence", "err", err)
		return true
	}
	return false
}
