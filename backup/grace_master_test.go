package backup_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stowage/stowage/partition"
)

// graceAcrossMaster is a cluster of four in which x (m4) was cut off
// at cut, and the master (m1) then left gracefully at changed, once
// half the grace had passed: m2 is the master from then on.
type graceAcrossMaster struct {
	c             *testCluster
	m1, m2, m3, x *member
	before        *partition.Table // the table before the cut
	written       map[int]map[string]string
	cut, changed  time.Time
	grace         time.Duration
	// tabAway: the first table without m4; tabM2: the table m2 settled
	// on as master.
	tabAway, tabM2 *partition.Table
}

func newGraceAcrossMaster(t *testing.T, grace time.Duration) *graceAcrossMaster {
	g := &graceAcrossMaster{c: newTestCluster(t), grace: grace, written: map[int]map[string]string{}}
	c := g.c
	c.publishMin = 2
	c.grace = grace
	g.m1, g.m2, g.m3, g.x = c.add(), c.add(), c.add(), c.add()
	g.before = c.waitServing(func(tab *partition.Table) bool { return inTable(tab, g.x.id) })
	c.writeKeys(g.before, "before-", 0, 50, g.written)

	g.cut = time.Now()
	c.net.Isolate(g.x.id)
	g.x.view.Set(g.x.self)
	c.members = []*member{g.m1, g.m2, g.m3}
	c.publish()
	g.tabAway = c.waitServing(func(tab *partition.Table) bool { return !inTable(tab, g.x.id) })
	d, ok := g.tabAway.Departed[g.x.id]
	if !ok || time.Unix(0, d.Since).Before(g.cut) || time.Unix(0, d.Since).After(time.Now()) {
		t.Fatalf("table %d keeps %+v, %v for m4 (cut at %v)", g.tabAway.Version, d, ok, g.cut)
	}
	if d.Addr != g.x.self.Addr {
		t.Errorf("table %d keeps address %q for m4, want %q", g.tabAway.Version, d.Addr, g.x.self.Addr)
	}

	// The master drains and leaves (a leave the table does not hold a
	// slot for), once half the grace passed.
	time.Sleep(time.Until(g.cut.Add(grace / 2)))
	g.m1.self.Draining = true
	c.publish()
	c.waitServing(func(tab *partition.Table) bool { return !inTable(tab, g.m1.id) && !inTable(tab, g.x.id) })
	c.members = []*member{g.m2, g.m3}
	c.publish()
	g.changed = time.Now()
	// m2, the master now, may even out the ownership m1's last table
	// left (within replica sets, as slots are held): the table it
	// settles on.
	for {
		g.tabM2 = c.waitServing(func(tab *partition.Table) bool { return heldFor(tab, g.x.id) })
		time.Sleep(300 * time.Millisecond)
		if tab, _ := g.m2.proto.Table(); tab.Version == g.tabM2.Version {
			break
		}
	}
	g.m1.stop()
	if g.changed.After(g.cut.Add(grace - grace/4)) {
		t.Fatalf("the master changed %v after the cut, the grace is %v: too late to show anything", g.changed.Sub(g.cut), grace)
	}
	return g
}

// heldFor reports whether tab holds a slot for id.
func heldFor(tab *partition.Table, id string) bool {
	return slices.Contains(tab.AwayMembers(), id)
}

// A member cut off, and the master changes while its slots are held:
// the new master continues the grace from when the old one saw the
// member go (the table keeps it), so the slots are given away at the
// end of the grace that began with the cut, not a whole grace after
// the master changed.
func TestGraceClockSurvivesMasterChange(t *testing.T) {
	const grace = 4 * time.Second
	g := newGraceAcrossMaster(t, grace)
	c := g.c
	if !heldFor(g.tabM2, g.x.id) {
		t.Fatalf("table %d of the new master holds nothing for m4: %v", g.tabM2.Version, g.tabM2.Away)
	}
	given := waitTable(t, g.m2, func(tab *partition.Table) bool { return !heldFor(tab, g.x.id) })
	at := time.Now()
	t.Logf("m4 cut at 0, master changed at %v, slots given at %v (grace %v)", g.changed.Sub(g.cut).Round(time.Millisecond), at.Sub(g.cut).Round(time.Millisecond), grace)
	if at.Before(g.cut.Add(grace)) {
		t.Errorf("m4's slots given %v after the cut, before the grace of %v ran out", at.Sub(g.cut), grace)
	}
	if !at.Before(g.changed.Add(grace)) {
		t.Errorf("m4's slots given %v after the master changed: the new master began the grace again (cut %v before the change)", at.Sub(g.changed), g.changed.Sub(g.cut))
	}
	if given.Departed != nil {
		t.Errorf("table %d keeps %v with no slot held", given.Version, given.Departed)
	}
	final := c.waitSafe()
	c.writeKeys(final, "after-", 0, 1, g.written)
	c.checkReplicas(final, g.written)
}

// The same, m4 back before the grace that began with the cut ran out:
// it takes its slots again under the new master (the slots m1 left are
// filled anew, by m4 or another) and owns again what it owned, and
// every replica has every write.
func TestMemberBackAcrossMasterChangeRetakesItsSlots(t *testing.T) {
	const grace = 6 * time.Second
	g := newGraceAcrossMaster(t, grace)
	c := g.c
	c.writeKeys(g.tabM2, "during-", 0, 1, g.written)
	c.deleteKeys(g.tabM2, 1, g.written)
	c.net.HealAll()
	c.members = []*member{g.m2, g.m3, g.x}
	c.publish()
	back := waitTable(t, g.m2, func(tab *partition.Table) bool { return inTable(tab, g.x.id) })
	if time.Now().After(g.cut.Add(grace)) {
		t.Fatalf("m4 back %v after the cut, past the grace of %v: the test shows nothing", time.Since(g.cut), grace)
	}
	final := c.waitSafe()
	for p, rs := range back.Owners {
		was := g.before.Owners[p]
		if slices.Contains(was, g.x.id) && !slices.Contains(rs, g.x.id) {
			t.Errorf("partition %d: replicas %v on m4's return, %v before the cut", p, rs, was)
		}
		if was[0] == g.x.id && rs[0] != g.x.id {
			t.Errorf("partition %d: owned by %s on m4's return; m4 owned it before the cut", p, rs[0])
		}
	}
	if len(back.AwayMembers()) != 0 || back.Departed != nil {
		t.Errorf("table %d still holds %v (%v) with m4 back", back.Version, back.AwayMembers(), back.Departed)
	}
	c.checkReplicas(final, g.written)
}
