package backup

import (
	"context"
	"errors"
	"time"

	"github.com/stowage/stowage/cluster"
)

// deltaMinEntries: a partition with fewer entries is filled whole,
// without asking the backup what it holds (the question would cost about
// what it saves).
const deltaMinEntries = 64

// digestWait bounds the question for a backup's digest; without an
// answer the fill goes whole.
const digestWait = 5 * time.Second

// fillData fills backup b with req's data: as a delta against b's own
// copy when b holds one (a backup that was cut off and came back, or a
// former replica), else whole; a delta refused because b's copy changed
// meanwhile is sent again whole. Either way b ends up with exactly req's
// data, and counts as filled only once it took it. async bounds the wait
// as fillAsync does.
func (r *Replicator) fillData(ctx context.Context, b string, req fillReq, async bool) error {
	p := req.Data.P
	whole := cluster.Encode(req)
	body, fallback := whole, []byte(nil)
	if entryCount(&req.Data) >= deltaMinEntries {
		// Writes wait for an async backup only so long (fillAsync): the
		// question gets a part of that.
		wait := min(r.timeout, digestWait)
		if async {
			wait = asyncFillWait / 2
		}
		if ds := r.digestOf(ctx, b, p, wait); len(ds) > 0 {
			if d, saved := deltaData(req.Data, ds); saved > 0 {
				dreq := req
				dreq.Data = d
				body, fallback = cluster.Encode(dreq), whole
				r.countDelta(saved)
			}
		}
	}
	if async {
		return r.fillAsync(ctx, b, p, body, fallback)
	}
	return r.fillTo(ctx, b, p, body, fallback)
}

// digestOf asks backup b to sum up its copy of partition p; nil when it
// holds none or does not answer within wait.
//
// A backup whose table is older than this owner's answers stale, or
// refuses the question when its table does not name this owner as a
// replica of p: it fetched the newest table from the master, but a master
// publishing a table installs it only once enough members took it, so a
// member that took it already (this owner) can ask before the master
// answers with it. The question is asked again within wait: b gets the
// table from the master's push, and a fill sent whole for want of a
// digest would cost what the delta saves.
func (r *Replicator) digestOf(ctx context.Context, b string, p int, wait time.Duration) []Digest {
	dctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	delay := 5 * time.Millisecond
	for {
		a := r.p.Addr(b)
		if a == "" || r.p.Alone() {
			return nil
		}
		resp, err := r.p.Call(dctx, a, mDigest, cluster.Encode(digestReq{P: p}))
		var ans digestAns
		switch {
		case errors.Is(err, cluster.ErrNotReplica):
			ans.Code = codeStale
		case err != nil:
			return nil
		case cluster.Decode(resp, &ans) != nil:
			return nil
		}
		switch {
		case ans.Code == codeOK:
			return ans.D
		case ans.Code != codeStale || !r.p.Owns(p) || !r.p.InReplicaSet(p, b):
			return nil
		}
		select {
		case <-time.After(delay):
		case <-dctx.Done():
			return nil
		}
		delay = min(2*delay, 100*time.Millisecond)
	}
}

// ownDigests sums up this member's own copy of each of ps that it holds
// enough of, for a hand-over to come as a delta.
func (r *Replicator) ownDigests(ps []int) map[int][]Digest {
	var out map[int][]Digest
	for _, p := range ps {
		ds := r.h.Digest(p)
		n := 0
		for _, d := range ds {
			n += len(d.Sums) / 2
		}
		if n*2 < deltaMinEntries {
			continue
		}
		if out == nil {
			out = map[int][]Digest{}
		}
		out[p] = ds
	}
	return out
}

func entryCount(pd *PartData) int {
	n := 0
	for _, mp := range pd.Maps {
		n += len(mp.Entries)
	}
	return n
}

// countDelta counts a fill or hand-over sent as a delta that left saved
// entries out.
func (r *Replicator) countDelta(saved int) {
	if saved > 0 {
		r.m.deltaSent.Inc()
		r.m.deltaSaved.Add(float64(saved))
	}
}
