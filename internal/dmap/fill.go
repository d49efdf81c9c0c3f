package dmap

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/stowage/stowage/cluster"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/partition"
)

// fillAll gives partition p (every ready map) to each live backup the
// table names, and returns those that took it.
func (d *dist) fillAll(ctx context.Context, p int, epoch uint64, cores []*core) []string {
	t, _ := d.currentTable()
	if t == nil || t.Owner(p) != d.self {
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
		body := enc(fillReq{TV: t.Version, Epoch: epoch, Data: d.n.partDataFor(p, true, cores, i+1)})
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok[i] = d.fillTo(ctx, b, p, body) == nil
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
// replica of p.
func (d *dist) fillTo(ctx context.Context, b string, p int, body []byte) error {
	delay := 10 * time.Millisecond
	for {
		a := d.addr(b)
		var resp []byte
		err := fmt.Errorf("%w: member %s has no known address", cluster.ErrUnreachable, b)
		if a != "" && d.tr != nil {
			var stale bool
			resp, stale, err = d.callWhile(ctx, a, mFill, body, func(t *partition.Table) bool {
				return t.Owner(p) == d.self && slices.Contains(t.Owners[p], b)
			})
			if stale {
				// A table that makes another member p's owner, or b no
				// longer its replica: this fill is not needed any more
				// (b may hang, and its waiters go on without it).
				if !d.owns(p) {
					return errMoved(p)
				}
				return errNotReplica
			}
		}
		if err == nil {
			var ans codeAns
			if err = dec(resp, &ans); err == nil {
				switch ans.Code {
				case codeOK:
					return nil
				case codeNeedFill:
					d.log.Debug("stowage: partial fill refused", "partition", p, "member", b, "msg", ans.Msg)
					// A partial fill onto a copy that is not whole: the
					// whole partition is sent again, the caller routes again.
					d.slots[p].MarkDirty()
					d.goBackground(func() { d.refill([]int{p}) })
					return errMoved(p)
				}
				err = fmt.Errorf("stowage: fill of partition %d refused by %s: %s", p, b, ans.Msg)
				d.log.Debug("stowage: fill refused", "partition", p, "member", b, "msg", ans.Msg)
				d.askFetch(a)
			}
		}
		if !d.inReplicaSet(p, b) || !d.isLive(b) {
			return errNotReplica
		}
		if !d.owns(p) {
			return errMoved(p)
		}
		if ctx.Err() != nil {
			return err
		}
		select {
		case <-time.After(delay):
		case <-ctx.Done():
		case <-d.ctx.Done():
			return ErrClosed
		}
		delay = min(2*delay, 500*time.Millisecond)
	}
}

// callWhile makes one call to addr and waits for its answer while the
// current table satisfies need; once a table does not, it gives up on the
// call and returns stale true.
func (d *dist) callWhile(ctx context.Context, addr, method string, body []byte, need func(*partition.Table) bool) ([]byte, bool, error) {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type answer struct {
		b   []byte
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		b, err := d.rpc(cctx, addr, method, body)
		ch <- answer{b, err}
	}()
	for {
		t, tabCh := d.currentTable()
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
func (d *dist) releaseOthers(ctx context.Context, p int, epoch uint64, backups, holders []string) {
	body := enc(releaseReq{TV: d.tableVersion(), P: p, Epoch: epoch})
	for _, id := range holders {
		a := d.addr(id)
		if id == d.self || slices.Contains(backups, id) || a == "" || d.tr == nil {
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, _ = d.rpc(rctx, a, mRelease, body)
		cancel()
	}
}

// prepareMapPart makes one map's partition ready on an active owner (a
// map new here, LAZY, or unknown when the partition was taken over): it
// loads what the store has, records the slot's epoch start for it, and
// gives it to the backups.
func (d *dist) prepareMapPart(ctx context.Context, c *core, pt *part) error {
	s := d.slots[pt.id]
	epoch, backups, active := s.Serving()
	if !active {
		return errMoved(pt.id)
	}
	pt.mu.Lock()
	loaded := pt.loaded
	pt.mu.Unlock()
	if c.store != nil && !loaded {
		if _, err := c.loadFromStore(ctx, pt); err != nil {
			return err
		}
	}
	pt.mu.Lock()
	from := pt.ver.Seq
	pt.ver = mapstore.Version{Epoch: epoch, Seq: from}
	pt.mu.Unlock()
	if c.store != nil {
		if err := c.startEpoch(ctx, pt.id, epoch, from); err != nil {
			return err
		}
	}
	if len(backups) == 0 {
		return nil
	}
	mp := c.export(pt, true)
	body := enc(fillReq{TV: d.tableVersion(), Epoch: epoch, Data: partData{P: pt.id, Maps: []mapPart{mp}}, Partial: true})
	syncB, asyncB, _ := d.targets(pt.id, c, backups)
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
				if err := d.fillAsync(ctx, b, pt.id, body); err != nil && !errors.Is(err, errNotReplica) {
					mu.Lock()
					asyncFailed = append(asyncFailed, b)
					mu.Unlock()
				}
				return
			}
			if err := d.fillTo(ctx, b, pt.id, body); err != nil && !errors.Is(err, errNotReplica) {
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
		s.DropBackups(asyncFailed)
		d.goBackground(func() { d.refill1(pt.id) })
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
func (d *dist) fillAsync(ctx context.Context, b string, p int, body []byte) error {
	d.mu.Lock()
	until, slow := d.slowAsync[b]
	d.mu.Unlock()
	if slow && time.Now().Before(until) {
		return fmt.Errorf("stowage: async backup %s did not take a fill lately", b)
	}
	fctx, cancel := context.WithTimeout(ctx, asyncFillWait)
	defer cancel()
	err := d.fillTo(fctx, b, p, body)
	d.mu.Lock()
	if err != nil && !errors.Is(err, errNotReplica) {
		d.slowAsync[b] = time.Now().Add(asyncRetryMax)
	} else if err == nil {
		delete(d.slowAsync, b)
	}
	d.mu.Unlock()
	return err
}

// maxSync is the most synchronous backups any of cores keeps: a replica
// at a later place is an async backup of every map.
func maxSync(cores []*core) int {
	n := 0
	for _, c := range cores {
		n = max(n, c.sync)
	}
	return n
}

// refill gives active partitions to backups the table added (or that
// lost their copy), with writes held meanwhile, and tells backups the
// table removed to drop theirs.
func (d *dist) refill(ps []int) {
	for _, p := range ps {
		if d.ctx.Err() != nil {
			return
		}
		d.refill1(p)
	}
}

func (d *dist) refill1(p int) {
	var t *partition.Table
	var cores []*core
	var bodies [][]byte
	f, ok := d.slots[p].BeginRefill(d.ctx, func() (bool, []string) {
		t, _ = d.currentTable()
		if t == nil {
			return false, nil
		}
		return t.Owner(p) == d.self, slices.Clone(t.Owners[p][1:])
	}, func(epoch uint64) {
		cores = d.n.allCores()
		bodies = make([][]byte, len(t.Owners[p])-1)
		for i := range bodies {
			bodies[i] = enc(fillReq{TV: t.Version, Epoch: epoch, Data: d.n.partDataFor(p, true, cores, i+1)})
		}
	})
	if !ok {
		return
	}
	want, old, force, epoch := f.Want, f.Old, f.Force, f.Epoch

	filled := make([]bool, len(want))
	nsync := maxSync(cores)
	var wg sync.WaitGroup
	for i, b := range want {
		if slices.Contains(old, b) && !force {
			filled[i] = true
			continue
		}
		body := bodies[i]
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i+1 > nsync {
				// An async backup of every map: writes are held for it
				// only so long.
				filled[i] = d.fillAsync(d.ctx, b, p, body) == nil
				return
			}
			filled[i] = d.fillTo(d.ctx, b, p, body) == nil
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
		d.goBackground(func() {
			select {
			case <-time.After(retry):
				d.refill1(p)
			case <-d.ctx.Done():
			}
		})
	}
	var gone []string
	for _, b := range old {
		if !slices.Contains(want, b) {
			gone = append(gone, b)
		}
	}
	d.releaseOthers(d.ctx, p, epoch, now, gone)
}
