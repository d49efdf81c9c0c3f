package dmap

import (
	"context"
	"fmt"
	"slices"

	"github.com/stowage/stowage/backup"
	"github.com/stowage/stowage/mapstore"
)

// The engine is the replicator's Holder: the map side of exports, fills,
// backup records and take-overs.
var _ backup.Holder = (*holder)(nil)

// holder is the engine as backup.Holder sees it.
type holder struct{ n *Engine }

// Export collects partition p of every map: those ready (owner) or
// filled (backup) here; pos > 0 keeps the maps with at least pos backups.
func (h holder) Export(p int, owner bool, pos int) backup.PartData {
	pd := backup.PartData{P: p}
	for _, c := range h.n.heldMaps() {
		if pos > 0 && pos > c.sync+c.async {
			continue
		}
		pt := c.parts[p]
		pt.mu.Lock()
		ok := pt.ready || pt.loaded
		if !owner {
			ok = pt.filled
		}
		pt.mu.Unlock()
		if ok {
			pd.Maps = append(pd.Maps, c.export(pt, owner))
		}
	}
	return pd
}

// MaxSyncBackups is the most synchronous backups any map keeps.
func (h holder) MaxSyncBackups() int {
	n := 0
	for _, c := range h.n.heldMaps() {
		n = max(n, c.sync)
	}
	return n
}

// SeqSum is the sum of partition p's last seqs over the maps.
func (h holder) SeqSum(p int) uint64 {
	var s uint64
	for _, c := range h.n.heldMaps() {
		pt := c.parts[p]
		pt.mu.Lock()
		s += pt.ver.Seq
		pt.mu.Unlock()
	}
	return s
}

// Drop forgets what this member holds of partition p.
func (h holder) Drop(p int) {
	for _, c := range h.n.heldMaps() {
		c.clearPart(c.parts[p])
	}
}

// ReleaseStores tells the map stores this member no longer owns p.
func (h holder) ReleaseStores(p int) {
	for _, c := range h.n.heldMaps() {
		if o, ok := c.store.(mapstore.PartitionOwner); ok {
			o.Release(p)
		}
	}
}

// PrepareFill holds the maps data names and returns the step that
// installs them (under the replica's lock).
func (h holder) PrepareFill(ctx context.Context, data backup.PartData, partial bool) (func() error, error) {
	p := data.P
	named := map[string]*heldMap{}
	for _, mp := range data.Maps {
		c, err := h.n.hold(ctx, mp.Map)
		if err != nil {
			return nil, err
		}
		named[mp.Map] = c
	}
	held := h.n.heldMaps()
	return func() error {
		keeps, err := deltaKeeps(named, &data)
		if err != nil {
			return err
		}
		if !partial {
			for _, c := range held {
				if named[c.name] == nil {
					c.clearPart(c.parts[p])
				}
			}
		}
		for _, mp := range data.Maps {
			c := named[mp.Map]
			pt := c.parts[p]
			c.replace(pt, mp, keeps[mp.Map])
			pt.mu.Lock()
			pt.filled, pt.ready, pt.loaded = true, false, false
			pt.mu.Unlock()
		}
		return nil
	}, nil
}

// Digest sums up partition p of every map held here.
func (h holder) Digest(p int) []backup.Digest {
	var out []backup.Digest
	for _, c := range h.n.heldMaps() {
		if d := c.digest(c.parts[p]); d != nil {
			out = append(out, *d)
		}
	}
	return out
}

// PrepareApply holds rec's map and returns the step that applies rec to
// the backup's copy (under the replica's lock).
func (h holder) PrepareApply(ctx context.Context, rec *backup.Record, revert bool) (func() error, error) {
	c, err := h.n.hold(ctx, rec.Map)
	if err != nil {
		return nil, err
	}
	return func() error { return c.applyBackup(c.parts[rec.P], rec, revert) }, nil
}

// TakeOver installs partition p of every map for a new owner from src
// and starts the new epoch.
func (h holder) TakeOver(ctx context.Context, p int, src backup.Source, pick func(seen uint64) uint64) (uint64, error) {
	held := h.n.heldMaps()
	var have map[string]*backup.MapPart
	if src.Data != nil {
		have = make(map[string]*backup.MapPart, len(src.Data.Maps))
		for i := range src.Data.Maps {
			have[src.Data.Maps[i].Map] = &src.Data.Maps[i]
		}
		for name := range have {
			if !slices.ContainsFunc(held, func(c *heldMap) bool { return c.name == name }) {
				c, err := h.n.hold(ctx, name)
				if err != nil {
					return 0, err
				}
				held = append(held, c)
			}
		}
	}
	var keeps map[string]map[string]entry
	if src.Data != nil {
		named := make(map[string]*heldMap, len(held))
		for _, c := range held {
			named[c.name] = c
		}
		var err error
		if keeps, err = deltaKeeps(named, src.Data); err != nil {
			return 0, err
		}
	}
	var seen uint64
	fromStore := map[*heldMap]bool{}
	for _, c := range held {
		pt := c.parts[p]
		switch {
		case src.Promoted && c.store != nil && (c.sync == 0 || src.Stale):
			// A persisted map with no sync backup is not taken from a
			// backup's copy: only async backups held it, and they may lack
			// acknowledged writes, which the store has (and an epoch
			// started from the copy would drop from the store at
			// recovery). So is a copy that may lack writes (Stale).
			// Memory-only maps keep Hazelcast's async semantics: the copy
			// is the best there is.
			fromStore[c] = true
			if c.lazy {
				c.clearPart(pt) // read from the store when made ready
				break
			}
			if _, err := c.loadFromStore(ctx, pt); err != nil {
				return 0, err
			}
		case src.Data != nil:
			if mp := have[c.name]; mp != nil {
				c.replace(pt, *mp, keeps[mp.Map])
				pt.mu.Lock()
				pt.loaded = true
				pt.mu.Unlock()
				if o, ok := c.store.(mapstore.PartitionOwner); ok {
					o.Acquire(p)
				}
			} else {
				c.clearPart(pt)
			}
		case src.Store:
			if c.store != nil && !c.lazy {
				if _, err := c.loadFromStore(ctx, pt); err != nil {
					return 0, err
				}
			} else {
				c.clearPart(pt)
			}
		default: // this member's own data (held, or a filled backup)
			pt.mu.Lock()
			whole := pt.ready || pt.loaded
			if !src.OwnHeld {
				whole = pt.filled // a backup holds only the maps it was filled with
			}
			pt.mu.Unlock()
			if !whole {
				c.clearPart(pt) // read from the store when made ready, if persisted
				break
			}
			pt.mu.Lock()
			pt.loaded = true
			pt.mu.Unlock()
			if o, ok := c.store.(mapstore.PartitionOwner); ok {
				o.Acquire(p)
			}
		}
		pt.mu.Lock()
		seen = max(seen, pt.ver.Epoch)
		pt.mu.Unlock()
		if vs, ok := c.store.(mapstore.LastVersioner); ok {
			seen = max(seen, vs.LastVersion(p).Epoch)
		}
	}
	epoch := pick(seen)
	// What is kept from the old epoch: everything up to the last seq
	// without a gap. Owner data (the store's, or held here) has none; a
	// backup's data says where its gap-free part ends.
	gapFree := src.Store || src.OwnHeld
	for _, c := range held {
		pt := c.parts[p]
		pt.mu.Lock()
		if gapFree || fromStore[c] {
			pt.applied, pt.above = pt.ver.Seq, nil
		}
		pt.ver = mapstore.Version{Epoch: epoch, Seq: pt.applied}
		pt.ready = pt.loaded || c.store == nil
		pt.filled = false
		c.touchAll(pt, nowNanos())
		pt.mu.Unlock()
		if !src.OwnHeld {
			c.queueTaken(pt) // write-behind: what the copy had not seen stored
		}
	}
	return epoch, nil
}

// RecordEpochStarts makes the epoch starts durable, one batch per map
// store, for the partitions whose data a map holds.
func (h holder) RecordEpochStarts(ctx context.Context, starts map[int]uint64) error {
	for _, c := range h.n.heldMaps() {
		es, isES := c.store.(mapstore.EpochStarter)
		if !isES {
			continue
		}
		vs := map[int]mapstore.Version{}
		for p, epoch := range starts {
			pt := c.parts[p]
			pt.mu.Lock()
			if pt.loaded {
				vs[p] = mapstore.Version{Epoch: epoch, Seq: pt.ver.Seq}
			}
			pt.mu.Unlock()
		}
		if len(vs) == 0 {
			continue
		}
		if err := es.StartEpochs(ctx, vs); err != nil {
			return fmt.Errorf("stowage: map %q: record epoch starts: %w", c.name, err)
		}
	}
	return nil
}

// RewriteAbove writes again, in the new epoch, the current state of
// every key a backup applied beyond its last gap-free seq: recovery drops
// the old epoch's records above that seq (invariant 2).
func (h holder) RewriteAbove(ctx context.Context, p int) error {
	for _, c := range h.n.heldMaps() {
		pt := c.parts[p]
		pt.mu.Lock()
		above := pt.above
		pt.above = nil
		seqs := make([]uint64, 0, len(above))
		for s := range above {
			seqs = append(seqs, s)
		}
		slices.Sort(seqs)
		var recs []mapstore.Record
		seen := map[string]bool{}
		for _, s := range seqs {
			k := above[s]
			if k == nil || seen[string(k)] {
				continue
			}
			seen[string(k)] = true
			pt.ver.Seq++
			e, ok := pt.entries[string(k)]
			if ok {
				e.ver = pt.ver
				pt.entries[string(k)] = e
			}
			recs = append(recs, mapstore.Record{Partition: p, Version: pt.ver, Key: k, Value: e.val(), Deleted: !ok, Expires: e.exp})
		}
		pt.applied = pt.ver.Seq
		pt.mu.Unlock()
		if c.store == nil {
			continue
		}
		for _, r := range recs {
			if err := c.storeRecord(ctx, r); err != nil {
				return fmt.Errorf("stowage: map %q partition %d: write again what the old epoch left open: %w", c.name, p, err)
			}
		}
	}
	return nil
}

// Activated loads, for the EAGER maps whose part the copy lacked (made
// while the take-over ran, or kept with fewer backups than the copy's
// holder had), partition p now.
func (h holder) Activated(ctx context.Context, p int) {
	for _, c := range h.n.heldMaps() {
		if c.store != nil && !c.lazy {
			if err := c.readyPart(ctx, c.parts[p]); err != nil && !isMoved(err) {
				h.n.log.Warn("stowage: loading a partition failed; it loads on first use", "map", c.name, "partition", p, "err", err)
			}
		}
	}
	h.n.loaded.changed()
}
