package dmap

import (
	"context"
	"errors"
	"fmt"
	"github.com/stowage/stowage/partition"
	"slices"
	"time"
)

// handle serves the calls of other members.
func (d *dist) handle(ctx context.Context, from, method string, body []byte) ([]byte, error) {
	switch method {
	case mBatch:
		var req batchReq
		if err := dec(body, &req); err != nil {
			return nil, err
		}
		if req.Method == mBatch {
			return nil, fmt.Errorf("stowage: a batch inside a batch")
		}
		return enc(d.onBatch(ctx, from, &req)), nil
	case mBatchPoll:
		var req pollReq
		if err := dec(body, &req); err != nil {
			return nil, err
		}
		return enc(d.onPoll(ctx, &req)), nil
	case mOp:
		var req opReq
		if err := dec(body, &req); err != nil {
			return nil, err
		}
		return enc(d.onOp(ctx, from, &req)), nil
	case mScan:
		var req scanReq
		if err := dec(body, &req); err != nil {
			return nil, err
		}
		return enc(d.onScan(ctx, from, &req)), nil
	case mMapInfo:
		var req mapInfoReq
		if err := dec(body, &req); err != nil {
			return nil, err
		}
		return enc(d.onMapInfo(ctx, &req)), nil
	case mBackup, mRevert:
		var req backupReq
		if err := dec(body, &req); err != nil {
			return nil, err
		}
		return enc(d.onBackup(ctx, from, &req, method == mRevert)), nil
	case mFill:
		var req fillReq
		if err := dec(body, &req); err != nil {
			return nil, err
		}
		return enc(d.onFill(ctx, from, &req)), nil
	case mStatus:
		var req statusReq
		if err := dec(body, &req); err != nil {
			return nil, err
		}
		d.noteTable(ctx, from, req.TV)
		return enc(statusAns{TV: d.tableVersion(), St: d.localStatus(req.Parts, false)}), nil
	case mTake:
		var req takeReq
		if err := dec(body, &req); err != nil {
			return nil, err
		}
		return enc(d.onTake(ctx, from, &req)), nil
	case mRelease:
		var req releaseReq
		if err := dec(body, &req); err != nil {
			return nil, err
		}
		d.noteTable(ctx, from, req.TV)
		d.onRelease(&req)
		return enc(codeAns{}), nil
	case mTable:
		var tm tableMsg
		if err := dec(body, &tm); err != nil {
			return nil, err
		}
		d.install(tm.table())
		if t, _ := d.currentTable(); t != nil && t.Version > tm.Version {
			return enc(tableMsg{Version: t.Version}), nil
		}
		return enc(tableMsg{}), nil
	case mLease:
		var req leaseMsg
		if err := dec(body, &req); err != nil {
			return nil, err
		}
		return enc(d.onLease(from, &req)), nil
	case mGetTab:
		t, _ := d.currentTable()
		if t == nil {
			return enc(tableMsg{}), nil
		}
		return enc(tableOf(t)), nil
	case mSuspect:
		// Another member's connection to id was refused: check it here.
		if a := d.addr(string(body)); a != "" && string(body) != d.self {
			cctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
			_, _ = d.rpc(cctx, a, mGetTab, nil)
			cancel()
		}
		return nil, nil
	case mHealth:
		loaded, why := d.n.localLoaded()
		safe := false
		if loaded {
			safe, why = d.localSafeWhy()
		}
		return enc(healthAns{Loaded: loaded, Safe: safe, TV: d.tableVersion(), Why: why}), nil
	}
	if h := d.n.cfg.Methods[method]; h != nil {
		return h(ctx, from, body)
	}
	return nil, fmt.Errorf("stowage: unknown method %q", method)
}

// onOp runs a map operation forwarded by another member.
func (d *dist) onOp(ctx context.Context, from string, req *opReq) opAns {
	d.noteTable(ctx, from, req.TV)
	c, err := d.n.core(ctx, req.Map)
	if err != nil {
		return opAns{Code: codeFailed, Msg: err.Error()}
	}
	if req.Kind == opGet {
		e, ok, err := c.read(ctx, req.Key)
		if err != nil {
			return errAns(err)
		}
		return opAns{Old: e.val, Had: ok, Ver: toW(e.ver)}
	}
	o := &op{kind: req.Kind, val: req.Val, del: req.Del, expOK: req.ExpOK, expVer: req.ExpVer.v()}
	res, err := c.update(ctx, req.Key, o)
	if err != nil {
		a := errAns(err)
		a.Old, a.Had = res.old, res.had
		return a
	}
	return opAns{Old: res.old, Had: res.had, Wrote: res.wrote, Ver: toW(res.ver)}
}

func errAns(err error) opAns {
	switch {
	case isMoved(err):
		return opAns{Code: codeMoved, Msg: err.Error()}
	case errors.Is(err, errNoLease):
		return opAns{Code: codeNotReady, Msg: err.Error()}
	case isNoQuorum(err):
		return opAns{Code: codeRefused, Msg: err.Error()}
	}
	return opAns{Code: codeFailed, Msg: err.Error()}
}

// onScan returns the entries of the asked partitions this member owns.
func (d *dist) onScan(ctx context.Context, from string, req *scanReq) scanAns {
	d.noteTable(ctx, from, req.TV)
	c, err := d.n.core(ctx, req.Map)
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

func (d *dist) onMapInfo(ctx context.Context, req *mapInfoReq) mapInfoAns {
	c, err := d.n.core(ctx, req.Map)
	if err != nil {
		return mapInfoAns{Code: codeFailed}
	}
	var ans mapInfoAns
	for _, p := range req.Parts {
		if err := d.slots[p].EnterRead(ctx); err != nil {
			ans.Moved = append(ans.Moved, p)
			continue
		}
		if err := c.readyPart(ctx, c.parts[p], partition.WriteTicket{}); err != nil {
			ans.Moved = append(ans.Moved, p)
			continue
		}
		ans.Size += c.size(c.parts[p])
	}
	return ans
}

// onFill installs a partition sent by its owner.
func (d *dist) onFill(ctx context.Context, from string, req *fillReq) codeAns {
	d.noteTable(ctx, from, req.TV)
	p := req.Data.P
	if p < 0 || p >= d.count {
		return codeAns{Code: codeFailed, Msg: "partition out of range"}
	}
	t, _ := d.currentTable()
	fromID := d.idOf(from)
	if t == nil || t.Owner(p) != fromID {
		return codeAns{Code: codeStale, Msg: fmt.Sprintf("partition %d: the sender is not its owner here", p)}
	}
	if !slices.Contains(t.Owners[p], d.self) {
		return codeAns{Code: codeStale, Msg: fmt.Sprintf("partition %d: not a replica here", p)}
	}
	named := map[string]*core{}
	for _, mp := range req.Data.Maps {
		c, err := d.n.core(ctx, mp.Map)
		if err != nil {
			return codeAns{Code: codeFailed, Msg: err.Error()}
		}
		named[mp.Map] = c
	}
	cores := d.n.allCores()
	err := d.slots[p].Fill(req.Epoch, req.TV, req.Partial, func() {
		if !req.Partial {
			for _, c := range cores {
				if named[c.name] == nil {
					c.clearPart(c.parts[p])
				}
			}
		}
		for _, mp := range req.Data.Maps {
			c := named[mp.Map]
			pt := c.parts[p]
			c.replace(pt, mp)
			pt.mu.Lock()
			pt.filled, pt.ready, pt.loaded = true, false, false
			pt.mu.Unlock()
		}
	})
	if err != nil {
		return refusedAns(err)
	}
	if !req.Partial {
		d.log.Debug("stowage: filled", "partition", p, "tv", req.TV, "epoch", req.Epoch)
	}
	return codeAns{}
}

// refusedAns answers a move the partition's replica refused.
func refusedAns(err error) codeAns {
	var r *partition.RefusedError
	switch {
	case errors.As(err, &r) && r.NeedFill:
		return codeAns{Code: codeNeedFill, Msg: r.Msg}
	case errors.As(err, &r):
		return codeAns{Code: codeStale, Msg: r.Msg}
	}
	return codeAns{Code: codeFailed, Msg: err.Error()}
}

// onTake hands partitions over to the member that owns them now.
func (d *dist) onTake(ctx context.Context, from string, req *takeReq) takeAns {
	d.noteTable(ctx, from, req.TV)
	fromID := d.idOf(from)
	t, _ := d.currentTable()
	cores := d.n.allCores()
	var ans takeAns
	for _, p := range req.Parts {
		if p < 0 || p >= d.count || t == nil || t.Owner(p) != fromID {
			ans.Refused = append(ans.Refused, p)
			continue
		}
		given := d.slots[p].HandOver(ctx, fromID, t.JoinedAt(p, d.self), func(owner bool) {
			ans.Data = append(ans.Data, d.n.partData(p, owner, cores))
		})
		if !given {
			ans.Refused = append(ans.Refused, p)
		}
	}
	return ans
}

// onRelease drops a copy the new owner no longer needs: one that is not a
// replica per the table, or older than the owner's new epoch.
func (d *dist) onRelease(req *releaseReq) {
	if req.P < 0 || req.P >= d.count {
		return
	}
	d.slots[req.P].Release(req.Epoch, func() bool { return d.inReplicaSet(req.P, d.self) }, d.dropper(req.P))
}
