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
// since counts as dead, so that the disk bound holds whatever the writes
// are: a check only postpones a compaction until the dead bytes, not the
// log, are over the budget (a log's framing counts as dead: snapshots
// hold the same entries in fewer bytes). A log under logSlack (smaller
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
// every owned partition: after a check, what it found dead plus every log
// byte written since; without one, the whole log. s.mu held.
func (s *Store) deadEstimate() int64 {
	logBytes := s.collectableBytes()
	if !s.check.ok {
		return logBytes
	}
	return s.check.dead + max(0, logBytes-s.check.log)
}

// checkLive asks src for the live bytes of every owned partition and
// records what is dead (liveCheck). Partitions liveTotal counts that this
// store does not own count with their snapshots' live bytes.
func (s *Store) checkLive(ctx context.Context, src mapstore.SnapshotSource) error {
	s.mu.Lock()
	owned := make([]int, 0, s.parts)
	var live int64
	for p := 0; p < s.parts; p++ {
		switch {
		case s.owned[p]:
			owned = append(owned, p)
		case !s.shared():
			live += s.liveBytes[p]
		}
	}
	s.mu.Unlock()
	for _, p := range owned {
		entries, _, err := src(ctx, p)
		if err != nil {
			s.mu.Lock()
			released := !s.owned[p]
			s.mu.Unlock()
			if released {
				continue // the source no longer serves p, nor counts it
			}
			return fmt.Errorf("stowage/mapstore/filestore: snapshot source for partition %d: %w", p, err)
		}
		for i := range entries {
			live += int64(len(entries[i].Key) + len(entries[i].Value))
		}
	}
	s.mu.Lock()
	logBytes := s.collectableBytes()
	s.check = liveCheck{ok: true, log: logBytes, dead: max(0, s.liveTotal()+logBytes-live)}
	s.mu.Unlock()
	return nil
}
