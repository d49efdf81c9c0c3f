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

// fillAll gives partition p (every ready map) to each live backup the
// table names, and returns those that took it.
func (r *Replicator) fillAll(ctx context.Context, p int, epoch uint64) []string {
	t, _ := r.p.Table()
	if t == nil || t.Owner(p) != r.self {
		return nil
	}
	want := slices.Clone(t.Owners[p][1:])
	if len(want) == 0 {
		return nil
	}
	ok := make([]bool, len(want))
	var wg sync.WaitGroup
	for i, b := range want {
		// Each backup gets the maps that keep a backup at its place.
		req := fillReq{TV: t.Version, Epoch: epoch, Data: r.h.Export(p, true, i+1)}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok[i] = r.fillData(ctx, b, req, false) == nil
		}()
	}
	wg.Wait()
	var out []string
	for i, b := range want {
		if ok[i] {
			out = append(out, b)
		}
	}
	return out
}

// errNotReplica: the member is no longer a live replica of the partition.
var errNotReplica = errors.New("stowage: member is no longer a replica")

// fillTo sends a fill until the backup took it or is no longer a live
// replica of p. whole, if not nil, is the fill to send instead of body
// (a delta) should the backup's copy have changed since its digest.
func (r *Replicator) fillTo(ctx context.Context, b string, p int, body, whole []byte) error {
	delay := 10 * time.Millisecond
	for {
		a := r.p.Addr(b)
		var resp []byte
		err := fmt.Errorf("%w: member %s has no known address", cluster.ErrUnreachable, b)
		if a != "" && !r.p.Alone() {
			var stale bool
			resp, stale, err = r.callWhile(ctx, a, mFill, body, func(t *partition.Table) bool {
				return t.Owner(p) == r.self && slices.Contains(t.Owners[p], b)
			})
			if stale {
				// A table that makes another member p's owner, or b no
				// longer its replica: this fill is not needed any more
				// (b may hang, and its waiters go on without it).
				if !r.p.Owns(p) {
					return errMoved(p)
				}
				return errNotReplica
			}
		}
		if err == nil {
			var ans codeAns
			if err = cluster.Decode(resp, &ans); err == nil {
				switch ans.Code {
				case codeOK:
					return nil
				case codeDelta:
					if whole != nil {
						r.log.Debug("stowage: delta fill refused; sending the whole partition", "partition", p, "member", b, "msg", ans.Msg)
						body, whole = whole, nil
						continue
					}
				case codeNeedFill:
					r.log.Debug("stowage: partial fill refused", "partition", p, "member", b, "msg", ans.Msg)
					// A partial fill onto a copy that is not whole: the
					// whole partition is sent again, the caller routes again.
					r.replicas[p].MarkDirty()
					r.p.Go(func() { r.refill([]int{p}) })
					return errMoved(p)
				}
				err = fmt.Errorf("stowage: fill of partition %d refused by %s: %s", p, b, ans.Msg)
				r.log.Debug("stowage: fill refused", "partition", p, "member", b, "msg", ans.Msg)
				r.p.AskFetch(a)
			}
		}
		if !r.p.InReplicaSet(p, b) || !r.p.IsLive(b) {
			return errNotReplica
		}
		if !r.p.Owns(p) {
			return errMoved(p)
		}
		if ctx.Err() != nil {
			return err
		}
		select {
		case <-time.After(delay):
		case <-ctx.Done():
		case <-r.ctx.Done():
			return r.closed
		}
		delay = min(2*delay, 500*time.Millisecond)
	}
}

// callWhile makes one call to addr and waits for its answer while the
// current table satisfies need; once a table does not, it gives up on the
// call and returns stale true.
func (r *Replicator) callWhile(ctx context.Context, addr, method string, body []byte, need func(*partition.Table) bool) ([]byte, bool, error) {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type answer struct {
		b   []byte
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		b, err := r.p.Call(cctx, addr, method, body)
		ch <- answer{b, err}
	}()
	for {
		t, tabCh := r.p.Table()
		if t != nil && !need(t) {
			cancel()
			<-ch // the call ends with its context
			return nil, true, nil
		}
		select {
		case a := <-ch:
			return a.b, false, a.err
		case <-tabCh:
		}
	}
}

// releaseOthers tells every member that reported a copy of p, other than
// the backups just filled, to drop it.
func (r *Replicator) releaseOthers(ctx context.Context, p int, epoch uint64, backups, holders []string) {
	body := cluster.Encode(releaseReq{P: p, Epoch: epoch})
	for _, id := range holders {
		a := r.p.Addr(id)
		if id == r.self || slices.Contains(backups, id) || a == "" || r.p.Alone() {
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, _ = r.p.Call(rctx, a, mRelease, body)
		cancel()
	}
}

// FillMap gives one map's data of an active partition, mp, to the
// partition's filled backups (those it keeps: the first syncN are waited
// for, the next asyncN only a while), as a partial fill: the backups keep
// their other maps. epoch and backups are the partition's (Replica.
// Serving). An async backup that does not take it is refilled whole
// later.
func (r *Replicator) FillMap(ctx context.Context, p int, epoch uint64, backups []string, mp MapPart, syncN, asyncN int) error {
	body := cluster.Encode(fillReq{TV: r.p.TableVersion(), Epoch: epoch, Data: PartData{P: p, Maps: []MapPart{mp}}, Partial: true})
	syncB, asyncB, _ := r.targets(p, syncN, asyncN, backups, nil)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	var asyncFailed []string
	for i, b := range append(syncB, asyncB...) {
		async := i >= len(syncB)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if async {
				// An async backup holds up no write for long: it gets a
				// while to take the fill (none if it just failed to), then
				// is filled again later.
				if err := r.fillAsync(ctx, b, p, body, nil); err != nil && !errors.Is(err, errNotReplica) {
					mu.Lock()
					asyncFailed = append(asyncFailed, b)
					mu.Unlock()
				}
				return
			}
			if err := r.fillTo(ctx, b, p, body, nil); err != nil && !errors.Is(err, errNotReplica) {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(asyncFailed) > 0 {
		// They get no records until a refill gives them the whole
		// partition (only them: the others have this map's part).
		r.replicas[p].DropBackups(asyncFailed)
		r.p.Go(func() { r.refillPartition(p) })
	}
	return errors.Join(errs...)
}

// asyncFillWait bounds how long a fill waits for an async backup (with
// writes of the partition held): one that does not take it in time is
// left out of the partition's filled backups (it gets no records) and
// filled again later, less often the longer it fails (asyncRetryMax).
const (
	asyncFillWait = time.Second
	asyncRetryMax = 10 * time.Second
)

// fillAsync fills async backup b within asyncFillWait, at once failing
// if b did not take a fill in time lately.
func (r *Replicator) fillAsync(ctx context.Context, b string, p int, body, whole []byte) error {
	r.mu.Lock()
	until, slow := r.slowAsync[b]
	r.mu.Unlock()
	if slow && time.Now().Before(until) {
		return fmt.Errorf("stowage: async backup %s did not take a fill lately", b)
	}
	fctx, cancel := context.WithTimeout(ctx, asyncFillWait)
	defer cancel()
	err := r.fillTo(fctx, b, p, body, whole)
	r.mu.Lock()
	if err != nil && !errors.Is(err, errNotReplica) {
		r.slowAsync[b] = time.Now().Add(asyncRetryMax)
	} else if err == nil {
		delete(r.slowAsync, b)
	}
	r.mu.Unlock()
	return err
}

// refill gives active partitions to backups the table added (or that
// lost their copy), with writes held meanwhile, and tells backups the
// table removed to drop theirs.
func (r *Replicator) refill(ps []int) {
	for _, p := range ps {
		if r.ctx.Err() != nil {
			return
		}
		r.refillPartition(p)
	}
}

func (r *Replicator) refillPartition(p int) {
	var t *partition.Table
	var reqs []fillReq
	f, ok := r.replicas[p].BeginRefill(r.ctx, func() (bool, []string) {
		t, _ = r.p.Table()
		if t == nil {
			return false, nil
		}
		return t.Owner(p) == r.self, slices.Clone(t.Owners[p][1:])
	}, func(epoch uint64) {
		reqs = make([]fillReq, len(t.Owners[p])-1)
		for i := range reqs {
			reqs[i] = fillReq{TV: t.Version, Epoch: epoch, Data: r.h.Export(p, true, i+1)}
		}
	})
	if !ok {
		return
	}
	want, old, force, epoch := f.Want, f.Old, f.Force, f.Epoch

	filled := make([]bool, len(want))
	nsync := r.h.MaxSyncBackups()
	var wg sync.WaitGroup
	for i, b := range want {
		if slices.Contains(old, b) && !force {
			filled[i] = true
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			// An async backup of every map: writes are held for it only
			// so long.
			filled[i] = r.fillData(r.ctx, b, reqs[i], i+1 > nsync) == nil
		}()
	}
	wg.Wait()
	var now []string
	syncMissing := false
	for i, b := range want {
		if filled[i] {
			now = append(now, b)
		} else if i+1 <= nsync {
			syncMissing = true
		}
	}
	retry := f.End(now, len(now) == len(want), syncMissing, asyncRetryMax)
	if len(now) < len(want) {
		// Try the others again (the master loop's repair would, later).
		r.p.Go(func() {
			select {
			case <-time.After(retry):
				r.refillPartition(p)
			case <-r.ctx.Done():
			}
		})
	}
	var gone []string
	for _, b := range old {
		if !slices.Contains(want, b) {
			gone = append(gone, b)
		}
	}
	r.releaseOthers(r.ctx, p, epoch, now, gone)
}
