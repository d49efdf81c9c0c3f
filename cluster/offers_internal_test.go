package cluster

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stowage/stowage/partition"
)

// Tests of what a new master takes of the tables the members offer
// (offers.go).

const offerParts = 12

// offerCluster is members a, b, c, d (a the master) on an in-memory
// network, every one holding the table a published for all four.
func offerCluster(t *testing.T) ([]*dispatchMember, *partition.Table) {
	t.Helper()
	n := NewMemNetwork()
	var trs []Transport
	var ms []Member
	for i, id := range []string{"a", "b", "c", "d"} {
		trs = append(trs, n.Transport(id))
		ms = append(ms, Member{ID: id, RPC: id, Started: time.Unix(int64(i+1), 0)})
	}
	c := partitionedCluster(t, trs, ms, offerParts)
	v1 := partition.Assign([]string{"a", "b", "c", "d"}, offerParts, 1, nil)
	for _, m := range c {
		if !m.pr.install(v1) {
			t.Fatalf("%s did not install the first table", m.m.ID)
		}
	}
	return c, v1
}

// setLive sets every member's view to the live members of c named.
func setLive(c []*dispatchMember, ids ...string) {
	var ms []Member
	for _, m := range c {
		if slices.Contains(ids, m.m.ID) {
			ms = append(ms, m.m)
		}
	}
	for _, m := range c {
		m.v.Set(ms...)
	}
}

// becomeMaster runs b's master turn as it does when the members change.
func becomeMaster(t *testing.T, m *dispatchMember) *partition.Table {
	t.Helper()
	ms := m.pr.Members()
	if len(ms) == 0 || ms[0].ID != m.m.ID {
		t.Fatalf("%s is not the master of %v", m.m.ID, ms)
	}
	m.pr.rebalance(ms)
	tab, _ := m.pr.Table()
	return tab
}

// The master a pushed its table for a, b and c (d failed) to c alone and
// died; b, next in the admission order, becomes the master holding the
// table before. It takes the table c offers, as a published it, and its
// own next table follows from that one: the members that acted on a's
// last table are not moved back to the one before.
func TestNewMasterTakesThePreviousMastersLastTable(t *testing.T) {
	c, v1 := offerCluster(t)
	v2 := partition.Assign([]string{"a", "b", "c"}, offerParts, 1, v1) // d failed
	if !c[2].pr.install(v2) {
		t.Fatal("c did not install a's last table")
	}
	setLive(c, "b", "c") // a died too
	got := becomeMaster(t, c[1])

	want := partition.Assign([]string{"b", "c"}, offerParts, 1, v2)
	skipped := *v1
	skipped.Version = v2.Version
	if partition.Assign([]string{"b", "c"}, offerParts, 1, &skipped).Equal(want) {
		t.Fatal("the tables from a's last table and from the one before are alike: the test shows nothing")
	}
	if !got.Equal(want) {
		t.Fatalf("b's table %d: owners %v since %v, want the one following a's last table: owners %v since %v",
			got.Version, got.Owners, got.Since, want.Owners, want.Since)
	}
	if tc, _ := c[2].pr.Table(); !tc.Equal(want) {
		t.Fatalf("c holds table %d, want b's %d", tc.Version, want.Version)
	}
}

// Two tables in a row: a pushed v2 (e joined) to c and v3 (e failed,
// from v2) to d, then died. b follows the chain.
func TestNewMasterFollowsAChainOfOfferedTables(t *testing.T) {
	c, v1 := offerCluster(t)
	v2 := partition.Assign([]string{"a", "b", "c", "d", "e"}, offerParts, 1, v1)
	v3 := partition.Assign([]string{"a", "b", "c", "d"}, offerParts, 1, v2)
	c[2].pr.install(v2)
	c[3].pr.install(v3)
	setLive(c, "b", "c", "d")
	got := becomeMaster(t, c[1])
	want := partition.Assign([]string{"b", "c", "d"}, offerParts, 1, v3)
	from2 := *v2
	from2.Version = v3.Version
	if partition.Assign([]string{"b", "c", "d"}, offerParts, 1, &from2).Equal(want) {
		t.Fatal("the tables from v2 and v3 are alike: the test shows nothing")
	}
	if !got.Equal(want) {
		t.Fatalf("b's table %d %v, want %d %v from a's last", got.Version, got.Owners, want.Version, want.Owners)
	}
}

// A member holding the cluster's credentials offers the new master a
// table of its own making when the master changes. The new master takes
// no assignment of it: the admission order and the ownership follow the
// master's own table for the live members; the offered version (when
// within reach) is only a floor, so that every member, the forger too,
// takes the next table and the cluster keeps serving.
func TestForgedTableOfferedAtMasterChangeNotTaken(t *testing.T) {
	allC := func(v int64, order []string) *partition.Table {
		f := &partition.Table{Version: v, Order: order}
		for range offerParts {
			f.Owners = append(f.Owners, []string{"c"})
			f.Since = append(f.Since, 1)
			f.Joined = append(f.Joined, []int64{1})
		}
		return f
	}
	cases := []struct {
		name   string
		forged func(v1 *partition.Table) *partition.Table
		floor  bool // its version is taken as a floor
		// the forger follows the new master (its own table's order does
		// not put itself first)
		follows bool
	}{
		{"itself owning everything", func(*partition.Table) *partition.Table { return allC(1000, []string{"a", "b", "c", "d"}) }, true, true},
		{"itself first in the order", func(*partition.Table) *partition.Table { return allC(7, []string{"c", "a", "b", "d"}) }, true, false},
		{"the master's table for itself alone", func(v1 *partition.Table) *partition.Table {
			return partition.Assign([]string{"c"}, offerParts, 1, v1)
		}, true, true},
		{"a version out of reach", func(v1 *partition.Table) *partition.Table { return allC(v1.Version+maxTableJump+1, v1.Order) }, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, v1 := offerCluster(t)
			forged := tc.forged(v1)
			if !c[2].pr.install(forged) {
				t.Fatal("c did not install its forged table")
			}
			setLive(c, "b", "c", "d") // a, the master, died
			got := becomeMaster(t, c[1])

			base := *v1
			if tc.floor {
				base.Version = forged.Version
			}
			want := partition.Assign([]string{"b", "c", "d"}, offerParts, 1, &base)
			if !got.Equal(want) {
				t.Fatalf("b's table %d: owners %v order %v, want %d from its own: owners %v order %v",
					got.Version, got.Owners, got.Order, want.Version, want.Owners, want.Order)
			}
			owned := 0
			for p := range offerParts {
				if got.Owner(p) == "c" {
					owned++
				}
			}
			if owned > offerParts/3 {
				t.Fatalf("c owns %d of %d partitions in the new master's table", owned, offerParts)
			}
			if !slices.Equal(got.Order[:2], []string{"a", "b"}) {
				t.Fatalf("order %v: the forged order was taken", got.Order)
			}
			// The cluster keeps serving on the new master's table: d
			// took it, and serves b the partitions it backs up for it.
			if td, _ := c[3].pr.Table(); !td.Equal(got) {
				t.Fatalf("d holds table %d, want the new master's %d", td.Version, got.Version)
			}
			if tc.follows {
				if tcf, _ := c[2].pr.Table(); !tcf.Equal(got) {
					t.Fatalf("c holds table %d, want the new master's %d", tcf.Version, got.Version)
				}
			}
			for _, m := range []*dispatchMember{c[1], c[3]} {
				if ms := m.pr.Members(); ms[0].ID != "b" {
					t.Errorf("%s takes %s as the master, want b", m.m.ID, ms[0].ID)
				}
			}
			p := servedBy(got, "b", "d")
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if b, err := c[1].pr.Call(ctx, "d", "probe", Encode([]int{p})); err != nil || string(b) != "served" {
				t.Fatalf("b's call to d for partition %d: %q, %v", p, b, err)
			}
		})
	}
}

// servedBy returns a partition that tab gives owner with backup as a
// replica.
func servedBy(tab *partition.Table, owner, backup string) int {
	for p, rs := range tab.Owners {
		if len(rs) > 1 && rs[0] == owner && slices.Contains(rs, backup) {
			return p
		}
	}
	panic(fmt.Sprintf("no partition of %s backed up by %s in %v", owner, backup, tab.Owners))
}

// A member that claims a newer table in every answer makes the master
// collect the members' tables again at most once per recollectEvery.
func TestShownNewerVersionsRecollectAtMostOncePerInterval(t *testing.T) {
	c, _ := offerCluster(t)
	setLive(c, "b", "c", "d")
	b := c[1].pr
	becomeMaster(t, c[1])
	wasMaster := func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.wasMstr
	}
	ctx := testCtx(t)
	b.NoteTable(ctx, "c", b.TableVersion()+1)
	if wasMaster() {
		t.Fatal("a newer version shown did not make the master collect the tables again")
	}
	becomeMaster(t, c[1])
	for range 10 {
		b.NoteTable(ctx, "c", b.TableVersion()+1)
	}
	if !wasMaster() {
		t.Fatalf("the master collected the tables again within %s", recollectEvery)
	}
}
