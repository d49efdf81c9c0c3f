package filestore

import (
	"context"
	"fmt"

	"github.com/stowage/stowage/mapstore"
)

// The log budget (logBudget) bounds the bytes compaction could free, but
// the store knows only how many bytes its log holds, not how many of them
// are dead: a map written with new keys has a log that is all live, and
// snapshotting every partition of it rewrites the log's bytes into
// snapshots and frees nothing. So when the log first goes over its budget
// while written, the store asks the snapshot source, which holds the live
// entries, how many bytes are live (a liveCheck), and snapshots
// everything only if the dead bytes (snapshots' live bytes plus the log,
// less what is live) are over the budget. The budget is still taken of
// the snapshots' live bytes, and until the next check every byte written
// since counts as dead twice over (deadEstimate), so that the disk bound holds whatever the writes
// are: a check only postpones a compaction until the dead bytes, not the
// log, are over the budget. A log under logSlack (smaller
// segments make a smaller budget) is snapshotted as before without a
// check: that rewrites little, and rolls the segment being written more
// often, so that little is left in it once the map is idle.

// liveCheck is what the last check found.
type liveCheck struct {
	ok   bool
	log  int64 // collectable log bytes at the check
	dead int64 // estimated dead bytes at the check
}

// deadEstimate returns the bytes compaction could free by snapshotting
// every owned partition: after a check, what it found dead plus twice
// every log byte written since; without one, the whole log. Twice: a
// byte written since may be dead, and once the log is collected the
// snapshots that let it go take about as much again while both are on
// disk, so that a postponed compaction starts early enough for the peak
// while written to stay where it was without a check
// (TestSmallMapDiskStaysBounded). s.mu held.
func (s *Store) deadEstimate() int64 {
	logBytes := s.collectableBytes()
	if !s.check.ok {
		return logBytes
	}
	return s.check.dead + 2*max(0, logBytes-s.check.log)
}

// checkLive asks the source (LiveSizes if set, else src) for the live
// entries of every owned partition and
// records what is dead (liveCheck): of the partition's newest snapshot,
// its live bytes less those of the entries it still holds (versions up
// to its own); of the log, its bytes less the records of the entries
// written since (their framed size). The log of partitions this store
// does not own counts as dead.
func (s *Store) checkLive(ctx context.Context, src mapstore.SnapshotSource) error {
	s.mu.Lock()
	owned := make([]int, 0, s.parts)
	for p := 0; p < s.parts; p++ {
		if s.owned[p] {
			owned = append(owned, p)
		}
	}
	s.mu.Unlock()
	s.mu.Lock()
	sizes := s.sizes
	s.mu.Unlock()
	var inLog, snapDead int64
	for _, p := range owned {
		s.mu.Lock()
		var upto mapstore.Version
		sn := s.snaps[p]
		if n := len(sn); n > 0 {
			upto = sn[n-1].upto
		}
		snapLive := s.liveBytes[p]
		s.mu.Unlock()
		var inSnap int64
		count := func(keyLen, valueLen int, v mapstore.Version, exp int64) {
			if len(sn) > 0 && !upto.Less(v) {
				inSnap += int64(keyLen + valueLen)
			} else {
				inLog += int64(recordSizeOf(p, v, keyLen, valueLen, exp))
			}
		}
		var err error
		if sizes != nil {
			err = sizes(ctx, p, count)
		} else {
			var entries []mapstore.Record
			entries, _, err = src(ctx, p)
			for i := range entries {
				e := &entries[i]
				count(len(e.Key), len(e.Value), e.Version, e.Expires)
			}
		}
		if err != nil {
			s.mu.Lock()
			released := !s.owned[p]
			s.mu.Unlock()
			if released {
				continue // the source no longer serves p, nor counts it
			}
			return fmt.Errorf("stowage/mapstore/filestore: live entries of partition %d: %w", p, err)
		}
		snapDead += max(0, snapLive-inSnap)
	}
	s.mu.Lock()
	logBytes := s.collectableBytes()
	s.check = liveCheck{ok: true, log: logBytes, dead: snapDead + max(0, logBytes-inLog)}
	s.mu.Unlock()
	return nil
}
