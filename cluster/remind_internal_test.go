package cluster

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// Tests of how often the master sends the whole table: once per new
// table, and afterwards only to a member that shows it missed it.

// tableCalls counts the table calls on a network: those that carried a
// whole table (a request of at least fullAt bytes) and the others.
type tableCalls struct {
	mu          sync.Mutex
	full, short map[string]int // by callee
	fullAt      int
}

func (c *tableCalls) meter(_, to, method string, req, _ int) {
	if method != mTable {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if req >= c.fullAt {
		c.full[to]++
	} else {
		c.short[to]++
	}
}

func (c *tableCalls) reset() (full, short map[string]int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	full, short = c.full, c.short
	c.full, c.short = map[string]int{}, map[string]int{}
	return full, short
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// A member joins a settled cluster: the master publishes one new table,
// pushed whole once to each member. Its next turn with the same members
// (the one a timer or a kick runs, which came right after the push when
// a tick fell during it) sends no table again; once the reminder is
// due, the members that have the table are told its version only, and
// one that missed the push (its link was cut) is sent the whole table.
func TestJoinPushesTheTableOnceAndRemindsOfItsVersion(t *testing.T) {
	n := NewMemNetwork()
	ids := []string{"a", "b", "c", "d", "e"}
	var trs []Transport
	var ms []Member
	for i, id := range ids {
		trs = append(trs, n.Transport(id))
		ms = append(ms, Member{ID: id, RPC: id, Started: time.Unix(int64(i+1), 0)})
	}
	c := partitionedCluster(t, trs, ms, offerParts)
	calls := &tableCalls{fullAt: 64}
	calls.reset()
	n.SetMeter(calls.meter)

	setLive(c, "a", "b", "c")
	v1 := becomeMaster(t, c[0])
	if v1 == nil {
		t.Fatal("no first table")
	}
	// A whole table of offerParts partitions is far above 64 bytes, a
	// version alone far below it.
	if l := len(Encode(tableOf(v1))); l < 2*calls.fullAt {
		t.Fatalf("a whole table is %d bytes: too small to tell from a version", l)
	}
	calls.reset()

	setLive(c, "a", "b", "c", "d")
	v2 := becomeMaster(t, c[0])
	if v2.Version <= v1.Version {
		t.Fatalf("the join published no new table: version %d after %d", v2.Version, v1.Version)
	}
	full, _ := calls.reset()
	for _, id := range []string{"b", "c", "d"} {
		if full[id] != 1 {
			t.Errorf("%s was sent the joined table %d times, want once (all: %v)", id, full[id], full)
		}
		if got := c[slices.Index(ids, id)].pr.TableVersion(); got != v2.Version {
			t.Errorf("%s has version %d, want %d", id, got, v2.Version)
		}
	}

	// The next turn, same members, right after the push.
	if v := becomeMaster(t, c[0]); v.Version != v2.Version {
		t.Fatalf("a turn without a change published version %d after %d", v.Version, v2.Version)
	}
	if full, short := calls.reset(); total(full)+total(short) != 0 {
		t.Errorf("a turn right after the push sent tables again: whole %v, version only %v", full, short)
	}

	// e joins with a's link to it cut: it misses the push.
	n.Cut("a", "e")
	setLive(c, "a", "b", "c", "d", "e")
	v3 := becomeMaster(t, c[0])
	if got := c[4].pr.TableVersion(); got >= v3.Version {
		t.Fatalf("e took version %d through a cut link", got)
	}
	n.Heal("a", "e")
	calls.reset()
	c[0].pr.pushedAt = time.Now().Add(-remindEvery) // the reminder is due
	if v := becomeMaster(t, c[0]); v.Version != v3.Version {
		t.Fatalf("the reminder's turn published version %d after %d", v.Version, v3.Version)
	}
	full, short := calls.reset()
	if total(full) != 1 || full["e"] != 1 {
		t.Errorf("whole tables sent with the reminder: %v, want one to e", full)
	}
	if total(short) != 4 {
		t.Errorf("reminders sent: %v, want one to each of b, c, d, e", short)
	}
	for i, m := range c {
		if got := m.pr.TableVersion(); got != v3.Version {
			t.Errorf("%s has version %d after the reminder, want %d", ids[i], got, v3.Version)
		}
	}
}
