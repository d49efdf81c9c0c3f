package partition_test

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/stowage/stowage/partition"
)

func names(n int) []string {
	m := make([]string, n)
	for i := range m {
		m[i] = fmt.Sprintf("m%d", i)
	}
	return m
}

// check asserts the invariants every table must hold.
func check(t *testing.T, tb *partition.Table, members []string, partitions, backups int) {
	t.Helper()
	if err := tb.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(tb.Owners) != partitions {
		t.Fatalf("len(Owners) = %d, want %d", len(tb.Owners), partitions)
	}
	want := min(backups+1, len(members))
	live := map[string]bool{}
	for _, m := range members {
		live[m] = true
	}
	owned := map[string]int{}
	for p, rs := range tb.Owners {
		if len(rs) != want {
			t.Fatalf("partition %d has %d replicas %v, want %d", p, len(rs), rs, want)
		}
		for _, m := range rs {
			if !live[m] {
				t.Fatalf("partition %d names %q, not a member", p, m)
			}
		}
		if len(rs) > 0 {
			owned[rs[0]]++
		}
	}
	if len(members) == 0 {
		return
	}
	lo, hi := partitions, 0
	for _, m := range members {
		lo, hi = min(lo, owned[m]), max(hi, owned[m])
	}
	if hi-lo > 1 {
		t.Fatalf("owner counts range %d..%d: %v", lo, hi, owned)
	}
}

func backupSpread(tb *partition.Table, members []string) (lo, hi int) {
	load := map[string]int{}
	for _, rs := range tb.Owners {
		for _, m := range rs[1:] {
			load[m]++
		}
	}
	lo, hi = 1<<30, 0
	for _, m := range members {
		lo, hi = min(lo, load[m]), max(hi, load[m])
	}
	return lo, hi
}

func TestAssignFresh(t *testing.T) {
	for _, tc := range []struct{ members, partitions, backups int }{
		{0, 7, 1}, {1, 271, 1}, {2, 271, 1}, {3, 271, 1}, {3, 271, 2}, {2, 271, 6},
		{5, 271, 3}, {7, 3, 1}, {4, 271, 0}, {10, 271, 6},
	} {
		t.Run(fmt.Sprintf("n%d_p%d_b%d", tc.members, tc.partitions, tc.backups), func(t *testing.T) {
			ms := names(tc.members)
			tb := partition.Assign(ms, tc.partitions, tc.backups, nil)
			if tb.Version != 1 {
				t.Fatalf("Version = %d, want 1", tb.Version)
			}
			check(t, tb, ms, tc.partitions, tc.backups)
			if tc.members > 1 && tc.backups > 0 && tc.partitions >= tc.members {
				if lo, hi := backupSpread(tb, ms); hi-lo > 1 {
					t.Fatalf("backup counts range %d..%d", lo, hi)
				}
			}
		})
	}
}

func ownerChanges(a, b *partition.Table) int {
	n := 0
	for p := range a.Owners {
		if a.Owner(p) != b.Owner(p) {
			n++
		}
	}
	return n
}

func TestAssignJoinMovesOnlyToNewMember(t *testing.T) {
	for _, tc := range []struct{ members, partitions, backups int }{
		{1, 271, 1}, {2, 271, 1}, {3, 271, 2}, {4, 271, 0}, {6, 271, 3}, {2, 5, 1},
	} {
		t.Run(fmt.Sprintf("n%d_p%d_b%d", tc.members, tc.partitions, tc.backups), func(t *testing.T) {
			ms := names(tc.members)
			prev := partition.Assign(ms, tc.partitions, tc.backups, nil)
			joined := append(append([]string(nil), ms...), "new")
			next := partition.Assign(joined, tc.partitions, tc.backups, prev)
			if next.Version != prev.Version+1 {
				t.Fatalf("Version = %d, want %d", next.Version, prev.Version+1)
			}
			check(t, next, joined, tc.partitions, tc.backups)
			share := tc.partitions / len(joined)
			moved := ownerChanges(prev, next)
			if moved > share+1 {
				t.Fatalf("%d partitions changed owner, want at most %d", moved, share+1)
			}
			for p := range next.Owners {
				if prev.Owner(p) != next.Owner(p) {
					if next.Owner(p) != "new" {
						t.Fatalf("partition %d moved %s -> %s, not to the new member", p, prev.Owner(p), next.Owner(p))
					}
					if tc.backups > 0 && next.Owners[p][1] != prev.Owner(p) {
						t.Fatalf("partition %d: old owner %s is not the first backup %v", p, prev.Owner(p), next.Owners[p])
					}
				}
			}
		})
	}
}

func TestAssignLeavePromotesFirstBackup(t *testing.T) {
	for _, tc := range []struct{ members, partitions, backups, gone int }{
		{2, 271, 1, 0}, {3, 271, 1, 0}, {3, 271, 1, 1}, {3, 271, 2, 2}, {5, 271, 2, 3},
		{4, 271, 0, 1}, {6, 271, 3, 0},
	} {
		t.Run(fmt.Sprintf("n%d_p%d_b%d_gone%d", tc.members, tc.partitions, tc.backups, tc.gone), func(t *testing.T) {
			ms := names(tc.members)
			prev := partition.Assign(ms, tc.partitions, tc.backups, nil)
			gone := ms[tc.gone]
			var left []string
			for _, m := range ms {
				if m != gone {
					left = append(left, m)
				}
			}
			next := partition.Assign(left, tc.partitions, tc.backups, prev)
			check(t, next, left, tc.partitions, tc.backups)
			promoted, lost := 0, 0
			for p, rs := range prev.Owners {
				if rs[0] != gone {
					if next.Owner(p) != rs[0] {
						t.Fatalf("partition %d: live owner %s replaced by %s", p, rs[0], next.Owner(p))
					}
					continue
				}
				lost++
				if len(rs) > 1 && next.Owner(p) == rs[1] {
					promoted++
				}
			}
			// Promotion may give way to balance, but when backups exist
			// most lost partitions go to their first backup.
			if tc.backups > 0 && promoted*2 < lost {
				t.Fatalf("only %d of %d lost partitions went to the first backup", promoted, lost)
			}
		})
	}
}

func TestAssignPromotionExact(t *testing.T) {
	prev := &partition.Table{Version: 7, Owners: [][]string{{"a", "b"}, {"b", "c"}, {"c", "a"}, {"a", "c"}}}
	next := partition.Assign([]string{"b", "c"}, 4, 1, prev)
	want := [][]string{{"b", "c"}, {"b", "c"}, {"c", "b"}, {"c", "b"}}
	if next.Version != 8 {
		t.Fatalf("Version = %d, want 8", next.Version)
	}
	if fmt.Sprint(next.Owners) != fmt.Sprint(want) {
		t.Fatalf("Owners = %v, want %v", next.Owners, want)
	}
}

func TestAssignStableWithoutChange(t *testing.T) {
	ms := names(4)
	prev := partition.Assign(ms, 271, 2, nil)
	next := partition.Assign(ms, 271, 2, prev)
	if fmt.Sprint(prev.Owners) != fmt.Sprint(next.Owners) {
		t.Fatal("same members gave a different table")
	}
}

func TestAssignRepeatedChurn(t *testing.T) {
	// Members join and leave one at a time; every table keeps the
	// invariants and backups stay roughly even.
	ms := names(3)
	tb := partition.Assign(ms, 271, 2, nil)
	steps := [][]string{
		{"m0", "m1", "m2", "m3"}, {"m1", "m2", "m3"}, {"m1", "m2", "m3", "m4", "m5"},
		{"m2", "m5"}, {"m5"}, {"m5", "m6", "m7"}, {"m5", "m6", "m7", "m8", "m9", "m10"},
	}
	for i, s := range steps {
		tb = partition.Assign(s, 271, 2, tb)
		check(t, tb, s, 271, 2)
		if lo, hi := backupSpread(tb, s); len(s) > 1 && hi-lo > 2 {
			t.Fatalf("step %d: backup counts range %d..%d", i, lo, hi)
		}
		if tb.Version != int64(i+2) {
			t.Fatalf("step %d: Version = %d", i, tb.Version)
		}
	}
}

// Since keeps the version that gave each partition its owner: unchanged
// where the owner stayed, the new version where it moved.
func TestAssignSince(t *testing.T) {
	ms := names(3)
	t1 := partition.Assign(ms, 271, 1, nil)
	for p := range t1.Owners {
		if t1.OwnerSince(p) != 1 {
			t.Fatalf("fresh table: partition %d since %d, want 1", p, t1.OwnerSince(p))
		}
	}
	t2 := partition.Assign(ms[:2], 271, 1, t1) // m2 gone
	t3 := partition.Assign(ms, 271, 1, t2)     // m2 back
	moved2, kept2 := 0, 0
	for p := range t2.Owners {
		switch {
		case t2.Owner(p) == t1.Owner(p) && t2.OwnerSince(p) != 1:
			t.Fatalf("partition %d kept owner %s but since %d", p, t2.Owner(p), t2.OwnerSince(p))
		case t2.Owner(p) != t1.Owner(p) && t2.OwnerSince(p) != 2:
			t.Fatalf("partition %d moved to %s but since %d", p, t2.Owner(p), t2.OwnerSince(p))
		case t2.Owner(p) != t1.Owner(p):
			moved2++
		default:
			kept2++
		}
	}
	if moved2 == 0 || kept2 == 0 {
		t.Fatalf("losing a member moved %d and kept %d partitions", moved2, kept2)
	}
	// A partition owned by m2 in t1 and again in t3 was someone else's in
	// t2: its since says so, so m2 knows its copy from t1 may be behind.
	back := 0
	for p := range t3.Owners {
		if t1.Owner(p) == "m2" && t3.Owner(p) == "m2" {
			back++
			if t3.OwnerSince(p) != 3 {
				t.Fatalf("partition %d back to m2 with since %d, want 3", p, t3.OwnerSince(p))
			}
		}
	}
	if back == 0 {
		t.Fatal("no partition went back to m2")
	}
	// Joined: m0 stayed in every replica set it was in; m2 left every set
	// in t2 and came back in t3.
	for p, rs := range t3.Owners {
		for _, m := range rs {
			j := t3.JoinedAt(p, m)
			switch {
			case m == "m2" && j != 3:
				t.Fatalf("partition %d: m2 joined at %d, want 3", p, j)
			case m != "m2" && j == 3 && t2.JoinedAt(p, m) > 0:
				t.Fatalf("partition %d: %s was already in the set in t2 but joined at 3", p, m)
			}
		}
		if t3.JoinedAt(p, "nobody") != -1 {
			t.Fatal("JoinedAt of a non-member is not -1")
		}
	}
}

// copiesTo counts the replica slots of next held by a member that was not
// a replica of the same partition in prev: each is a copy of the
// partition's data to a member.
func copiesTo(prev, next *partition.Table) int {
	n := 0
	for p, rs := range next.Owners {
		for _, m := range rs {
			if !slices.Contains(prev.Owners[p], m) {
				n++
			}
		}
	}
	return n
}

// A cluster grown one member at a time to 100 and shrunk again, one
// member and three at once, copies close to the least data each change
// needs: on a join the new member's share of replicas (271×r/n), on a
// leave the replicas the leavers held. No change copies more than 1.25x
// that (rounded up), owners move only to the new member or off the
// leavers, and backups stay within two of each other.
func TestAssignMovesCloseToIdeal(t *testing.T) {
	const partitions = 271
	for _, backups := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("b%d", backups), func(t *testing.T) {
			var ms []string
			var tb *partition.Table
			worst := 0.0
			step := func(what string, next []string, ideal float64) {
				t.Helper()
				nt := partition.Assign(next, partitions, backups, tb)
				check(t, nt, next, partitions, backups)
				if lo, hi := backupSpread(nt, next); len(next) > backups && hi-lo > 2 {
					t.Fatalf("%s: backups range %d..%d", what, lo, hi)
				}
				if tb != nil && ideal > 0 {
					got := copiesTo(tb, nt)
					if float64(got) > math.Ceil(1.25*ideal) {
						t.Fatalf("%s to %d members: %d copies, ideal %.1f", what, len(next), got, ideal)
					}
					worst = max(worst, float64(got)/ideal)
				}
				ms, tb = next, nt
			}
			for n := 1; n <= 100; n++ {
				next := append(slices.Clone(ms), fmt.Sprintf("m%03d", n))
				ideal := 0.0
				if n > backups+1 { // the replica count no longer grows
					ideal = float64(partitions*(backups+1)) / float64(n)
				}
				step("join", next, ideal)
			}
			for len(ms) > backups+4 {
				k := 1
				if len(ms)%2 == 0 {
					k = 3
				}
				gone := ms[len(ms)/3 : len(ms)/3+k]
				lost := 0
				for _, rs := range tb.Owners {
					for _, m := range rs {
						if slices.Contains(gone, m) {
							lost++
						}
					}
				}
				next := slices.DeleteFunc(slices.Clone(ms), func(m string) bool { return slices.Contains(gone, m) })
				step(fmt.Sprintf("leave of %d", k), next, float64(lost))
			}
			t.Logf("backups %d: most copies per change %.2fx the least needed", backups, worst)
		})
	}
}

func TestAdmitOrderKeepsAdmittedMembersFirst(t *testing.T) {
	prev := &partition.Table{Order: []string{"b", "a", "gone", "c"}}
	got := partition.AdmitOrder(prev, []string{"new", "a", "c", "b", "later"})
	want := []string{"b", "a", "gone", "c", "new", "later"}
	if !slices.Equal(got, want) {
		t.Fatalf("AdmitOrder = %v, want %v", got, want)
	}
	if got := partition.AdmitOrder(nil, []string{"x", "y"}); !slices.Equal(got, []string{"x", "y"}) {
		t.Fatalf("without a previous table: %v", got)
	}
	next := partition.Assign([]string{"z", "b", "a"}, 7, 1, prev)
	if !slices.Equal(next.Order, []string{"b", "a", "gone", "c", "z"}) {
		t.Fatalf("Assign's order %v", next.Order)
	}
	// Gone members go from the end once the order is long.
	long := &partition.Table{Order: []string{"a", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8", "d9", "d10", "b"}}
	if got := partition.AdmitOrder(long, []string{"a", "b"}); len(got) != 12 || got[0] != "a" || got[len(got)-1] != "b" {
		t.Fatalf("long order %v, want 12 entries from a to b", got)
	}
	if got := partition.AdmitOrder(long, []string{"a"}); len(got) != 10 || got[0] != "a" || slices.Contains(got, "d10") || slices.Contains(got, "b") {
		t.Fatalf("long order for one member %v, want a first, 10 entries, the last two gone dropped", got)
	}
}

// A member joins and takes partitions over from their owner, which stays
// as the new owner's backup while the other backup leaves the set; then
// the old owner dies and the backup that left is back. Its copy, filled
// before it left, has every write: its epoch's owner lost the ownership
// when it left. SourceSince says so (its fill counts from the version
// before the new owner's), JoinedAt does not. A backup that left and
// came back while the owner went on serving is not a source.
func TestSourceSinceCountsACopyFilledBeforeTheOwnerChanged(t *testing.T) {
	t2 := partition.Assign([]string{"m1", "m2"}, 271, 1, partition.Assign([]string{"m1"}, 271, 1, nil))
	t3 := partition.Assign([]string{"m1", "m2", "m3"}, 271, 1, t2)
	t4 := partition.Assign([]string{"m1", "m3"}, 271, 1, t3)
	checked := 0
	for p := range t2.Owners {
		if !slices.Equal(t2.Owners[p], []string{"m2", "m1"}) || t3.Owner(p) != "m3" || slices.Contains(t3.Owners[p], "m1") {
			continue
		}
		checked++
		if !slices.Equal(t4.Owners[p], []string{"m3", "m1"}) {
			t.Fatalf("partition %d: %v, %v, %v", p, t2.Owners[p], t3.Owners[p], t4.Owners[p])
		}
		// m1's copy was last filled under t2.
		if got := t4.SourceSince(p, "m1"); got > t2.Version {
			t.Errorf("partition %d: SourceSince %d at version %d (owner since %d), want at most %d", p, got, t4.Version, t4.OwnerSince(p), t2.Version)
		}
		if got := t3.SourceSince(p, "m1"); got > t2.Version {
			t.Errorf("partition %d: out of the set under version %d: SourceSince %d, want at most %d", p, t3.Version, got, t2.Version)
		}
		if j := t4.JoinedAt(p, "m1"); j <= t2.Version {
			t.Errorf("partition %d: JoinedAt %d: m1 left the set at version %d", p, j, t3.Version)
		}
	}
	if checked == 0 {
		t.Fatal("no partition moved from m2 to m3 with m1 leaving the set")
	}
	// The owner kept serving while m1 was out (m1 filled under version 3,
	// out of the set at 4, back at 6), then died: m1 acquires under
	// version 8, and its copy does not count, since the owner went on
	// without it.
	died := &partition.Table{Version: 8, Owners: [][]string{{"m1"}}, Since: []int64{8}, Joined: [][]int64{{6}}}
	if got := died.SourceSince(0, "m1"); got <= 3 {
		t.Fatalf("SourceSince %d: a copy filled under version 3 would count", got)
	}
}
