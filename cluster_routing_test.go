package stowage_test

import (
	"context"
	"fmt"
	"testing"
)

// Every member serves every key: writes through any member land at the
// owner and its backup, and reads through any member see them.
func TestClusterRoutesAndBacksUp(t *testing.T) {
	tc := newTCluster(t, memoryConfig(1, 0))
	for i := 0; i < 3; i++ {
		tc.add()
	}
	tc.waitLoaded()
	ctx := context.Background()
	ms := tc.live()
	const keys = 600
	for i := 0; i < keys; i++ {
		m := strMap(t, ms[i%3].node, "jobs")
		if err := m.Put(ctx, fmt.Sprintf("k%d", i), fmt.Sprintf("v%d", i)); err != nil {
			t.Fatalf("put k%d via %s: %v", i, ms[i%3].id, err)
		}
	}
	for _, via := range ms {
		m := strMap(t, via.node, "jobs")
		for i := 0; i < keys; i += 7 {
			v, ok, err := m.Get(ctx, fmt.Sprintf("k%d", i))
			if err != nil || !ok || v != fmt.Sprintf("v%d", i) {
				t.Fatalf("get k%d via %s = %q, %v, %v", i, via.id, v, ok, err)
			}
		}
		if n, err := m.Size(ctx); err != nil || n != keys {
			t.Fatalf("size via %s = %d, %v; want %d", via.id, n, err, keys)
		}
	}
	owned, backups := 0, 0
	for _, m := range ms {
		for _, mi := range m.node.Maps() {
			if mi.Name == "jobs" {
				owned += mi.Size
				backups += mi.Backups
			}
		}
	}
	if owned != keys || backups != keys {
		t.Fatalf("entries held as owner %d and as backup %d, want %d each", owned, backups, keys)
	}
	// Conditional operations decide at the owner.
	m := strMap(t, ms[1].node, "jobs")
	if _, loaded, err := m.PutIfAbsent(ctx, "k1", "x"); err != nil || !loaded {
		t.Fatalf("PutIfAbsent on a present key: loaded %v, %v", loaded, err)
	}
	if v, ok, err := m.Compute(ctx, "k2", func(old string, ok bool) (string, bool) { return old + "+", true }); err != nil || !ok || v != "v2+" {
		t.Fatalf("Compute = %q, %v, %v", v, ok, err)
	}
	if old, removed, err := m.Remove(ctx, "k3"); err != nil || !removed || old != "v3" {
		t.Fatalf("Remove = %q, %v, %v", old, removed, err)
	}
	if _, ok, _ := strMap(t, ms[2].node, "jobs").Get(ctx, "k3"); ok {
		t.Fatal("k3 still there after Remove")
	}
}
