package stowage_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stowage/stowage"
	"github.com/stowage/stowage/partition"
)

// ownerOf is the member owning string key k in via's table.
func ownerOf(t *testing.T, via *tmember, k string) string {
	t.Helper()
	return via.node.Owner(partition.Of([]byte(k), partition.DefaultCount))
}

// bulkServed returns, per live member, the bulk calls it served for
// other members and the keys they carried.
func bulkServed(t *testing.T, tc *tcluster) (calls, keys map[string]float64) {
	t.Helper()
	calls, keys = map[string]float64{}, map[string]float64{}
	for _, m := range tc.live() {
		calls[m.id] = counter(t, m.node.Gatherer(), "stowage_bulk_calls_served_total")
		keys[m.id] = counter(t, m.node.Gatherer(), "stowage_bulk_keys_served_total")
	}
	return calls, keys
}

// PutAll, GetAll and RemoveAll against three members send one call to
// each other member, carrying every key that member owns (the caller
// runs its own keys itself), and each entry is durable and backed up as
// after a single Put.
func TestClusterBulkOneCallPerMember(t *testing.T) {
	dir := t.TempDir()
	tc := newTCluster(t, sharedConfig(t, dir, 1, 3))
	for i := 0; i < 3; i++ {
		tc.add()
	}
	tc.waitLoaded()
	ctx := context.Background()
	ms := tc.live()
	const n = 300
	const name = "engine_bulk"
	entries := make([]stowage.Entry[string, string], n)
	keys := make([]string, n)
	for i := range entries {
		keys[i] = fmt.Sprintf("k%03d", i)
		entries[i] = stowage.Entry[string, string]{Key: keys[i], Value: "v" + keys[i]}
	}

	// check runs op on keys through via and checks that every other
	// member served exactly one more call, with those of keys it owns.
	check := func(what string, via *tmember, keys []string, op func(m *stowage.Map[string, string]) error) {
		t.Helper()
		calls0, keys0 := bulkServed(t, tc)
		if err := op(strMap(t, via.node, name)); err != nil {
			t.Fatalf("%s via %s: %v", what, via.id, err)
		}
		calls1, keys1 := bulkServed(t, tc)
		for _, m := range ms {
			wantCalls := 1.0
			if m == via {
				wantCalls = 0
			}
			if got := calls1[m.id] - calls0[m.id]; got != wantCalls {
				t.Errorf("%s via %s: %s served %v bulk calls, want %v", what, via.id, m.id, got, wantCalls)
			}
			if m == via {
				continue
			}
			owned := 0
			for _, k := range keys {
				if ownerOf(t, via, k) == m.id {
					owned++
				}
			}
			if got := keys1[m.id] - keys0[m.id]; got != float64(owned) {
				t.Errorf("%s via %s: %s was sent %v keys, owns %d of them", what, via.id, m.id, got, owned)
			}
		}
	}

	check("PutAll", ms[0], keys, func(m *stowage.Map[string, string]) error { return m.PutAll(ctx, entries) })
	owned, backups := held(tc, name)
	if owned != n || backups != n {
		t.Fatalf("after PutAll: %d entries owned, %d backed up; want %d each", owned, backups, n)
	}
	withMissing := append(append([]string(nil), keys...), "missing")
	check("GetAll", ms[1], withMissing, func(m *stowage.Map[string, string]) error {
		got, err := m.GetAll(ctx, withMissing)
		if err != nil {
			return err
		}
		if len(got) != n {
			return fmt.Errorf("%d entries, want %d", len(got), n)
		}
		for i, e := range got {
			if e.Key != keys[i] || e.Value != "v"+keys[i] {
				return fmt.Errorf("entry %d = %v", i, e)
			}
		}
		return nil
	})
	check("RemoveAll", ms[2], keys[:n/2], func(m *stowage.Map[string, string]) error {
		removed, err := m.RemoveAll(ctx, keys[:n/2])
		if err == nil && removed != n/2 {
			err = fmt.Errorf("removed %d, want %d", removed, n/2)
		}
		return err
	})
	if owned, backups := held(tc, name); owned != n/2 || backups != n/2 {
		t.Fatalf("after RemoveAll: %d entries owned, %d backed up; want %d each", owned, backups, n/2)
	}

	// Durable: a full restart loads what PutAll and RemoveAll left.
	for _, m := range tc.live() {
		tc.kill(m)
	}
	again := newTCluster(t, sharedConfig(t, dir, 1, 3))
	for i := 0; i < 3; i++ {
		again.add()
	}
	again.waitLoaded()
	m := strMap(t, again.live()[0].node, name)
	for i, k := range keys {
		v, ok, err := m.Get(ctx, k)
		if err != nil || ok != (i >= n/2) || ok && v != "v"+k {
			t.Fatalf("%s after restart = %q, %v, %v", k, v, ok, err)
		}
	}
}

// A PutAll whose call to a member fails because that member died
// reaches the new owners of its partitions: the keys sent to the dead
// member are routed again once the table changes, and nothing is lost.
func TestClusterBulkAfterMemberDies(t *testing.T) {
	dir := t.TempDir()
	tc := newTCluster(t, sharedConfig(t, dir, 1, 3))
	for i := 0; i < 3; i++ {
		tc.add()
	}
	tc.waitLoaded()
	ctx := context.Background()
	const n = 300
	entries := make([]stowage.Entry[string, string], n)
	keys := make([]string, n)
	for i := range entries {
		keys[i] = fmt.Sprintf("k%03d", i)
		entries[i] = stowage.Entry[string, string]{Key: keys[i], Value: "v" + keys[i]}
	}
	via, dead := tc.live()[0], tc.live()[2]
	// The bulk call to the member that is about to die is not delivered
	// (it died first); the test kills it once the call was tried.
	reached := make(chan struct{})
	var once sync.Once
	tc.net.SetHook(func(_, to, method string) error {
		if to == dead.id && method == "bulk" {
			once.Do(func() { close(reached) })
			return errors.New("the member died")
		}
		return nil
	})
	defer tc.net.SetHook(nil)
	errc := make(chan error, 1)
	m := strMap(t, via.node, "engine_bulk")
	go func() { errc <- m.PutAll(ctx, entries) }()
	<-reached
	tc.kill(dead)
	if err := <-errc; err != nil {
		t.Fatalf("PutAll while a member died: %v", err)
	}
	got, err := strMap(t, tc.live()[1].node, "engine_bulk").GetAll(ctx, keys)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("GetAll found %d of %d entries", len(got), n)
	}
	if owned, _ := held(tc, "engine_bulk"); owned != n {
		t.Fatalf("%d entries owned by the two live members, want %d", owned, n)
	}
}
