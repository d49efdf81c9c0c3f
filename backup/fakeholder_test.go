package backup_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/stowage/stowage/backup"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/partition"
)

// fakeHolder is a Holder of one memory-only map, "m": what the map engine
// does with a partition's data, without the engine.
type fakeHolder struct {
	mu        sync.Mutex
	parts     []*fakePart
	takeovers []takeover
	starts    int // RecordEpochStarts calls
	// received counts the entries fills and hand-overs brought;
	// staleDeltas the deltas refused (the copy changed since its digest).
	received, staleDeltas int
}

type fakeEntry struct {
	val []byte
	ver mapstore.Version
}

type fakePart struct {
	entries map[string]fakeEntry
	ver     mapstore.Version // owner: last given out; backup: highest applied
	applied uint64
	above   map[uint64][]byte
	filled  bool // a backup's copy was filled
	ready   bool // owner data
}

// takeover is what a TakeOver was given.
type takeover struct {
	p     int
	src   backup.Source
	epoch uint64
}

func newFakeHolder(parts int) *fakeHolder {
	h := &fakeHolder{parts: make([]*fakePart, parts)}
	for i := range h.parts {
		h.parts[i] = &fakePart{entries: map[string]fakeEntry{}}
	}
	return h
}

func (fp *fakePart) reset() {
	*fp = fakePart{entries: map[string]fakeEntry{}}
}

// keep checks a delta against this copy and returns the entries it
// keeps (nil, true for whole data).
func (fp *fakePart) keep(mp backup.MapPart) (map[string]fakeEntry, bool) {
	if mp.Delta == nil {
		return nil, true
	}
	s := backup.NewSummer(mp.Delta.Buckets)
	for k, e := range fp.entries {
		s.Add(backup.Entry{K: []byte(k), V: e.val, R: backup.VerOf(e.ver)})
	}
	if !s.Matches(mp.Delta) {
		return nil, false
	}
	out := map[string]fakeEntry{}
	for k, e := range fp.entries {
		if s.Keeps(mp.Delta, []byte(k)) {
			out[k] = e
		}
	}
	return out, true
}

func (fp *fakePart) install(mp backup.MapPart, keep map[string]fakeEntry) {
	fp.entries = map[string]fakeEntry{}
	maps.Copy(fp.entries, keep)
	for _, e := range mp.Entries {
		fp.entries[string(e.K)] = fakeEntry{val: e.V, ver: e.R.Version()}
	}
	fp.ver, fp.applied = mp.Ver.Version(), mp.Applied
	fp.above = maps.Clone(mp.Above)
}

func (h *fakeHolder) Export(p int, owner bool, pos int) backup.PartData {
	h.mu.Lock()
	defer h.mu.Unlock()
	fp := h.parts[p]
	pd := backup.PartData{P: p}
	if owner && !fp.ready || !owner && !fp.filled || pos > 1 {
		return pd
	}
	mp := backup.MapPart{Map: "m", Ver: backup.VerOf(fp.ver), Applied: fp.applied, Above: maps.Clone(fp.above)}
	if owner {
		mp.Applied, mp.Above = fp.ver.Seq, nil
	}
	for k, e := range fp.entries {
		mp.Entries = append(mp.Entries, backup.Entry{K: []byte(k), V: e.val, R: backup.VerOf(e.ver)})
	}
	pd.Maps = []backup.MapPart{mp}
	return pd
}

func (h *fakeHolder) MaxSyncBackups() int { return 1 }

func (h *fakeHolder) SeqSum(p int) uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.parts[p].ver.Seq
}

func (h *fakeHolder) Drop(p int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.parts[p].reset()
}

func (h *fakeHolder) ReleaseStores(int) {}

func (h *fakeHolder) PrepareFill(_ context.Context, data backup.PartData, partial bool) (func() error, error) {
	return func() error {
		h.mu.Lock()
		defer h.mu.Unlock()
		fp := h.parts[data.P]
		keeps := make([]map[string]fakeEntry, len(data.Maps))
		for i, mp := range data.Maps {
			var ok bool
			if keeps[i], ok = fp.keep(mp); !ok {
				h.staleDeltas++
				return &backup.DeltaStaleError{Map: mp.Map}
			}
		}
		if !partial && len(data.Maps) == 0 {
			fp.reset()
		}
		for i, mp := range data.Maps {
			fp.install(mp, keeps[i])
			fp.filled, fp.ready = true, false
			h.received += len(mp.Entries)
		}
		return nil
	}, nil
}

func (h *fakeHolder) Digest(p int) []backup.Digest {
	h.mu.Lock()
	defer h.mu.Unlock()
	fp := h.parts[p]
	if len(fp.entries) == 0 {
		return nil
	}
	s := backup.NewSummer(backup.BucketsFor(len(fp.entries)))
	for k, e := range fp.entries {
		s.Add(backup.Entry{K: []byte(k), V: e.val, R: backup.VerOf(e.ver)})
	}
	return []backup.Digest{s.Digest("m")}
}

// receivedEntries is how many entries fills and hand-overs brought here.
func (h *fakeHolder) receivedEntries() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.received
}

func (h *fakeHolder) PrepareApply(_ context.Context, rec *backup.Record, revert bool) (func() error, error) {
	return func() error {
		h.mu.Lock()
		defer h.mu.Unlock()
		fp := h.parts[rec.P]
		if !fp.filled {
			return &partition.RefusedError{NeedFill: true, Msg: fmt.Sprintf("partition %d was not filled here", rec.P)}
		}
		rv := rec.Rec.R.Version()
		if revert {
			if rec.PrevOK {
				fp.entries[string(rec.Rec.K)] = fakeEntry{val: rec.Prev.V, ver: rec.Prev.R.Version()}
			} else {
				delete(fp.entries, string(rec.Rec.K))
			}
			return nil
		}
		if cur, ok := fp.entries[string(rec.Rec.K)]; (!ok || cur.ver.Less(rv)) && rec.Rec.D {
			delete(fp.entries, string(rec.Rec.K))
		} else if !ok || cur.ver.Less(rv) {
			fp.entries[string(rec.Rec.K)] = fakeEntry{val: rec.Rec.V, ver: rv}
		}
		if fp.ver.Less(rv) {
			fp.ver = rv
		}
		if rv.Seq == fp.applied+1 {
			fp.applied = rv.Seq
		} else if rv.Seq > fp.applied {
			if fp.above == nil {
				fp.above = map[uint64][]byte{}
			}
			fp.above[rv.Seq] = rec.Rec.K
		}
		return nil
	}, nil
}

func (h *fakeHolder) TakeOver(_ context.Context, p int, src backup.Source, pick func(uint64) uint64) (uint64, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	fp := h.parts[p]
	switch {
	case src.Data != nil:
		keeps := make([]map[string]fakeEntry, len(src.Data.Maps))
		for i, mp := range src.Data.Maps {
			var ok bool
			if keeps[i], ok = fp.keep(mp); !ok {
				h.staleDeltas++
				return 0, &backup.DeltaStaleError{Map: mp.Map}
			}
		}
		fp.reset()
		for i, mp := range src.Data.Maps {
			fp.install(mp, keeps[i])
			h.received += len(mp.Entries)
		}
	case src.Store:
		fp.reset() // memory only: the store has nothing
	case src.OwnHeld && !fp.ready, !src.OwnHeld && !fp.filled:
		fp.reset()
	}
	epoch := pick(fp.ver.Epoch)
	if src.Store || src.OwnHeld {
		fp.applied, fp.above = fp.ver.Seq, nil
	}
	fp.ver = mapstore.Version{Epoch: epoch, Seq: fp.applied}
	fp.ready, fp.filled = true, false
	h.takeovers = append(h.takeovers, takeover{p: p, src: src, epoch: epoch})
	return epoch, nil
}

func (h *fakeHolder) RecordEpochStarts(context.Context, map[int]uint64) error {
	h.mu.Lock()
	h.starts++
	h.mu.Unlock()
	return nil
}

func (h *fakeHolder) RewriteAbove(_ context.Context, p int) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	fp := h.parts[p]
	seqs := slices.Sorted(maps.Keys(fp.above))
	for _, s := range seqs {
		k := fp.above[s]
		fp.ver.Seq++
		if e, ok := fp.entries[string(k)]; ok {
			e.ver = fp.ver
			fp.entries[string(k)] = e
		}
	}
	fp.above, fp.applied = nil, fp.ver.Seq
	return nil
}

func (h *fakeHolder) Activated(context.Context, int) {}

// put is the owner's write of key in partition p: version, Send, Wait,
// apply, as the map engine does it.
func (h *fakeHolder) put(ctx context.Context, r *backup.Replicator, p int, key, val string) error {
	return h.write(ctx, r, p, key, val, false)
}

// del is the owner's delete of key in partition p.
func (h *fakeHolder) del(ctx context.Context, r *backup.Replicator, p int, key string) error {
	return h.write(ctx, r, p, key, "", true)
}

func (h *fakeHolder) write(ctx context.Context, r *backup.Replicator, p int, key, val string, del bool) error {
	tk, err := r.Replica(p).EnterWrite(ctx)
	if err != nil {
		return err
	}
	defer tk.Done()
	h.mu.Lock()
	fp := h.parts[p]
	fp.ver.Seq++
	ver := fp.ver
	h.mu.Unlock()
	sent, err := r.Send(ctx, tk, 1, 0, backup.Record{Map: "m", P: p, Rec: backup.Entry{K: []byte(key), V: []byte(val), R: backup.VerOf(ver), D: del}})
	if err != nil {
		return err
	}
	if failed, refused := sent.Wait(); len(failed) > 0 {
		return fmt.Errorf("refused %v: %w", refused, errors.Join(failed...))
	}
	h.mu.Lock()
	if del {
		delete(fp.entries, key)
	} else {
		fp.entries[key] = fakeEntry{val: []byte(val), ver: ver}
	}
	h.mu.Unlock()
	return nil
}

// value returns what this holder has of key in partition p.
func (h *fakeHolder) value(p int, key string) (string, mapstore.Version, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e, ok := h.parts[p].entries[key]
	return string(e.val), e.ver, ok
}

// setFilled marks this member's copy of p as filled or not (a backup
// that lost its copy).
func (h *fakeHolder) setFilled(p int, filled bool) {
	h.mu.Lock()
	h.parts[p].filled = filled
	h.mu.Unlock()
}

func (h *fakeHolder) takeoversOf(p int) []takeover {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []takeover
	for _, t := range h.takeovers {
		if t.p == p {
			out = append(out, t)
		}
	}
	return out
}
