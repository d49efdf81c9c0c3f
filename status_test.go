package stowage_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stowage/stowage"
	"github.com/stowage/stowage/serde"
)

// A map's live bytes are its keys' and values' bytes over every owner.
func TestMapLiveBytesOverOwners(t *testing.T) {
	tc := newTCluster(t, memoryConfig(1, 0))
	for i := 0; i < 3; i++ {
		tc.add()
	}
	tc.waitLoaded()
	ctx := context.Background()
	n := tc.live()[0].node
	m, err := stowage.GetMap(ctx, n, "live", serde.String(), serde.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	want := int64(0)
	for i := range 200 {
		k, v := fmt.Sprintf("key-%d", i), make([]byte, i%37)
		if err := m.Put(ctx, k, v); err != nil {
			t.Fatal(err)
		}
		want += int64(len(k) + len(v))
	}
	got, _, err := tc.live()[2].node.MapLiveBytes(ctx, "live")
	if err != nil || got != want {
		t.Fatalf("live bytes of map live = %d, %v; want %d", got, err, want)
	}
	// Reused for a few seconds: a write now is not seen yet.
	if err := m.Put(ctx, "more", []byte("0123456789")); err != nil {
		t.Fatal(err)
	}
	if again, _, err := tc.live()[2].node.MapLiveBytes(ctx, "live"); err != nil || again != want {
		t.Fatalf("live bytes within the cache time = %d, %v; want the cached %d", again, err, want)
	}
	if fresh, _, err := tc.live()[1].node.MapLiveBytes(ctx, "live"); err != nil || fresh != want+14 {
		t.Fatalf("live bytes on another member = %d, %v; want %d", fresh, err, want+14)
	}
}

// After a member dies, any member's gathered take-overs include the
// promotions the survivors made, each naming the member that made it.
func TestClusterTakeOversGatherEveryMember(t *testing.T) {
	tc := newTCluster(t, memoryConfig(1, 0))
	for i := 0; i < 4; i++ {
		tc.add()
	}
	tc.waitLoaded()
	victim := tc.live()[3]
	killed := time.Now()
	tc.kill(victim)
	waitTableWithout(t, tc, victim.id)
	tc.waitLoaded()
	ctx := context.Background()
	want := map[string]int{} // member -> promotions it lists itself
	for _, m := range tc.live() {
		for _, to := range m.node.TakeOvers() {
			if to.Source == "promotion" && !to.At.Before(killed) {
				want[m.id]++
			}
		}
	}
	if len(want) < 2 {
		t.Fatalf("promotions of %s's partitions by member: %v, want at least two members promoting", victim.id, want)
	}
	for _, m := range tc.live() {
		ct := m.node.ClusterTakeOvers(ctx)
		if len(ct.Unanswered) != 0 {
			t.Errorf("%s: unanswered %v", m.id, ct.Unanswered)
		}
		got := map[string]int{}
		for i, to := range ct.TakeOvers {
			if i > 0 && to.At.After(ct.TakeOvers[i-1].At) {
				t.Errorf("%s: take-over %d (%v) newer than the one before (%v): not newest first", m.id, i, to.At, ct.TakeOvers[i-1].At)
			}
			if to.Source == "promotion" && !to.At.Before(killed) {
				got[to.Member]++
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s gathered promotions by member %v, want %v", m.id, got, want)
		}
	}
}

// A member that does not answer is named, and the others' take-overs are
// still listed.
func TestClusterTakeOversNameASilentMember(t *testing.T) {
	tc := newTCluster(t, memoryConfig(1, 0))
	for i := 0; i < 3; i++ {
		tc.add()
	}
	tc.waitLoaded()
	silent := tc.live()[2]
	silent.tr.Close() // membership still lists it
	ct := tc.live()[0].node.ClusterTakeOvers(context.Background())
	if fmt.Sprint(ct.Unanswered) != fmt.Sprint([]string{silent.id}) {
		t.Errorf("unanswered %v, want [%s]", ct.Unanswered, silent.id)
	}
	byMember := map[string]int{}
	for _, to := range ct.TakeOvers {
		byMember[to.Member]++
	}
	if byMember[tc.live()[0].id] == 0 || byMember[tc.live()[1].id] == 0 || byMember[silent.id] != 0 {
		t.Errorf("take-overs by member %v, want both answering members and none of %s", byMember, silent.id)
	}
}

// waitTableWithout waits until every live member's partition table
// leaves id out.
func waitTableWithout(t *testing.T, tc *tcluster, id string) {
	t.Helper()
	deadline := time.Now().Add(longStop)
	for _, m := range tc.live() {
		for slices.ContainsFunc(m.node.PartitionTable().Replicas, func(rs []string) bool { return slices.Contains(rs, id) }) {
			if time.Now().After(deadline) {
				t.Fatalf("%s's table still names %s after %s", m.id, id, longStop)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// A member membership suspects is listed live and suspect.
func TestMembersCarrySuspicion(t *testing.T) {
	tc := newTCluster(t, memoryConfig(1, 0))
	a, b := tc.add(), tc.add()
	tc.waitLoaded()
	sb := b.self
	sb.Suspect = true
	a.view.Set(a.self, sb)
	got := map[string]stowage.MemberInfo{}
	for _, m := range a.node.Members() {
		got[m.ID] = m
	}
	if m := got[b.id]; !m.Live || !m.Suspect {
		t.Errorf("%s as %s sees it: %+v, want live and suspect", b.id, a.id, m)
	}
	if m := got[a.id]; !m.Live || m.Suspect {
		t.Errorf("%s as it sees itself: %+v, want live, not suspect", a.id, m)
	}
}
