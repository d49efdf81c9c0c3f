package partition

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// The moves of a Replica: on each new table, through a take-over, on
// fills, hand-overs and releases from other members. Callbacks given to a
// move run under the replica's lock, so that what they change of the
// maps' data is never seen apart from the state they go with.

// TableMove is what a new table asks of this member for one partition,
// beyond what OnTable changed itself.
type TableMove struct {
	// Acquire: start taking the partition over; Gen is the acquisition's
	// generation (see Acquiring).
	Acquire bool
	Gen     uint64
	// Refill: an active owner's backups changed; fill the new ones.
	Refill bool
}

// OnTable moves the replica towards what table t says of member self.
// drop forgets the data held; release tells the map stores that this
// member does not serve the partition (once, until it acquires it again).
func (r *Replica) OnTable(t *Table, self string, drop, release func()) TableMove {
	rs := t.Owners[r.id]
	owner := len(rs) > 0 && rs[0] == self
	inSet := slices.Contains(rs, self)
	var mv TableMove
	r.mu.Lock()
	defer r.mu.Unlock()
	reassigned := t.OwnerSince(r.id) > r.since
	switch {
	case owner && r.st == Active && !reassigned:
		if !slices.Equal(r.backups, rs[1:]) {
			// Writes stop going to backups the table dropped at once: a
			// dropped backup misses them, and must be filled again should
			// it come back.
			r.backups = slices.DeleteFunc(slices.Clone(r.backups), func(b string) bool { return !slices.Contains(rs[1:], b) })
			mv.Refill = true
		}
	case owner && r.st == Acquiring && !reassigned:
		r.abandoned = false
	case owner:
		// New here, or given away and back while this member went on
		// serving it (a split): take it over again from whoever holds
		// the newest copy.
		if r.st == Active {
			r.st = Held
		}
		if r.st != Acquiring {
			r.prev = r.st
		}
		r.st, r.since, r.abandoned = Acquiring, t.Version, false
		r.gen++
		mv.Acquire, mv.Gen = true, r.gen
	case r.st == Active:
		r.st = Held
		r.backups = nil
	case r.st == Acquiring:
		// The take-over running for it is abandoned; it may be installing
		// a copy right now, so the replica stays acquiring (others asking
		// wait) until that run steps back (Acquiring, Activate).
		r.gen++
		r.abandoned = true
	case r.st == Backup && !inSet && !r.synced:
		r.st, r.handedTo = None, ""
		drop()
	case r.st == None && inSet:
		r.st, r.synced = Backup, false
	}
	// The map stores snapshot only what this member serves; one that
	// stops serving a partition (or never did) lets go of it.
	if r.st == Acquiring {
		r.released = false
	} else if r.st != Active && !r.released {
		release()
		r.released = true
	}
	r.notify()
	return mv
}

// Acquiring reports whether the acquisition of generation gen is still
// this replica's to finish. An acquisition abandoned meanwhile (and not
// started again) steps back here: the replica returns to what it held
// before (see Activate for inSet, drop and release).
func (r *Replica) Acquiring(gen uint64, inSet func() bool, drop, release func()) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.st == Acquiring && r.gen == gen:
		return true
	case r.st == Acquiring && r.abandoned:
		r.abandonLocked(false, 0, inSet, drop, release)
	}
	return false
}

// abandonLocked steps back from an abandoned take-over: with a copy
// installed (owner-grade: it may be the newest there is) the member holds
// it for whoever owns the partition now; without, it goes back to what it
// was. r.mu held.
func (r *Replica) abandonLocked(installed bool, epoch uint64, inSet func() bool, drop, release func()) {
	r.abandoned = false
	switch {
	case installed || r.prev == Held || r.prev == Active:
		r.st, r.epoch = Held, max(r.epoch, epoch)
	case r.prev == Backup && r.synced:
		r.st = Backup
	case inSet():
		r.st, r.synced = Backup, false
	default:
		r.st, r.handedTo = None, ""
		drop()
	}
	r.backups = nil
	release()
	r.released = true
	r.notify()
}

// Activate ends the acquisition of generation gen whose data is
// installed: the partition is active here with epoch and the filled
// backups, and true is returned. If the table gave the partition to
// another member meanwhile, the copy made here is owner-grade and is held
// for the new owner (inSet tells whether this member is still in the
// replica set, drop forgets the data, release tells the map stores); if
// it was given away and back, a newer acquisition runs and this copy is
// one of its sources.
func (r *Replica) Activate(gen, epoch uint64, backups []string, inSet func() bool, drop, release func()) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	activated := r.st == Acquiring && r.gen == gen
	switch {
	case activated:
		r.st, r.epoch, r.backups, r.synced, r.handedTo = Active, epoch, backups, false, ""
	case r.st == Acquiring && r.abandoned:
		r.abandonLocked(true, epoch, inSet, drop, release)
	case r.st == Acquiring:
		r.prev, r.epoch = Held, max(r.epoch, epoch)
	}
	r.notify()
	return activated
}

// RefusedError is a move another member asked for and this replica
// refused: the asker is not (or no longer) the owner here (Stale), or the
// copy here is not whole and needs the whole partition (NeedFill).
type RefusedError struct {
	NeedFill bool
	Msg      string
}

func (e *RefusedError) Error() string { return e.Msg }

func stale(format string, args ...any) error {
	return &RefusedError{Msg: fmt.Sprintf(format, args...)}
}

func needFill(format string, args ...any) error {
	return &RefusedError{NeedFill: true, Msg: fmt.Sprintf(format, args...)}
}

// Fill takes the partition from its owner, of epoch under table version
// tv: install puts the data in place (a partial fill brings some maps
// only, onto a backup that is already filled at that epoch). An owner
// (active or acquiring) refuses; a partial fill onto a copy that is not
// this owner's filled backup is refused with NeedFill. An install that
// fails must have changed nothing; its error is returned and the replica
// stays as it was.
func (r *Replica) Fill(epoch uint64, tv int64, partial bool, install func() error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.st == Active || r.st == Acquiring:
		return stale("partition %d is %s here", r.id, r.st)
	case r.st == Backup && r.synced && r.handedTo != "" && epoch <= r.epoch:
		// The copy went to a new owner: what its old owner sends now
		// would be missing there.
		return stale("partition %d: the copy of epoch %d here was handed to %s; fill of epoch %d refused", r.id, r.epoch, r.handedTo, epoch)
	case partial && (r.st != Backup || r.epoch != epoch || !r.synced):
		return needFill("partition %d: partial fill of epoch %d onto %s at epoch %d", r.id, epoch, r.st, r.epoch)
	}
	if err := install(); err != nil {
		return err
	}
	if !partial {
		// A full fill from the owner the newest table names is taken
		// whatever this member held: that owner serves the partition.
		r.st, r.synced, r.epoch, r.handedTo, r.filledTV = Backup, true, epoch, "", tv
	}
	r.notify()
	return nil
}

// ApplyBackup applies one record (or its revert) the owner sent, of the
// owner's epoch: apply runs if this member is that owner's backup and,
// for a record, its copy is whole (joined: when the table put this member
// in the replica set). A copy handed over to a new owner (HandOver)
// refuses them: the sender checked its ownership against the table
// before the new owner's, and what it applied now would be acknowledged
// to the old owner's writer, yet missing from the new owner's data.
func (r *Replica) ApplyBackup(epoch uint64, joined int64, revert bool, apply func() error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.st != Backup || epoch != r.epoch {
		return stale("partition %d: %s here at epoch %d, record of epoch %d", r.id, r.st, r.epoch, epoch)
	}
	if !revert && !r.validCopy(joined) {
		return needFill("partition %d: the copy here is not whole", r.id)
	}
	if r.handedTo != "" {
		return stale("partition %d: the copy of epoch %d here was handed to %s", r.id, r.epoch, r.handedTo)
	}
	return apply()
}

// HandOver gives the partition's data to its new owner, to: a held
// partition (with its writes in flight ended first) as owner data, a
// whole backup copy as backup data (with stale, also a filled copy that
// may lack writes: HoldStale); export makes the copy. It reports whether
// there was anything to give.
func (r *Replica) HandOver(ctx context.Context, to string, joined int64, stale bool, export func(owner bool)) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.st == Held:
		if err := r.holdWritesLocked(ctx); err != nil {
			return false
		}
		export(true)
		r.handedTo = to
		r.releaseWritesLocked()
		return true
	case r.st == Backup && (r.validCopy(joined) || stale && r.synced):
		export(false)
		r.handedTo = to
		return true
	}
	return false
}

// Release drops a copy the new owner, of epoch, no longer needs: one that
// is not a replica per the table (inSet), or older than that epoch.
func (r *Replica) Release(epoch uint64, inSet func() bool, drop func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.st != Held && r.st != Backup {
		return
	}
	in := inSet()
	if in && r.st == Backup && r.epoch == epoch {
		return // filled by the new owner
	}
	drop()
	r.st, r.synced, r.handedTo = None, false, ""
	if in {
		r.st = Backup
	}
	r.notify()
}

// Refill is a refill of an active partition's backups under way: new
// writes wait until End.
type Refill struct {
	r *Replica
	// Epoch is the partition's epoch; Old the backups filled before;
	// Force: every backup gets the whole partition again (one lost
	// records).
	Epoch uint64
	Old   []string
	Force bool
	// Want are the backups the table names, in order.
	Want []string
}

// BeginRefill starts a refill if this member is the active owner and
// its filled backups differ from the table's or lost records. Refills of
// one partition run one at a time: once it is this one's turn, target
// says whether the table makes this member the owner and the backups it
// wants (in table order); prepare runs once writes are held, with the
// epoch. False: nothing to do.
func (r *Replica) BeginRefill(ctx context.Context, target func() (owner bool, want []string), prepare func(epoch uint64)) (*Refill, bool) {
	r.fillMu.Lock()
	owner, want := target()
	r.mu.Lock()
	if r.st != Active || !owner || slices.Equal(r.backups, want) && !r.dirty {
		r.mu.Unlock()
		r.fillMu.Unlock()
		return nil, false
	}
	f := &Refill{r: r, Epoch: r.epoch, Old: r.backups, Force: r.dirty, Want: want}
	if err := r.holdWritesLocked(ctx); err != nil {
		r.mu.Unlock()
		r.fillMu.Unlock()
		return nil, false
	}
	prepare(r.epoch)
	r.dirty = false
	r.mu.Unlock()
	return f, true
}

// End finishes the refill: now are the backups that took it (in table
// order); writes go on. If some are missing, End returns how long to wait
// before trying again: at once-ish for a sync backup, longer each time
// (up to maxRetry) when only async backups (syncMissing false) are
// missing, so that one that hangs holds writes up only now and then.
func (f *Refill) End(now []string, all, syncMissing bool, maxRetry time.Duration) time.Duration {
	r := f.r
	defer r.fillMu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.st == Active {
		r.backups = now
	}
	r.releaseWritesLocked()
	retry := 100 * time.Millisecond
	switch {
	case all:
		r.asyncRetry = 0
	case !syncMissing:
		r.asyncRetry = min(max(2*r.asyncRetry, time.Second), maxRetry)
		retry = r.asyncRetry
	}
	return retry
}

// StillAcquiring reports whether the acquisition of generation gen is
// still under way (Acquiring without stepping back).
func (r *Replica) StillAcquiring(gen uint64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.st == Acquiring && r.gen == gen
}
