package dmap

import (
	"context"
	"errors"
	"fmt"
	"github.com/stowage/stowage/partition"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/stowage/stowage/cluster"
	"github.com/stowage/stowage/mapstore"
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
	}
	return 0
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
// them; gens are the slots' generations when the work was given, and a
// slot whose generation moved on is no longer this run's to finish.
func (d *dist) acquire(ps []int, gens []uint64) {
	gen := make(map[int]uint64, len(ps))
	for i, p := range ps {
		gen[p] = gens[i]
	}
	pending := ps
	delay := 10 * time.Millisecond
	for {
		pending = d.stillAcquiring(pending, gen)
		if len(pending) == 0 || d.ctx.Err() != nil {
			return
		}
		plan := d.plan(pending)
		d.log.Debug("stowage: acquiring", "pending", len(pending), "decided", len(plan), "first", pending[0])
		done := d.execute(plan, gen)
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
		case <-d.ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(2*delay, 500*time.Millisecond)
	}
}

func (d *dist) stillAcquiring(ps []int, gen map[int]uint64) []int {
	out := ps[:0:0]
	for _, p := range ps {
		if d.slots[p].Acquiring(gen[p], func() bool { return d.inReplicaSet(p, d.self) }, d.dropper(p), d.releaser(p)) {
			out = append(out, p)
		}
	}
	return out
}

// dropper forgets what this member holds of partition p.
func (d *dist) dropper(p int) func() { return func() { d.n.dropPartition(p) } }

// releaser tells the map stores this member does not serve p.
func (d *dist) releaser(p int) func() { return func() { d.n.releaseStores(p) } }

// plan asks every live member what it holds of ps and picks a source for
// each partition that can be decided now.
func (d *dist) plan(ps []int) map[int]source {
	statuses := map[string][]partStatus{d.self: d.localStatus(ps, true)}
	ms := d.refreshMembers()
	var mu sync.Mutex
	var wg sync.WaitGroup
	unanswered := 0
	for _, m := range ms {
		if m.ID == d.self {
			continue
		}
		wg.Add(1)
		go func(m cluster.Member) {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(d.ctx, 2*time.Second)
			defer cancel()
			b, err := d.call(ctx, m.ID, mStatus, statusReq{TV: d.tableVersion(), Parts: ps})
			var ans statusAns
			if err == nil {
				err = dec(b, &ans)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil || ans.Code != codeOK || len(ans.St) != len(ps) {
				if d.isLive(m.ID) {
					d.log.Debug("stowage: status not answered", "member", m.ID, "err", err)
					unanswered++
				}
				return
			}
			if ans.TV > d.tableVersion() {
				d.askFetch(m.RPC)
			}
			statuses[m.ID] = ans.St
		}(m)
	}
	wg.Wait()
	plan := map[int]source{}
	if unanswered > 0 {
		return plan // a silent member might be the owner: ask again
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
				if id != d.self {
					wait = true
					if i == 0 {
						d.log.Debug("stowage: waiting for a member acquiring the partition", "partition", p, "member", id)
					}
				}
			case partition.HoldActive, partition.HoldHeld, partition.HoldBackup:
				c := candidate{id: id, kind: st.Kind, epoch: st.Epoch, seqs: st.Seqs}
				if !found || c.better(best, d.self) {
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
			if st := statuses[d.self][i]; st.Kind != partition.HoldNone {
				d.log.Debug("stowage: no source", "partition", p, "self kind", st.Kind, "epoch", st.Epoch)
			}
		}
	}
	return plan
}

// localStatus says what this member holds of ps: to others (own false)
// a partition being acquired is "acquiring"; to its own acquisition it is
// what was held before.
func (d *dist) localStatus(ps []int, own bool) []partStatus {
	t, _ := d.currentTable()
	out := make([]partStatus, len(ps))
	for i, p := range ps {
		joined := int64(-1)
		if t != nil {
			joined = t.JoinedAt(p, d.self)
		}
		k, e := d.slots[p].Status(joined, own)
		out[i] = partStatus{Kind: k, Epoch: e, Seqs: d.n.seqSum(p)}
	}
	return out
}

// item is one partition being finished by execute.
type item struct {
	p     int
	src   source
	data  *partData // from another member
	epoch uint64
}

// execute carries out a plan and returns the partitions it activated (or
// that stopped being this member's to acquire).
func (d *dist) execute(plan map[int]source, gen map[int]uint64) map[int]bool {
	done := map[int]bool{}
	if len(plan) == 0 {
		return done
	}
	byMember := map[string][]int{}
	var items []*item
	var mu sync.Mutex
	for p, src := range plan {
		switch {
		case src.store || src.member == d.self:
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
			ctx, cancel := context.WithTimeout(d.ctx, d.timeout)
			defer cancel()
			b, err := d.call(ctx, id, mTake, takeReq{TV: d.tableVersion(), Parts: ps})
			var ans takeAns
			if err == nil {
				err = dec(b, &ans)
			}
			if err != nil || ans.Code != codeOK {
				d.log.Debug("stowage: partition hand-over failed; retrying", "from", id, "err", err, "msg", ans.Msg)
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
	if err := d.finish(items, gen); err != nil && d.ctx.Err() == nil {
		d.log.Warn("stowage: taking over partitions failed; retrying", "err", err)
	}
	for _, it := range items {
		if !d.slots[it.p].StillAcquiring(gen[it.p]) {
			done[it.p] = true
		}
	}
	return done
}

// finish installs the data of each item, starts its new epoch, fills the
// backups, releases the other holders and activates the partition.
// Partitions are processed together so that the map stores record their
// epoch starts in one batch.
func (d *dist) finish(items []*item, gen map[int]uint64) error {
	if len(items) == 0 {
		return nil
	}
	cores := d.n.allCores()
	ctx, cancel := context.WithTimeout(d.ctx, 10*d.timeout)
	defer cancel()

	// Install the data; the epoch is above everything seen.
	var errs []error
	var emu sync.Mutex
	d.n.parallel(len(items), func(i int) {
		it := items[i]
		if err := d.install1(ctx, it, cores); err != nil {
			emu.Lock()
			errs = append(errs, err)
			emu.Unlock()
			it.epoch = 0
		}
	})
	ok := items[:0:0]
	for _, it := range items {
		if it.epoch != 0 {
			ok = append(ok, it)
		}
	}
	// The copies taken over may have brought maps new to this member.
	cores = d.n.allCores()
	// Epoch starts, one batch per map store.
	for _, c := range cores {
		es, isES := c.store.(mapstore.EpochStarter)
		if !isES {
			continue
		}
		starts := map[int]mapstore.Version{}
		for _, it := range ok {
			pt := c.parts[it.p]
			pt.mu.Lock()
			if pt.loaded {
				starts[it.p] = mapstore.Version{Epoch: it.epoch, Seq: pt.ver.Seq}
			}
			pt.mu.Unlock()
		}
		if len(starts) == 0 {
			continue
		}
		if err := es.StartEpochs(ctx, starts); err != nil {
			return fmt.Errorf("stowage: map %q: record epoch starts: %w", c.name, err)
		}
	}
	// Changes a backup applied beyond a gap: written again in the new epoch.
	for _, it := range ok {
		if err := d.rewriteAbove(ctx, it, cores); err != nil {
			return err
		}
	}
	d.n.parallel(len(ok), func(i int) {
		it := ok[i]
		backups := d.fillAll(ctx, it.p, it.epoch, cores)
		activated := d.slots[it.p].Activate(gen[it.p], it.epoch, backups, func() bool { return d.inReplicaSet(it.p, d.self) }, d.dropper(it.p), d.releaser(it.p))
		if activated {
			d.log.Debug("stowage: partition active", "partition", it.p, "epoch", it.epoch, "source", sourceLabel(it.src), "from", it.src.member, "backups", backups)
			d.n.m.acquired.WithLabelValues(sourceLabel(it.src)).Inc()
			// Only now are the other copies not needed: had the take-over
			// been abandoned, they would still be the partition's data.
			d.releaseOthers(ctx, it.p, it.epoch, backups, it.src.holders)
			// EAGER maps whose part the copy lacked (made while this ran,
			// or kept with fewer backups than the copy's holder had) load
			// it now.
			for _, c := range d.n.allCores() {
				if c.store != nil && !c.lazy {
					if err := c.readyPart(ctx, c.parts[it.p], partition.WriteTicket{}); err != nil && !isMoved(err) {
						d.log.Warn("stowage: loading a partition failed; it loads on first use", "map", c.name, "partition", it.p, "err", err)
					}
				}
			}
		}
	})
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

// install1 puts one partition's data in place and picks its epoch.
func (d *dist) install1(ctx context.Context, it *item, cores []*core) error {
	var epoch uint64 = it.src.epoch
	epoch = max(epoch, d.slots[it.p].Epoch())
	gapFreeSelf := it.data == nil && !it.src.store && d.selfKind(it.p) == partition.HoldHeld
	var have map[string]*mapPart
	if it.data != nil {
		have = make(map[string]*mapPart, len(it.data.Maps))
		for i := range it.data.Maps {
			have[it.data.Maps[i].Map] = &it.data.Maps[i]
		}
		for name := range have {
			if !slices.ContainsFunc(cores, func(c *core) bool { return c.name == name }) {
				c, err := d.n.core(ctx, name)
				if err != nil {
					return err
				}
				cores = append(cores, c)
			}
		}
	}
	// A persisted map with no sync backup is not taken from a backup's
	// copy: only async backups held it, and they may lack acknowledged
	// writes, which the store has (and an epoch started from the copy
	// would drop from the store at recovery). Memory-only maps keep
	// Hazelcast's async semantics: the copy is the best there is.
	promoted := !it.src.store && it.src.kind == partition.HoldBackup
	fromStore := map[*core]bool{}
	for _, c := range cores {
		pt := c.parts[it.p]
		switch {
		case promoted && c.store != nil && c.sync == 0:
			fromStore[c] = true
			if c.lazy {
				c.clearPart(pt) // read from the store when made ready
				break
			}
			if _, err := c.loadFromStore(ctx, pt); err != nil {
				return err
			}
		case it.data != nil:
			if mp := have[c.name]; mp != nil {
				c.replace(pt, *mp)
				pt.mu.Lock()
				pt.loaded = true
				pt.mu.Unlock()
				if o, ok := c.store.(mapstore.PartitionOwner); ok {
					o.Acquire(it.p)
				}
			} else {
				c.clearPart(pt)
			}
		case it.src.store:
			if c.store != nil && !c.lazy {
				if _, err := c.loadFromStore(ctx, pt); err != nil {
					return err
				}
			} else {
				c.clearPart(pt)
			}
		default: // this member's own data (held, or a synced backup)
			pt.mu.Lock()
			whole := pt.ready || pt.loaded
			if !gapFreeSelf {
				whole = pt.filled // a backup holds only the maps it was filled with
			}
			pt.mu.Unlock()
			if !whole {
				c.clearPart(pt) // read from the store when made ready, if persisted
				break
			}
			pt.mu.Lock()
			pt.loaded = true
			pt.mu.Unlock()
			if o, ok := c.store.(mapstore.PartitionOwner); ok {
				o.Acquire(it.p)
			}
		}
		pt.mu.Lock()
		epoch = max(epoch, pt.ver.Epoch)
		pt.mu.Unlock()
		if vs, ok := c.store.(mapstore.LastVersioner); ok {
			epoch = max(epoch, vs.LastVersion(it.p).Epoch)
		}
	}
	// Epochs grow with the table version the take-over happens under, so
	// that two members taking a partition over under different tables can
	// never start the same epoch, whatever copy they started from.
	it.epoch = max(epoch+1, uint64(d.tableVersion())<<epochShift)
	// What is kept from the old epoch: everything up to the last seq
	// without a gap. Owner data (the store's, or held here) has none; a
	// backup's data says where its gap-free part ends.
	gapFree := it.src.store || (it.data == nil && d.selfKind(it.p) == partition.HoldHeld)
	for _, c := range cores {
		pt := c.parts[it.p]
		pt.mu.Lock()
		if gapFree || fromStore[c] {
			pt.applied, pt.above = pt.ver.Seq, nil
		}
		pt.ver = mapstore.Version{Epoch: it.epoch, Seq: pt.applied}
		pt.ready = pt.loaded || c.store == nil
		pt.filled = false
		pt.mu.Unlock()
	}
	return nil
}

func (d *dist) selfKind(p int) partition.Kind {
	joined := int64(-1)
	if t, _ := d.currentTable(); t != nil {
		joined = t.JoinedAt(p, d.self)
	}
	k, _ := d.slots[p].Status(joined, true)
	return k
}

// rewriteAbove writes again, in the new epoch, the current state of every
// key a backup applied beyond its last gap-free seq: recovery drops the
// old epoch's records above that seq (invariant 2).
func (d *dist) rewriteAbove(ctx context.Context, it *item, cores []*core) error {
	for _, c := range cores {
		pt := c.parts[it.p]
		pt.mu.Lock()
		above := pt.above
		pt.above = nil
		seqs := make([]uint64, 0, len(above))
		for s := range above {
			seqs = append(seqs, s)
		}
		slices.Sort(seqs)
		var recs []mapstore.Record
		seen := map[string]bool{}
		for _, s := range seqs {
			k := above[s]
			if k == nil || seen[string(k)] {
				continue
			}
			seen[string(k)] = true
			pt.ver.Seq++
			e, ok := pt.entries[string(k)]
			if ok {
				e.ver = pt.ver
				pt.entries[string(k)] = e
			}
			recs = append(recs, mapstore.Record{Partition: it.p, Version: pt.ver, Key: k, Value: e.val, Deleted: !ok})
		}
		pt.applied = pt.ver.Seq
		pt.mu.Unlock()
		if c.store == nil {
			continue
		}
		for _, r := range recs {
			if err := c.storeRecord(ctx, r); err != nil {
				return fmt.Errorf("stowage: map %q partition %d: write again what the old epoch left open: %w", c.name, it.p, err)
			}
		}
	}
	return nil
}
