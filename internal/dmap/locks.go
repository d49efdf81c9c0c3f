package dmap

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/partition"
)

// Per-key locks. The locks of map M are the entries of a companion map,
// lockMapName(M), that is held, routed and replicated like any other map
// but has no store: a lock lives on the key's partition owner (the same
// partition as the key, since the key is the same), is applied on every
// sync backup before Lock returns, and travels in the fills of a
// migration or take-over, so it survives fail-over; a full restart finds
// nothing locked. Each lock entry names its holder (a caller-chosen owner
// id and the member it called through), a reentrancy count and the end of
// its lease. The owner decides every lock operation (opLock) on its own
// clock; a lock whose lease ended, or whose holder's member left the
// owner's view, counts as free at once, and is cleared by the next
// operation on it or the owner's next sweep (sweepLocks).
//
// A lock's fencing token is the version of the write that acquired it:
// versions grow per partition, and a new owner starts a higher epoch, so
// tokens of one key only ever grow, also across fail-over.

// lockPrefix starts the name of a map's lock map. User map names cannot
// start with a dot (ValidMapName), so no user map is ever a lock map.
const lockPrefix = ".locks/"

// DefaultLockLease bounds a lock taken with no lease of its own.
const DefaultLockLease = 5 * time.Minute

// Errors of lock calls.
var (
	// ErrNotLockHolder: Unlock by an owner that does not hold the lock
	// (never took it, or its lease ended).
	ErrNotLockHolder = errors.New("stowage: the lock is not held by this owner")
	// ErrNoLockOwner: a lock call whose context carries no lock owner
	// (WithLockOwner).
	ErrNoLockOwner = errors.New("stowage: no lock owner in the context")
)

func lockMapName(name string) string { return lockPrefix + name }

// lockBase returns the map whose locks the named map holds.
func lockBase(name string) (string, bool) { return strings.CutPrefix(name, lockPrefix) }

// checkName accepts a user map's name and the name of its lock map.
func checkName(name string) error {
	if base, ok := lockBase(name); ok {
		return ValidMapName(base)
	}
	return ValidMapName(name)
}

// lockSpec is how a lock map is held: memory only, with as many sync
// backups as the partition table keeps (at least those of any map).
func (e *Engine) lockSpec() MapSpec {
	return MapSpec{SyncBackups: max(e.cfg.Replicas-1, 0)}
}

type lockOwnerKey struct{}

// WithLockOwner returns ctx carrying the lock owner id: the lock calls
// made with it act for that owner, and its writes pass the owner's locks.
func WithLockOwner(ctx context.Context, owner string) context.Context {
	return context.WithValue(ctx, lockOwnerKey{}, owner)
}

// LockOwner returns the lock owner ctx carries ("" if none).
func LockOwner(ctx context.Context) string {
	s, _ := ctx.Value(lockOwnerKey{}).(string)
	return s
}

// Lock operation kinds (lockReq.Op).
const (
	lockAcquire = iota + 1
	lockRelease
	lockForce // release whoever holds it
	lockQuery // clear a stale lock; report a live one
)

// lockReq is an opLock's value: what the owner is asked to do.
type lockReq struct {
	Op     int
	Owner  string
	Member string // the member the holder calls through
	Lease  int64  // nanoseconds
	// ID names the call: routed again after a fail-over, it may reach an
	// owner that already applied it, which then answers as it did.
	ID string
}

// lockState is a lock entry's value.
type lockState struct {
	Owner  string
	Member string
	Count  int   // 0: released (kept to answer a repeated release)
	Until  int64 // end of the lease (released: of the keeping), Unix nanoseconds on the owner's clock
	Req    string
}

// Both travel as varints and length-prefixed strings (lockcodec.go).
func (r lockReq) encode() []byte {
	return appendLockFields(nil, int64(r.Op), r.Lease, r.Owner, r.Member, r.ID)
}

func decodeLockReq(b []byte) (lockReq, error) {
	op, lease, owner, member, id, err := lockFields(b)
	return lockReq{Op: int(op), Lease: lease, Owner: owner, Member: member, ID: id}, err
}

func (st lockState) encode() []byte {
	return appendLockFields(nil, int64(st.Count), st.Until, st.Owner, st.Member, st.Req)
}

func decodeLockState(b []byte) (lockState, error) {
	n, until, owner, member, id, err := lockFields(b)
	return lockState{Count: int(n), Until: until, Owner: owner, Member: member, Req: id}, err
}

// liveLock decodes a lock entry and reports whether it still holds: its
// lease has not ended and its member is in this member's view.
func (e *Engine) liveLock(val []byte, now time.Time) (lockState, bool) {
	st, err := decodeLockState(val)
	if err != nil || st.Count <= 0 || now.UnixNano() >= st.Until {
		return st, false
	}
	for _, m := range e.proto.View().Members() {
		if m.ID == st.Member {
			return st, true
		}
	}
	return st, false
}

// lockDecider returns the owner's decision for an opLock whose value is
// b. The decision writes (Write) exactly when the operation succeeded:
// acquired, released, or (lockQuery) cleared a stale lock.
func (e *Engine) lockDecider(b []byte) func(old []byte, ok bool) Decision {
	req, err := decodeLockReq(b)
	return func(old []byte, ok bool) Decision {
		if err != nil {
			return Decision{}
		}
		now := time.Now()
		st, live := lockState{}, false
		if ok {
			st, live = e.liveLock(old, now)
		}
		// The same call again (routed again after a fail-over, having
		// taken effect at the old owner): it succeeds without taking
		// effect twice.
		again := ok && req.ID != "" && st.Req == req.ID && st.Owner == req.Owner
		switch req.Op {
		case lockAcquire:
			if again && live {
				return Decision{Write: true, Value: old}
			}
			if live && st.Owner != req.Owner {
				return Decision{}
			}
			lease := time.Duration(req.Lease)
			if lease <= 0 {
				lease = DefaultLockLease
			}
			n := 1
			if live {
				n = st.Count + 1
			}
			v := lockState{Owner: req.Owner, Member: req.Member, Count: n, Until: now.Add(lease).UnixNano(), Req: req.ID}.encode()
			return Decision{Write: true, Value: v}
		case lockRelease:
			if again {
				return Decision{Write: true, Value: old}
			}
			if !live || st.Owner != req.Owner {
				return Decision{}
			}
			st.Count--
			st.Req = req.ID
			if st.Count == 0 {
				// Released: kept, with the call's id, for releasedKeep
				// (Until now says until when), so that the same release
				// routed again after a fail-over still succeeds.
				st.Until = now.Add(releasedKeep).UnixNano()
			}
			return Decision{Write: true, Value: st.encode()}
		case lockForce:
			return Decision{Write: ok, Delete: true}
		case lockQuery:
			kept := st.Count == 0 && now.UnixNano() < st.Until
			return Decision{Write: ok && !live && !kept, Delete: true}
		}
		return Decision{}
	}
}

// lockedByOther reports, on the key's owner, whether a live lock of map
// c's key is held by an owner other than owner, and until when.
func (c *heldMap) lockedByOther(key []byte, owner string) (bool, time.Time) {
	if _, ok := lockBase(c.name); ok {
		return false, time.Time{}
	}
	lc := c.locks.Load()
	if lc == nil {
		return false, time.Time{}
	}
	pt := lc.partOf(key)
	if c.n.repl.Replica(pt.id).State() != partition.Active {
		// Not the owner (any more): the write is routed to the owner,
		// which looks at its locks; a copy here may be stale.
		return false, time.Time{}
	}
	pt.mu.Lock()
	e, ok := pt.entries[string(key)]
	pt.mu.Unlock()
	if !ok {
		return false, time.Time{}
	}
	st, live := c.n.liveLock(e.val(), time.Now())
	if !live || (owner != "" && st.Owner == owner) {
		return false, time.Time{}
	}
	return true, time.Unix(0, st.Until)
}

// lockPoll is the longest a write waits before it looks at a lock again
// (a lock released, or its member gone, frees the key before its lease
// ends).
const lockPoll = 10 * time.Millisecond

// waitUnlocked waits, on the key's owner, until no owner but owner holds
// a lock of the key: writes by others wait for the lock's release or the
// end of its lease, bounded by ctx.
func (c *heldMap) waitUnlocked(ctx context.Context, key []byte, owner string) error {
	delay := time.Millisecond
	for {
		locked, until := c.lockedByOther(key, owner)
		if !locked {
			return nil
		}
		d := min(delay, time.Until(until))
		delay = min(2*delay, lockPoll)
		t := time.NewTimer(max(d, 0))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("stowage: map %q: waiting for a lock of the key: %w", c.name, ctx.Err())
		case <-c.n.proto.Context().Done():
			t.Stop()
			return ErrClosed
		}
	}
}

// enterWrite enters a write of key into partition p on its owner once the
// owner's lease holds and no owner but owner holds a lock of the key. It
// waits for both without a write ticket, and checks the lock again with
// it (a partition that was being taken over has its locks only then).
func (c *heldMap) enterWrite(ctx context.Context, p *fragment, key []byte, owner string) (partition.WriteTicket, error) {
	for {
		if err := c.waitUnlocked(ctx, key, owner); err != nil {
			return partition.WriteTicket{}, err
		}
		if err := c.n.ensureLease(ctx, p.id); err != nil {
			return partition.WriteTicket{}, err
		}
		t, err := c.n.repl.Replica(p.id).EnterWrite(ctx)
		if err != nil {
			return partition.WriteTicket{}, err
		}
		if locked, _ := c.lockedByOther(key, owner); !locked {
			return t, nil
		}
		t.Done()
	}
}

// callID returns a new id of a lock call.
func callID() string {
	var b [12]byte
	rand.Read(b[:])
	return string(b[:])
}

// Fence is a lock's fencing token: the version of the write that took
// the lock. Tokens of one key grow with every acquisition.
type Fence = mapstore.Version

// lockMap returns the lock map of m, held here.
func (m *Map) lockMap(ctx context.Context) (*heldMap, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.forgetDestroyed()
	if m.lk == nil {
		lk, err := m.n.hold(ctx, lockMapName(m.name))
		if err != nil {
			return nil, err
		}
		m.lk = lk
	}
	return m.lk, nil
}

// lockOp runs one lock operation at the key's owner.
func (m *Map) lockOp(ctx context.Context, key []byte, req lockReq) (opResult, error) {
	lc, err := m.lockMap(ctx)
	if err != nil {
		return opResult{}, err
	}
	return m.n.do(ctx, lc, key, &op{kind: opLock, val: req.encode()})
}

// TryLock takes the lock of key for the owner ctx carries, waiting at
// most wait (negative: until ctx ends) while another owner holds it; the
// lock holds until Unlock or the end of lease (0: DefaultLockLease). The
// same owner may take it again (reentrant: each Lock needs an Unlock,
// and the lease starts again). It returns the fencing token and whether
// the lock was taken.
func (m *Map) TryLock(ctx context.Context, key []byte, wait, lease time.Duration) (Fence, bool, error) {
	owner := LockOwner(ctx)
	if owner == "" {
		return Fence{}, false, fmt.Errorf("stowage: map %q: %w", m.name, ErrNoLockOwner)
	}
	req := lockReq{Op: lockAcquire, Owner: owner, Member: m.n.Self(), Lease: int64(lease), ID: callID()}
	var end time.Time
	if wait >= 0 {
		end = time.Now().Add(wait)
	}
	delay := time.Millisecond
	for {
		res, err := m.lockOp(ctx, key, req)
		if err != nil {
			return Fence{}, false, err
		}
		if res.wrote {
			return res.ver, true, nil
		}
		d := delay
		if !end.IsZero() {
			left := time.Until(end)
			if left <= 0 {
				return Fence{}, false, nil
			}
			d = min(d, left)
		}
		delay = min(2*delay, lockPoll)
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return Fence{}, false, fmt.Errorf("stowage: map %q: waiting for a lock: %w", m.name, ctx.Err())
		}
	}
}

// Unlock releases one hold of key's lock by the owner ctx carries; it
// fails with ErrNotLockHolder when that owner does not hold it, and with
// ErrIndeterminate when the key's owner failed while answering and the
// call, routed again, found the lock no longer held by that owner (it may
// have released it the first time).
func (m *Map) Unlock(ctx context.Context, key []byte) error {
	owner := LockOwner(ctx)
	if owner == "" {
		return fmt.Errorf("stowage: map %q: %w", m.name, ErrNoLockOwner)
	}
	res, err := m.lockOp(ctx, key, lockReq{Op: lockRelease, Owner: owner, ID: callID()})
	if err != nil {
		return err
	}
	if !res.wrote && res.rerouted {
		// The first owner may have released it before it went away, and
		// another owner may have taken the lock since: the release this
		// call repeated is then no longer the entry's last.
		return fmt.Errorf("stowage: map %q: unlock: %w", m.name, ErrIndeterminate)
	}
	if !res.wrote {
		return fmt.Errorf("stowage: map %q: unlock: %w", m.name, ErrNotLockHolder)
	}
	return nil
}

// ForceUnlock releases key's lock whoever holds it; it reports whether
// there was a lock entry.
func (m *Map) ForceUnlock(ctx context.Context, key []byte) (bool, error) {
	res, err := m.lockOp(ctx, key, lockReq{Op: lockForce})
	return res.wrote, err
}

// IsLocked reports whether a live lock of key is held (by anyone).
func (m *Map) IsLocked(ctx context.Context, key []byte) (bool, error) {
	res, err := m.lockOp(ctx, key, lockReq{Op: lockQuery})
	if err != nil || !res.had || res.wrote {
		return false, err
	}
	// Left in place: a live lock, or a release still kept.
	st, err := decodeLockState(res.old)
	return err == nil && st.Count > 0, nil
}

// releasedKeep is how long a released lock's entry stays, with the id of
// the call that released it: an Unlock whose answer was lost when the
// owner died is routed again to the new owner, which must answer it as
// the old one did rather than with ErrNotLockHolder. Sweeps at a change
// of the members, which follow such a death, leave it alone.
var releasedKeep = time.Minute

// lockSweep is how often an owner clears the lock entries that no longer
// hold (lease ended, member gone, released), besides at every change of
// the members.
const lockSweep = 10 * time.Second

// sweepLocks clears, on the partitions this member owns, the lock entries
// that no longer hold, until the engine stops: so the locks of a member
// that left, and released keys' entries, take no memory for long.
func (e *Engine) sweepLocks() {
	ctx := e.proto.Context()
	t := time.NewTicker(lockSweep)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-e.proto.View().Changed():
		}
		e.clearStaleLocks(ctx)
	}
}

// clearStaleLocks clears the stale lock entries of owned partitions, each
// through the owner's write path (so the backups clear them too).
func (e *Engine) clearStaleLocks(ctx context.Context) {
	query := lockReq{Op: lockQuery}.encode()
	for _, lc := range e.heldMaps() {
		if _, ok := lockBase(lc.name); !ok {
			continue
		}
		now := time.Now()
		for _, pt := range lc.parts {
			if e.repl.Replica(pt.id).State() != partition.Active {
				continue
			}
			var stale []string
			pt.mu.Lock()
			for k, en := range pt.entries {
				if _, live := e.liveLock(en.val(), now); !live {
					stale = append(stale, k)
				}
			}
			pt.mu.Unlock()
			for _, k := range stale {
				octx, cancel := context.WithTimeout(ctx, e.cfg.OpTimeout)
				_, err := lc.update(octx, []byte(k), &op{kind: opLock, val: query})
				cancel()
				if err != nil {
					break // moved, or closing: the next owner sweeps
				}
			}
		}
	}
}
