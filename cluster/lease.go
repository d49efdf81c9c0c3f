package cluster

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stowage/stowage/partition"
)

// An owner serves a partition only while it knows that no newer table can
// have given the partition to another member: a lease. A member renews
// it by asking other live members for their table version (the oldest
// ones and a few more at random: leaseTargets); once the
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
	// Who, in a request, asks the answer to name the answering member
	// in ID: the master's check of a silent member (reach.go) counts
	// an answer only from that member itself. A member that predates
	// them ignores Who and names nobody (see namedAs).
	Who bool   `msgpack:"w,omitempty"`
	ID  string `msgpack:"id,omitempty"`
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
func (pr *Protocol) leaseNow() time.Duration { return time.Since(pr.clock0) }

// leaseFresh reports whether the lease holds now.
func (pr *Protocol) leaseFresh() bool {
	return int64(pr.leaseNow()) < pr.lease.until.Load()
}

// EnsureLease returns nil while the lease holds; else it waits for a
// round of questions and returns nil once it was renewed, a
// partition.MovedError for p when a newer table was found (the caller
// routes again with it), or an error matching ErrNoLease after which the
// operation is routed again.
func (pr *Protocol) EnsureLease(ctx context.Context, p int) error {
	if pr.leaseFor <= 0 || pr.leaseFresh() {
		return nil
	}
	err := pr.renewLease(ctx)
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
func (pr *Protocol) renewLease(ctx context.Context) error {
	pr.lease.mu.Lock()
	ch := pr.lease.round
	if ch == nil {
		var ok bool
		if ch, ok = pr.startRoundLocked(); !ok {
			pr.lease.mu.Unlock()
			return pr.closed
		}
	}
	pr.lease.mu.Unlock()
	select {
	case <-ch:
	case <-ctx.Done():
		return ctx.Err()
	case <-pr.ctx.Done():
		return pr.closed
	}
	if pr.leaseFresh() {
		return nil
	}
	pr.lease.mu.Lock()
	defer pr.lease.mu.Unlock()
	if pr.lease.err != nil {
		return pr.lease.err
	}
	return ErrNoLease
}

// startRoundLocked starts a round of questions; d.lease.mu is held.
func (pr *Protocol) startRoundLocked() (chan struct{}, bool) {
	ch := make(chan struct{})
	pr.lease.inflight.Add(1)
	if !pr.Go(func() { pr.leaseRound(ch) }) {
		pr.lease.inflight.Add(-1)
		return nil, false
	}
	pr.lease.round = ch
	return ch, true
}

// leaseRound asks every other live member for its table version and
// renews the lease if it may.
func (pr *Protocol) leaseRound(done chan struct{}) {
	defer pr.lease.inflight.Add(-1)
	sent := pr.leaseNow()
	err := pr.askTables()
	if err == nil {
		until := int64(sent + pr.leaseFor)
		for {
			cur := pr.lease.until.Load()
			if cur >= until || pr.lease.until.CompareAndSwap(cur, until) {
				break
			}
		}
	}
	if err != nil {
		pr.log.Debug("stowage: lease not renewed", "err", err, "took", pr.leaseNow()-sent)
	}
	pr.lease.mu.Lock()
	pr.lease.err = err
	if pr.lease.round == done {
		pr.lease.round = nil
	}
	pr.lease.mu.Unlock()
	close(done)
}

// askTables asks other live members for their table version (see
// leaseTargets): nil once one answered and none that answered is newer,
// errNewerTable if one is (its table is fetched first), ErrNoLease if
// nobody answered within leaseFor/2.
func (pr *Protocol) askTables() error {
	mine := pr.TableVersion()
	addrs := pr.leaseTargets()
	if len(addrs) == 0 || pr.tr == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(pr.ctx, pr.leaseFor/2)
	defer cancel()
	type answer struct {
		addr string
		tv   int64
		err  error
	}
	ch := make(chan answer, len(addrs))
	for _, a := range addrs {
		if !pr.Go(func() {
			b, err := pr.Call(ctx, a, mLease, Encode(leaseMsg{TV: mine}))
			var m leaseMsg
			if err == nil {
				err = Decode(b, &m)
			}
			ch <- answer{a, m.TV, err}
		}) {
			ch <- answer{a, 0, pr.closed}
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
			pr.NoteTable(ctx, a.addr, a.tv)
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

// leaseOldest is how many of the oldest other members every lease round
// asks: the master and the members next in line to succeed it.
const leaseOldest = 3

// leaseTargets picks whom a lease round asks: the leaseOldest oldest other
// members in this member's view and, of the rest, as many as the bits of
// their count (⌈log2(n+1)⌉), drawn anew each round. A newer table than
// this member's is made by a master, which installs it before it
// publishes it to every member; the master, or the member that took over
// from a master that died, is among the oldest this member knows unless
// several of the oldest failed at once, and every member asked at random
// is one more chance to learn of it. Asking every member instead would
// cost each member a call to every other one per round: control traffic
// growing with the square of the cluster's size.
func (pr *Protocol) leaseTargets() []string {
	ms := pr.ranked(pr.view.Members()) // the master first
	pr.mu.Lock()
	var ordered []string
	for _, m := range ms {
		if m.ID != pr.self && pr.live[m.ID] && pr.addrs[m.ID] != "" {
			ordered = append(ordered, pr.addrs[m.ID])
		}
	}
	pr.mu.Unlock()
	if len(ordered) <= leaseOldest {
		return ordered
	}
	rest := ordered[leaseOldest:]
	k := bits.Len(uint(len(rest)))
	if k >= len(rest) {
		return ordered
	}
	rand.Shuffle(len(rest), func(i, j int) { rest[i], rest[j] = rest[j], rest[i] })
	return ordered[:leaseOldest+k]
}

// onLease answers a lease question with this member's table version, and
// fetches the caller's table if it is newer.
func (pr *Protocol) onLease(from string, req *leaseMsg) leaseMsg {
	pr.noteHeard(from)
	if req.TV > pr.TableVersion() {
		pr.AskFetch(from)
	}
	out := leaseMsg{TV: pr.TableVersion()}
	if req.Who {
		out.ID = pr.self
	}
	return out
}

// leaseLoop starts a round every leaseFor/4 (at most four under way at
// once), so that the lease is renewed ahead of its end.
func (pr *Protocol) leaseLoop() {
	defer pr.wg.Done()
	every := max(pr.leaseFor/4, 5*time.Millisecond)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-pr.ctx.Done():
			return
		case <-t.C:
			if pr.lease.inflight.Load() >= 4 {
				continue
			}
			pr.lease.mu.Lock()
			pr.startRoundLocked()
			pr.lease.mu.Unlock()
		}
	}
}
