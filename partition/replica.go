package partition

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// State is what this member is for one partition, across all maps.
type State uint8

// The states of a Replica.
const (
	None      State = iota // holds nothing
	Backup                 // a replica; filled or not
	Acquiring              // owner per the table, getting the data
	Active                 // owner, serving reads and writes
	Held                   // was the owner; keeps the data until the new owner took it
)

func (s State) String() string {
	if int(s) >= len(stateNames) {
		return fmt.Sprintf("state(%d)", s)
	}
	return stateNames[s]
}

var stateNames = [...]string{"none", "backup", "acquiring", "active", "held"}

// Kind is what a member holds of a partition as a source for a new
// owner, best first after HoldNone. The values travel between members.
type Kind int

// The kinds of holder a member reports.
const (
	HoldNone     Kind = 0
	HoldBackup   Kind = 1 // a filled backup: has every acknowledged write
	HoldHeld     Kind = 2 // was the owner, lost ownership, keeps the data for the new owner
	HoldActive   Kind = 3 // owns it and serves it
	HoldAcquire  Kind = 4 // owns it per its table and is acquiring it: ask again
	HoldUnsynced Kind = 5 // a backup that was not filled yet: not a source
	// HoldStale: a filled backup whose copy may lack writes (it left the
	// replica set since its fill, and its epoch's owner may have gone on
	// without it): a source only when no other copy is left, better than
	// none for a map without a store.
	HoldStale Kind = 6
)

// MovedError says a partition is served elsewhere (or nowhere yet); the
// caller routes again with the current table.
type MovedError struct{ Partition int }

func (e MovedError) Error() string {
	return fmt.Sprintf("stowage: partition %d is not owned here", e.Partition)
}

// Replica is this member's state of one partition: what it holds (State),
// the owner's epoch of that data, an owner's filled backups, and the
// admission of writes (a fill or hand-over holds new writes and waits for
// those in flight). Its methods are its moves; each takes the replica's
// lock itself, and none does I/O. Lock order: a Replica before the maps'
// partitions (the callbacks of Locked run under the replica's lock).
type Replica struct {
	id int

	mu     sync.Mutex
	st     State
	synced bool // backup: filled by the owner, so it has every acknowledged write
	// filledTV is the table version of the last fill: a backup that
	// (re)joined the replica set after it may have missed writes.
	filledTV int64
	epoch    uint64   // owner epoch of the data held
	backups  []string // active: the filled backups, in table order
	hold     int      // > 0: new writes wait (a fill or hand-over is running)
	writers  int      // writes in flight
	changed  chan struct{}
	gen      uint64 // bumped when an acquisition must stop
	prev     State  // while acquiring: what this member held before
	// abandoned: the table gave the partition to another member while it
	// was being acquired here; the acquiring run steps back (Abandon).
	abandoned bool
	// since: the table version under which the running (or finished)
	// acquisition was started; a table whose Since for the partition is
	// newer gave the ownership away and back meanwhile.
	since int64
	// handedTo is set once a held partition, or a backup's copy, was
	// taken by a new owner: the data stays a source until the new owner
	// released (or filled) it. A backup's copy handed over takes no more
	// records of its epoch: the new owner did not get them.
	handedTo string
	// dirty: a backup lost records (an async backup failed, or one
	// refused a record it had no base for): refill them all.
	dirty bool
	// asyncRetry: how long refills wait before trying again an async
	// backup that did not take its fill (grows while it fails).
	asyncRetry time.Duration
	// fillMu serialises refills of the partition.
	fillMu sync.Mutex
	// released: the map stores were told this member does not own it.
	released bool
	trace    func(p int, from, to State)
	traced   State
	// stop ends every wait with stopErr (the member is closing).
	stop    <-chan struct{}
	stopErr error
}

// NewReplica returns partition id's replica in state None. Waits end
// with stopErr once stop is closed.
func NewReplica(id int, stop <-chan struct{}, stopErr error) *Replica {
	return &Replica{id: id, changed: make(chan struct{}), stop: stop, stopErr: stopErr}
}

// SetTrace makes fn see every change of state (for debug logs). It must
// be called before the replica is shared.
func (r *Replica) SetTrace(fn func(p int, from, to State)) { r.trace = fn }

// ID is the partition's id.
func (r *Replica) ID() int { return r.id }

// notify wakes everyone waiting on the replica. r.mu held.
func (r *Replica) notify() {
	if r.trace != nil && r.st != r.traced {
		r.trace(r.id, r.traced, r.st)
	}
	r.traced = r.st
	close(r.changed)
	r.changed = make(chan struct{})
}

// wait releases r.mu until the replica changes, ctx ends or the member
// stops, and takes it again on a change. r.mu held.
func (r *Replica) wait(ctx context.Context) error {
	ch := r.changed
	r.mu.Unlock()
	select {
	case <-ch:
		r.mu.Lock()
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-r.stop:
		return r.stopErr
	}
}

// State returns the replica's state.
func (r *Replica) State() State {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.st
}

// WriteTicket is a write admitted into an active partition: the epoch
// and filled backups it goes out with. Done must be called once the write
// finished.
type WriteTicket struct {
	r       *Replica
	Epoch   uint64
	Backups []string
}

// EnterWrite waits until the partition is active here and no fill or
// hand-over holds writes, then counts the write in. It fails with a
// MovedError when this member is not (or no longer) the owner.
func (r *Replica) EnterWrite(ctx context.Context) (WriteTicket, error) {
	r.mu.Lock()
	for {
		switch {
		case r.st == Active && r.hold == 0:
			r.writers++
			t := WriteTicket{r: r, Epoch: r.epoch, Backups: r.backups}
			r.mu.Unlock()
			return t, nil
		case r.st != Active && r.st != Acquiring:
			r.mu.Unlock()
			return WriteTicket{}, MovedError{r.id}
		}
		if err := r.wait(ctx); err != nil {
			return WriteTicket{}, err
		}
	}
}

// Done counts the write out.
func (t WriteTicket) Done() {
	r := t.r
	r.mu.Lock()
	r.writers--
	if r.writers == 0 && r.hold > 0 {
		r.notify()
	}
	r.mu.Unlock()
}

// EnterRead waits until the partition is active here; it fails with a
// MovedError when this member is not its owner.
func (r *Replica) EnterRead(ctx context.Context) error {
	r.mu.Lock()
	for {
		switch r.st {
		case Active:
			r.mu.Unlock()
			return nil
		case Acquiring:
		default:
			r.mu.Unlock()
			return MovedError{r.id}
		}
		if err := r.wait(ctx); err != nil {
			return err
		}
	}
}

// holdWritesLocked stops new writes and waits for those in flight. r.mu
// held on entry and on return (released while waiting); on an error no
// write is held.
func (r *Replica) holdWritesLocked(ctx context.Context) error {
	r.hold++
	for r.writers > 0 {
		ch := r.changed
		r.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			r.mu.Lock()
			r.hold--
			r.notify()
			return ctx.Err()
		}
		r.mu.Lock()
	}
	return nil
}

// releaseWritesLocked undoes holdWritesLocked. r.mu held.
func (r *Replica) releaseWritesLocked() {
	r.hold--
	r.notify()
}

// validCopy reports whether a backup's copy has every acknowledged
// write: it was filled, and not before it last joined the replica set
// (had it left, the owner went on without it). joined is when the table
// put this member in the replica set (-1: not in it).
func (r *Replica) validCopy(joined int64) bool {
	return r.synced && joined >= 0 && r.filledTV >= joined
}

// kindLocked is what this member reports holding to others.
func (r *Replica) kindLocked(joined int64) Kind {
	switch r.st {
	case Active:
		return HoldActive
	case Held:
		return HoldHeld
	case Acquiring:
		return HoldAcquire
	case Backup:
		switch {
		case r.validCopy(joined):
			return HoldBackup
		case r.synced:
			return HoldStale
		}
		return HoldUnsynced
	}
	return HoldNone
}

// dataKindLocked is what this member holds as a source for its own
// acquisition: what it was before it started acquiring.
func (r *Replica) dataKindLocked(joined int64) Kind {
	if r.st != Acquiring {
		return r.kindLocked(joined)
	}
	switch {
	case r.prev == Held || r.prev == Active:
		return HoldHeld
	case r.prev == Backup && r.validCopy(joined):
		return HoldBackup
	case r.prev == Backup && r.synced:
		return HoldStale
	}
	return HoldNone
}

// Status is what this member holds of the partition and the epoch of
// that data: to others (own false) a partition being acquired is
// HoldAcquire; to its own acquisition (own true) it is what was held
// before. joined is when the table put this member in the replica set
// (-1: not in it).
func (r *Replica) Status(joined int64, own bool) (Kind, uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if own {
		return r.dataKindLocked(joined), r.epoch
	}
	return r.kindLocked(joined), r.epoch
}

// Epoch returns the owner epoch of the data held.
func (r *Replica) Epoch() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.epoch
}

// Serving returns, for an active partition, its epoch and filled backups
// (ok false in any other state).
func (r *Replica) Serving() (epoch uint64, backups []string, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.epoch, slices.Clone(r.backups), r.st == Active
}

// SafeWhy says why an active partition does not have every backup of
// replicas (its replica set in the table, owner first) filled; "" when it
// has.
func (r *Replica) SafeWhy(replicas []string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.st == Active && slices.Equal(r.backups, replicas[1:]) && !r.dirty {
		return ""
	}
	return fmt.Sprintf("partition %d: %s, backups %v of %v, dirty %v", r.id, r.st, r.backups, replicas[1:], r.dirty)
}

// NeedsRefill reports whether an active partition, with no fill running,
// lacks a backup of replicas (owner first) or lost records on one.
func (r *Replica) NeedsRefill(replicas []string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.st == Active && r.hold == 0 && (r.dirty || !slices.Equal(r.backups, replicas[1:]))
}

// Busy reports whether a leaving member still has the partition to hand
// over: it serves it, or holds it and nobody took it yet.
func (r *Replica) Busy() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.st == Held && r.handedTo == "" || r.st == Active
}

// MarkDirty notes that a backup lost records: every backup is filled
// again at the next refill.
func (r *Replica) MarkDirty() {
	r.mu.Lock()
	r.dirty = true
	r.mu.Unlock()
}

// DropBackups takes bs out of an owner's filled backups: they get no
// records until a refill gave them the whole partition.
func (r *Replica) DropBackups(bs []string) {
	r.mu.Lock()
	r.backups = slices.DeleteFunc(slices.Clone(r.backups), func(b string) bool { return slices.Contains(bs, b) })
	r.mu.Unlock()
}

// Released reports whether the map stores were told this member does
// not own the partition.
func (r *Replica) Released() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.released
}

// Locked runs fn with the replica's lock held, for work that must see
// the replica unchanged (fn must not call the replica).
func (r *Replica) Locked(fn func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fn()
}
