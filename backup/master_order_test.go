package backup_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stowage/stowage/cluster"
	"github.com/stowage/stowage/partition"
)

// A member that joins claiming to have started before every other (its
// gossip metadata says so: the views list it first) does not become the
// master: the table ranks the members its masters admitted, in that
// order, and the newcomer joins at the end.
func TestJoinerClaimingToBeOldestIsNotMaster(t *testing.T) {
	c := newTestCluster(t)
	m1, m2 := c.add(), c.add()
	tab := c.waitSafe()
	if got := tab.Order; !slices.Equal(got, []string{m1.id, m2.id}) {
		t.Fatalf("order %v, want [m1 m2]", got)
	}
	c.writeAll(tab, "v1-")

	m3 := c.add()
	// Its metadata claims the earliest start of all: every view lists it
	// first, as memberlist's would.
	m3.self.Started = time.Unix(0, 1)
	ordered := []cluster.Member{m3.self, m1.self, m2.self}
	for _, m := range c.members {
		m.view.Set(ordered...)
	}
	final := waitTable(t, m1, func(tab *partition.Table) bool { return inTable(tab, m3.id) })
	c.waitSafe()
	if got := final.Order; !slices.Equal(got, []string{m1.id, m2.id, m3.id}) {
		t.Errorf("order %v after the join, want [m1 m2 m3]", got)
	}
	for _, m := range c.members {
		if ms := m.proto.Members(); len(ms) == 0 || ms[0].ID != m1.id {
			t.Errorf("%s takes %v as the master, want m1", m.id, ms[0].ID)
		}
	}
	if tab3, _ := m3.proto.Table(); tab3 == nil || tab3.Order[0] != m1.id {
		t.Errorf("m3's table: %+v", tab3)
	}
}
