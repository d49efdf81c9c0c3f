package dmap

import (
	"context"
	"errors"
	"fmt"
	"github.com/stowage/stowage/backup"
	"github.com/stowage/stowage/fsbackend/nslease"
	"sort"
	"time"

	"github.com/stowage/stowage/cluster"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/partition"
)

func isNoQuorum(err error) bool { return errors.Is(err, ErrNoQuorum) }

// do runs o on key of map c at the partition's owner, following the
// table: locally when this member owns the partition, else forwarded
// over the transport; a moved partition or an unreachable owner is
// routed again once the table changes. An operation with a function
// (Compute) runs on a remote owner as read, decide, compare-and-set.
func (e *Engine) do(ctx context.Context, c *heldMap, key []byte, o *op) (opResult, error) {
	oc := e.bound(ctx)
	defer oc.cancel()
	ctx = oc
	if err := c.waitEager(ctx); err != nil {
		return opResult{}, err
	}
	p := partition.Of(key, e.parts)
	delay := time.Millisecond
	rerouted := false
	for {
		// Split-brain protection is checked here too, not only at the
		// owner: below a map's minimum the table does not change
		// (cluster.ProtocolConfig.PublishMin), so the owner may be a
		// member this one lost, which would never answer.
		need := c.wq
		if o.kind == opGet && o.fn == nil {
			need = c.rq
		}
		if err := e.quorumOK(need); err != nil {
			return opResult{}, err
		}
		owner, err := e.proto.OwnerOf(ctx, p)
		if err != nil {
			return opResult{}, err
		}
		_, tabCh := e.proto.Table()
		var res opResult
		if owner == e.proto.Self() {
			if o.kind == opGet && o.fn == nil {
				var got entry
				got, res.had, err = c.read(ctx, key)
				res.old, res.ver = got.val(), got.ver
			} else {
				res, err = c.update(ctx, key, o)
			}
		} else if o.fn != nil {
			res, err = e.casRemote(ctx, owner, c, key, o)
		} else {
			res, err = e.remote(ctx, owner, c, key, o)
		}
		if err == nil || !retryable(err) {
			res.rerouted = rerouted
			return res, err
		}
		// An owner that went away may have applied the call before it
		// could answer.
		rerouted = rerouted || errors.Is(err, cluster.ErrUnreachable)
		if delay >= 100*time.Millisecond {
			e.log.Debug("stowage: routing again", "map", c.name, "partition", p, "owner", owner, "err", err)
		}
		select {
		case <-tabCh:
		case <-time.After(delay):
		case <-ctx.Done():
			return res, fmt.Errorf("stowage: map %q: %w (last: %w)", c.name, ctx.Err(), err)
		case <-e.proto.Context().Done():
			return res, ErrClosed
		}
		delay = min(2*delay, 100*time.Millisecond)
	}
}

// errRoute is an error after which the operation is routed again.
type errRoute struct{ err error }

func (e errRoute) Error() string { return e.err.Error() }
func (e errRoute) Unwrap() error { return e.err }

func retryable(err error) bool {
	var r errRoute
	return isMoved(err) || errors.As(err, &r)
}

// remote forwards o to the owner.
func (e *Engine) remote(ctx context.Context, owner string, c *heldMap, key []byte, o *op) (opResult, error) {
	req := opReq{Map: c.name, Kind: o.kind, Key: key, Val: o.val, Del: o.del, ExpOK: o.expOK, ExpVer: backup.VerOf(o.expVer), Owner: o.owner,
		TTL: int64(o.ttl), TTLSet: o.ttlSet}
	var b []byte
	var err error
	if a := e.proto.Addr(owner); a != "" && !e.proto.Alone() {
		b, err = e.proto.Batched(ctx, a, mOp, req.AppendWire(make([]byte, 0, req.WireSize())))
	} else {
		err = fmt.Errorf("%w: member %s has no known address", cluster.ErrUnreachable, owner)
	}
	if err != nil {
		switch {
		case errors.Is(err, cluster.ErrUnreachable), errors.Is(err, cluster.ErrNoHandler),
			o.kind == opGet && ctx.Err() == nil && !cluster.IsRemote(err):
			return opResult{}, errRoute{err} // not delivered, or harmless to repeat
		case cluster.IsRemote(err):
			return opResult{}, err
		}
		return opResult{}, fmt.Errorf("stowage: map %q: %w: %w", c.name, ErrIndeterminate, err)
	}
	var ans opAns
	if err := cluster.Malformed(ans.ParseWire(b)); err != nil {
		return opResult{}, err
	}
	res := opResult{old: ans.Old, had: ans.Had, wrote: ans.Wrote, ver: ans.Ver.Version()}
	switch ans.Code {
	case codeOK:
		return res, nil
	case codeMoved, codeNotReady:
		e.proto.AskFetch(e.proto.Addr(owner))
		return res, errRoute{fmt.Errorf("stowage: partition moved from %s: %s", owner, ans.Msg)}
	case codeRefused:
		return res, fmt.Errorf("%w (at %s): %s", ErrNoQuorum, owner, ans.Msg)
	case codeLeaseLost:
		return res, fmt.Errorf("%w (at %s): %s", nslease.ErrLost, owner, ans.Msg)
	case codeUnknown:
		return res, fmt.Errorf("stowage: map %q: %w (at %s, closing): %s", c.name, ErrIndeterminate, owner, ans.Msg)
	}
	return res, fmt.Errorf("stowage: map %q at member %s: %s", c.name, owner, ans.Msg)
}

// casRemote runs a function operation on a remote owner: read the entry
// with its version, decide here, and write only if the entry is unchanged
// (else read again).
func (e *Engine) casRemote(ctx context.Context, owner string, c *heldMap, key []byte, o *op) (opResult, error) {
	for {
		r, err := e.remote(ctx, owner, c, key, &op{kind: opGet})
		if err != nil {
			return r, err
		}
		dd := o.fn(r.old, r.had)
		if !dd.Write || (dd.Delete && !r.had) {
			return opResult{old: r.old, had: r.had, ver: r.ver, wrote: dd.Write}, nil
		}
		w, err := e.remote(ctx, owner, c, key, &op{kind: opCAS, val: dd.Value, del: dd.Delete, expOK: r.had, expVer: r.ver, owner: o.owner})
		if err != nil {
			return w, err
		}
		if w.wrote {
			w.old, w.had = r.old, r.had
			return w, nil
		}
		if err := ctx.Err(); err != nil {
			return w, err
		}
	}
}

// ownedEntries copies the entries of partition p, which this member must
// own.
func (c *heldMap) ownedEntries(ctx context.Context, p int) ([]backup.Entry, error) {
	if c.ghost {
		h, err := c.n.ghostRead(ctx, c.name, p)
		if h == nil || err != nil {
			return nil, err
		}
		return h.ownedEntries(ctx, p)
	}
	if err := c.n.admitRead(ctx, p); err != nil {
		return nil, err
	}
	pt := c.parts[p]
	if err := c.readyPart(ctx, pt); err != nil {
		return nil, err
	}
	pt.mu.Lock()
	defer pt.mu.Unlock()
	out := make([]backup.Entry, 0, len(pt.entries))
	now := nowNanos()
	for k, e := range pt.entries {
		if c.dead(e, now) {
			continue
		}
		out = append(out, backup.Entry{K: []byte(k), V: e.val(), R: backup.VerOf(e.ver), X: e.exp})
	}
	return out, nil
}

// byOwner groups partitions by their owner in the current table.
func (e *Engine) byOwner(ctx context.Context, ps []int) (map[string][]int, <-chan struct{}, error) {
	out := map[string][]int{}
	for _, p := range ps {
		o, err := e.proto.OwnerOf(ctx, p)
		if err != nil {
			return nil, nil, err
		}
		out[o] = append(out[o], p)
	}
	_, ch := e.proto.Table()
	return out, ch, nil
}

// scatter runs fn on every partition's owner: locally or remote, and
// again for partitions that moved meanwhile.
func (e *Engine) scatter(ctx context.Context, c *heldMap, local func(p int) error, remote func(owner string, ps []int) ([]int, error)) error {
	oc := e.bound(ctx)
	defer oc.cancel()
	ctx = oc
	if err := c.waitEager(ctx); err != nil {
		return err
	}
	ps := make([]int, e.parts)
	for i := range ps {
		ps[i] = i
	}
	delay := time.Millisecond
	for len(ps) > 0 {
		groups, tabCh, err := e.byOwner(ctx, ps)
		if err != nil {
			return err
		}
		owners := make([]string, 0, len(groups))
		for o := range groups {
			owners = append(owners, o)
		}
		sort.Strings(owners)
		var again []int
		for _, o := range owners {
			if o == e.proto.Self() {
				for _, p := range groups[o] {
					if err := local(p); err != nil {
						if !isMoved(err) {
							return err
						}
						again = append(again, p)
					}
				}
				continue
			}
			moved, err := remote(o, groups[o])
			if err != nil {
				if !retryable(err) {
					return err
				}
				moved = groups[o]
			}
			again = append(again, moved...)
		}
		ps = again
		if len(ps) == 0 {
			return nil
		}
		select {
		case <-tabCh:
		case <-time.After(delay):
		case <-ctx.Done():
			return ctx.Err()
		}
		delay = min(2*delay, 100*time.Millisecond)
	}
	return nil
}

// rangeAll calls fn for each entry of map c, partition by partition, on
// copies, so fn may call the map.
func (e *Engine) rangeAll(ctx context.Context, c *heldMap, fn func(k string, v []byte) bool) error {
	stop := errors.New("stop")
	each := func(es []backup.Entry) error {
		for _, e := range es {
			if !fn(string(e.K), e.V) {
				return stop
			}
		}
		return nil
	}
	err := e.scatter(ctx, c, func(p int) error {
		es, err := c.ownedEntries(ctx, p)
		if err != nil {
			return err
		}
		return each(es)
	}, func(owner string, ps []int) ([]int, error) {
		b, err := e.proto.CallMember(ctx, owner, mScan, scanReq{Map: c.name, Parts: ps})
		if err != nil {
			return nil, errRoute{err}
		}
		var ans scanAns
		if err := cluster.Decode(b, &ans); err != nil {
			return nil, err
		}
		if ans.Code != codeOK {
			return nil, fmt.Errorf("stowage: map %q: scan at %s failed", c.name, owner)
		}
		return ans.Moved, each(ans.Entries)
	})
	if errors.Is(err, stop) {
		return nil
	}
	return err
}

// size counts map c's entries over every owner.
func (e *Engine) size(ctx context.Context, c *heldMap) (int, error) {
	n, _, err := e.sizeBytes(ctx, c)
	return n, err
}

// sizeBytes counts map c's entries over every owner, and the bytes of
// their keys and values.
func (e *Engine) sizeBytes(ctx context.Context, c *heldMap) (int, int64, error) {
	total, bytes := 0, int64(0)
	err := e.scatter(ctx, c, func(p int) error {
		if err := e.repl.Replica(p).EnterRead(ctx); err != nil {
			return err
		}
		c := c.resolve()
		if c.ghost {
			return nil
		}
		if err := c.readyPart(ctx, c.parts[p]); err != nil {
			return err
		}
		n, b := c.sizeBytes(c.parts[p])
		total += n
		bytes += b
		return nil
	}, func(owner string, ps []int) ([]int, error) {
		b, err := e.proto.CallMember(ctx, owner, mMapInfo, mapInfoReq{Map: c.name, Parts: ps})
		if err != nil {
			return nil, errRoute{err}
		}
		var ans mapInfoAns
		if err := cluster.Decode(b, &ans); err != nil {
			return nil, err
		}
		if ans.Code != codeOK {
			return nil, fmt.Errorf("stowage: map %q: size at %s failed", c.name, owner)
		}
		total += ans.Size
		bytes += ans.Bytes
		return ans.Moved, nil
	})
	return total, bytes, err
}

// get reads key of map c at its owner.
func (e *Engine) get(ctx context.Context, c *heldMap, key []byte) ([]byte, mapstore.Version, bool, error) {
	r, err := e.do(ctx, c, key, &op{kind: opGet})
	return r.old, r.ver, r.had, err
}
