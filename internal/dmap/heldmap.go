package dmap

import (
	"context"
	"fmt"
	"github.com/stowage/stowage/backup"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/partition"
)

// heldMap is one map's partitioned, versioned byte store in memory on this
// member, written through to a MapStore. The member owns some partitions
// (it serves them), backs up others, and holds nothing of the rest; which
// is decided by the partition table and kept in the replicas (backup).
//
// On an owned partition each key has at most one write in flight: a write
// waits for the previous one on the same key, so conditional operations
// decide on the truth; different keys proceed in parallel and share group
// commits in the store.
type heldMap struct {
	name  string
	n     *Engine
	parts []*fragment
	store mapstore.MapStore // nil: memory only
	lazy  bool
	sync  int       // synchronous backups of this map
	async int       // asynchronous backups of this map
	exp   mapExpiry // time to live and max idle (expiry.go)
	wq    int       // split-brain protection: members needed for writes (0: none)
	rq    int       // and for reads
	m     *metrics
	// locks is the map's lock map once it was made (locks.go): every
	// write looks at it, so it is linked here rather than looked up by
	// name under the engine's lock.
	locks atomic.Pointer[heldMap]
	// eager, for an EAGER map made while the node runs, is closed once
	// its owned partitions are loaded: the first operation waits for it.
	eager chan struct{}
	// ghost: a map this member does not hold, for reads only: they are
	// routed like any other, and on an owner that still does not hold
	// the map once it serves the partition they find nothing (a
	// take-over they waited for may have held it: see ghostRead). A ghost
	// holds no data, opens no store and is never registered, so reading
	// a map that does not exist creates nothing.
	ghost bool
	// destroyed is set once Destroy dropped the map (destroy.go): a
	// handle that still points here holds the map anew.
	destroyed atomic.Bool
	// codecOK holds the codec names found to match the recorded one
	// (codec.go).
	codecOK sync.Map
	// wb is the map's write-behind queue (writebehind.go); nil: the map
	// writes through.
	wb *wbQueue
}

// resolve returns the map held here for a ghost whose map is held by now,
// else c.
func (c *heldMap) resolve() *heldMap {
	if c.ghost {
		if h := c.n.held(c.name); h != nil {
			return h
		}
	}
	return c
}

// newGhost returns a ghost of the named map (see heldMap.ghost).
func newGhost(n *Engine, name string) *heldMap {
	return &heldMap{name: name, n: n, ghost: true, m: n.m}
}

// waitEager waits until a new EAGER map is loaded.
func (c *heldMap) waitEager(ctx context.Context) error {
	if c.eager == nil {
		return nil
	}
	select {
	case <-c.eager:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// entry is one key's value in memory. The value's bytes are held as a
// string (never changed, often shared with what the store read or the
// request carried): 16 bytes where a slice takes 24, so that a map slot,
// key and entry, is 64 bytes. An EAGER load of a million entries faults
// in the pages of the maps it makes; a slot an eighth smaller is an
// eighth fewer.
type entry struct {
	data   string // the value's bytes; see val and valData
	ver    mapstore.Version
	exp    int64 // expiry deadline, Unix nanoseconds (0: none); see expiry.go
	access int64 // last access here, Unix nanoseconds (max idle; not replicated)
}

// val returns the entry's value, sharing its bytes (nil for nil).
func (e entry) val() []byte { return unsafe.Slice(unsafe.StringData(e.data), len(e.data)) }

// valData holds b for entry.data, sharing its bytes: b must not change.
func valData(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// fragment is one partition of one map on this member.
type fragment struct {
	id       int
	mu       sync.Mutex
	entries  map[string]entry
	ver      mapstore.Version // owner: last version given out; backup: highest applied
	inflight map[uint64]struct{}
	// busy: the keys with a write in flight (owner.go), each with the
	// channel closed when it ends, made by the first write that waits
	// for it (nil until then).
	busy map[string]chan struct{}

	// Owner side: ready once the data is here (loaded, taken over or
	// new) and every backup has it.
	ready   bool
	loading chan struct{} // non-nil while readyPart runs
	loaded  bool          // the store's records were read into entries

	// Backup side: filled once the owner sent this map's partition;
	// applied is the highest seq of ver.Epoch up to which every change is
	// applied, above the changes applied beyond it (seq -> key).
	filled  bool
	applied uint64
	above   map[uint64][]byte

	// pending: with write-behind, the keys whose latest write is not
	// known to be stored, with its version (writebehind.go).
	pending map[string]mapstore.Version
}

func newHeldMap(n *Engine, name string, count int, store mapstore.MapStore, lazy bool, syncB, asyncB int) *heldMap {
	c := &heldMap{name: name, n: n, parts: make([]*fragment, count), store: store, lazy: lazy, sync: syncB, async: asyncB, m: n.m}
	for i := range c.parts {
		c.parts[i] = &fragment{id: i, entries: map[string]entry{}, inflight: map[uint64]struct{}{}, busy: map[string]chan struct{}{}}
	}
	if sn, ok := store.(mapstore.Snapshotter); ok {
		sn.SetSnapshotSource(c.snapshotSource)
	}
	if ls, ok := store.(mapstore.LiveSizer); ok {
		ls.SetLiveSizes(c.liveSizes)
	}
	return c
}

// loadFromStore reads partition p from the store into memory, replacing
// what it held, and returns the highest version the store knows of it.
func (c *heldMap) loadFromStore(ctx context.Context, p *fragment) (mapstore.Version, error) {
	start := time.Now()
	entries := map[string]entry{}
	var maxV mapstore.Version
	var err error
	// Entries are stamped as they are loaded (the load is their last
	// access), not in a second pass over the map.
	now := nowNanos()
	if kr, ok := c.store.(mapstore.KeyReplayer); ok {
		// The snapshot's entries, then the log's records in version
		// order, none twice: applying each in turn keeps the highest
		// version per key; a delete removes the key.
		err = kr.ReplayPartitionKeys(ctx, p.id, func(n int) { entries = make(map[string]entry, n) }, func(k string, r mapstore.Record) error {
			if maxV.Less(r.Version) {
				maxV = r.Version
			}
			if r.Deleted {
				delete(entries, k)
			} else {
				entries[k] = c.stamp(entry{data: valData(r.Value), ver: r.Version, exp: r.Expires}, now)
			}
			return nil
		})
	} else if rp, ok := c.store.(mapstore.Replayer); ok {
		if n := rp.PendingCount(p.id); n > 0 {
			entries = make(map[string]entry, n)
		}
		// Records come in version order after the snapshot's entries:
		// keep the highest version per key; a delete removes the key.
		err = rp.ReplayPartition(ctx, p.id, func(r mapstore.Record) error {
			if maxV.Less(r.Version) {
				maxV = r.Version
			}
			cur, ok := entries[string(r.Key)]
			switch {
			case ok && !cur.ver.Less(r.Version):
			case r.Deleted:
				delete(entries, string(r.Key))
			default:
				entries[string(r.Key)] = c.stamp(entry{data: valData(r.Value), ver: r.Version, exp: r.Expires}, now)
			}
			return nil
		})
	} else {
		err = c.store.LoadPartition(ctx, p.id, func(r mapstore.Record) error {
			entries[string(r.Key)] = c.stamp(entry{data: valData(r.Value), ver: r.Version, exp: r.Expires}, now)
			if maxV.Less(r.Version) {
				maxV = r.Version
			}
			return nil
		})
	}
	if err != nil {
		return maxV, fmt.Errorf("stowage: load map %q partition %d: %w", c.name, p.id, err)
	}
	if vs, ok := c.store.(mapstore.LastVersioner); ok {
		if lv := vs.LastVersion(p.id); maxV.Less(lv) {
			maxV = lv
		}
	}
	p.mu.Lock()
	p.entries = entries
	p.ver = maxV
	p.loaded = true
	p.pending = nil
	p.mu.Unlock()
	if c.m != nil {
		c.m.loadSeconds.WithLabelValues(c.name).Add(time.Since(start).Seconds())
	}
	return maxV, nil
}

// startEpoch makes partition p's start of epoch (taking over up to seq
// from) durable in the store, so that recovery drops older records beyond
// it (invariant 2).
func (c *heldMap) startEpoch(ctx context.Context, p int, epoch, from uint64) error {
	es, ok := c.store.(mapstore.EpochStarter)
	if !ok {
		return nil
	}
	if err := es.StartEpochs(ctx, map[int]mapstore.Version{p: {Epoch: epoch, Seq: from}}); err != nil {
		return fmt.Errorf("stowage: map %q: record epoch start of partition %d: %w", c.name, p, err)
	}
	return nil
}

func (c *heldMap) partOf(key []byte) *fragment { return c.parts[partition.Of(key, c.n.parts)] }

// Decision is what a Compute function returns.
type Decision struct {
	Write  bool   // false: leave the entry as it is
	Delete bool   // delete the entry (with Write)
	Value  []byte // new value (with Write, not Delete)
}

// op is one map operation, executed by the partition's owner: a kind
// that travels between members, or (on the owner itself) any function.
type op struct {
	kind   int
	val    []byte
	del    bool // opCAS: delete rather than write val
	expOK  bool // opCAS: the entry must be present at expVer (else absent)
	expVer mapstore.Version
	fn     func(old []byte, ok bool) Decision // local only; overrides kind
	owner  string                             // the lock owner the write acts for
	ttl    time.Duration                      // with ttlSet: this write's time to live (0: none)
	ttlSet bool                               // else the map's applies
}

func (o *op) decide(old []byte, ver mapstore.Version, ok bool) Decision {
	if o.fn != nil {
		return o.fn(old, ok)
	}
	switch o.kind {
	case opPut:
		return Decision{Write: true, Value: o.val}
	case opPutIfAbsent:
		return Decision{Write: !ok, Value: o.val}
	case opReplace:
		return Decision{Write: ok, Value: o.val}
	case opDelete:
		return Decision{Write: ok, Delete: true}
	case opCAS:
		match := ok == o.expOK && (!ok || ver == o.expVer)
		return Decision{Write: match, Delete: o.del, Value: o.val}
	}
	return Decision{}
}

// opResult is what an operation found and did.
type opResult struct {
	old   []byte
	had   bool
	wrote bool // the decision was to write (for CAS: the condition held)
	ver   mapstore.Version
	// rerouted: an earlier attempt went to an owner that stopped answering
	// after the call may have reached it, so this answer may follow a
	// first application of the same operation.
	rerouted bool
}

// snapshotSource gives the store a partition's live entries and the
// version up to which every change is reflected in them.
func (c *heldMap) snapshotSource(ctx context.Context, id int) ([]mapstore.Record, mapstore.Version, error) {
	p := c.parts[id]
	p.mu.Lock()
	defer p.mu.Unlock()
	upto := p.ver
	for seq := range p.inflight {
		if seq <= upto.Seq {
			upto.Seq = seq - 1
		}
	}
	out := make([]mapstore.Record, 0, len(p.entries))
	for k, e := range p.entries {
		// The key's bytes are the map's string's, not a copy: a store
		// only reads them (mapstore.SnapshotSource).
		out = append(out, mapstore.Record{Partition: id, Version: e.ver, Key: unsafe.Slice(unsafe.StringData(k), len(k)), Value: e.val(), Expires: e.exp})
	}
	return out, upto, nil
}

// liveSizes gives the store the sizes of partition id's entries, as
// snapshotSource gives it the entries (mapstore.LiveSizes).
func (c *heldMap) liveSizes(_ context.Context, id int, fn func(keyLen, valueLen int, v mapstore.Version, exp int64)) error {
	p := c.parts[id]
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, e := range p.entries {
		fn(len(k), len(e.data), e.ver, e.exp)
	}
	return nil
}

// export returns this map's partition p as a holder has it. Owner data
// (owner true) has no gaps: everything up to its version is applied.
func (c *heldMap) export(p *fragment, owner bool) backup.MapPart {
	p.mu.Lock()
	defer p.mu.Unlock()
	mp := backup.MapPart{Map: c.name, Ver: backup.VerOf(p.ver), Entries: make([]backup.Entry, 0, len(p.entries))}
	if owner {
		mp.Applied = p.ver.Seq
	} else {
		mp.Applied = p.applied
		if len(p.above) > 0 {
			mp.Above = make(map[uint64][]byte, len(p.above))
			for s, k := range p.above {
				mp.Above[s] = k
			}
		}
	}
	for k, e := range p.entries {
		mp.Entries = append(mp.Entries, backup.Entry{K: []byte(k), V: e.val(), R: backup.VerOf(e.ver), X: e.exp})
	}
	mp.Pending = p.pendingEntries()
	return mp
}

// replace installs a map partition received from another member. For a
// delta, keep are this member's own entries of the buckets it does not
// redo (deltaKeep); replace adds them.
func (c *heldMap) replace(p *fragment, mp backup.MapPart, keep map[string]entry) {
	entries := make(map[string]entry, len(mp.Entries)+len(keep))
	now := nowNanos()
	for k, e := range keep {
		entries[k] = e
	}
	for _, e := range mp.Entries {
		entries[string(e.K)] = c.stamp(entry{data: valData(e.V), ver: e.R.Version(), exp: e.X}, now)
	}
	p.mu.Lock()
	p.entries = entries
	p.ver = mp.Ver.Version()
	p.applied = mp.Applied
	p.above = nil
	if len(mp.Above) > 0 {
		p.above = make(map[uint64][]byte, len(mp.Above))
		for s, k := range mp.Above {
			p.above[s] = k
		}
	}
	p.pending = nil
	for _, e := range mp.Pending {
		p.pend(string(e.K), e.R.Version())
	}
	p.mu.Unlock()
}

// clearPart drops what this member holds of partition p of this map.
func (c *heldMap) clearPart(p *fragment) {
	p.mu.Lock()
	p.entries = map[string]entry{}
	p.ver = mapstore.Version{}
	p.applied, p.above = 0, nil
	p.pending = nil
	p.ready, p.filled, p.loaded = false, false, false
	p.mu.Unlock()
}

func (c *heldMap) size(p *fragment) int {
	n, _ := c.sizeBytes(p)
	return n
}

// sizeBytes counts partition p's entries and the bytes of their keys and
// values.
func (c *heldMap) sizeBytes(p *fragment) (n int, b int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := nowNanos()
	for k, e := range p.entries {
		if c.dead(e, now) {
			continue
		}
		n++
		b += int64(len(k) + len(e.data))
	}
	return n, b
}
