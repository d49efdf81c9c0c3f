package stowage_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/stowage/stowage"
	"github.com/stowage/stowage/config"
	"github.com/stowage/stowage/partition"
)

// counter reads a counter of a member's metrics.
func counter(t *testing.T, g prometheus.Gatherer, name string) float64 {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			total := 0.0
			for _, m := range mf.GetMetric() {
				total += m.GetCounter().GetValue()
			}
			return total
		}
	}
	return 0
}

// keyOwnedBy returns a key whose partition m owns.
func keyOwnedBy(t *testing.T, m *tmember) string {
	t.Helper()
	ci := m.node.Cluster(context.Background())
	_ = ci
	for i := 0; i < 100000; i++ {
		k := fmt.Sprintf("key-%d", i)
		if m.node.Owner(partition.Of([]byte(k), partition.DefaultCount)) == m.id {
			return k
		}
	}
	t.Fatalf("no key owned by %s", m.id)
	return ""
}

// A stale owner, cut off while the others promoted its partitions, cannot
// acknowledge a write: the backups of the newer epoch refuse its records,
// and the write goes to the new owner once the stale member learns the
// new table.
// keyHeldOnlyBy returns a key whose partition's replicas, in m's table,
// are all among ids.
func keyHeldOnlyBy(t *testing.T, m *tmember, among ...*tmember) string {
	t.Helper()
	ok := map[string]bool{}
	for _, x := range among {
		ok[x.id] = true
	}
	for i := 0; i < 100000; i++ {
		k := fmt.Sprintf("key-%d", i)
		all := true
		for _, id := range m.node.Replicas(partition.Of([]byte(k), partition.DefaultCount)) {
			all = all && ok[id]
		}
		if all {
			return k
		}
	}
	t.Fatalf("no key held only by %v", among)
	return ""
}

func TestClusterStaleOwnerRefused(t *testing.T) {
	tc := newTCluster(t, memoryConfig(2, 0))
	// Without the lease (TestClusterResumedOwnerServesNoStaleRead), so
	// that the stale owner does serve, and only the epochs fence it.
	tc.lease = -1
	m1, m2, m3 := tc.add(), tc.add(), tc.add()
	tc.waitLoaded()
	ctx := context.Background()
	k := keyOwnedBy(t, m3)
	if err := strMap(t, m1.node, "jobs").Put(ctx, k, "v1"); err != nil {
		t.Fatal(err)
	}
	// m3 is cut off; m1 and m2 see it fail, m3 sees nothing.
	tc.net.Isolate(m3.id)
	tc.setView(m1, m1, m2)
	tc.setView(m2, m1, m2)
	waitUntil(t, func() bool { return m1.node.Loaded() && m2.node.Loaded() })
	if err := strMap(t, m1.node, "jobs").Put(ctx, k, "v2"); err != nil {
		t.Fatalf("write at the new owner: %v", err)
	}
	// Cut off, m3 cannot get a write acknowledged.
	sctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	err := strMap(t, m3.node, "jobs").Put(sctx, k, "lost")
	cancel()
	if err == nil {
		t.Fatal("an isolated stale owner acknowledged a write")
	}
	// The links heal; m3 still believes it owns the partition. Its next
	// record is refused by the backups, it learns the new table, and the
	// write lands at the new owner.
	tc.net.HealAll()
	before := counter(t, m3.node.Gatherer(), "stowage_backup_refused_total")
	if err := strMap(t, m3.node, "jobs").Put(ctx, k, "v3"); err != nil {
		t.Fatalf("write through the stale member after healing: %v", err)
	}
	if got := counter(t, m3.node.Gatherer(), "stowage_backup_refused_total"); got <= before {
		t.Fatalf("no backup refused the stale owner's record (refusals %v -> %v)", before, got)
	}
	for _, m := range []*tmember{m1, m2} {
		if v, ok, err := strMap(t, m.node, "jobs").Get(ctx, k); err != nil || !ok || v != "v3" {
			t.Fatalf("%s reads %q, %v, %v; want v3", m.id, v, ok, err)
		}
	}
	if o := m1.node.Owner(partition.Of([]byte(k), partition.DefaultCount)); o == m3.id {
		t.Fatalf("m3 still owns the partition in m1's table")
	}
}

// A backup that missed writes (the owner saw it fail and went on alone)
// is filled again when it is back, so it can take over later with every
// acknowledged write.
func TestClusterBackupResynced(t *testing.T) {
	tc := newTCluster(t, memoryConfig(1, 0))
	m1, m2 := tc.add(), tc.add()
	tc.waitLoaded()
	ctx := context.Background()
	m := strMap(t, m1.node, "jobs")
	for i := 0; i < 200; i++ {
		if err := m.Put(ctx, fmt.Sprintf("k%d", i), "before"); err != nil {
			fatalDump(t, "put k%d: %v", i, err)
		}
	}
	// The link breaks: m1 believes m2 failed and serves everything alone;
	// m2, which hears nothing, goes on believing it owns its partitions,
	// and misses the writes of this phase.
	tc.net.CutBoth(m1.id, m2.id)
	tc.setView(m1, m1)
	waitUntil(t, func() bool { return m1.node.Loaded() })
	for i := 0; i < 200; i++ {
		if err := m.Put(ctx, fmt.Sprintf("k%d", i), "during"); err != nil {
			fatalDump(t, "put k%d: %v", i, err)
		}
	}
	// The link heals and m2 is seen again: it gets partitions (some it
	// believes it never lost) and backups back, filled from m1's copies.
	tc.net.HealAll()
	tc.setView(m1, m1, m2)
	waitUntil(t, func() bool { return m1.node.Safe(ctx) && m1.node.Cluster(ctx).PartitionsPerMember[m2.id] > 0 })
	// Now m1 dies: m2 must have every write of both phases.
	tc.kill(m1)
	waitUntil(t, func() bool { return m2.node.Loaded() })
	m2m := strMap(t, m2.node, "jobs")
	for i := 0; i < 200; i++ {
		if v, ok, err := m2m.Get(ctx, fmt.Sprintf("k%d", i)); err != nil || !ok || v != "during" {
			t.Fatalf("k%d = %q, %v, %v after the resynced backup took over; want during", i, v, ok, err)
		}
	}
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(longStop)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s", longStop)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Split-brain protection: a map whose split-brain-protection needs three
// members refuses writes (and keeps its data) while a member sees fewer,
// the table does not change meanwhile, and writes are taken again once the
// cluster is whole.
func TestClusterSplitBrainProtection(t *testing.T) {
	cfg := func() *config.Config {
		c, err := config.Parse(nil, []byte(`hazelcast:
  cluster-name: t
  split-brain-protection:
    three:
      enabled: true
      minimum-cluster-size: 3
  map:
    protected:
      split-brain-protection-ref: three
`))
		if err != nil {
			panic(err)
		}
		return c
	}
	tc := newTCluster(t, cfg)
	m1, m2, m3 := tc.add(), tc.add(), tc.add()
	tc.waitLoaded()
	ctx := context.Background()
	if err := strMap(t, m1.node, "protected").Put(ctx, "k", "v1"); err != nil {
		t.Fatal(err)
	}
	// m3 is cut off and seen failed: two members are left.
	before := m1.node.PartitionTable().Version
	tc.net.Isolate(m3.id)
	tc.setView(m1, m1, m2)
	tc.setView(m2, m1, m2)
	tc.setView(m3, m3)
	waitUntil(t, func() bool { return m1.node.Loaded() && m2.node.Loaded() })
	for _, m := range []*tmember{m1, m2, m3} {
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := strMap(t, m.node, "protected").Put(sctx, "k", "lost")
		cancel()
		if !errors.Is(err, stowage.ErrNoQuorum) {
			t.Fatalf("write through %s with too few members: %v, want ErrNoQuorum", m.id, err)
		}
	}
	// Below the minimum the members keep their table: no side of a
	// split takes the others' partitions over (their copies would outrank
	// the majority's at the heal). Maps without protection go on where
	// the partition's owner and backups are all still there.
	if v := m1.node.PartitionTable().Version; v != before {
		t.Fatalf("the table moved from version %d to %d with fewer members than the protection's minimum", before, v)
	}
	if err := strMap(t, m1.node, "free").Put(ctx, keyHeldOnlyBy(t, m1, m1, m2), "v"); err != nil {
		t.Fatalf("an unprotected map refused a write: %v", err)
	}
	// The cluster is whole again: writes are taken, and the refused ones
	// left no trace.
	tc.net.HealAll()
	tc.publish()
	waitUntil(t, func() bool { return m1.node.Safe(ctx) })
	if v, ok, err := strMap(t, m2.node, "protected").Get(ctx, "k"); err != nil || !ok || v != "v1" {
		t.Fatalf("k = %q, %v, %v after the refused writes; want v1", v, ok, err)
	}
	if err := strMap(t, m3.node, "protected").Put(ctx, "k", "v2"); err != nil {
		t.Fatalf("write with the cluster whole again: %v", err)
	}
}

// A member that hung (its process stopped) while failure detection
// dropped it and its partitions moved, then resumed, still holds the old
// table and its old copies. Its lease ran out meanwhile (the lease is
// shorter than failure detection), so it asks before it serves, learns
// of the newer table and reads go to the new owner: no stale read.
func TestClusterResumedOwnerServesNoStaleRead(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lease time.Duration
		stale bool // what the read through the resumed member must show
	}{
		{"lease", 200 * time.Millisecond, false},
		// Without the lease the same scenario reads the old value: what
		// the lease is for.
		{"no lease", -1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newTCluster(t, memoryConfig(1, 0))
			c.lease = tc.lease
			m1, m2, m3 := c.add(), c.add(), c.add()
			c.waitLoaded()
			waitSafe(t, c)
			ctx := context.Background()
			k := keyOwnedBy(t, m3)
			p := partition.Of([]byte(k), partition.DefaultCount)
			if err := strMap(t, m1.node, "jobs").Put(ctx, k, "old"); err != nil {
				t.Fatal(err)
			}
			c.net.Freeze(m3.id)
			t.Cleanup(func() { c.net.Thaw(m3.id) })
			// Failure detection takes longer than the lease: that much
			// time passes before the others drop m3.
			time.Sleep(3 * max(tc.lease, 200*time.Millisecond))
			c.drop(m3) // m1 and m2 see it fail; m3 still sees them
			waitUntil(t, func() bool { return m1.node.Owner(p) != m3.id && m1.node.Loaded() && m2.node.Loaded() })
			if err := strMap(t, m1.node, "jobs").Put(ctx, k, "new"); err != nil {
				t.Fatalf("write at the new owner: %v", err)
			}
			c.net.Thaw(m3.id)
			if o := m3.node.Owner(p); o != m3.id {
				t.Fatalf("m3 learnt of the new table (owner %s) before it served: the scenario did not happen", o)
			}
			rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			v, ok, err := strMap(t, m3.node, "jobs").Get(rctx, k)
			if err != nil {
				t.Fatalf("read through the resumed member: %v", err)
			}
			switch {
			case tc.stale && v != "old":
				t.Fatalf("without a lease the resumed member read %q, %v; the scenario expects the stale \"old\"", v, ok)
			case !tc.stale && (!ok || v != "new"):
				t.Fatalf("the resumed member read %q, %v; the last acknowledged write is \"new\"", v, ok)
			}
			if !tc.stale {
				if o := m3.node.Owner(p); o == m3.id {
					t.Fatalf("m3 still owns partition %d after asking", p)
				}
			}
		})
	}
}
