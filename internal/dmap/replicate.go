package dmap

import (
	"context"
	"errors"
	"fmt"
	"github.com/stowage/stowage/partition"
	"slices"
	"sync"
	"time"

	"github.com/stowage/stowage/cluster"
	"github.com/stowage/stowage/mapstore"
)

// errStaleOwner: a backup refused a record because this member is no
// longer the partition's owner (or its epoch is over). The write changed
// nothing; the caller routes it again.
var errStaleOwner = errors.New("stowage: a backup refused the write: this member no longer owns the partition")

// errNeedFill: a backup's copy is not whole; the partition is filled
// again and the write, which changed nothing, is routed again.
var errNeedFill = errors.New("stowage: a backup needs the partition again")

// replicate makes record r durable in the store and applied on every sync
// backup, in parallel, and hands it to the async backups. If any of them
// fails, what succeeded is undone (backups restore prev; the store gets a
// compensating record) and the write fails: acknowledged means durable and
// replicated (invariant 1), a failed write changes nothing.
func (d *dist) replicate(ctx context.Context, c *core, p *part, t partition.WriteTicket, r mapstore.Record, prev entry, had bool) error {
	syncB, asyncB, missing := d.targets(p.id, c, t.Backups)
	if missing != "" {
		// A sync backup the table names has no copy yet (its fill failed
		// and is being retried): nothing may be acknowledged without it.
		d.goBackground(func() { d.refill1(p.id) })
		return errMoved(p.id)
	}
	req := backupReq{TV: d.tableVersion(), Map: c.name, P: p.id, Epoch: t.Epoch,
		Rec: wrec{K: r.Key, V: r.Value, R: toW(r.Version), D: r.Deleted}}
	body := enc(req)
	errs := make([]error, len(syncB))
	var wg sync.WaitGroup
	for i, b := range syncB {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			errs[i] = d.sendBackup(ctx, b, p.id, body)
			d.n.m.backupSeconds.Observe(time.Since(start).Seconds())
		}()
	}
	for _, b := range asyncB {
		d.goBackground(func() {
			actx, cancel := context.WithTimeout(d.ctx, d.timeout)
			defer cancel()
			if err := d.sendBackup(actx, b, p.id, body); err != nil {
				d.log.Debug("stowage: async backup failed; it is filled again", "member", b, "partition", p.id, "err", err)
				d.goBackground(func() { d.refill([]int{p.id}) })
			}
		})
	}
	var storeErr error
	if c.store != nil {
		storeErr = c.storeRecord(ctx, r)
	}
	wg.Wait()
	var failed []error
	if storeErr != nil {
		failed = append(failed, fmt.Errorf("stowage: map %q: write-through failed, nothing changed: %w", c.name, storeErr))
	}
	for i, err := range errs {
		if err != nil {
			failed = append(failed, fmt.Errorf("backup %s: %w", syncB[i], err))
		}
	}
	if len(failed) == 0 {
		return nil
	}
	d.undo(c, p, t, r, prev, had, syncB, errs, storeErr == nil && c.store != nil)
	err := errors.Join(failed...)
	if storeErr == nil && (errorsAll(errs, errStaleOwner) || errorsAll(errs, errNeedFill)) {
		return errMoved(p.id)
	}
	return err
}

// targets splits a map's backups by their place in p's replica set: the
// first c.sync are synchronous, the next c.async asynchronous. filled are
// the backups that hold the partition; missing names a synchronous one
// that does not yet.
func (d *dist) targets(p int, c *core, filled []string) (syncB, asyncB []string, missing string) {
	t, _ := d.currentTable()
	if t == nil {
		return nil, nil, ""
	}
	rs := t.Owners[p]
	for pos := 1; pos < len(rs) && pos <= c.sync+c.async; pos++ {
		b := rs[pos]
		if !slices.Contains(filled, b) {
			if pos <= c.sync && missing == "" {
				missing = b
			}
			continue
		}
		if pos <= c.sync {
			syncB = append(syncB, b)
		} else {
			asyncB = append(asyncB, b)
		}
	}
	return syncB, asyncB, missing
}

func errorsAll(errs []error, target error) bool {
	any := false
	for _, e := range errs {
		if e != nil {
			if !errors.Is(e, target) {
				return false
			}
			any = true
		}
	}
	return any
}

// undo reverts a failed write where it succeeded: backups that applied it
// restore the previous entry, and a store that made it durable gets a
// compensating record with a new version.
func (d *dist) undo(c *core, p *part, t partition.WriteTicket, r mapstore.Record, prev entry, had bool, syncB []string, errs []error, compensate bool) {
	ctx, cancel := context.WithTimeout(d.ctx, d.timeout)
	defer cancel()
	var comp uint64
	if compensate {
		p.mu.Lock()
		p.ver.Seq++
		cv := p.ver
		p.inflight[cv.Seq] = struct{}{}
		p.mu.Unlock()
		comp = cv.Seq
		cr := mapstore.Record{Partition: p.id, Version: cv, Key: r.Key, Value: prev.val, Deleted: !had}
		if err := c.storeRecord(ctx, cr); err != nil {
			d.log.Error("stowage: could not undo a failed write in the store; the key may show the failed value after a restart",
				"map", c.name, "partition", p.id, "err", err)
		}
		p.mu.Lock()
		delete(p.inflight, cv.Seq)
		p.mu.Unlock()
	}
	req := backupReq{TV: d.tableVersion(), Map: c.name, P: p.id, Epoch: t.Epoch,
		Rec: wrec{K: r.Key, R: toW(r.Version), D: r.Deleted}, PrevOK: had, Prev: wrec{K: r.Key, V: prev.val, R: toW(prev.ver)}, Comp: comp}
	body := enc(req)
	for i, b := range syncB {
		if errs[i] != nil {
			continue
		}
		if _, err := d.rpc(ctx, d.addr(b), mRevert, body); err != nil {
			// The backup is going away or will be filled again.
			d.log.Debug("stowage: revert not delivered", "member", b, "partition", p.id, "err", err)
		}
	}
}

// sendBackup delivers a record to backup b until it applied it, refused
// it (errStaleOwner), or is no longer a live replica of p, in which case
// the write no longer needs it. Records are applied by version, so
// sending one twice is harmless.
func (d *dist) sendBackup(ctx context.Context, b string, p int, body []byte) error {
	delay := 5 * time.Millisecond
	for {
		a := d.addr(b)
		var resp []byte
		var err error
		if a == "" || d.tr == nil {
			err = fmt.Errorf("%w: member %s has no known address", cluster.ErrUnreachable, b)
		} else {
			var gone bool
			resp, gone, err = d.backupCall(ctx, a, b, p, body)
			if gone {
				return nil
			}
		}
		if err == nil {
			var ans codeAns
			if err := dec(resp, &ans); err != nil {
				return err
			}
			switch ans.Code {
			case codeOK:
				return nil
			case codeStale, codeMoved:
				d.log.Debug("stowage: backup refused a record", "partition", p, "member", b, "msg", ans.Msg)
				d.n.m.refused.Inc()
				d.askFetch(a)
				return fmt.Errorf("%w: %s", errStaleOwner, ans.Msg)
			case codeNeedFill:
				d.log.Debug("stowage: backup needs a fill", "partition", p, "member", b, "msg", ans.Msg)
				d.slots[p].MarkDirty()
				d.goBackground(func() { d.refill([]int{p}) })
				return fmt.Errorf("%w: %s", errNeedFill, ans.Msg)
			default:
				return fmt.Errorf("stowage: backup %s: %s", b, ans.Msg)
			}
		}
		if cerr := ctx.Err(); cerr != nil {
			return fmt.Errorf("stowage: backup %s did not acknowledge: %w", b, err)
		}
		if !d.inReplicaSet(p, b) {
			// The table no longer names it (it failed or moved): the write
			// does not wait for it, and its copy no longer counts.
			return nil
		}
		select {
		case <-time.After(delay):
		case <-ctx.Done():
		case <-d.ctx.Done():
			return ErrClosed
		}
		delay = min(2*delay, 200*time.Millisecond)
	}
}

// backupCall sends one backup record to member id at addr a and waits for
// the answer, for the caller to give up, or for a table that no longer
// names id a replica of p (gone true: the write does not wait for it).
// A member that hangs is dropped from the table by failure detection; the
// writes waiting for it then complete without it.
func (d *dist) backupCall(ctx context.Context, a, id string, p int, body []byte) (resp []byte, gone bool, err error) {
	pc, err := d.enqueue(ctx, a, mBackup, body)
	if err != nil {
		return nil, false, err
	}
	for {
		t, tabCh := d.currentTable()
		if t != nil && !slices.Contains(t.Owners[p], id) {
			return nil, true, nil
		}
		select {
		case r := <-pc.done:
			return r.b, false, r.err
		case <-ctx.Done():
			// The record may still reach it with its batch.
			return nil, false, ctx.Err()
		case <-tabCh:
		}
	}
}

// inReplicaSet reports whether member id is a replica of p in the table.
func (d *dist) inReplicaSet(p int, id string) bool {
	t, _ := d.currentTable()
	return t != nil && slices.Contains(t.Owners[p], id)
}

// onBackup applies a record sent by the partition's owner.
func (d *dist) onBackup(ctx context.Context, from string, req *backupReq, revert bool) codeAns {
	d.noteTable(ctx, from, req.TV)
	if req.P < 0 || req.P >= d.count {
		return codeAns{Code: codeFailed, Msg: "partition out of range"}
	}
	c, err := d.n.core(ctx, req.Map)
	if err != nil {
		return codeAns{Code: codeFailed, Msg: err.Error()}
	}
	fromID := d.idOf(from)
	t, _ := d.currentTable()
	if t == nil || t.Owner(req.P) != fromID {
		return codeAns{Code: codeStale, Msg: fmt.Sprintf("partition %d: the sender is not its owner here", req.P)}
	}
	err = d.slots[req.P].ApplyBackup(req.Epoch, t.JoinedAt(req.P, d.self), revert, func() error {
		return c.applyBackup(c.parts[req.P], req, revert)
	})
	if err != nil {
		return refusedAns(err)
	}
	return codeAns{}
}

// applyBackup applies a record (or its revert) the owner sent to this
// backup's copy of partition p. It is refused with NeedFill when the map
// was not filled here.
func (c *core) applyBackup(p *part, req *backupReq, revert bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.filled {
		return &partition.RefusedError{NeedFill: true, Msg: fmt.Sprintf("map %q partition %d was not filled here", req.Map, req.P)}
	}
	k := string(req.Rec.K)
	rv := req.Rec.R.v()
	if revert {
		if cur, ok := p.entries[k]; ok && cur.ver == rv || !ok && req.Rec.D {
			if req.PrevOK {
				p.entries[k] = entry{val: req.Prev.V, ver: req.Prev.R.v()}
			} else {
				delete(p.entries, k)
			}
		}
		p.markApplied(rv.Seq, nil)
		if req.Comp != 0 {
			p.markApplied(req.Comp, nil)
			if p.ver.Seq < req.Comp {
				p.ver.Seq = req.Comp
			}
		}
		return nil
	}
	if cur, ok := p.entries[k]; !ok || cur.ver.Less(rv) {
		if req.Rec.D {
			delete(p.entries, k)
		} else {
			p.entries[k] = entry{val: req.Rec.V, ver: rv}
		}
	}
	if p.ver.Less(rv) {
		p.ver = rv
	}
	p.markApplied(rv.Seq, req.Rec.K)
	return nil
}

// markApplied records that seq was applied on this backup. p.mu held.
func (p *part) markApplied(seq uint64, key []byte) {
	if seq <= p.applied {
		return
	}
	if seq != p.applied+1 {
		if p.above == nil {
			p.above = map[uint64][]byte{}
		}
		p.above[seq] = key
		return
	}
	p.applied = seq
	for {
		if _, ok := p.above[p.applied+1]; !ok {
			break
		}
		delete(p.above, p.applied+1)
		p.applied++
	}
}
