package dmap

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// slotState is what this member is for one partition, across all maps.
type slotState uint8

const (
	stNone      slotState = iota // holds nothing
	stBackup                     // a replica; synced says whether complete
	stAcquiring                  // owner per the table, getting the data
	stActive                     // owner, serving reads and writes
	stHeld                       // was the owner; keeps the data until the new owner took it
)

func (s slotState) String() string {
	return [...]string{"none", "backup", "acquiring", "active", "held"}[s]
}

// slot is this member's state of one partition. Lock order: slot.mu
// before part.mu; neither is held during I/O.
type slot struct {
	id int

	mu     sync.Mutex
	st     slotState
	synced bool // backup: filled by the owner, so it has every acknowledged write
	// filledTV is the table version of the last fill: a backup that
	// (re)joined the replica set after it may have missed writes.
	filledTV int64
	epoch    uint64   // owner epoch of the data held
	backups  []string // active: the filled backups, in table order
	hold     int      // > 0: new writes wait (a fill or hand-over is running)
	writers  int      // writes in flight
	changed  chan struct{}
	gen      uint64    // bumped when an acquisition must stop
	prev     slotState // while acquiring: what this member held before
	// abandoned: the table gave the partition to another member while it
	// was being acquired here; the acquiring run steps back (abandon).
	abandoned bool
	// since: the table version under which the running (or finished)
	// acquisition was started; a table whose Since for the partition is
	// newer gave the ownership away and back meanwhile.
	since int64
	// handedTo is set once a held partition was taken: the data stays a
	// source until the new owner released it.
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
	// trace, if set, sees every change of st (at notify).
	trace  func(p int, from, to slotState)
	traced slotState
	// closed ends every wait when the node closes.
	closed <-chan struct{}
}

func newSlot(id int, closed <-chan struct{}) *slot {
	return &slot{id: id, changed: make(chan struct{}), closed: closed}
}

// notify wakes everyone waiting on the slot. s.mu held.
func (s *slot) notify() {
	if s.trace != nil && s.st != s.traced {
		s.trace(s.id, s.traced, s.st)
	}
	s.traced = s.st
	close(s.changed)
	s.changed = make(chan struct{})
}

// errMoved says the partition is served elsewhere (or nowhere yet); the
// caller routes again with the current table.
type errMoved struct{ p int }

func (e errMoved) Error() string { return fmt.Sprintf("stowage: partition %d is not owned here", e.p) }

func isMoved(err error) bool {
	var m errMoved
	return errors.As(err, &m)
}

// writeTicket is a write admitted into an active partition.
type writeTicket struct {
	s       *slot
	epoch   uint64
	backups []string
}

// enterWrite waits until the partition is active here and no hand-over
// holds writes, then counts the write in. It fails with errMoved when
// this member is not (or no longer) the owner.
func (s *slot) enterWrite(ctx context.Context) (writeTicket, error) {
	s.mu.Lock()
	for {
		switch {
		case s.st == stActive && s.hold == 0:
			s.writers++
			t := writeTicket{s: s, epoch: s.epoch, backups: s.backups}
			s.mu.Unlock()
			return t, nil
		case s.st != stActive && s.st != stAcquiring:
			s.mu.Unlock()
			return writeTicket{}, errMoved{s.id}
		}
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return writeTicket{}, ctx.Err()
		case <-s.closed:
			return writeTicket{}, ErrClosed
		}
		s.mu.Lock()
	}
}

func (t writeTicket) done() {
	s := t.s
	s.mu.Lock()
	s.writers--
	if s.writers == 0 && s.hold > 0 {
		s.notify()
	}
	s.mu.Unlock()
}

// enterRead waits until the partition is active here.
func (s *slot) enterRead(ctx context.Context) error {
	s.mu.Lock()
	for {
		switch s.st {
		case stActive:
			s.mu.Unlock()
			return nil
		case stAcquiring:
		default:
			s.mu.Unlock()
			return errMoved{s.id}
		}
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-s.closed:
			return ErrClosed
		}
		s.mu.Lock()
	}
}

// holdWrites stops new writes and waits for those in flight. s.mu held on
// entry and on return (it is released while waiting).
func (s *slot) holdWritesLocked(ctx context.Context) error {
	s.hold++
	for s.writers > 0 {
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			s.mu.Lock()
			s.hold--
			s.notify()
			return ctx.Err()
		}
		s.mu.Lock()
	}
	return nil
}

// releaseWrites undoes holdWrites. s.mu held.
func (s *slot) releaseWritesLocked() {
	s.hold--
	s.notify()
}

// dataKindLocked is what this member holds of the partition as a source
// for its own acquisition: what it was before it started acquiring.
// joined is when the table put this member in the replica set (-1: not
// in it).
func (s *slot) dataKindLocked(joined int64) int {
	if s.st != stAcquiring {
		return s.holdKindLocked(joined)
	}
	switch {
	case s.prev == stHeld || s.prev == stActive:
		return holdHeld
	case s.prev == stBackup && s.validCopy(joined):
		return holdBackup
	}
	return holdNone
}

// validCopy reports whether a backup's copy has every acknowledged
// write: it was filled, and not before it last joined the replica set
// (had it left, the owner went on without it).
func (s *slot) validCopy(joined int64) bool {
	return s.synced && joined >= 0 && s.filledTV >= joined
}

// holdKindLocked is what status reports of this slot.
func (s *slot) holdKindLocked(joined int64) int {
	switch s.st {
	case stActive:
		return holdActive
	case stHeld:
		return holdHeld
	case stAcquiring:
		return holdAcquire
	case stBackup:
		if s.validCopy(joined) {
			return holdBackup
		}
		return holdUnsynced
	}
	return holdNone
}
