package filestore

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/mapstore"
)

// Release tells the store that this member no longer owns partition p:
// another member took it over (fail-over or migration). From then on the
// store does not snapshot p, and it drops whatever the SnapshotSource
// returns for p from a call that overlaps Release, so the source may stop
// serving p as soon as Release returns (not before: call Release first). A
// snapshot of p whose entries were taken before Release may still be
// written; it is as of a version older than the new owner's.
//
// The log records Open scanned for p are dropped, and a later
// ReplayPartition or LoadPartition of p reads storage afresh, since other
// members may have written p meanwhile. In a cluster, release every
// partition the member does not own once it knows, also those it never
// loaded: that frees what Open scanned for them. This member's log files
// that hold records of p are deleted once snapshots written by p's new
// owner cover them (learnt by a refresh, see Options.RefreshInterval).
//
// A p out of range, or a closed store, is ignored. Release is safe for
// concurrent use.
func (s *Store) Release(p int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p < 0 || p >= s.parts || s.closed {
		return
	}
	s.owned[p], s.acquired[p] = false, false
	s.ownGen[p]++
	s.pending[p], s.stale[p] = nil, true
	s.dropPre(p)
}

// Acquire tells the store that this member now owns partition p and that
// p's live entries are in the caller's memory, served by the
// SnapshotSource: they came from the previous owner, not from storage, so
// p is not loaded. The store snapshots p soon after Acquire, whatever its
// log size, so that the log files of other runs holding records of p can
// be collected; before it writes that snapshot it lists the snapshots of p
// any run wrote, and once its own is durable and read back it replaces
// them (keeping SnapshotRetain). From then on p is snapshotted like a
// loaded partition. The log records Open scanned for p are dropped.
//
// A p out of range, or a closed store, is ignored. Acquire is safe for
// concurrent use.
func (s *Store) Acquire(p int) {
	s.mu.Lock()
	if p < 0 || p >= s.parts || s.closed {
		s.mu.Unlock()
		return
	}
	s.owned[p], s.acquired[p] = true, true
	s.ownGen[p]++
	s.pending[p], s.stale[p] = nil, true
	s.dropPre(p)
	s.mu.Unlock()
	select {
	case s.compactC <- struct{}{}:
	default:
	}
}

// adopt makes the snapshots of partition p on storage, whoever wrote them,
// p's known snapshots, so that the snapshot this store writes after
// Acquire replaces them. Listed snapshots that this store would rely on
// are read back first: the newest as new as upto (then no new snapshot is
// needed: done) and, with SnapshotRetain 2, the newest older one, which
// stays as the fallback. One that does not read back clean is reported
// and removed.
func (s *Store) adopt(ctx context.Context, p int, gen uint64, upto mapstore.Version) (done bool, err error) {
	dir := snapDir(s.gen, p)
	list, err := s.fs.List(ctx, dir)
	if err != nil {
		return false, fmt.Errorf("stowage/mapstore/filestore: list %s: %w", dir, err)
	}
	var listed []snapFile
	for _, fi := range list {
		if q, v, ok := parseSnapName(fi.Name); ok && q == p {
			listed = append(listed, snapFile{name: fi.Name, upto: v, bytes: fi.Size})
		}
	}
	sort.Slice(listed, func(i, j int) bool { return listed[i].upto.Less(listed[j].upto) })
	var keep []snapFile
	fallback := s.opts.SnapshotRetain - 1
	for i := len(listed) - 1; i >= 0; i-- {
		sf := listed[i]
		newer := !sf.upto.Less(upto)
		if newer && len(keep) > 0 {
			keep = append(keep, sf) // older than a clean one as new as upto
			continue
		}
		if !newer && fallback <= 0 {
			keep = append(keep, sf) // replaced by this store's snapshot
			continue
		}
		if _, _, rerr := s.readSnapshot(ctx, sf.name, p); rerr != nil {
			// Loading skips it anyway; this store's memory is the truth.
			s.damage(Damage{File: sf.name, Reason: "snapshot of an acquired partition unusable, removed: " + rerr.Error()})
			if err := s.fs.Remove(ctx, sf.name); err != nil && !errors.Is(err, fsbackend.ErrNotExist) {
				return false, fmt.Errorf("stowage/mapstore/filestore: remove %s: %w", sf.name, err)
			}
			continue
		}
		if !newer {
			fallback--
		}
		keep = append(keep, sf)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.owned[p] || s.ownGen[p] != gen {
		return true, nil // released or acquired again meanwhile
	}
	// The listing is the truth: snapshots known here that are gone were
	// replaced by another owner.
	sort.Slice(keep, func(i, j int) bool { return keep[i].upto.Less(keep[j].upto) })
	s.snaps[p] = keep
	sn := keep
	if n := len(sn); n > 0 && !sn[n-1].upto.Less(upto) {
		// A snapshot as new as the memory is on storage already.
		s.since[p], s.liveBytes[p], s.acquired[p] = 0, sn[n-1].bytes, false
		return true, nil
	}
	return false, nil
}
