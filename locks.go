package stowage

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/stowage/stowage/internal/dmap"
)

// Per-key locks (Hazelcast's IMap.lock, tryLock, unlock, isLocked,
// forceUnlock).
//
// The holder of a lock is a lock owner: a string the caller chooses (or
// takes from NewLockOwner) and carries in the context with WithLockOwner.
// Go has no thread identity, so the owner id is what Hazelcast's thread
// is: every call with the same owner id acts for the same holder, on any
// member and from any goroutine. Locks are reentrant for their owner:
// each Lock or successful TryLock adds one hold, each Unlock removes one,
// and the key is free when none is left. The lease (the end of the lock
// if it is not unlocked) starts again with every acquisition.
//
// A lock lives on the key's partition owner and is applied on the
// partition's sync backups before Lock returns, so it survives the
// owner's failure and the partition's migration. The locks taken through
// a member that left the cluster (crashed, or cut off) are released as
// soon as the partition's owner sees it gone. Locks are not persisted: a
// full restart of the cluster finds nothing locked.
//
// While a key is locked, writes to it (Put, Set, Remove, Compute, ...)
// by any other owner, or with no owner in the context, wait until it is
// unlocked or its lease ends, bounded by their context; the holder's own
// writes (ctx carrying its owner) go ahead. Reads never wait.
//
// Each acquisition returns a FencingToken, larger than every token any
// earlier acquisition of the key got, also across fail-over (a new owner
// starts a new, higher epoch). A store or service guarded by the lock
// keeps the largest token it has seen and refuses work carrying a
// smaller one: that rejects a holder whose lease ran out while it
// paused.
//
// Leases are measured on the partition owner's clock; when a partition
// changes owner, the lock keeps its end time, so clock skew between the
// members lengthens or shortens a lease by that skew. Clocks order no
// writes.

// Errors of lock calls.
var (
	// ErrNotLockHolder: Unlock by an owner that does not hold the lock
	// (it never took it, or its lease ended, or it was force-unlocked).
	ErrNotLockHolder = dmap.ErrNotLockHolder
	// ErrNoLockOwner: Lock, TryLock or Unlock with a context that carries
	// no lock owner (WithLockOwner).
	ErrNoLockOwner = dmap.ErrNoLockOwner
)

// DefaultLockLease is the lease of a lock taken with lease 0: every lock
// ends at the latest when its lease does.
const DefaultLockLease = dmap.DefaultLockLease

// WithLockOwner returns ctx carrying lock owner id owner: lock calls made
// with it act for that owner, and its writes pass that owner's locks.
func WithLockOwner(ctx context.Context, owner string) context.Context {
	return dmap.WithLockOwner(ctx, owner)
}

// LockOwnerFrom returns the lock owner ctx carries ("" if none).
func LockOwnerFrom(ctx context.Context) string { return dmap.LockOwner(ctx) }

// NewLockOwner returns a new random lock owner id.
func NewLockOwner() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// FencingToken identifies one acquisition of a key's lock. Tokens of a
// key are totally ordered (Less) and grow with each acquisition.
type FencingToken struct {
	Epoch uint64 `json:"epoch"`
	Seq   uint64 `json:"seq"`
}

// Less reports whether t was issued before u (for the same key).
func (t FencingToken) Less(u FencingToken) bool {
	if t.Epoch != u.Epoch {
		return t.Epoch < u.Epoch
	}
	return t.Seq < u.Seq
}

// String is "epoch.seq".
func (t FencingToken) String() string { return fmt.Sprintf("%d.%d", t.Epoch, t.Seq) }

// Lock takes the lock of k for the owner ctx carries, waiting as long as
// ctx allows while another owner holds it; the lock ends at Unlock or
// after lease (0: DefaultLockLease).
func (m *Map[K, V]) Lock(ctx context.Context, k K, lease time.Duration) (FencingToken, error) {
	t, _, err := m.tryLock(ctx, k, -1, lease)
	return t, err
}

// TryLock is Lock waiting at most wait (0: not at all); it reports
// whether the lock was taken.
func (m *Map[K, V]) TryLock(ctx context.Context, k K, wait, lease time.Duration) (FencingToken, bool, error) {
	return m.tryLock(ctx, k, max(wait, 0), lease)
}

func (m *Map[K, V]) tryLock(ctx context.Context, k K, wait, lease time.Duration) (FencingToken, bool, error) {
	kb, err := m.key(k)
	if err != nil {
		return FencingToken{}, false, err
	}
	f, ok, err := m.m.TryLock(ctx, kb, wait, lease)
	return FencingToken{Epoch: f.Epoch, Seq: f.Seq}, ok, err
}

// Unlock releases one hold of k's lock by the owner ctx carries
// (ErrNotLockHolder if it holds none; ErrIndeterminate if the key's owner
// failed while answering and the repeated call no longer found the lock
// held by this owner: see docs/locks.md).
func (m *Map[K, V]) Unlock(ctx context.Context, k K) error {
	kb, err := m.key(k)
	if err != nil {
		return err
	}
	return m.m.Unlock(ctx, kb)
}

// IsLocked reports whether any owner holds k's lock.
func (m *Map[K, V]) IsLocked(ctx context.Context, k K) (bool, error) {
	kb, err := m.key(k)
	if err != nil {
		return false, err
	}
	return m.m.IsLocked(ctx, kb)
}

// ForceUnlock releases k's lock whoever holds it, all holds at once.
func (m *Map[K, V]) ForceUnlock(ctx context.Context, k K) error {
	kb, err := m.key(k)
	if err != nil {
		return err
	}
	_, err = m.m.ForceUnlock(ctx, kb)
	return err
}
