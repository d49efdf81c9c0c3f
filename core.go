package stowage

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/partition"
)

// core is one map's partitioned, versioned byte store in memory, written
// through to a MapStore. Each key has at most one write in flight: a write
// waits for the previous one on the same key, so conditional operations
// decide on the truth; different keys proceed in parallel and share group
// commits in the store.
type core struct {
	name  string
	parts []*part
	store mapstore.MapStore // nil: memory only
	lazy  bool
	m     *metrics

	loaded  chan struct{}
	loadErr error
}

type entry struct {
	val []byte
	ver mapstore.Version
}

type part struct {
	id       int
	mu       sync.Mutex
	entries  map[string]entry
	ver      mapstore.Version // last version given out
	inflight map[uint64]struct{}
	busy     map[string]chan struct{}
	ready    bool
	loadOnce sync.Once
	loadErr  error
}

func newCore(name string, n int, store mapstore.MapStore, lazy bool, m *metrics) *core {
	c := &core{name: name, parts: make([]*part, n), store: store, lazy: lazy, m: m, loaded: make(chan struct{})}
	for i := range c.parts {
		c.parts[i] = &part{id: i, entries: map[string]entry{}, inflight: map[uint64]struct{}{}, busy: map[string]chan struct{}{}}
	}
	if store == nil {
		for _, p := range c.parts {
			p.ready = true
			p.ver.Epoch = 1
		}
		close(c.loaded)
	}
	if sn, ok := store.(mapstore.Snapshotter); ok {
		sn.SetSnapshotSource(c.snapshotSource)
	}
	return c
}

// versioned is implemented by stores that know each partition's highest
// version, including deletes (the file map store).
type versioned interface {
	LastVersion(p int) mapstore.Version
}

// replayer is implemented by stores with a faster loading path that
// hands over versioned records, deletes included, in version order.
type replayer interface {
	ReplayPartition(ctx context.Context, p int, fn func(mapstore.Record) error) error
	PendingCount(p int) int
}

// admitter is implemented by stores that throttle writers while
// compaction catches up.
type admitter interface {
	Admit(ctx context.Context) error
}

// epochStarter is implemented by stores that record epoch starts.
type epochStarter interface {
	StartEpochs(ctx context.Context, starts map[int]mapstore.Version) error
}

// loadAll loads every partition with a pool of workers (EAGER), or only
// marks the map usable (LAZY: each partition loads on first use).
func (c *core) loadAll(ctx context.Context, workers int) {
	defer close(c.loaded)
	if c.lazy {
		return
	}
	start := time.Now()
	next := make(chan *part)
	errs := make(chan error, len(c.parts))
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range next {
				if err := c.ensure(ctx, p); err != nil {
					errs <- err
				}
			}
		}()
	}
	for _, p := range c.parts {
		next <- p
	}
	close(next)
	wg.Wait()
	close(errs)
	c.loadErr = errors.Join(drain(errs)...)
	if c.loadErr == nil {
		c.loadErr = c.startEpochs(ctx, c.parts)
	}
	if c.m != nil {
		c.m.loadSeconds.WithLabelValues(c.name).Set(time.Since(start).Seconds())
	}
}

func drain(ch chan error) []error {
	var out []error
	for err := range ch {
		out = append(out, err)
	}
	return out
}

// ensure loads partition p from the store once. Its epoch start is
// written by loadAll for all partitions at once (EAGER), or here (LAZY).
func (c *core) ensure(ctx context.Context, p *part) error {
	p.loadOnce.Do(func() {
		var maxV mapstore.Version
		var err error
		if rp, ok := c.store.(replayer); ok {
			if n := rp.PendingCount(p.id); n > len(p.entries) {
				p.entries = make(map[string]entry, n)
			}
			// Records come in version order after the snapshot's entries:
			// keep the highest version per key; a delete removes the key.
			err = rp.ReplayPartition(ctx, p.id, func(r mapstore.Record) error {
				if maxV.Less(r.Version) {
					maxV = r.Version
				}
				cur, ok := p.entries[string(r.Key)]
				switch {
				case ok && !cur.ver.Less(r.Version):
				case r.Deleted:
					delete(p.entries, string(r.Key))
				default:
					p.entries[string(r.Key)] = entry{val: r.Value, ver: r.Version}
				}
				return nil
			})
		} else {
			err = c.store.LoadPartition(ctx, p.id, func(r mapstore.Record) error {
				p.entries[string(r.Key)] = entry{val: r.Value, ver: r.Version}
				if maxV.Less(r.Version) {
					maxV = r.Version
				}
				return nil
			})
		}
		if err == nil {
			if vs, ok := c.store.(versioned); ok {
				if lv := vs.LastVersion(p.id); maxV.Less(lv) {
					maxV = lv
				}
			}
			// A new owner run starts a new epoch from what it took over.
			p.mu.Lock()
			p.ver = mapstore.Version{Epoch: maxV.Epoch + 1, Seq: maxV.Seq}
			p.mu.Unlock()
			if c.lazy {
				err = c.startEpochs(ctx, []*part{p})
			}
		}
		if err != nil {
			p.loadErr = fmt.Errorf("stowage: load map %q partition %d: %w", c.name, p.id, err)
		}
	})
	return p.loadErr
}

// startEpochs makes the partitions' epoch starts durable, then lets them
// take writes.
func (c *core) startEpochs(ctx context.Context, ps []*part) error {
	starts := make(map[int]mapstore.Version, len(ps))
	for _, p := range ps {
		p.mu.Lock()
		starts[p.id] = p.ver
		p.mu.Unlock()
	}
	if es, ok := c.store.(epochStarter); ok {
		if err := es.StartEpochs(ctx, starts); err != nil {
			return fmt.Errorf("stowage: map %q: record epoch start: %w", c.name, err)
		}
	}
	for _, p := range ps {
		p.mu.Lock()
		p.ready = true
		p.mu.Unlock()
	}
	return nil
}

func (c *core) partOf(key []byte) *part { return c.parts[partition.Of(key, len(c.parts))] }

// wait blocks until the map is loaded (EAGER) and the key's partition is.
func (c *core) wait(ctx context.Context, p *part) error {
	select {
	case <-c.loaded:
	case <-ctx.Done():
		return ctx.Err()
	}
	if c.loadErr != nil {
		return c.loadErr
	}
	if c.store != nil {
		return c.ensure(ctx, p)
	}
	return nil
}

// decision is what an update function returns.
type decision struct {
	write bool   // false: leave the entry as it is
	del   bool   // delete the entry (with write)
	val   []byte // new value (with write, not del)
}

// update runs fn on the key's current value with no other write of the
// key in flight, makes its decision durable, then applies it.
func (c *core) update(ctx context.Context, key []byte, fn func(old []byte, ok bool) decision) error {
	p := c.partOf(key)
	if err := c.wait(ctx, p); err != nil {
		return err
	}
	if a, ok := c.store.(admitter); ok {
		if err := a.Admit(ctx); err != nil {
			return err
		}
	}
	k := string(key)
	p.mu.Lock()
	for {
		ch := p.busy[k]
		if ch == nil {
			break
		}
		p.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
		p.mu.Lock()
	}
	var old []byte
	e, ok := p.entries[k]
	if ok {
		old = e.val
	}
	d := fn(old, ok)
	if !d.write || (d.del && !ok) {
		p.mu.Unlock()
		return nil
	}
	p.ver.Seq++
	ver := p.ver
	done := make(chan struct{})
	p.busy[k] = done
	p.inflight[ver.Seq] = struct{}{}
	p.mu.Unlock()

	var err error
	if c.store != nil {
		start := time.Now()
		r := mapstore.Record{Partition: p.id, Version: ver, Key: key, Value: d.val, Deleted: d.del}
		if d.del {
			err = c.store.Delete(ctx, r)
		} else {
			err = c.store.Store(ctx, r)
		}
		if c.m != nil {
			c.m.storeSeconds.WithLabelValues(c.name).Observe(time.Since(start).Seconds())
		}
	}

	p.mu.Lock()
	if err == nil {
		if d.del {
			delete(p.entries, k)
		} else {
			p.entries[k] = entry{val: d.val, ver: ver}
		}
	}
	delete(p.inflight, ver.Seq)
	delete(p.busy, k)
	close(done)
	p.mu.Unlock()
	if err != nil {
		if c.m != nil {
			c.m.storeErrors.WithLabelValues(c.name).Inc()
		}
		return fmt.Errorf("stowage: map %q: write-through failed, nothing changed: %w", c.name, err)
	}
	return nil
}

func (c *core) get(ctx context.Context, key []byte) ([]byte, bool, error) {
	p := c.partOf(key)
	if err := c.wait(ctx, p); err != nil {
		return nil, false, err
	}
	p.mu.Lock()
	e, ok := p.entries[string(key)]
	p.mu.Unlock()
	if !ok {
		return nil, false, nil
	}
	return e.val, true, nil
}

func (c *core) waitAll(ctx context.Context) error {
	for _, p := range c.parts {
		if err := c.wait(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

func (c *core) size(ctx context.Context) (int, error) {
	if err := c.waitAll(ctx); err != nil {
		return 0, err
	}
	n := 0
	for _, p := range c.parts {
		p.mu.Lock()
		n += len(p.entries)
		p.mu.Unlock()
	}
	return n, nil
}

// rangeAll calls fn for each entry, partition by partition, on a copy of
// each partition's entries so fn may call the map.
func (c *core) rangeAll(ctx context.Context, fn func(k string, v []byte) bool) error {
	if err := c.waitAll(ctx); err != nil {
		return err
	}
	type kv struct {
		k string
		v []byte
	}
	for _, p := range c.parts {
		p.mu.Lock()
		batch := make([]kv, 0, len(p.entries))
		for k, e := range p.entries {
			batch = append(batch, kv{k, e.val})
		}
		p.mu.Unlock()
		for _, e := range batch {
			if !fn(e.k, e.v) {
				return nil
			}
		}
	}
	return nil
}

// snapshotSource gives the store a partition's live entries and the
// version up to which every change is reflected in them.
func (c *core) snapshotSource(ctx context.Context, id int) ([]mapstore.Record, mapstore.Version, error) {
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
		out = append(out, mapstore.Record{Partition: id, Version: e.ver, Key: []byte(k), Value: e.val})
	}
	return out, upto, nil
}
