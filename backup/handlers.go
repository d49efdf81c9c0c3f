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
func (r *Replicator) register() {
	r.p.Register(mBackup, cluster.CheckTable, r.serveRecord(false))
	r.p.Register(mRevert, cluster.CheckTable, r.serveRecord(true))
	r.p.RegisterReplicated(mFill, cluster.CheckTable, fillParts, func(ctx context.Context, from string, body []byte) ([]byte, error) {
		var req fillReq
		if err := cluster.Decode(body, &req); err != nil {
			return nil, err
		}
		return cluster.Encode(r.onFill(ctx, from, &req)), nil
	})
	r.p.Register(mStatus, cluster.CheckTable, func(ctx context.Context, from string, body []byte) ([]byte, error) {
		var req statusReq
		if err := cluster.Decode(body, &req); err != nil {
			return nil, err
		}
		for _, p := range req.Parts {
			if p < 0 || p >= r.count {
				return nil, fmt.Errorf("stowage: status of partition %d: out of range", p)
			}
		}
		return cluster.Encode(statusAns{TV: r.p.TableVersion(), St: r.localStatus(req.Parts, false)}), nil
	})
	r.p.RegisterReplicated(mTake, cluster.CheckTable, takeParts, func(ctx context.Context, from string, body []byte) ([]byte, error) {
		var req takeReq
		if err := cluster.Decode(body, &req); err != nil {
			return nil, err
		}
		return cluster.Encode(r.onTake(ctx, from, &req)), nil
	})
	r.p.RegisterReplicated(mDigest, cluster.CheckTable, digestParts, func(ctx context.Context, from string, body []byte) ([]byte, error) {
		var req digestReq
		if err := cluster.Decode(body, &req); err != nil {
			return nil, err
		}
		return cluster.Encode(r.onDigest(from, &req)), nil
	})
	r.p.RegisterReplicated(mRelease, cluster.CheckTable, releaseParts, func(ctx context.Context, from string, body []byte) ([]byte, error) {
		var req releaseReq
		if err := cluster.Decode(body, &req); err != nil {
			return nil, err
		}
		return cluster.Encode(r.onRelease(from, &req)), nil
	})
}

// The partitions of a fill, take and release, which the dispatcher
// serves only to a member the table names as their replica.
func fillParts(body []byte) ([]int, error) {
	// Only the partition number is decoded; the maps are skipped.
	var req struct {
		Data struct {
			P int `msgpack:"p"`
		} `msgpack:"d"`
	}
	err := cluster.Decode(body, &req)
	return []int{req.Data.P}, err
}

func takeParts(body []byte) ([]int, error) {
	var req takeReq
	err := cluster.Decode(body, &req)
	return req.Parts, err
}

func digestParts(body []byte) ([]int, error) {
	var req digestReq
	err := cluster.Decode(body, &req)
	return []int{req.P}, err
}

func releaseParts(body []byte) ([]int, error) {
	var req releaseReq
	err := cluster.Decode(body, &req)
	return []int{req.P}, err
}

// serveRecord applies a record (or its revert) sent by the partition's
// owner.
func (r *Replicator) serveRecord(revert bool) cluster.MethodHandler {
	return func(ctx context.Context, from string, body []byte) ([]byte, error) {
		var rec Record
		if err := rec.ParseWire(body); err != nil {
			return nil, cluster.Malformed(err)
		}
		ans := r.onRecord(ctx, from, &rec, revert)
		return ans.AppendWire(make([]byte, 0, ans.WireSize())), nil
	}
}

func (r *Replicator) onRecord(ctx context.Context, from string, rec *Record, revert bool) codeAns {
	if rec.P < 0 || rec.P >= r.count {
		return codeAns{Code: codeFailed, Msg: "partition out of range"}
	}
	apply, err := r.h.PrepareApply(ctx, rec, revert)
	if err != nil {
		return codeAns{Code: codeFailed, Msg: err.Error()}
	}
	t, _ := r.p.Table()
	if t == nil || t.Owner(rec.P) != r.p.IDOf(from) {
		return codeAns{Code: codeStale, Msg: fmt.Sprintf("partition %d: the sender is not its owner here", rec.P)}
	}
	if err := r.replicas[rec.P].ApplyBackup(rec.Epoch, t.JoinedAt(rec.P, r.self), revert, apply); err != nil {
		return refusedAns(err)
	}
	return codeAns{}
}

// onFill installs a partition sent by its owner.
func (r *Replicator) onFill(ctx context.Context, from string, req *fillReq) codeAns {
	p := req.Data.P
	if p < 0 || p >= r.count {
		return codeAns{Code: codeFailed, Msg: "partition out of range"}
	}
	t, _ := r.p.Table()
	if t == nil || t.Owner(p) != r.p.IDOf(from) {
		return codeAns{Code: codeStale, Msg: fmt.Sprintf("partition %d: the sender is not its owner here", p)}
	}
	if !slices.Contains(t.Owners[p], r.self) {
		return codeAns{Code: codeStale, Msg: fmt.Sprintf("partition %d: not a replica here", p)}
	}
	install, err := r.h.PrepareFill(ctx, req.Data, req.Partial)
	if err != nil {
		return codeAns{Code: codeFailed, Msg: err.Error()}
	}
	if err := r.replicas[p].Fill(req.Epoch, req.TV, req.Partial, install); err != nil {
		if ds := (*DeltaStaleError)(nil); errors.As(err, &ds) {
			return codeAns{Code: codeDelta, Msg: err.Error()}
		}
		return refusedAns(err)
	}
	if !req.Partial {
		r.log.Debug("stowage: filled", "partition", p, "tv", req.TV, "epoch", req.Epoch)
	}
	return codeAns{}
}

// onDigest sums up this member's copy of a partition for its owner,
// which then fills it with a delta. Only the owner the table names may
// ask, and only of a member the table names as a replica.
func (r *Replicator) onDigest(from string, req *digestReq) digestAns {
	p := req.P
	if p < 0 || p >= r.count {
		return digestAns{Code: codeFailed}
	}
	t, _ := r.p.Table()
	if t == nil || t.Owner(p) != r.p.IDOf(from) || !slices.Contains(t.Owners[p], r.self) {
		return digestAns{Code: codeStale}
	}
	return digestAns{D: r.h.Digest(p)}
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
func (r *Replicator) onTake(ctx context.Context, from string, req *takeReq) takeAns {
	fromID := r.p.IDOf(from)
	t, _ := r.p.Table()
	var ans takeAns
	for _, p := range req.Parts {
		if p < 0 || p >= r.count || t == nil || t.Owner(p) != fromID {
			ans.Refused = append(ans.Refused, p)
			continue
		}
		given := r.replicas[p].HandOver(ctx, fromID, t.SourceSince(p, r.self), slices.Contains(req.Stale, p), func(owner bool) {
			ans.Data = append(ans.Data, r.h.Export(p, owner, 0))
		})
		if given && len(req.Digests[p]) > 0 {
			// The new owner holds a copy already: only what differs.
			i := len(ans.Data) - 1
			var saved int
			ans.Data[i], saved = deltaData(ans.Data[i], req.Digests[p])
			r.countDelta(saved)
		}
		if !given {
			ans.Refused = append(ans.Refused, p)
		}
	}
	return ans
}

// onRelease drops a copy the partition's owner no longer needs: one that
// is not a replica per the table, or older than the owner's new epoch.
// Only the owner the table names may ask.
func (r *Replicator) onRelease(from string, req *releaseReq) codeAns {
	if req.P < 0 || req.P >= r.count {
		return codeAns{Code: codeFailed, Msg: "partition out of range"}
	}
	if t, _ := r.p.Table(); t == nil || t.Owner(req.P) != r.p.IDOf(from) {
		return codeAns{Code: codeStale, Msg: fmt.Sprintf("partition %d: the sender is not its owner here", req.P)}
	}
	r.replicas[req.P].Release(req.Epoch, r.inSet(req.P), r.dropper(req.P))
	return codeAns{}
}
