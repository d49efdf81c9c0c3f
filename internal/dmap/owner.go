package dmap

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/stowage/stowage/backup"
	"github.com/stowage/stowage/cluster"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/partition"
)

// The owner's side of an operation on one key: a read, and the write
// path. A write is ordered here (one write per key in flight, a version
// from the partition), made durable in the map store and applied on every
// sync backup in parallel (backup.Replicator.Send), applied to memory and
// acknowledged; if the store or a backup failed, what succeeded is undone
// here too, so the write changed nothing.

// update runs o on the key's current value with no other write of the key
// in flight, makes its decision durable in the store and on every sync
// backup, then applies it. It fails with errMoved when this member does
// not own the key's partition.
func (c *heldMap) update(ctx context.Context, key []byte, o *op) (opResult, error) {
	p := c.partOf(key)
	// The lease, and the end of another owner's lock of the key, first
	// (locks.go): a write waiting for them holds up no hand-over.
	t, err := c.enterWrite(ctx, p, key, o.owner)
	if err != nil {
		return opResult{}, err
	}
	defer t.Done()
	if err := c.n.quorumOK(c.wq); err != nil {
		return opResult{}, err
	}
	if err := c.readyPart(ctx, p); err != nil {
		return opResult{}, err
	}
	if c.wb != nil {
		if err := c.wb.admit(); err != nil {
			return opResult{}, err
		}
	}
	if a, ok := c.store.(mapstore.Admitter); ok {
		if err := a.Admit(ctx); err != nil {
			return opResult{}, err
		}
	}
	k := string(key)
	p.mu.Lock()
	for {
		ch, busy := p.busy[k]
		if !busy {
			break
		}
		if ch == nil {
			// The first to wait for the key's turn makes the channel: a
			// write nobody waits for allocates none.
			ch = make(chan struct{})
			p.busy[k] = ch
		}
		p.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return opResult{}, ctx.Err()
		case <-c.n.proto.Context().Done():
			return opResult{}, ErrClosed
		}
		p.mu.Lock()
	}
	prev, had := p.entries[k]
	now := nowNanos()
	var (
		d    Decision
		exp  int64
		seen []byte
		live bool
	)
	if o.kind == opLock {
		// A lock entry has no time to live: its lease is in its value.
		d = c.n.lockDecider(o.val)(prev.val(), had)
		seen, live = prev.val(), had
	} else {
		d, exp, seen, live = c.decideAt(o, prev, had, now)
	}
	res := opResult{old: seen, had: live, ver: prev.ver, wrote: d.Write}
	if !d.Write || (d.Delete && !had) {
		p.mu.Unlock()
		return res, nil
	}
	p.ver.Seq++
	ver := p.ver
	p.busy[k] = nil // the key's turn; a channel once someone waits
	p.inflight[ver.Seq] = struct{}{}
	p.mu.Unlock()

	r := mapstore.Record{Partition: p.id, Version: ver, Key: key, Value: d.Value, Deleted: d.Delete, Expires: exp}
	err = c.replicate(ctx, p, t, r, prev, had)

	p.mu.Lock()
	if err == nil {
		if d.Delete {
			delete(p.entries, k)
		} else {
			p.entries[k] = c.stamp(entry{data: valData(d.Value), ver: ver, exp: exp}, now)
		}
		res.ver = ver
		if c.wb != nil {
			// Acknowledged: in memory here and on the sync backups; the
			// store gets it from the queue, in this key's order.
			p.pend(k, ver)
			c.wb.add(r, time.Now())
		}
		// Under p.mu and the key's turn: one key's events are raised in
		// the order its writes were applied (events.go).
		if kind, ok := eventOf(o, live, d); ok {
			ev := Event{Kind: kind, Map: c.name, Key: key, Old: seen, Member: c.n.proto.Self(), Part: p.id, Epoch: ver.Epoch}
			if !d.Delete {
				ev.Val = d.Value
			}
			c.n.raise(ev)
		}
	}
	delete(p.inflight, ver.Seq)
	if waiting := p.busy[k]; waiting != nil {
		close(waiting)
	}
	delete(p.busy, k)
	p.mu.Unlock()
	if err != nil {
		if c.m != nil && !isMoved(err) {
			c.m.storeErrors.WithLabelValues(c.name).Inc()
		}
		return res, err
	}
	return res, nil
}

// storeRecord writes one record through to the store.
func (c *heldMap) storeRecord(ctx context.Context, r mapstore.Record) error {
	start := time.Now()
	var err error
	if r.Deleted {
		err = c.store.Delete(ctx, r)
	} else {
		err = c.store.Store(ctx, r)
	}
	if c.m != nil {
		c.m.storeSeconds.WithLabelValues(c.name).Observe(time.Since(start).Seconds())
	}
	return err
}

// read returns the key's value and version from an owned partition.
func (c *heldMap) read(ctx context.Context, key []byte) (entry, bool, error) {
	if c.ghost {
		h, err := c.n.ghostRead(ctx, c.name, partition.Of(key, c.n.parts))
		if h == nil || err != nil {
			return entry{}, false, err
		}
		return h.read(ctx, key)
	}
	p := c.partOf(key)
	if err := c.n.quorumOK(c.rq); err != nil {
		return entry{}, false, err
	}
	if err := c.n.admitRead(ctx, p.id); err != nil {
		return entry{}, false, err
	}
	if err := c.readyPart(ctx, p); err != nil {
		return entry{}, false, err
	}
	p.mu.Lock()
	e, ok := c.readLive(p, string(key), nowNanos())
	p.mu.Unlock()
	return e, ok, nil
}

// readyPart makes an owned partition of this map ready on first use: a
// map that is new here (or LAZY, or created after the partition was
// taken over) loads what the store has of it, starts the partition's epoch and
// gives the partition to the backups.
func (c *heldMap) readyPart(ctx context.Context, p *fragment) error {
	for {
		p.mu.Lock()
		if p.ready {
			p.mu.Unlock()
			return nil
		}
		if ch := p.loading; ch != nil {
			p.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return ctx.Err()
			case <-c.n.proto.Context().Done():
				return ErrClosed
			}
		}
		ch := make(chan struct{})
		p.loading = ch
		p.mu.Unlock()
		err := c.prepareMapPart(ctx, p)
		p.mu.Lock()
		p.loading = nil
		if err == nil {
			p.ready = true
		}
		close(ch)
		p.mu.Unlock()
		if err == nil {
			c.n.loaded.changed()
		}
		return err
	}
}

// replicate makes record r durable in the store and applied on every sync
// backup, in parallel, and hands it to the async backups. If any of them
// fails, what succeeded is undone (backups restore prev; the store gets a
// compensating record) and the write fails: acknowledged means durable and
// replicated (invariant 1), a failed write changes nothing.
func (c *heldMap) replicate(ctx context.Context, p *fragment, t partition.WriteTicket, r mapstore.Record, prev entry, had bool) error {
	sent, err := c.n.repl.Send(ctx, t, c.sync, c.async, backup.Record{Map: c.name, P: p.id,
		Rec: backup.Entry{K: r.Key, V: r.Value, R: backup.VerOf(r.Version), D: r.Deleted, X: r.Expires}})
	if err != nil {
		return err
	}
	var storeErr error
	if c.store != nil && c.wb == nil {
		storeErr = c.storeRecord(ctx, r)
	}
	failed, refused := sent.Wait()
	if storeErr != nil {
		failed = append([]error{fmt.Errorf("stowage: map %q: write-through failed, nothing changed: %w", c.name, storeErr)}, failed...)
	}
	if len(failed) == 0 {
		return nil
	}
	c.undo(p, r, prev, had, sent, storeErr == nil && c.store != nil && c.wb == nil)
	if storeErr == nil && refused {
		return errMoved(p.id)
	}
	return errors.Join(failed...)
}

// undo reverts a failed write where it succeeded: a store that made it
// durable gets a compensating record with a new version, and backups that
// applied it restore the previous entry.
func (c *heldMap) undo(p *fragment, r mapstore.Record, prev entry, had bool, sent *backup.Sent, compensate bool) {
	var comp uint64
	if compensate {
		ctx, cancel := context.WithTimeout(c.n.proto.Context(), c.n.cfg.OpTimeout)
		defer cancel()
		p.mu.Lock()
		p.ver.Seq++
		cv := p.ver
		p.inflight[cv.Seq] = struct{}{}
		p.mu.Unlock()
		comp = cv.Seq
		cr := mapstore.Record{Partition: p.id, Version: cv, Key: r.Key, Value: prev.val(), Deleted: !had, Expires: prev.exp}
		if err := c.storeRecord(ctx, cr); err != nil {
			c.n.log.Error("stowage: could not undo a failed write in the store; the key may show the failed value after a restart",
				"map", c.name, "partition", p.id, "err", err)
		}
		p.mu.Lock()
		delete(p.inflight, cv.Seq)
		p.mu.Unlock()
	}
	sent.Revert(had, backup.Entry{K: r.Key, V: prev.val(), R: backup.VerOf(prev.ver), X: prev.exp}, comp)
}

// prepareMapPart makes one map's partition ready on an active owner (a
// map new here, LAZY, or unknown when the partition was taken over): it
// loads what the store has, records the partition's epoch start for it,
// and gives it to the backups.
func (c *heldMap) prepareMapPart(ctx context.Context, pt *fragment) error {
	epoch, backups, active := c.n.repl.Replica(pt.id).Serving()
	if !active {
		return errMoved(pt.id)
	}
	pt.mu.Lock()
	loaded := pt.loaded
	pt.mu.Unlock()
	if c.store != nil && !loaded {
		if _, err := c.loadFromStore(ctx, pt); err != nil {
			return err
		}
	}
	pt.mu.Lock()
	from := pt.ver.Seq
	pt.ver = mapstore.Version{Epoch: epoch, Seq: from}
	pt.mu.Unlock()
	if c.store != nil {
		if err := c.startEpoch(ctx, pt.id, epoch, from); err != nil {
			return err
		}
	}
	if len(backups) == 0 {
		return nil
	}
	return c.n.repl.FillMap(ctx, pt.id, epoch, backups, c.export(pt, true), c.sync, c.async)
}

// ensureLease waits, if it must, for the owner's lease (cluster.Protocol.
// EnsureLease); a lease no member confirmed routes the operation again.
func (e *Engine) ensureLease(ctx context.Context, p int) error {
	err := e.proto.EnsureLease(ctx, p)
	if errors.Is(err, cluster.ErrNoLease) {
		return errRoute{err}
	}
	return err
}

// ghostRead is a read of partition p of the named map, which this
// member did not hold when the read came: it returns the map held here
// by now, to read from, or nil once this member is sure it serves p (the
// owner, under its lease) and the map is still not held here, so that
// the read finds nothing.
//
// The map is looked for again after the wait: a read that came while
// this member was taking p over waited for the take-over, and the
// take-over holds every map of the data it installs before it activates
// the partition. A member restarted empty that takes its partitions
// back holds none of the maps until then; answering "absent" from what
// it held when the read came would hide every entry of the partition.
func (e *Engine) ghostRead(ctx context.Context, name string, p int) (*heldMap, error) {
	if h := e.held(name); h != nil {
		return h, nil
	}
	if err := e.admitRead(ctx, p); err != nil {
		return nil, err
	}
	return e.held(name), nil
}

// admitRead lets a read of partition p go ahead on this member: the
// partition is active here, under a lease, and still active once the
// lease was confirmed. (Waiting for the lease, this member may have
// learnt of a newer table, and a later round may have confirmed that
// one: the partition is then no longer this member's to read.)
func (e *Engine) admitRead(ctx context.Context, p int) error {
	r := e.repl.Replica(p)
	if err := r.EnterRead(ctx); err != nil {
		return err
	}
	if err := e.ensureLease(ctx, p); err != nil {
		return err
	}
	return r.EnterRead(ctx)
}
