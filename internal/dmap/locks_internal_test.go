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
// (here: a released lock's entry, and a lock whose lease ended).
func TestStaleLocksSwept(t *testing.T) {
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
