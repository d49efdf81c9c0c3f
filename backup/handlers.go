package backup

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/stowage/stowage/cluster"
	"github.com/stowage/stowage/partition"
)

// register makes the protocol serve the replicator's methods. Each asks
// the dispatcher to bring this member's table up to the caller's first.
func (d *Replicator) register() {
	d.p.Register(mBackup, cluster.CheckTable, d.serveRecord(false))
	d.p.Register(mRevert, cluster.CheckTable, d.serveRecord(true))
	d.p.Register(mFill, cluster.CheckTable, func(ctx context.Context, from string, body []byte) ([]byte, error) {
		var req fillReq
		if err := cluster.Decode(body, &req); err != nil {
			return nil, err
		}
		return cluster.Encode(d.onFill(ctx, from, &req)), nil
	})
	d.p.Register(mStatus, cluster.CheckTable, func(ctx context.Context, from string, body []byte) ([]byte, error) {
		var req statusReq
		if err := cluster.Decode(body, &req); err != nil {
			return nil, err
		}
		for _, p := range req.Parts {
			if p < 0 || p >= d.count {
				return nil, fmt.Errorf("stowage: status of partition %d: out of range", p)
			}
		}
		return cluster.Encode(statusAns{TV: d.p.TableVersion(), St: d.localStatus(req.Parts, false)}), nil
	})
	d.p.Register(mTake, cluster.CheckTable, func(ctx context.Context, from string, body []byte) ([]byte, error) {
		var req takeReq
		if err := cluster.Decode(body, &req); err != nil {
			return nil, err
		}
		return cluster.Encode(d.onTake(ctx, from, &req)), nil
	})
	d.p.Register(mRelease, cluster.CheckTable, func(ctx context.Context, from string, body []byte) ([]byte, error) {
		var req releaseReq
		if err := cluster.Decode(body, &req); err != nil {
			return nil, err
		}
		return cluster.Encode(d.onRelease(from, &req)), nil
	})
}

// serveRecord applies a record (or its revert) sent by the partition's
// owner.
func (d *Replicator) serveRecord(revert bool) cluster.MethodHandler {
	return func(ctx context.Context, from string, body []byte) ([]byte, error) {
		var rec Record
		if err := cluster.Decode(body, &rec); err != nil {
			return nil, err
		}
		return cluster.Encode(d.onRecord(ctx, from, &rec, revert)), nil
	}
}

func (d *Replicator) onRecord(ctx context.Context, from string, rec *Record, revert bool) codeAns {
	if rec.P < 0 || rec.P >= d.count {
		return codeAns{Code: codeFailed, Msg: "partition out of range"}
	}
	apply, err := d.h.PrepareApply(ctx, rec, revert)
	if err != nil {
		return codeAns{Code: codeFailed, Msg: err.Error()}
	}
	t, _ := d.p.Table()
	if t == nil || t.Owner(rec.P) != d.p.IDOf(from) {
		return codeAns{Code: codeStale, Msg: fmt.Sprintf("partition %d: the sender is not its owner here", rec.P)}
	}
	if err := d.replicas[rec.P].ApplyBackup(rec.Epoch, t.JoinedAt(rec.P, d.self), revert, apply); err != nil {
		return refusedAns(err)
	}
	return codeAns{}
}

// onFill installs a partition sent by its owner.
func (d *Replicator) onFill(ctx context.Context, from string, req *fillReq) codeAns {
	p := req.Data.P
	if p < 0 || p >= d.count {
		return codeAns{Code: codeFailed, Msg: "partition out of range"}
	}
	t, _ := d.p.Table()
	if t == nil || t.Owner(p) != d.p.IDOf(from) {
		return codeAns{Code: codeStale, Msg: fmt.Sprintf("partition %d: the sender is not its owner here", p)}
	}
	if !slices.Contains(t.Owners[p], d.self) {
		return codeAns{Code: codeStale, Msg: fmt.Sprintf("partition %d: not a replica here", p)}
	}
	install, err := d.h.PrepareFill(ctx, req.Data, req.Partial)
	if err != nil {
		return codeAns{Code: codeFailed, Msg: err.Error()}
	}
	if err := d.replicas[p].Fill(req.Epoch, req.TV, req.Partial, install); err != nil {
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
func (d *Replicator) onTake(ctx context.Context, from string, req *takeReq) takeAns {
	fromID := d.p.IDOf(from)
	t, _ := d.p.Table()
	var ans takeAns
	for _, p := range req.Parts {
		if p < 0 || p >= d.count || t == nil || t.Owner(p) != fromID {
			ans.Refused = append(ans.Refused, p)
			continue
		}
		given := d.replicas[p].HandOver(ctx, fromID, t.JoinedAt(p, d.self), func(owner bool) {
			ans.Data = append(ans.Data, d.h.Export(p, owner, 0))
		})
		if !given {
			ans.Refused = append(ans.Refused, p)
		}
	}
	return ans
}

// onRelease drops a copy the partition's owner no longer needs: one that
// is not a replica per the table, or older than the owner's new epoch.
// Only the owner the table names may ask.
func (d *Replicator) onRelease(from string, req *releaseReq) codeAns {
	if req.P < 0 || req.P >= d.count {
		return codeAns{Code: codeFailed, Msg: "partition out of range"}
	}
	if t, _ := d.p.Table(); t == nil || t.Owner(req.P) != d.p.IDOf(from) {
		return codeAns{Code: codeStale, Msg: fmt.Sprintf("partition %d: the sender is not its owner here", req.P)}
	}
	d.replicas[req.P].Release(req.Epoch, d.inSet(req.P), d.dropper(req.P))
	return codeAns{}
}
