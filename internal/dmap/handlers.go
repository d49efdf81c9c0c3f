package dmap

import (
	"context"
	"errors"
	"fmt"
	"github.com/stowage/stowage/fsbackend/nslease"
	"time"

	"github.com/stowage/stowage/backup"
	"github.com/stowage/stowage/cluster"
)

// register makes the protocol serve the map engine's methods: operations
// forwarded to an owner and scans check the caller's table first.
func (e *Engine) register() {
	e.proto.Register(mOp, cluster.CheckTable, func(ctx context.Context, _ string, body []byte) ([]byte, error) {
		var req opReq
		if err := req.ParseWire(body); err != nil {
			return nil, cluster.Malformed(err)
		}
		ans := e.onOp(ctx, &req)
		return ans.AppendWire(make([]byte, 0, ans.WireSize())), nil
	})
	e.proto.Register(mScan, cluster.CheckTable, func(ctx context.Context, _ string, body []byte) ([]byte, error) {
		var req scanReq
		if err := cluster.Decode(body, &req); err != nil {
			return nil, err
		}
		if err := e.checkParts(req.Parts); err != nil {
			return nil, err
		}
		return cluster.Encode(e.onScan(ctx, &req)), nil
	})
	e.proto.Register(mMapInfo, 0, func(ctx context.Context, _ string, body []byte) ([]byte, error) {
		var req mapInfoReq
		if err := cluster.Decode(body, &req); err != nil {
			return nil, err
		}
		if err := e.checkParts(req.Parts); err != nil {
			return nil, err
		}
		return cluster.Encode(e.onMapInfo(ctx, &req)), nil
	})
	e.proto.Register(mHealth, 0, func(context.Context, string, []byte) ([]byte, error) {
		loaded, why := e.localLoaded()
		safe := false
		if loaded {
			why = e.repl.LocalSafeWhy()
			safe = why == ""
		}
		return cluster.Encode(healthAns{Loaded: loaded, Safe: safe, TV: e.proto.TableVersion(), Why: why}), nil
	})
	e.proto.Register(mTakeOvers, 0, func(context.Context, string, []byte) ([]byte, error) {
		return cluster.Encode(e.onTakeOvers()), nil
	})
	e.registerBulk()
	e.registerEvents()
	e.registerDestroy()
	e.registerWriteBehind()
	for name, h := range e.cfg.Methods {
		e.proto.Register(name, 0, cluster.MethodHandler(h))
	}
}

// checkParts refuses partition ids out of range.
func (e *Engine) checkParts(ps []int) error {
	for _, p := range ps {
		if p < 0 || p >= e.parts {
			return fmt.Errorf("stowage: partition %d out of range", p)
		}
	}
	return nil
}

// onOp runs a map operation forwarded by another member.
func (e *Engine) onOp(ctx context.Context, req *opReq) opAns {
	if req.Kind == opGet {
		c, err := e.readable(req.Map)
		if err != nil {
			return opAns{Code: codeFailed, Msg: err.Error()}
		}
		got, ok, err := c.read(ctx, req.Key)
		if err != nil {
			return errAns(err)
		}
		return opAns{Old: got.val(), Had: ok, Ver: backup.VerOf(got.ver)}
	}
	c, err := e.hold(ctx, req.Map)
	if err != nil {
		return opAns{Code: codeFailed, Msg: err.Error()}
	}
	o := &op{kind: req.Kind, val: req.Val, del: req.Del, expOK: req.ExpOK, expVer: req.ExpVer.Version(), owner: req.Owner,
		ttl: time.Duration(req.TTL), ttlSet: req.TTLSet}
	if o.kind == opExpire {
		return opAns{Code: codeFailed, Msg: "stowage: expiry is the owner's own operation"}
	}
	res, err := c.update(ctx, req.Key, o)
	if err != nil {
		a := errAns(err)
		if a.Code == codeFailed && (ctx.Err() != nil || e.proto.Context().Err() != nil) {
			a.Code = codeUnknown
		}
		a.Old, a.Had = res.old, res.had
		return a
	}
	return opAns{Old: res.old, Had: res.had, Wrote: res.wrote, Ver: backup.VerOf(res.ver)}
}

func errAns(err error) opAns {
	switch {
	case isMoved(err):
		return opAns{Code: codeMoved, Msg: err.Error()}
	case errors.Is(err, cluster.ErrNoLease):
		return opAns{Code: codeNotReady, Msg: err.Error()}
	case isNoQuorum(err):
		return opAns{Code: codeRefused, Msg: err.Error()}
	case errors.Is(err, nslease.ErrLost):
		return opAns{Code: codeLeaseLost, Msg: err.Error()}
	}
	return opAns{Code: codeFailed, Msg: err.Error()}
}

// onScan returns the entries of the asked partitions this member owns.
func (e *Engine) onScan(ctx context.Context, req *scanReq) scanAns {
	c, err := e.readable(req.Map)
	if err != nil {
		return scanAns{Code: codeFailed}
	}
	var ans scanAns
	for _, p := range req.Parts {
		es, err := c.ownedEntries(ctx, p)
		if err != nil {
			ans.Moved = append(ans.Moved, p)
			continue
		}
		ans.Entries = append(ans.Entries, es...)
	}
	return ans
}

func (e *Engine) onMapInfo(ctx context.Context, req *mapInfoReq) mapInfoAns {
	c, err := e.readable(req.Map)
	if err != nil {
		return mapInfoAns{Code: codeFailed}
	}
	var ans mapInfoAns
	for _, p := range req.Parts {
		if err := e.repl.Replica(p).EnterRead(ctx); err != nil {
			ans.Moved = append(ans.Moved, p)
			continue
		}
		c := c.resolve()
		if c.ghost {
			continue
		}
		if err := c.readyPart(ctx, c.parts[p]); err != nil {
			ans.Moved = append(ans.Moved, p)
			continue
		}
		n, b := c.sizeBytes(c.parts[p])
		ans.Size += n
		ans.Bytes += b
	}
	return ans
}

// readable returns the named map to read: held here, else a ghost, so
// that a read creates nothing.
func (e *Engine) readable(name string) (*heldMap, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	if c := e.held(name); c != nil {
		return c, nil
	}
	return newGhost(e, name), nil
}
