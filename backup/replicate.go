package backup

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/stowage/stowage/cluster"
	"github.com/stowage/stowage/partition"
)

// errStaleOwner: a backup refused a record because this member is no
// longer the partition's owner (or its epoch is over). The write changed
// nothing; the caller routes it again.
var errStaleOwner = errors.New("stowage: a backup refused the write: this member no longer owns the partition")

// errNeedFill: a backup's copy is not whole; the partition is filled
// again and the write, which changed nothing, is routed again.
var errNeedFill = errors.New("stowage: a backup needs the partition again")

// Sent is an owner's record on its way to the partition's backups.
type Sent struct {
	d     *Replicator
	ctx   context.Context
	rec   Record
	body  []byte
	start time.Time
	sync  []string               // the sync backups, in table order
	first []*cluster.PendingCall // each one's first delivery; nil if it could not be queued
	errs  []error                // each one's outcome, once Wait returned
	once  sync.Once
	// The room of sync, first and errs when there is one sync backup
	// (the common case): a write allocates no slices for them.
	oneSync  [1]string
	oneFirst [1]*cluster.PendingCall
	oneErr   [1]error
}

// Send hands rec, a write admitted by ticket t, to the partition's
// backups: each of the map's first syncN filled backups applies it
// (Wait), the next asyncN get it without being waited for. It fails
// with a partition.MovedError, changing nothing, while a sync backup the
// table names has no copy yet (its fill failed and is retried).
func (r *Replicator) Send(ctx context.Context, t partition.WriteTicket, syncN, asyncN int, rec Record) (*Sent, error) {
	s := &Sent{d: r, ctx: ctx, start: time.Now()}
	syncB, asyncB, missing := r.targets(rec.P, syncN, asyncN, t.Backups, s.oneSync[:0])
	if missing != "" {
		p := rec.P
		r.p.Go(func() { r.refillPartition(p) })
		return nil, errMoved(p)
	}
	if len(syncB) == 0 && len(asyncB) == 0 {
		// No backup to send it to (one member, or backup-count 0): nothing
		// to encode, wait for or revert.
		return r.none, nil
	}
	rec.Epoch = t.Epoch
	s.rec, s.sync = rec, syncB
	s.body = rec.AppendWire(make([]byte, 0, rec.WireSize()))
	body := s.body
	if len(syncB) <= 1 {
		s.first, s.errs = s.oneFirst[:len(syncB)], s.oneErr[:len(syncB)]
	} else {
		s.first, s.errs = make([]*cluster.PendingCall, len(syncB)), make([]error, len(syncB))
	}
	// The first delivery to each sync backup is queued here, all of them
	// at once; Wait collects the answers (and retries what failed), so
	// that a write starts no goroutine for its backups.
	for i, b := range syncB {
		if a := r.p.Addr(b); a != "" && !r.p.Alone() {
			s.first[i], _ = r.p.Enqueue(ctx, a, mBackup, body)
		}
	}
	p := rec.P // not rec: a closure would move it to the heap
	for _, b := range asyncB {
		r.p.Go(func() {
			actx, cancel := context.WithTimeout(r.ctx, r.timeout)
			defer cancel()
			if err := r.sendBackup(actx, b, p, body, nil); err != nil {
				r.log.Debug("stowage: async backup failed; it is filled again", "member", b, "partition", p, "err", err)
				r.p.Go(func() { r.refill([]int{p}) })
			}
		})
	}
	return s, nil
}

// Wait waits until every sync backup applied the record, refused it, or
// left the replica set, and returns the failures ("backup <id>: ...").
// Refused reports whether every failure was a refusal that changed
// nothing and asks the write to be routed again.
func (s *Sent) Wait() (failed []error, refused bool) {
	s.once.Do(func() {
		r := s.d
		for i, b := range s.sync {
			s.errs[i] = r.sendBackup(s.ctx, b, s.rec.P, s.body, s.first[i])
			r.m.backupSeconds.Observe(time.Since(s.start).Seconds())
		}
	})
	for i, err := range s.errs {
		if err != nil {
			failed = append(failed, fmt.Errorf("backup %s: %w", s.sync[i], err))
		}
	}
	return failed, errorsAll(s.errs, errStaleOwner) || errorsAll(s.errs, errNeedFill)
}

// Revert undoes the record on the sync backups that applied it: they
// restore prev (absent when !prevOK), and count comp (the seq the owner
// spent undoing it in its store; 0: none) as applied.
func (s *Sent) Revert(prevOK bool, prev Entry, comp uint64) {
	if len(s.sync) == 0 {
		return
	}
	d := s.d
	ctx, cancel := context.WithTimeout(d.ctx, d.timeout)
	defer cancel()
	rec := s.rec
	rec.Rec.V = nil
	rec.PrevOK, rec.Prev, rec.Comp = prevOK, prev, comp
	body := cluster.Encode(rec)
	for i, b := range s.sync {
		if s.errs[i] != nil {
			continue
		}
		if _, err := d.p.Call(ctx, d.p.Addr(b), mRevert, body); err != nil {
			// The backup is going away or will be filled again.
			d.log.Debug("stowage: revert not delivered", "member", b, "partition", rec.P, "err", err)
		}
	}
}

// targets splits a map's backups by their place in p's replica set: the
// first syncN are synchronous (appended to syncB), the next asyncN
// asynchronous. filled are the backups that hold the partition; missing
// names a synchronous one that does not yet.
func (r *Replicator) targets(p, syncN, asyncN int, filled []string, syncB []string) (_, asyncB []string, missing string) {
	t, _ := r.p.Table()
	if t == nil {
		return nil, nil, ""
	}
	rs := t.Owners[p]
	for pos := 1; pos < len(rs) && pos <= syncN+asyncN; pos++ {
		b := rs[pos]
		if !slices.Contains(filled, b) {
			if pos <= syncN && missing == "" {
				missing = b
			}
			continue
		}
		if pos <= syncN {
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

// sendBackup delivers a record to backup b until it applied it, refused
// it (errStaleOwner), or is no longer a live replica of p, in which case
// the write no longer needs it; first, if not nil, is its first delivery,
// queued already. Records are applied by version, so sending one twice is
// harmless.
func (r *Replicator) sendBackup(ctx context.Context, b string, p int, body []byte, first *cluster.PendingCall) error {
	delay := 5 * time.Millisecond
	for {
		a := r.p.Addr(b)
		var resp []byte
		var err error
		switch {
		case first != nil:
			var gone bool
			resp, gone, err = r.awaitBackup(ctx, first, b, p)
			first = nil
			if gone {
				return nil
			}
		case a == "" || r.p.Alone():
			err = fmt.Errorf("%w: member %s has no known address", cluster.ErrUnreachable, b)
		default:
			var gone bool
			resp, gone, err = r.backupCall(ctx, a, b, p, body)
			if gone {
				return nil
			}
		}
		if err == nil {
			var ans codeAns
			if err := cluster.Malformed(ans.ParseWire(resp)); err != nil {
				return err
			}
			switch ans.Code {
			case codeOK:
				return nil
			case codeStale, codeMoved:
				r.log.Debug("stowage: backup refused a record", "partition", p, "member", b, "msg", ans.Msg)
				r.m.refused.Inc()
				r.p.AskFetch(a)
				return fmt.Errorf("%w: %s", errStaleOwner, ans.Msg)
			case codeNeedFill:
				r.log.Debug("stowage: backup needs a fill", "partition", p, "member", b, "msg", ans.Msg)
				r.replicas[p].MarkDirty()
				r.p.Go(func() { r.refill([]int{p}) })
				return fmt.Errorf("%w: %s", errNeedFill, ans.Msg)
			default:
				return fmt.Errorf("stowage: backup %s: %s", b, ans.Msg)
			}
		}
		if cerr := ctx.Err(); cerr != nil {
			return fmt.Errorf("stowage: backup %s did not acknowledge: %w", b, err)
		}
		if !r.p.InReplicaSet(p, b) {
			// The table no longer names it (it failed or moved): the write
			// does not wait for it, and its copy no longer counts.
			return nil
		}
		select {
		case <-time.After(delay):
		case <-ctx.Done():
		case <-r.ctx.Done():
			return r.closed
		}
		delay = min(2*delay, 200*time.Millisecond)
	}
}

// backupCall sends one backup record to member id at addr a and waits for
// the answer, for the caller to give up, or for a table that no longer
// names id a replica of p (gone true: the write does not wait for it).
// A member that hangs is dropped from the table by failure detection; the
// writes waiting for it then complete without it.
func (r *Replicator) backupCall(ctx context.Context, a, id string, p int, body []byte) (resp []byte, gone bool, err error) {
	pc, err := r.p.Enqueue(ctx, a, mBackup, body)
	if err != nil {
		return nil, false, err
	}
	return r.awaitBackup(ctx, pc, id, p)
}

// awaitBackup waits for the answer of pc, a backup record sent to member
// id, for the caller to give up, for this member to close, or for a table
// that no longer names id a replica of p (gone true).
func (r *Replicator) awaitBackup(ctx context.Context, pc *cluster.PendingCall, id string, p int) (resp []byte, gone bool, err error) {
	for {
		t, tabCh := r.p.Table()
		if t != nil && !slices.Contains(t.Owners[p], id) {
			return nil, true, nil
		}
		select {
		case a := <-pc.Done():
			return a.Body, false, a.Err
		case <-ctx.Done():
			// The record may still reach it with its batch.
			return nil, false, ctx.Err()
		case <-r.ctx.Done():
			// This member is closing: the write fails without waiting for
			// an answer that its closed transport may never deliver.
			return nil, false, r.closed
		case <-tabCh:
		}
	}
}
