package cluster

import (
	"context"
	"errors"
	"fmt"
	"github.com/stowage/stowage/partition"
	"sync"
	"sync/atomic"
	"time"
)

// An owner serves a partition only while it knows that no newer table can
// have given the partition to another member: a lease. A member renews
// it by asking the other live members for their table version; once the
// members that answered (at least one) all have a table no newer than its
// own, the lease holds for leaseFor from when the question was sent. The
// lease is shorter than the least time failure detection takes to declare
// a member that stopped answering dead (after which the master publishes
// a table without it), so a member that hung (a stopped process, a long
// pause) and resumes finds its lease expired, asks, learns of the newer
// table and routes its clients to the new owners instead of serving them
// from its stale copy. Writes are fenced by epochs besides (the backups of
// a newer epoch refuse a stale owner's records); reads have only this.
//
// Rounds of questions start every leaseFor/4 and may overlap (a round
// waits at most leaseFor/2 for a member that does not answer, then counts
// the answers it has), so while the members answer, even with one of
// them hung, the lease never runs out and operations do not wait for it. A member alone in its view has nobody to ask and nobody who
// could have taken its partitions. What it costs: in a cluster of two, an
// owner whose only peer hangs serves nothing from when its lease ends
// until failure detection drops the peer (its sync backups hold up its
// writes over that time anyway).

// ErrNoLease is returned to an operation at an owner whose lease expired
// and could not be renewed (no other member answered); the operation is
// routed again until its deadline.
var ErrNoLease = errors.New("stowage: this member could not confirm its partition table with any other member")

// errNewerTable is a round's outcome when another member has a newer
// table; the table is fetched from it before the round ends.
var errNewerTable = errors.New("stowage: another member has a newer partition table")

type leaseMsg struct {
	TV int64 `msgpack:"tv"`
}

// leaseState is a member's lease: valid until until (nanoseconds on the
// member's monotonic clock, from d.clock0).
type leaseState struct {
	until    atomic.Int64
	inflight atomic.Int32 // rounds under way

	mu    sync.Mutex
	round chan struct{} // closed when the newest round ends; nil if it did
	err   error         // outcome of the newest round that ended
}

// leaseNow is the time on the member's monotonic clock.
func (d *Protocol) leaseNow() time.Duration { return time.Since(d.clock0) }

// leaseFresh reports whether the lease holds now.
func (d *Protocol) leaseFresh() bool {
	return int64(d.leaseNow()) < d.lease.until.Load()
}

// EnsureLease returns nil while the lease holds; else it waits for a
// round of questions and returns nil once it was renewed, a
// partition.MovedError for p when a newer table was found (the caller
// routes again with it), or an error matching ErrNoLease after which the
// operation is routed again.
func (d *Protocol) EnsureLease(ctx context.Context, p int) error {
	if d.leaseFor <= 0 || d.leaseFresh() {
		return nil
	}
	err := d.renewLease(ctx)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errNewerTable):
		return partition.MovedError{Partition: p}
	}
	return err
}

// renewLease waits for the round under way, or starts one, and reports
// whether the lease holds once it ended.
func (d *Protocol) renewLease(ctx context.Context) error {
	d.lease.mu.Lock()
	ch := d.lease.round
	if ch == nil {
		var ok bool
		if ch, ok = d.startRoundLocked(); !ok {
			d.lease.mu.Unlock()
			return d.closed
		}
	}
	d.lease.mu.Unlock()
	select {
	case <-ch:
	case <-ctx.Done():
		return ctx.Err()
	case <-d.ctx.Done():
		return d.closed
	}
	if d.leaseFresh() {
		return nil
	}
	d.lease.mu.Lock()
	defer d.lease.mu.Unlock()
	if d.lease.err != nil {
		return d.lease.err
	}
	return ErrNoLease
}

// startRoundLocked starts a round of questions; d.lease.mu is held.
func (d *Protocol) startRoundLocked() (chan struct{}, bool) {
	ch := make(chan struct{})
	d.lease.inflight.Add(1)
	if !d.Go(func() { d.leaseRound(ch) }) {
		d.lease.inflight.Add(-1)
		return nil, false
	}
	d.lease.round = ch
	return ch, true
}

// leaseRound asks every other live member for its table version and
// renews the lease if it may.
func (d *Protocol) leaseRound(done chan struct{}) {
	defer d.lease.inflight.Add(-1)
	sent := d.leaseNow()
	err := d.askTables()
	if err == nil {
		until := int64(sent + d.leaseFor)
		for {
			cur := d.lease.until.Load()
			if cur >= until || d.lease.until.CompareAndSwap(cur, until) {
				break
			}
		}
	}
	if err != nil {
		d.log.Debug("stowage: lease not renewed", "err", err, "took", d.leaseNow()-sent)
	}
	d.lease.mu.Lock()
	d.lease.err = err
	if d.lease.round == done {
		d.lease.round = nil
	}
	d.lease.mu.Unlock()
	close(done)
}

// askTables asks the other live members for their table version: nil
// once one answered and none that answered is newer, errNewerTable if
// one is (its table is fetched first), ErrNoLease if nobody answered
// within leaseFor/2.
func (d *Protocol) askTables() error {
	mine := d.TableVersion()
	d.mu.Lock()
	var addrs []string
	for id := range d.live {
		if id != d.self && d.addrs[id] != "" {
			addrs = append(addrs, d.addrs[id])
		}
	}
	d.mu.Unlock()
	if len(addrs) == 0 || d.tr == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(d.ctx, d.leaseFor/2)
	defer cancel()
	type answer struct {
		addr string
		tv   int64
		err  error
	}
	ch := make(chan answer, len(addrs))
	for _, a := range addrs {
		if !d.Go(func() {
			b, err := d.Call(ctx, a, mLease, Encode(leaseMsg{TV: mine}))
			var m leaseMsg
			if err == nil {
				err = Decode(b, &m)
			}
			ch <- answer{a, m.TV, err}
		}) {
			ch <- answer{a, 0, d.closed}
		}
	}
	answered := 0
	var last error
	for range addrs {
		a := <-ch
		switch {
		case a.err != nil:
			last = a.err
		case a.tv > mine:
			d.NoteTable(ctx, a.addr, a.tv)
			return fmt.Errorf("%w (%s has version %d, this member had %d)", errNewerTable, a.addr, a.tv, mine)
		default:
			answered++
		}
	}
	if answered == 0 {
		return fmt.Errorf("%w: %w", ErrNoLease, last)
	}
	return nil
}

// onLease answers a lease question with this member's table version, and
// fetches the caller's table if it is newer.
func (d *Protocol) onLease(from string, req *leaseMsg) leaseMsg {
	if req.TV > d.TableVersion() {
		d.AskFetch(from)
	}
	return leaseMsg{TV: d.TableVersion()}
}

// leaseLoop starts a round every leaseFor/4 (at most four under way at
// once), so that the lease is renewed ahead of its end.
func (d *Protocol) leaseLoop() {
	defer d.wg.Done()
	every := max(d.leaseFor/4, 5*time.Millisecond)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-d.ctx.Done():
			return
		case <-t.C:
			if d.lease.inflight.Load() >= 4 {
				continue
			}
			d.lease.mu.Lock()
			d.startRoundLocked()
			d.lease.mu.Unlock()
		}
	}
}
