package backup

import (
	"context"
	"errors"
	"github.com/stowage/stowage/internal/parallel"
	"github.com/stowage/stowage/partition"
	"sort"
	"sync"
	"time"

	"github.com/stowage/stowage/cluster"
)

// How a new owner gets a partition (see acquire):
//
//  1. It asks every live member what it holds of the partition (status).
//     Answering installs the asker's newer table first, so an old owner
//     stops taking writes and old backups refuse its records from then on.
//     A member that does not answer while still live is waited for: it
//     might be the owner.
//  2. The best holder is the one with the highest epoch, then an owner
//     (held) before a backup, then the highest versions. It hands its
//     data over (take): an old owner after its writes in flight ended.
//     With no holder at all (a fresh cluster, or every replica lost) the
//     partition is read from the map store.
//  3. The new owner starts a new epoch (max seen + 1): a durable epoch
//     start per map, taking over up to the last seq the data has without
//     gaps; changes a backup applied beyond a gap are written again in the
//     new epoch (invariant 2: what recovery keeps is what memory has).
//  4. It fills every backup of the table, tells the other holders to drop
//     their copies (release), and only then serves the partition.

// epochShift leaves room for take-overs within one table version.
const epochShift = 20

// source is where a partition's data comes from.
type source struct {
	member  string // "" with store
	store   bool
	epoch   uint64         // the highest epoch any holder reported
	holders []string       // members that reported a copy (released once done)
	kind    partition.Kind // what the source holds (HoldHeld, HoldActive, HoldBackup)
}

type candidate struct {
	id    string
	kind  partition.Kind
	epoch uint64
	seqs  uint64
}

func kindRank(k partition.Kind) int {
	switch k {
	case partition.HoldActive:
		return 3
	case partition.HoldHeld:
		return 2
	case partition.HoldBackup:
		return 1
	case partition.HoldStale:
		return 0
	}
	return -1
}

func (a candidate) better(b candidate, self string) bool {
	if a.epoch != b.epoch {
		return a.epoch > b.epoch
	}
	if kindRank(a.kind) != kindRank(b.kind) {
		return kindRank(a.kind) > kindRank(b.kind)
	}
	if a.seqs != b.seqs {
		return a.seqs > b.seqs
	}
	if (a.id == self) != (b.id == self) {
		return a.id == self // no copy needed
	}
	return a.id < b.id
}

// acquire gets the partitions this member now owns and starts serving
// them; gens are the replicas' generations when the work was given, and a
// replica whose generation moved on is no longer this run's to finish.
func (r *Replicator) acquire(ps []int, gens []uint64) {
	gen := make(map[int]uint64, len(ps))
	for i, p := range ps {
		gen[p] = gens[i]
	}
	pending := ps
	delay := 10 * time.Millisecond
	for {
		pending = r.stillAcquiring(pending, gen)
		if len(pending) == 0 || r.ctx.Err() != nil {
			return
		}
		plan := r.plan(pending)
		r.log.Debug("stowage: acquiring", "pending", len(pending), "decided", len(plan), "first", pending[0])
		done := r.execute(plan, gen)
		var rest []int
		for _, p := range pending {
			if !done[p] {
				rest = append(rest, p)
			}
		}
		pending = rest
		if len(pending) == 0 {
			return
		}
		select {
		case <-r.ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(2*delay, 500*time.Millisecond)
	}
}

func (r *Replicator) stillAcquiring(ps []int, gen map[int]uint64) []int {
	out := ps[:0:0]
	for _, p := range ps {
		if r.replicas[p].Acquiring(gen[p], r.inSet(p), r.dropper(p), r.releaser(p)) {
			out = append(out, p)
		}
	}
	return out
}

// plan asks every live member what it holds of ps and picks a source for
// each partition that can be decided now.
func (r *Replicator) plan(ps []int) map[int]source {
	statuses := map[string][]partStatus{r.self: r.localStatus(ps, true)}
	ms := r.p.Members()
	var mu sync.Mutex
	var wg sync.WaitGroup
	unanswered := 0
	for _, m := range ms {
		if m.ID == r.self {
			continue
		}
		wg.Add(1)
		go func(m cluster.Member) {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(r.ctx, 2*time.Second)
			defer cancel()
			b, err := r.p.CallMember(ctx, m.ID, mStatus, statusReq{Parts: ps})
			var ans statusAns
			if err == nil {
				err = cluster.Decode(b, &ans)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil || ans.Code != codeOK || len(ans.St) != len(ps) {
				if r.p.IsLive(m.ID) && !r.p.Unneeded(m.ID) {
					r.log.Debug("stowage: status not answered", "member", m.ID, "err", err)
					unanswered++
				}
				return
			}
			if ans.TV > r.p.TableVersion() {
				r.p.AskFetch(m.RPC)
			}
			statuses[m.ID] = ans.St
		}(m)
	}
	wg.Wait()
	plan := map[int]source{}
	if unanswered > 0 {
		return plan // a silent member might be the owner: ask again
	}
	if m := r.unheardTableMember(statuses); m != "" {
		// The table names a member this one has not heard from (its
		// member list has not seen it come back yet, after a split): it
		// may hold the newest copy; decide once it answers, or once a
		// newer table no longer names it.
		r.log.Debug("stowage: waiting for a member of the table", "member", m)
		return plan
	}
	for i, p := range ps {
		var best candidate
		found, wait := false, false
		var maxEpoch uint64
		var holders []string
		for id, sts := range statuses {
			st := sts[i]
			maxEpoch = max(maxEpoch, st.Epoch)
			if st.Kind != partition.HoldNone {
				holders = append(holders, id)
			}
			switch st.Kind {
			case partition.HoldAcquire:
				if id != r.self {
					wait = true
					if i == 0 {
						r.log.Debug("stowage: waiting for a member acquiring the partition", "partition", p, "member", id)
					}
				}
			case partition.HoldActive, partition.HoldHeld, partition.HoldBackup, partition.HoldStale:
				c := candidate{id: id, kind: st.Kind, epoch: st.Epoch, seqs: st.Seqs}
				if !found || c.better(best, r.self) {
					best, found = c, true
				}
			}
		}
		switch {
		case wait:
		case found:
			plan[p] = source{member: best.id, epoch: maxEpoch, holders: holders, kind: best.kind}
		default:
			plan[p] = source{store: true, epoch: maxEpoch, holders: holders}
			if st := statuses[r.self][i]; st.Kind != partition.HoldNone {
				r.log.Debug("stowage: no source", "partition", p, "self kind", st.Kind, "epoch", st.Epoch)
			}
		}
	}
	return plan
}

// unheardTableMember returns a member the current table names whose
// status is not in statuses, or "" when every one answered.
func (r *Replicator) unheardTableMember(statuses map[string][]partStatus) string {
	t, _ := r.p.Table()
	if t == nil {
		return ""
	}
	for _, rs := range t.Owners {
		for _, id := range rs {
			if _, ok := statuses[id]; !ok {
				return id
			}
		}
	}
	return ""
}

// localStatus says what this member holds of ps: to others (own false)
// a partition being acquired is "acquiring"; to its own acquisition it is
// what was held before.
func (r *Replicator) localStatus(ps []int, own bool) []partStatus {
	t, _ := r.p.Table()
	out := make([]partStatus, len(ps))
	for i, p := range ps {
		joined := int64(-1)
		if t != nil {
			joined = t.SourceSince(p, r.self)
		}
		k, e := r.replicas[p].Status(joined, own)
		out[i] = partStatus{Kind: k, Epoch: e, Seqs: r.h.SeqSum(p)}
	}
	return out
}

// item is one partition being finished by execute.
type item struct {
	p     int
	src   source
	data  *PartData // from another member
	epoch uint64
}

// execute carries out a plan and returns the partitions it activated (or
// that stopped being this member's to acquire).
func (r *Replicator) execute(plan map[int]source, gen map[int]uint64) map[int]bool {
	done := map[int]bool{}
	if len(plan) == 0 {
		return done
	}
	byMember := map[string][]int{}
	var items []*item
	var mu sync.Mutex
	for p, src := range plan {
		switch {
		case src.store || src.member == r.self:
			items = append(items, &item{p: p, src: src})
		default:
			byMember[src.member] = append(byMember[src.member], p)
		}
	}
	var wg sync.WaitGroup
	for id, ps := range byMember {
		sort.Ints(ps)
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(r.ctx, r.timeout)
			defer cancel()
			req := takeReq{Parts: ps, Digests: r.ownDigests(ps)}
			for _, p := range ps {
				if plan[p].kind == partition.HoldStale {
					req.Stale = append(req.Stale, p)
				}
			}
			b, err := r.p.CallMember(ctx, id, mTake, req)
			var ans takeAns
			if err == nil {
				err = cluster.Decode(b, &ans)
			}
			if err != nil || ans.Code != codeOK {
				r.log.Debug("stowage: partition hand-over failed; retrying", "from", id, "err", err, "msg", ans.Msg)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for i := range ans.Data {
				pd := &ans.Data[i]
				items = append(items, &item{p: pd.P, src: plan[pd.P], data: pd})
			}
		}()
	}
	wg.Wait()
	sort.Slice(items, func(i, j int) bool { return items[i].p < items[j].p })
	if err := r.finish(items, gen); err != nil && r.ctx.Err() == nil {
		r.log.Warn("stowage: taking over partitions failed; retrying", "err", err)
	}
	for _, it := range items {
		if !r.replicas[it.p].StillAcquiring(gen[it.p]) {
			done[it.p] = true
		}
	}
	return done
}

// finish installs the data of each item, starts its new epoch, fills the
// backups, releases the other holders and activates the partition.
// Partitions are processed together so that the map stores record their
// epoch starts in one batch.
func (r *Replicator) finish(items []*item, gen map[int]uint64) error {
	if len(items) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(r.ctx, 10*r.timeout)
	defer cancel()

	// Install the data; the epoch is above everything seen.
	var errs []error
	var emu sync.Mutex
	parallel.Do(r.workers, len(items), func(i int) {
		it := items[i]
		if err := r.takeOverOne(ctx, it); err != nil {
			emu.Lock()
			errs = append(errs, err)
			emu.Unlock()
			it.epoch = 0
		}
	})
	ok := items[:0:0]
	starts := map[int]uint64{}
	for _, it := range items {
		if it.epoch != 0 {
			ok = append(ok, it)
			starts[it.p] = it.epoch
		}
	}
	// Epoch starts, one batch per map store.
	if len(starts) > 0 {
		if err := r.h.RecordEpochStarts(ctx, starts); err != nil {
			return err
		}
	}
	// Changes a backup applied beyond a gap: written again in the new epoch.
	for _, it := range ok {
		if err := r.h.RewriteAbove(ctx, it.p); err != nil {
			return err
		}
	}
	var amu sync.Mutex
	var activatedFrom []source
	parallel.Do(r.workers, len(ok), func(i int) {
		it := ok[i]
		backups := r.fillAll(ctx, it.p, it.epoch)
		activated := r.replicas[it.p].Activate(gen[it.p], it.epoch, backups, r.inSet(it.p), r.dropper(it.p), r.releaser(it.p))
		if activated {
			r.log.Debug("stowage: partition active", "partition", it.p, "epoch", it.epoch, "source", sourceLabel(it.src), "from", it.src.member, "backups", backups)
			r.m.acquired.WithLabelValues(sourceLabel(it.src)).Inc()
			amu.Lock()
			activatedFrom = append(activatedFrom, it.src)
			amu.Unlock()
			// Only now are the other copies not needed: had the take-over
			// been abandoned, they would still be the partition's data.
			r.releaseOthers(ctx, it.p, it.epoch, backups, it.src.holders)
			r.h.Activated(ctx, it.p)
		}
	})
	r.recordTakeOvers(activatedFrom, r.p.TableVersion(), time.Now())
	return errors.Join(errs...)
}

// sourceLabel names how a take-over went, for the metrics: a hand-over
// by the previous owner (migration), a promotion of a backup's copy or a
// load from the map store (fail-over, or a fresh start).
func sourceLabel(s source) string {
	switch {
	case s.store:
		return "store"
	case s.kind == partition.HoldBackup:
		return "promotion"
	}
	return "handover"
}

// takeOverOne puts one partition's data in place and picks its epoch:
// above every epoch the data and its holders know, and grown with the
// table version the take-over happens under, so that two members taking
// a partition over under different tables can never start the same
// epoch, whatever copy they started from.
func (r *Replicator) takeOverOne(ctx context.Context, it *item) error {
	base := max(it.src.epoch, r.replicas[it.p].Epoch())
	src := Source{
		Store:    it.src.store,
		Data:     it.data,
		Promoted: !it.src.store && (it.src.kind == partition.HoldBackup || it.src.kind == partition.HoldStale),
		Stale:    !it.src.store && it.src.kind == partition.HoldStale,
		OwnHeld:  it.data == nil && !it.src.store && r.selfKind(it.p) == partition.HoldHeld,
	}
	epoch, err := r.h.TakeOver(ctx, it.p, src, func(seen uint64) uint64 {
		return max(max(base, seen)+1, uint64(r.p.TableVersion())<<epochShift)
	})
	if err != nil {
		return err
	}
	it.epoch = epoch
	return nil
}

func (r *Replicator) selfKind(p int) partition.Kind {
	joined := int64(-1)
	if t, _ := r.p.Table(); t != nil {
		joined = t.SourceSince(p, r.self)
	}
	k, _ := r.replicas[p].Status(joined, true)
	return k
}
