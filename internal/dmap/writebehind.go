package dmap

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/stowage/stowage/backup"
	"github.com/stowage/stowage/cluster"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/partition"
)

// Write-behind (map-store write-delay-seconds > 0): the owner
// acknowledges a write once it is applied in its memory and on every sync
// backup, and queues the record for the map store; the queue is stored
// in batches once its records are WriteBehind.Delay old.
//
// The queue survives a fail-over through the backups: each fragment, on
// the owner and on its backups alike, keeps the keys whose latest write
// is not known to be stored (fragment.pending, key -> version). A backup
// adds a key when it applies the owner's record; the owner, once a batch
// is stored, tells the partition's backups which versions are stored
// (method wbstored) and they drop those keys. A new owner (take-over)
// queues every key still pending in its copy, to be stored with the value
// its memory has then. A notice that is lost only makes a key be stored
// twice, which a versioned store takes as a no-op; a notice that missed a
// backup is caught up by the owner's stored watermark, sent every second
// (writebehind_mark.go). Fills and migrations carry the pending keys with
// the partition (backup.MapPart.Pending).
//
// What a full crash loses: the writes acknowledged within the last Delay
// (plus the time one batch takes to store) before every member holding
// the partition died. A graceful Close or Leave stores the queue first;
// Flush stores it on demand.

// WriteBehind configures a map's write-behind; the zero value (Delay 0)
// is write-through.
type WriteBehind struct {
	// Delay is how long a record waits in the queue before it is stored
	// (write-delay-seconds).
	Delay time.Duration
	// BatchSize is the most records one StoreAll or DeleteAll call gets
	// (write-batch-size; < 1: 1).
	BatchSize int
	// Coalescing keeps only a key's latest write in the queue, in the
	// place and with the due time of the first one queued
	// (write-coalescing, Hazelcast's semantics).
	Coalescing bool
	// Capacity is the most records the map's queue holds on this member
	// (hazelcast.map.write.behind.queue.capacity; 0: no bound): a write
	// beyond it fails with ErrQueueFull, changing nothing.
	Capacity int
}

// wbTick is how often the engine looks for records due in write-behind
// queues.
const wbTick = 50 * time.Millisecond

// wbItem is one queued record.
type wbItem struct {
	rec mapstore.Record
	due time.Time
	// ref: queued by a take-over from the pending keys of a copy; what is
	// stored is the key's entry in memory when it is stored (rec.Version
	// is the pending version, used for a delete when the key is absent).
	ref bool
}

// wbQueue is one map's write-behind queue on this member.
type wbQueue struct {
	c   *heldMap
	cfg WriteBehind

	mu    sync.Mutex
	items []*wbItem          // oldest first; due times never decrease for a key
	byKey map[string]*wbItem // Coalescing: each key's queued item

	// storing is held while a batch is stored: a key's records reach
	// the store one batch at a time, in queue order.
	storing sync.Mutex
}

func newWBQueue(c *heldMap, cfg WriteBehind) *wbQueue {
	if cfg.BatchSize < 1 {
		cfg.BatchSize = 1
	}
	return &wbQueue{c: c, cfg: cfg, byKey: map[string]*wbItem{}}
}

// add queues an acknowledged record.
func (q *wbQueue) add(r mapstore.Record, now time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.cfg.Coalescing {
		if it := q.byKey[string(r.Key)]; it != nil {
			it.rec, it.ref = r, false
			return
		}
	}
	it := &wbItem{rec: r, due: now.Add(q.cfg.Delay)}
	q.items = append(q.items, it)
	if q.cfg.Coalescing {
		q.byKey[string(r.Key)] = it
	}
}

// addTaken queues, ahead of everything queued here, the keys a take-over
// found pending in its copy: they are older than any write this member
// queued for them since, and are due now.
func (q *wbQueue) addTaken(refs []mapstore.Record, now time.Time) {
	if len(refs) == 0 {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	head := make([]*wbItem, 0, len(refs))
	for _, r := range refs {
		if q.cfg.Coalescing && q.byKey[string(r.Key)] != nil {
			continue // a newer write of the key is queued; it stores the latest state
		}
		it := &wbItem{rec: r, due: now, ref: true}
		head = append(head, it)
		if q.cfg.Coalescing {
			q.byKey[string(r.Key)] = it
		}
	}
	q.items = append(head, q.items...)
}

// take removes the next batch from the queue: up to BatchSize items
// from the front that are due at now (all: whether due or not).
func (q *wbQueue) take(now time.Time, all bool) []*wbItem {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := 0
	for n < len(q.items) && n < q.cfg.BatchSize && (all || !q.items[n].due.After(now)) {
		n++
	}
	if n == 0 {
		return nil
	}
	batch := make([]*wbItem, n)
	copy(batch, q.items[:n])
	clear(q.items[:n])
	q.items = q.items[n:]
	if len(q.items) == 0 {
		q.items = nil
	}
	for _, it := range batch {
		if q.byKey[string(it.rec.Key)] == it {
			delete(q.byKey, string(it.rec.Key))
		}
	}
	return batch
}

// putBack returns a batch that could not be stored to the front of the
// queue. With Coalescing a key written again meanwhile keeps both items:
// the old one is stored first, the new one after it.
func (q *wbQueue) putBack(batch []*wbItem) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.items = append(batch, q.items...)
	if q.cfg.Coalescing {
		for _, it := range batch {
			if q.byKey[string(it.rec.Key)] == nil {
				q.byKey[string(it.rec.Key)] = it
			}
		}
	}
}

// admit fails with ErrQueueFull while the queue holds Capacity records.
func (q *wbQueue) admit() error {
	if q.cfg.Capacity <= 0 {
		return nil
	}
	if n := q.Len(); n >= q.cfg.Capacity {
		return fmt.Errorf("%w: map %q has %d records not stored yet on this member (capacity %d); is its map store failing?", ErrQueueFull, q.c.name, n, q.cfg.Capacity)
	}
	return nil
}

// Len is how many records are queued.
func (q *wbQueue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}

// drain stores the queue's due records (all: every record), batch by
// batch, and tells the backups what was stored. On an error the batch
// goes back to the front of the queue, and drain returns the error.
func (q *wbQueue) drain(ctx context.Context, all bool) error {
	q.storing.Lock()
	defer q.storing.Unlock()
	for {
		batch := q.take(time.Now(), all)
		if len(batch) == 0 {
			return nil
		}
		recs, covers := q.c.behindRecords(batch)
		if err := q.c.storeBatch(ctx, recs); err != nil {
			q.putBack(batch)
			if q.c.m != nil {
				q.c.m.storeErrors.WithLabelValues(q.c.name).Inc()
			}
			return fmt.Errorf("stowage: map %q: write-behind store of %d records: %w", q.c.name, len(recs), err)
		}
		q.c.storedBehind(recs, covers)
	}
}

// behindRecords turns a batch into the records to store: a take-over's item
// becomes the key's entry in memory (a delete when it is absent). covers
// is, per record, the version up to which storing it stores the key's
// writes: its own, or for a take-over's item the pending version too (the
// entry in memory may be older than a write that was reverted).
func (c *heldMap) behindRecords(batch []*wbItem) (recs []mapstore.Record, covers []mapstore.Version) {
	recs = make([]mapstore.Record, len(batch))
	covers = make([]mapstore.Version, len(batch))
	for i, it := range batch {
		recs[i], covers[i] = it.rec, it.rec.Version
		if !it.ref {
			continue
		}
		p := c.parts[it.rec.Partition]
		p.mu.Lock()
		if e, ok := p.entries[string(it.rec.Key)]; ok {
			recs[i] = mapstore.Record{Partition: p.id, Version: e.ver, Key: it.rec.Key, Value: e.val(), Expires: e.exp}
			if covers[i].Less(e.ver) {
				covers[i] = e.ver
			}
		} else {
			recs[i] = mapstore.Record{Partition: p.id, Version: it.rec.Version, Key: it.rec.Key, Deleted: true}
		}
		p.mu.Unlock()
	}
	return recs, covers
}

// storeBatch stores recs in order: each run of puts in one StoreAll,
// each run of deletes in one DeleteAll.
func (c *heldMap) storeBatch(ctx context.Context, recs []mapstore.Record) error {
	start := time.Now()
	for i := 0; i < len(recs); {
		j := i + 1
		for j < len(recs) && recs[j].Deleted == recs[i].Deleted {
			j++
		}
		var err error
		if recs[i].Deleted {
			err = c.store.DeleteAll(ctx, recs[i:j])
		} else {
			err = c.store.StoreAll(ctx, recs[i:j])
		}
		if err != nil {
			return err
		}
		i = j
	}
	if c.m != nil {
		c.m.storeSeconds.WithLabelValues(c.name).Observe(time.Since(start).Seconds())
	}
	return nil
}

// storedBehind drops stored records from the pending keys here and, for
// the partitions this member owns, on their backups.
func (c *heldMap) storedBehind(recs []mapstore.Record, covers []mapstore.Version) {
	for i, r := range recs {
		c.parts[r.Partition].unpend(r.Key, covers[i])
	}
	proto := c.n.proto
	if proto.Context().Err() != nil || proto.Alone() {
		return
	}
	t, _ := proto.Table()
	if t == nil {
		return
	}
	to := map[string][]backup.Entry{}
	for i, r := range recs {
		rs := t.Owners[r.Partition]
		if len(rs) < 2 || rs[0] != proto.Self() {
			continue
		}
		for _, b := range rs[1:] {
			to[b] = append(to[b], backup.Entry{K: r.Key, R: backup.VerOf(covers[i])})
		}
	}
	// Sent in the background: a backup that does not answer holds up no
	// store. Notices may arrive in any order (unpend compares versions).
	for id, es := range to {
		proto.Go(func() {
			cctx, cancel := context.WithTimeout(proto.Context(), min(c.n.cfg.OpTimeout, wbNoticeTimeout))
			defer cancel()
			if _, err := proto.CallMember(cctx, id, mWBStored, wbStoredReq{Map: c.name, Stored: es}); err != nil {
				// The backup keeps the keys pending; a take-over would
				// store them again, which changes nothing.
				c.n.log.Debug("stowage: write-behind notice not delivered", "map", c.name, "member", id, "err", err)
			}
		})
	}
}

// wbNoticeTimeout bounds one notice to a backup of what was stored.
const wbNoticeTimeout = 5 * time.Second

// pend records that key's write at ver is not stored yet. p.mu held.
func (p *fragment) pend(key string, ver mapstore.Version) {
	if p.pending == nil {
		p.pending = map[string]mapstore.Version{}
	}
	if cur, ok := p.pending[key]; !ok || cur.Less(ver) {
		p.pending[key] = ver
	}
}

// unpend drops key from the pending keys if its pending write is at or
// below ver (stored).
func (p *fragment) unpend(key []byte, ver mapstore.Version) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if cur, ok := p.pending[string(key)]; ok && !ver.Less(cur) {
		delete(p.pending, string(key))
	}
}

// pendingEntries lists the pending keys for a MapPart. p.mu held.
func (p *fragment) pendingEntries() []backup.Entry {
	if len(p.pending) == 0 {
		return nil
	}
	out := make([]backup.Entry, 0, len(p.pending))
	for k, v := range p.pending {
		out = append(out, backup.Entry{K: []byte(k), R: backup.VerOf(v)})
	}
	return out
}

// queueTaken queues, on a new owner, the keys its copy of partition p has
// pending.
func (c *heldMap) queueTaken(p *fragment) {
	if c.wb == nil {
		return
	}
	p.mu.Lock()
	refs := make([]mapstore.Record, 0, len(p.pending))
	for k, v := range p.pending {
		refs = append(refs, mapstore.Record{Partition: p.id, Version: v, Key: []byte(k)})
	}
	p.mu.Unlock()
	c.wb.addTaken(refs, time.Now())
}

const (
	mWBStored = "wbstored" // the owner stored these versions (write-behind)
	mWBFlush  = "wbflush"  // store the write-behind queue of a map ("": all)
)

type wbStoredReq struct {
	Map    string         `msgpack:"m"`
	Stored []backup.Entry `msgpack:"s"` // keys and the versions stored
}

type wbFlushReq struct {
	Map string `msgpack:"m"`
}

// registerWriteBehind makes the protocol serve the write-behind notices
// and flushes.
func (e *Engine) registerWriteBehind() {
	// CheckTable: a new owner's notice, sent as soon as it stored what it
	// took over, finds this member's table up to date first.
	e.proto.Register(mWBStored, cluster.CheckTable, func(_ context.Context, from string, body []byte) ([]byte, error) {
		var req wbStoredReq
		if err := cluster.Decode(body, &req); err != nil {
			return nil, err
		}
		c := e.held(req.Map)
		if c == nil {
			return nil, nil
		}
		sender := e.proto.IDOf(from)
		t, _ := e.proto.Table()
		for _, s := range req.Stored {
			p := partition.Of(s.K, e.parts)
			// Only a replica of the partition (per this member's table:
			// its owner, or an owner that just handed it over) says what
			// is stored.
			if t == nil || !slices.Contains(t.Owners[p], sender) {
				continue
			}
			c.parts[p].unpend(s.K, s.R.Version())
		}
		return nil, nil
	})
	e.proto.Register(mWBFlush, 0, func(ctx context.Context, _ string, body []byte) ([]byte, error) {
		var req wbFlushReq
		if err := cluster.Decode(body, &req); err != nil {
			return nil, err
		}
		return nil, e.flushLocal(ctx, req.Map)
	})
	e.registerMarks()
}

// runWriteBehind stores the due records of every write-behind queue
// until the engine stops.
func (e *Engine) runWriteBehind() {
	ctx := e.proto.Context()
	tk := time.NewTicker(wbTick)
	defer tk.Stop()
	failing := map[string]bool{}
	lastMark := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tk.C:
		}
		if time.Since(lastMark) >= wbMarkEvery {
			e.sendMarks()
			lastMark = time.Now()
		}
		for _, c := range e.heldMaps() {
			if c.wb == nil {
				continue
			}
			err := c.wb.drain(ctx, false)
			e.m.behindQueued.WithLabelValues(c.name).Set(float64(c.wb.Len()))
			switch {
			case err != nil && !failing[c.name] && ctx.Err() == nil:
				e.log.Warn("stowage: write-behind store failed; the records stay queued and are retried", "map", c.name, "err", err)
				failing[c.name] = true
			case err == nil && failing[c.name]:
				e.log.Info("stowage: write-behind store works again", "map", c.name)
				delete(failing, c.name)
			}
		}
	}
}

// flushLocal stores the write-behind queue of the named map held here
// (every map's when name is "").
func (e *Engine) flushLocal(ctx context.Context, name string) error {
	var errs []error
	for _, c := range e.heldMaps() {
		if c.wb == nil || name != "" && c.name != name {
			continue
		}
		errs = append(errs, c.wb.drain(ctx, true))
	}
	return errors.Join(errs...)
}

// Flush stores the write-behind queue of the named map ("": every map)
// on every member of the view, and returns once it is stored. A map
// without write-behind has nothing queued. It fails, naming the member,
// where a member could not store or did not answer.
func (e *Engine) Flush(ctx context.Context, name string) error {
	oc := e.bound(ctx)
	defer oc.cancel()
	ctx = oc
	errs := []error{e.flushLocal(ctx, name)}
	if _, err := e.eachMember(ctx, mWBFlush, wbFlushReq{Map: name}); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("stowage: flush: %w", err)
	}
	return nil
}

// FlushLocal stores every write-behind queue of this member (a graceful
// Leave does it before handing its partitions over).
func (e *Engine) FlushLocal(ctx context.Context) error {
	oc := e.bound(ctx)
	defer oc.cancel()
	ctx = oc
	return e.flushLocal(ctx, "")
}

// Pending is how many records the named map's write-behind queue holds on
// this member.
func (e *Engine) Pending(name string) int {
	if c := e.held(name); c != nil && c.wb != nil {
		return c.wb.Len()
	}
	return 0
}

// Flush stores the map's write-behind queue on every member.
func (m *Map) Flush(ctx context.Context) error { return m.n.Flush(ctx, m.name) }
