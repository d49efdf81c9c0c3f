package dmap

import (
	"context"
	"testing"
	"time"

	"github.com/stowage/stowage/cluster"
)

// lockEntries counts the lock entries this engine holds of map name.
func lockEntries(e *Engine, name string) int {
	lc := e.held(lockMapName(name))
	if lc == nil {
		return 0
	}
	n := 0
	for _, pt := range lc.parts {
		n += lc.size(pt)
	}
	return n
}

// A change of the members sweeps the lock entries that no longer hold
// (here: a released lock's entry kept long enough, and a lock whose lease
// ended).
func TestStaleLocksSwept(t *testing.T) {
	defer func(d time.Duration) { releasedKeep = d }(releasedKeep)
	releasedKeep = time.Millisecond
	self := cluster.Member{ID: "m1", Addr: "m1"}
	view := cluster.NewStaticView(self)
	e := New(Config{View: view, Replicas: 1, StartMin: 1, OpTimeout: 10 * time.Second})
	defer e.Close()
	e.Start()
	ctx := WithLockOwner(context.Background(), "A")
	m, err := e.Map(ctx, "jobs")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := m.TryLock(ctx, []byte("k1"), time.Second, time.Minute); err != nil || !ok {
		t.Fatalf("TryLock: %v, %v", ok, err)
	}
	if err := m.Unlock(ctx, []byte("k1")); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := m.TryLock(ctx, []byte("k2"), time.Second, time.Millisecond); err != nil || !ok {
		t.Fatalf("TryLock: %v, %v", ok, err)
	}
	if _, ok, err := m.TryLock(ctx, []byte("k3"), time.Second, time.Hour); err != nil || !ok {
		t.Fatalf("TryLock: %v, %v", ok, err)
	}
	if n := lockEntries(e, "jobs"); n != 3 {
		t.Fatalf("%d lock entries, want 3 (a released one, two held)", n)
	}
	time.Sleep(2 * time.Millisecond) // k2's lease ends
	view.Set(self)
	deadline := time.Now().Add(30 * time.Second)
	for lockEntries(e, "jobs") != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("%d lock entries left, want 1 (k3's)", lockEntries(e, "jobs"))
		}
		time.Sleep(5 * time.Millisecond)
	}
	if locked, err := m.IsLocked(ctx, []byte("k3")); err != nil || !locked {
		t.Fatalf("k3 locked: %v, %v", locked, err)
	}
}

// A release whose answer was lost in a fail-over is routed again to the
// new owner, after the sweep that the change of the members started: it
// still succeeds.
func TestRepeatedReleaseSurvivesTheSweep(t *testing.T) {
	self := cluster.Member{ID: "m1", Addr: "m1"}
	view := cluster.NewStaticView(self)
	e := New(Config{View: view, Replicas: 1, StartMin: 1, OpTimeout: 10 * time.Second})
	defer e.Close()
	e.Start()
	ctx := WithLockOwner(context.Background(), "A")
	m, err := e.Map(ctx, "jobs")
	if err != nil {
		t.Fatal(err)
	}
	k := []byte("k1")
	if _, ok, err := m.TryLock(ctx, k, time.Second, time.Minute); err != nil || !ok {
		t.Fatalf("TryLock: %v, %v", ok, err)
	}
	release := lockReq{Op: lockRelease, Owner: "A", ID: "release-1"}
	if res, err := m.lockOp(ctx, k, release); err != nil || !res.wrote {
		t.Fatalf("release: %v, %v", res.wrote, err)
	}
	e.clearStaleLocks(ctx)
	if n := lockEntries(e, "jobs"); n != 1 {
		t.Fatalf("%d lock entries after the sweep, want the released one kept", n)
	}
	if locked, err := m.IsLocked(ctx, k); err != nil || locked {
		t.Fatalf("a released key reads as locked: %v, %v", locked, err)
	}
	if res, err := m.lockOp(ctx, k, release); err != nil || !res.wrote {
		t.Fatalf("the same release again after the sweep: %v, %v", res.wrote, err)
	}
}
