package backup_test

import (
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stowage/stowage/partition"
)

// slotsOf returns the partitions whose replica set in tab names id.
func slotsOf(tab *partition.Table, id string) []int {
	var out []int
	for p, rs := range tab.Owners {
		if slices.Contains(rs, id) {
			out = append(out, p)
		}
	}
	return out
}

// ownedBy returns the partitions tab has id own.
func ownedBy(tab *partition.Table, id string) []int {
	var out []int
	for p := range tab.Owners {
		if tab.Owner(p) == id {
			out = append(out, p)
		}
	}
	return out
}

// namesAnywhere reports whether tab names id in a replica set, a held
// slot or Departed.
func namesAnywhere(tab *partition.Table, id string) bool {
	_, departed := tab.Departed[id]
	return inTable(tab, id) || heldFor(tab, id) || slices.Contains(tab.AwayOwner, id) || departed
}

// A member killed and restarted within the grace comes back under a new
// id (the id carries the start time) at its old address: it takes the
// slots held for its old id, owns again what that owned, and the old id
// is no longer held for. Its copy is empty after the restart, so it is
// filled whole, and every replica has every write. A stale entry of the
// old id that shows up again in the member list (gossip that had not
// seen it die) gets nothing: one slot is never claimed by two.
func TestRestartedMemberTakesItsHeldSlots(t *testing.T) {
	c := newTestCluster(t)
	c.publishMin = 2
	c.grace = 2 * longStop // far beyond the test
	m1, m2, m3 := c.add(), c.add(), c.add()
	before := c.waitServing(func(tab *partition.Table) bool { return inTable(tab, m3.id) })
	written := map[int]map[string]string{}
	c.writeKeys(before, "before-", 0, 100, written)

	c.kill(m3)
	held := c.waitServing(func(tab *partition.Table) bool { return !inTable(tab, m3.id) })
	if len(held.AwayMembers()) != 1 || held.Departed[m3.id].Addr != "m3" {
		t.Fatalf("table %d holds %v, departed %v; want m3's slots held at its address", held.Version, held.AwayMembers(), held.Departed)
	}
	c.writeKeys(held, "during-", 0, 1, written)
	c.deleteKeys(held, 1, written)
	c.writeKeys(held, "during-", 100, 2, written)

	var on atomic.Bool
	var sent atomic.Int64
	meterTo(c, "m3b", &on, &sent)
	on.Store(true)
	m3b := c.addAt("m3b", "m3")
	back := c.waitServing(func(tab *partition.Table) bool { return inTable(tab, m3b.id) })
	final := c.waitSafe()
	on.Store(false)
	if !slices.Equal(slotsOf(back, m3b.id), slotsOf(before, m3.id)) {
		t.Errorf("m3 restarted holds partitions %v, m3 held %v", slotsOf(back, m3b.id), slotsOf(before, m3.id))
	}
	if !slices.Equal(ownedBy(back, m3b.id), ownedBy(before, m3.id)) {
		t.Errorf("m3 restarted owns partitions %v, m3 owned %v", ownedBy(back, m3b.id), ownedBy(before, m3.id))
	}
	if namesAnywhere(back, m3.id) || len(back.AwayMembers()) != 0 {
		t.Errorf("table %d still names m3 or holds slots (%v, %v)", back.Version, back.Away, back.Departed)
	}
	if err := final.Validate(); err != nil {
		t.Error(err)
	}
	c.checkReplicas(final, written)
	entries := 0
	for _, p := range slotsOf(final, m3b.id) {
		for _, v := range written[p] {
			if v != "" {
				entries++
			}
		}
	}
	t.Logf("m3 restarted holds %d entries; it was sent %d entries, %d bytes in all", entries, m3b.h.receivedEntries(), sent.Load())
	if m3b.h.receivedEntries() < entries {
		t.Errorf("m3 restarted was sent %d entries and holds %d: its empty copy was not filled", m3b.h.receivedEntries(), entries)
	}

	// The old id shows up again in every member list: it is no process
	// any more (m3b listens at its address), and gets nothing.
	c.members = []*member{m1, m2, m3, m3b}
	c.publish()
	time.Sleep(200 * time.Millisecond)
	c.members = []*member{m1, m2, m3b}
	if tab, _ := m1.proto.Table(); namesAnywhere(tab, m3.id) || !slices.Equal(slotsOf(tab, m3b.id), slotsOf(before, m3.id)) {
		t.Errorf("with the old id back in the member list, table %d: %v away %v", tab.Version, tab.Owners, tab.Away)
	}
	c.publish()
}

// Another process at the address of a member whose grace ran out gets
// nothing the old member held: the master gives it what it gives any
// member that joins.
func TestAddressReusedAfterGraceIsANewMember(t *testing.T) {
	c := newTestCluster(t)
	c.publishMin = 2
	c.grace = 300 * time.Millisecond
	m1, m2, m3 := c.add(), c.add(), c.add()
	tab1 := c.waitServing(func(tab *partition.Table) bool { return inTable(tab, m3.id) })
	written := map[int]map[string]string{}
	c.writeKeys(tab1, "before-", 0, 20, written)
	c.kill(m3)
	after := c.waitSafe() // the grace ran out: every slot given to m1 or m2
	if namesAnywhere(after, m3.id) {
		t.Fatalf("table %d names m3 after its grace: %v away %v", after.Version, after.Owners, after.Away)
	}
	m4 := c.addAt("m4", "m3")
	joined := waitTable(t, m1, func(tab *partition.Table) bool { return inTable(tab, m4.id) })
	want := partition.Assign([]string{m1.id, m2.id, m4.id}, parts, 1, after)
	if !slices.EqualFunc(joined.Owners, want.Owners, slices.Equal) {
		t.Errorf("m4 at m3's old address joins with %v; a member that joins gets %v", joined.Owners, want.Owners)
	}
	c.checkReplicas(c.waitSafe(), written)
}

// A member restarted so fast that the member list still shows its old id
// when the new one joins (failure detection has not declared it dead):
// one process listens at an address, so the old id is taken as gone at
// once, its slots are held, and the new id takes them.
func TestRestartedMemberBeforeItsOldIDIsDeclaredDead(t *testing.T) {
	c := newTestCluster(t)
	c.publishMin = 2
	c.grace = 2 * longStop
	m1, m2, m3 := c.add(), c.add(), c.add()
	before := c.waitServing(func(tab *partition.Table) bool { return inTable(tab, m3.id) })
	written := map[int]map[string]string{}
	c.writeKeys(before, "before-", 0, 50, written)

	m3.stop() // its entry stays in every member list
	m3b := c.addAt("m3b", "m3")
	c.members = []*member{m1, m2, m3b} // the live ones; the lists keep m3
	back := c.waitServing(func(tab *partition.Table) bool { return inTable(tab, m3b.id) })
	if !slices.Equal(slotsOf(back, m3b.id), slotsOf(before, m3.id)) || !slices.Equal(ownedBy(back, m3b.id), ownedBy(before, m3.id)) {
		t.Errorf("m3 restarted holds %v and owns %v; m3 held %v and owned %v", slotsOf(back, m3b.id), ownedBy(back, m3b.id), slotsOf(before, m3.id), ownedBy(before, m3.id))
	}
	if namesAnywhere(back, m3.id) {
		t.Errorf("table %d still names m3: %v away %v", back.Version, back.Owners, back.Away)
	}
	c.writeKeys(back, "after-", 0, 1, written)
	c.checkReplicas(c.waitSafe(), written)
}
