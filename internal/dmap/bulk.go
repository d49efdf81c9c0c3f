package dmap

import (
	"context"
	"errors"
	"fmt"
	"github.com/stowage/stowage/fsbackend/nslease"
	"sync"
	"time"

	"github.com/stowage/stowage/cluster"
	"github.com/stowage/stowage/partition"
)

// Bulk operations (PutAll, GetAll, RemoveAll): the keys are grouped by
// their partition's owner and each owner gets one call with all of its
// keys (split only past bulkMaxItems or bulkMaxBytes); the owner runs
// every key through the ordinary owner path (read, or update: version,
// store and sync backups in parallel, apply), several keys at a time so
// that they share the store's group commits. Each key is acknowledged
// under the same rule as a single operation; a bulk write is not atomic:
// when it fails, the keys it names may have been written or not, and the
// others were written. Keys whose partition moved meanwhile are routed
// again, grouped by their new owners.

const (
	mBulk = "bulk" // the keys of a bulk operation one owner serves

	// bulkMaxItems and bulkMaxBytes bound one call: a bigger group is
	// sent in several calls.
	bulkMaxItems = 10000
	bulkMaxBytes = 32 << 20
	// bulkParallel is how many keys of one call an owner runs at once.
	bulkParallel = 64
)

type bulkReq struct {
	Map    string   `msgpack:"m"`
	Kind   int      `msgpack:"o"` // opGet, opPut or opDelete
	Keys   [][]byte `msgpack:"k"`
	Vals   [][]byte `msgpack:"v,omitempty"` // opPut: one per key
	TTL    int64    `msgpack:"t,omitempty"`
	TTLSet bool     `msgpack:"ts,omitempty"`
}

// bulkItem is the outcome of one key.
type bulkItem struct {
	Code int    `msgpack:"c"`
	Msg  string `msgpack:"x,omitempty"`
	Val  []byte `msgpack:"v,omitempty"` // opGet: the value; else the previous one
	Had  bool   `msgpack:"h,omitempty"`
	// err is the key's error when the owner is this member (it keeps
	// what errors.Is needs; the wire carries Code and Msg only).
	err error
}

type bulkAns struct {
	Code  int        `msgpack:"c"`
	Msg   string     `msgpack:"x,omitempty"`
	Items []bulkItem `msgpack:"i"`
}

// BulkResult is the outcome of one key of a bulk operation: the value
// (GetAll) or the previous value (PutAll, RemoveAll), and whether there
// was one; Err is what failed for this key (a key not done because the
// whole operation stopped has that error).
type BulkResult struct {
	Val []byte
	Had bool
	Err error
}

// PutAll sets each keys[i] to vals[i] (with its own time to live when
// ttl >= 0, as PutWithTTL; else the map's), one call per owner.
func (m *Map) PutAll(ctx context.Context, keys, vals [][]byte, ttl time.Duration) ([]BulkResult, error) {
	if len(keys) != len(vals) {
		return nil, fmt.Errorf("stowage: map %q: PutAll of %d keys and %d values", m.name, len(keys), len(vals))
	}
	c, err := m.writer(ctx)
	if err != nil {
		return nil, err
	}
	req := bulkReq{Map: m.name, Kind: opPut, Keys: keys, Vals: vals}
	if ttl >= 0 {
		req.TTL, req.TTLSet = int64(ttl), true
	}
	return m.n.bulk(ctx, c, req)
}

// GetAll reads every key, one call per owner.
func (m *Map) GetAll(ctx context.Context, keys [][]byte) ([]BulkResult, error) {
	return m.n.bulk(ctx, m.reader(), bulkReq{Map: m.name, Kind: opGet, Keys: keys})
}

// RemoveAll deletes every key, one call per owner.
func (m *Map) RemoveAll(ctx context.Context, keys [][]byte) ([]BulkResult, error) {
	c, err := m.writer(ctx)
	if err != nil {
		return nil, err
	}
	return m.n.bulk(ctx, c, bulkReq{Map: m.name, Kind: opDelete, Keys: keys})
}

// bulk runs req at the owners of its keys and returns each key's
// outcome, in the order of req.Keys.
func (e *Engine) bulk(ctx context.Context, c *heldMap, req bulkReq) ([]BulkResult, error) {
	oc := e.bound(ctx)
	defer oc.cancel()
	ctx = oc
	if err := c.waitEager(ctx); err != nil {
		return nil, err
	}
	out := make([]BulkResult, len(req.Keys))
	pending := make([]int, len(req.Keys))
	for i := range pending {
		pending[i] = i
	}
	delay := time.Millisecond
	for len(pending) > 0 {
		groups := map[string][]int{}
		for _, i := range pending {
			owner, err := e.proto.OwnerOf(ctx, partition.Of(req.Keys[i], e.parts))
			if err != nil {
				return failPending(out, pending, err), err
			}
			groups[owner] = append(groups[owner], i)
		}
		_, tabCh := e.proto.Table()
		var mu sync.Mutex
		var again []int
		var wg sync.WaitGroup
		for owner, idx := range groups {
			for _, part := range splitBulk(req, idx) {
				wg.Go(func() {
					items, err := e.bulkAt(ctx, owner, c, subReq(req, part))
					mu.Lock()
					defer mu.Unlock()
					for j, i := range part {
						it := bulkItem{Code: codeFailed}
						if err == nil {
							it = items[j]
						}
						switch {
						case err != nil && retryable(err), err == nil && (it.Code == codeMoved || it.Code == codeNotReady):
							again = append(again, i)
						case err != nil:
							out[i] = BulkResult{Err: err}
						default:
							out[i] = BulkResult{Val: it.Val, Had: it.Had, Err: e.itemErr(c, owner, it)}
						}
					}
				})
			}
		}
		wg.Wait()
		pending = again
		if len(pending) == 0 {
			break
		}
		select {
		case <-tabCh:
		case <-time.After(delay):
		case <-ctx.Done():
			err := fmt.Errorf("stowage: map %q: %w (%d keys not placed)", c.name, ctx.Err(), len(pending))
			return failPending(out, pending, err), err
		case <-e.proto.Context().Done():
			return failPending(out, pending, ErrClosed), ErrClosed
		}
		delay = min(2*delay, 100*time.Millisecond)
	}
	var errs []error
	for _, r := range out {
		if r.Err != nil {
			errs = append(errs, r.Err)
			if len(errs) == 3 {
				break
			}
		}
	}
	return out, errors.Join(errs...)
}

// failPending gives the keys pending the error that stopped the
// operation, so that every key not done has one.
func failPending(out []BulkResult, pending []int, err error) []BulkResult {
	for _, i := range pending {
		if out[i].Err == nil {
			out[i] = BulkResult{Err: err}
		}
	}
	return out
}

// itemErr is the error of one key's outcome (nil when it succeeded).
func (e *Engine) itemErr(c *heldMap, owner string, it bulkItem) error {
	switch it.Code {
	case codeOK:
		return nil
	case codeRefused:
		return fmt.Errorf("%w (at %s): %s", ErrNoQuorum, owner, it.Msg)
	case codeLeaseLost:
		return fmt.Errorf("%w (at %s): %s", nslease.ErrLost, owner, it.Msg)
	}
	if it.err != nil {
		return it.err
	}
	return fmt.Errorf("stowage: map %q at member %s: %s", c.name, owner, it.Msg)
}

// splitBulk cuts the keys idx of req into calls within the bounds.
func splitBulk(req bulkReq, idx []int) [][]int {
	var out [][]int
	start, size := 0, 0
	for j, i := range idx {
		n := len(req.Keys[i])
		if req.Vals != nil {
			n += len(req.Vals[i])
		}
		if j > start && (j-start == bulkMaxItems || size+n > bulkMaxBytes) {
			out = append(out, idx[start:j])
			start, size = j, 0
		}
		size += n
	}
	return append(out, idx[start:])
}

// subReq is req for the keys idx only.
func subReq(req bulkReq, idx []int) bulkReq {
	sub := req
	sub.Keys = make([][]byte, len(idx))
	if req.Vals != nil {
		sub.Vals = make([][]byte, len(idx))
	}
	for j, i := range idx {
		sub.Keys[j] = req.Keys[i]
		if req.Vals != nil {
			sub.Vals[j] = req.Vals[i]
		}
	}
	return sub
}

// bulkAt runs req at owner: here, or in one call.
func (e *Engine) bulkAt(ctx context.Context, owner string, c *heldMap, req bulkReq) ([]bulkItem, error) {
	if owner == e.proto.Self() {
		return e.runBulk(ctx, c, &req), nil
	}
	b, err := e.proto.CallMember(ctx, owner, mBulk, req)
	if err != nil {
		switch {
		case errors.Is(err, cluster.ErrUnreachable), errors.Is(err, cluster.ErrNoHandler),
			req.Kind == opGet && ctx.Err() == nil && !cluster.IsRemote(err):
			return nil, errRoute{err}
		case cluster.IsRemote(err):
			return nil, err
		}
		return nil, fmt.Errorf("stowage: map %q: %w: %w", c.name, ErrIndeterminate, err)
	}
	var ans bulkAns
	if err := cluster.Decode(b, &ans); err != nil {
		return nil, err
	}
	if ans.Code != codeOK {
		return nil, fmt.Errorf("stowage: map %q at member %s: %s", c.name, owner, ans.Msg)
	}
	if len(ans.Items) != len(req.Keys) {
		return nil, fmt.Errorf("stowage: map %q at member %s: %d outcomes for %d keys", c.name, owner, len(ans.Items), len(req.Keys))
	}
	return ans.Items, nil
}

// runBulk runs every key of req on this member, as its owner, several
// at a time.
func (e *Engine) runBulk(ctx context.Context, c *heldMap, req *bulkReq) []bulkItem {
	items := make([]bulkItem, len(req.Keys))
	sem := make(chan struct{}, bulkParallel)
	var wg sync.WaitGroup
	for i, key := range req.Keys {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			items[i] = c.bulkOne(ctx, req, i, key)
		})
	}
	wg.Wait()
	return items
}

// bulkOne runs key i of req on this member.
func (c *heldMap) bulkOne(ctx context.Context, req *bulkReq, i int, key []byte) bulkItem {
	if req.Kind == opGet {
		got, ok, err := c.read(ctx, key)
		if err != nil {
			a := errAns(err)
			return bulkItem{Code: a.Code, Msg: a.Msg, err: err}
		}
		return bulkItem{Val: got.val(), Had: ok}
	}
	o := &op{kind: req.Kind, ttl: time.Duration(req.TTL), ttlSet: req.TTLSet}
	if req.Kind == opPut {
		o.val = req.Vals[i]
	}
	res, err := c.update(ctx, key, o)
	if err != nil {
		a := errAns(err)
		return bulkItem{Code: a.Code, Msg: a.Msg, err: err}
	}
	return bulkItem{Val: res.old, Had: res.had}
}

// registerBulk makes the protocol serve bulk calls.
func (e *Engine) registerBulk() {
	e.proto.Register(mBulk, cluster.CheckTable, func(ctx context.Context, _ string, body []byte) ([]byte, error) {
		var req bulkReq
		if err := cluster.Decode(body, &req); err != nil {
			return nil, err
		}
		return cluster.Encode(e.onBulk(ctx, &req)), nil
	})
}

// onBulk serves a bulk call from another member.
func (e *Engine) onBulk(ctx context.Context, req *bulkReq) bulkAns {
	switch {
	case req.Kind != opGet && req.Kind != opPut && req.Kind != opDelete:
		return bulkAns{Code: codeFailed, Msg: fmt.Sprintf("stowage: bulk operation of kind %d", req.Kind)}
	case req.Kind == opPut && len(req.Vals) != len(req.Keys):
		return bulkAns{Code: codeFailed, Msg: fmt.Sprintf("stowage: bulk put of %d keys and %d values", len(req.Keys), len(req.Vals))}
	case len(req.Keys) > bulkMaxItems:
		return bulkAns{Code: codeFailed, Msg: fmt.Sprintf("stowage: bulk call of %d keys, over %d", len(req.Keys), bulkMaxItems)}
	}
	var c *heldMap
	var err error
	if req.Kind == opGet {
		c, err = e.readable(req.Map)
	} else {
		c, err = e.hold(ctx, req.Map)
	}
	if err != nil {
		return bulkAns{Code: codeFailed, Msg: err.Error()}
	}
	if e.m != nil {
		e.m.bulkCalls.WithLabelValues(req.Map).Inc()
		e.m.bulkKeys.WithLabelValues(req.Map).Add(float64(len(req.Keys)))
	}
	return bulkAns{Items: e.runBulk(ctx, c, req)}
}
