package nslease

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Fencing: every member of the holding cluster follows the lease and
// refuses writes (Check) once it cannot tell that its cluster renewed the
// lease recently, strictly before another cluster may take it over.
//
// The argument, in monotonic time only (each member's own clock; wall
// clocks are never compared):
//
//   - A member keeps, for the newest record of its own cluster it has
//     counted, a time "at" on its own clock that is before that record was
//     created: the renewer takes the time before it reads and creates the
//     record; a follower takes the start of its last successful poll that
//     did not list the record yet (the record was not there when that
//     poll listed, so it was created after the poll started).
//   - A taker (Acquire) takes a record of another cluster over only after
//     watching that same record stay the newest for a full TTL on its own
//     clock, from a first sight that is after the record was created. If
//     the holder writes a newer record meanwhile the taker gives up.
//   - So the takeover comes more than TTL after the creation of the
//     holder's last record, hence more than TTL after "at" on any member
//     of the holder; a member refuses writes once fenceAfter (3/4 TTL)
//     passed since "at". Every write admitted by the holder is admitted at
//     least TTL/4 before the takeover; the margin covers a write admitted
//     just before the fence reaching storage, and a difference in the
//     rates of the hosts' monotonic clocks.
//
// In steady state the renewer writes a record every renewEvery (TTL/4) and
// a follower polls every pollEvery (TTL/8): "at" is then at most about
// TTL/4 + 2*TTL/8 = TTL/2 old, plus storage latencies, before the next
// record refreshes it, leaving TTL/4 before the fence.

// renewEvery is how often the renewer writes a record.
func renewEvery(ttl time.Duration) time.Duration { return ttl / 4 }

// pollEvery is how often every member reads the newest record.
func pollEvery(ttl time.Duration) time.Duration { return ttl / 8 }

// fenceAfter is how long after "at" a member refuses writes.
func fenceAfter(ttl time.Duration) time.Duration { return ttl * 3 / 4 }

// fence is what a member knows of its cluster's renewals.
type fence struct {
	mu     sync.Mutex
	seen   uint64    // newest record of this cluster counted
	at     time.Time // monotonic, before record seen was created; zero: none
	other  []string  // members of another cluster's newer record, if seen
	logged bool      // the other cluster was logged
	fenced bool      // the last poll found this member fenced (for logging)
	done   chan struct{}
}

// renewed counts record n of this cluster, created after start.
func (f *fence) renewed(n uint64, start time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n <= f.seen || start.IsZero() {
		return
	}
	f.seen = n
	if start.After(f.at) {
		f.at = start
	}
	f.other = nil
}

// otherCluster notes that record n, newer than any of this cluster's, is
// another cluster's: this member stays fenced until its own cluster
// writes a newer record, and logs it once.
func (f *fence) otherCluster(o Options, n uint64, r Record) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n <= f.seen {
		return
	}
	f.other = r.Members
	if !f.logged {
		f.logged = true
		o.Logger.Error("stowage: another cluster took over the namespace lease; this member refuses writes to its maps", "namespace", o.Path, "members", r.Members)
	}
}

// check is Lease.Check.
func (f *fence) check(o Options) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.other != nil {
		return fmt.Errorf("%w: %s is now held by another cluster (members %s)", ErrLost, o.Path, strings.Join(f.other, ", "))
	}
	if f.at.IsZero() {
		return fmt.Errorf("%w: %s", ErrLost, o.Path)
	}
	if age := time.Since(f.at); age >= fenceAfter(o.ttl()) {
		return fmt.Errorf("%w: %s was last seen renewed %s ago (lease ttl %s)", ErrLost, o.Path, age.Round(time.Millisecond), o.ttl())
	}
	return nil
}

// Check reports whether this member may acknowledge writes to the
// namespace: nil while it saw its cluster renew the lease recently enough
// that no other cluster can have taken it over (see fenceAfter), an error
// matching ErrLost and naming Options.Path otherwise, and always after
// Close (a released lease may be taken over at once). Reads need no
// check: they change nothing on storage.
func (l *Lease) Check() error {
	l.mu.Lock()
	closed := l.closed
	l.mu.Unlock()
	if closed {
		return fmt.Errorf("%w: %s: this member closed its lease", ErrLost, l.o.Path)
	}
	return l.fence.check(l.o)
}

// follow reads the newest record every pollEvery until Close, counting
// its own cluster's renewals for Check.
func (l *Lease) follow() {
	defer close(l.fence.done)
	ttl := l.o.ttl()
	t := time.NewTicker(pollEvery(ttl))
	defer t.Stop()
	var (
		prevStart time.Time // start of the last successful poll
		top       uint64    // newest number that poll listed
		bound     time.Time // before record top was created
	)
	l.mu.Lock()
	top = l.last
	l.mu.Unlock()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 2*pollEvery(ttl))
		n, r, err := l.o.newest(ctx)
		cancel()
		if err == nil {
			if n > top {
				// Not listed by the previous successful poll: created
				// after it started.
				top, bound = n, prevStart
			}
			prevStart = start
			switch {
			case n == 0 || r.pending || n < top:
			case l.o.Same(r.Members):
				if !r.Released {
					l.fence.renewed(n, bound)
				}
			case !r.Released:
				l.fence.otherCluster(l.o, n, r)
			}
		}
		l.logTransition(l.fence.check(l.o))
	}
}

// logTransition logs when this member starts or stops refusing writes.
func (l *Lease) logTransition(err error) {
	l.fence.mu.Lock()
	was := l.fence.fenced
	l.fence.fenced = err != nil
	l.fence.mu.Unlock()
	switch {
	case err != nil && !was:
		l.o.Logger.Error("stowage: the namespace lease is not known to be renewed; writes to its maps are refused", "namespace", l.o.Path, "err", err)
	case err == nil && was:
		l.o.Logger.Info("stowage: the namespace lease is renewed again; writes to its maps are accepted", "namespace", l.o.Path)
	}
}
