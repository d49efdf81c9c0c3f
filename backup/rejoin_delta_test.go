package backup_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stowage/stowage/partition"
)

// The values the rejoin tests write: big enough that a whole copy of a
// partition weighs far more than the member protocol's own traffic.
const rejoinValue = 256

func rejoinVal(tag, k string) string {
	return tag + k + strings.Repeat(".", rejoinValue)
}

// writeKeys writes n keys to every partition at its owner, the first
// skip keys of the partition left out, with rejoinVal(tag, key), and
// returns what it wrote by partition.
func (c *testCluster) writeKeys(tab *partition.Table, tag string, skip, n int, into map[int]map[string]string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), longStop)
	defer cancel()
	for p := range parts {
		owner := c.byID(tab.Owner(p))
		for _, k := range keysOf(p, skip+n)[skip:] {
			v := rejoinVal(tag, k)
			if err := owner.h.put(ctx, owner.repl, p, k, v); err != nil {
				c.t.Fatalf("put %s at %s (partition %d): %v", k, owner.id, p, err)
			}
			if into[p] == nil {
				into[p] = map[string]string{}
			}
			into[p][k] = v
		}
	}
}

// deleteKeys deletes the key at index i of every partition at its
// owner (as writeKeys numbers them) and marks it deleted ("") in written.
func (c *testCluster) deleteKeys(tab *partition.Table, i int, written map[int]map[string]string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), longStop)
	defer cancel()
	for p := range parts {
		owner := c.byID(tab.Owner(p))
		k := keysOf(p, i+1)[i]
		if err := owner.h.del(ctx, owner.repl, p, k); err != nil {
			c.t.Fatalf("delete %s at %s (partition %d): %v", k, owner.id, p, err)
		}
		written[p][k] = ""
	}
}

// checkReplicas fails unless every replica of every partition in tab
// holds what was written (and not what was deleted).
func (c *testCluster) checkReplicas(tab *partition.Table, written map[int]map[string]string) {
	c.t.Helper()
	for p, rs := range tab.Owners {
		for _, id := range rs {
			m := c.byID(id)
			for k, want := range written[p] {
				if v, _, ok := m.h.value(p, k); want == "" && ok {
					c.t.Errorf("%s partition %d key %s: %.20q, deleted", id, p, k, v)
				} else if want != "" && (!ok || v != want) {
					c.t.Errorf("%s partition %d key %s: %.20q, %v; want %.20q", id, p, k, v, ok, want)
				}
			}
		}
	}
}

// waitServing waits until the live members have one table in which
// every partition is active on its owner with the backups the table
// names filled (slots held for members away aside).
func (c *testCluster) waitServing(ok func(*partition.Table) bool) *partition.Table {
	c.t.Helper()
	deadline := time.Now().Add(longStop)
	for {
		why := ""
		t0, _ := c.members[0].proto.Table()
		for _, m := range c.members {
			if t, _ := m.proto.Table(); t == nil || t0 == nil || t.Version != t0.Version {
				why = m.id + " has another table"
			}
		}
		if why == "" && !ok(t0) {
			why = fmt.Sprintf("table %d is not the one waited for", t0.Version)
		}
		if why == "" {
			for p, rs := range t0.Owners {
				if w := c.byID(rs[0]).repl.Replica(p).SafeWhy(rs); w != "" {
					why = w
					break
				}
			}
		}
		if why == "" {
			return t0
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("not serving within %s: %s", longStop, why)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// meterTo counts the bytes of every call to id and of every answer to
// id's calls, while on.
func meterTo(c *testCluster, id string, on *atomic.Bool, n *atomic.Int64) {
	c.net.SetMeter(func(from, to, _ string, request, answer int) {
		if !on.Load() {
			return
		}
		if to == id {
			n.Add(int64(request))
		}
		if from == id {
			n.Add(int64(answer))
		}
	})
}

// cutOff isolates m3 from the other two (a split that leaves it alone;
// with split-brain protection its side publishes nothing).
func (c *testCluster) cutOff(m1, m2, m3 *member) {
	c.net.Isolate(m3.id)
	m3.view.Set(m3.self)
	m1.view.Set(m1.self, m2.self)
	m2.view.Set(m1.self, m2.self)
	c.members = []*member{m1, m2}
}

// heal joins m3 to the others again.
func (c *testCluster) heal(m1, m2, m3 *member) {
	c.net.HealAll()
	c.members = []*member{m1, m2, m3}
	c.publish()
}

// A member cut off and back within the grace period takes its replica
// slots again, and what it is sent to bring its copies up to date is a
// small part of what it holds: deltas, not whole partitions. Every
// acknowledged write, before and during the cut, is on every replica
// afterwards.
func TestMemberBackWithinGraceIsFilledByDeltas(t *testing.T) {
	c := newTestCluster(t)
	c.publishMin = 2
	c.grace = 2 * longStop // far beyond the test
	m1, m2, m3 := c.add(), c.add(), c.add()
	tab1 := c.waitSafe()
	written := map[int]map[string]string{}
	c.writeKeys(tab1, "before-", 0, 200, written)

	c.cutOff(m1, m2, m3)
	tab2 := c.waitServing(func(tab *partition.Table) bool { return !inTable(tab, m3.id) })
	held := 0
	for p := range parts {
		if slices.Contains(tab1.Owners[p], m3.id) {
			held++
			if away := tab2.AwayFrom(p); !slices.Equal(away, []string{m3.id}) {
				t.Errorf("partition %d: away %v during the grace, want m3's slot held", p, away)
			}
		}
	}
	if held == 0 {
		t.Fatal("m3 held no partition; the test shows nothing")
	}
	if why := m1.repl.LocalSafeWhy() + m2.repl.LocalSafeWhy(); why == "" {
		t.Error("safe while m3's slots are held for it")
	}
	// Writes go on: a key written again, one deleted, two new.
	c.writeKeys(tab2, "during-", 0, 1, written)
	c.deleteKeys(tab2, 1, written)
	c.writeKeys(tab2, "during-", 200, 2, written)

	var on atomic.Bool
	var sent atomic.Int64
	meterTo(c, m3.id, &on, &sent)
	on.Store(true)
	received := m3.h.receivedEntries()
	c.heal(m1, m2, m3)
	final := c.waitSafe()
	on.Store(false)
	c.checkReplicas(final, written)

	holds, bytes := 0, 0
	for p, rs := range final.Owners {
		if slices.Contains(tab1.Owners[p], m3.id) != slices.Contains(rs, m3.id) {
			t.Errorf("partition %d: replicas %v after the return, %v before the cut", p, rs, tab1.Owners[p])
		}
		if slices.Contains(rs, m3.id) {
			for k, v := range written[p] {
				if v == "" {
					continue
				}
				holds++
				bytes += len(k) + len(v)
			}
		}
	}
	got := m3.h.receivedEntries() - received
	t.Logf("m3 holds %d entries (%d bytes of keys and values); it was sent %d entries, %d bytes in all", holds, bytes, got, sent.Load())
	if got*4 > holds {
		t.Errorf("m3 was sent %d entries on its return, holding %d: not a delta", got, holds)
	}
	if sent.Load()*4 > int64(bytes) {
		t.Errorf("m3 was sent %d bytes on its return, holding %d: not a delta", sent.Load(), bytes)
	}
}

// A member cut off for longer than the grace period: its slots go to
// the others once the grace ran out, and the partitions have every
// backup again without it (as without a grace); when it comes back it
// is a member like a new one, and no acknowledged write is lost.
func TestMemberBackAfterGraceFindsItsSlotsGiven(t *testing.T) {
	c := newTestCluster(t)
	c.publishMin = 2
	c.grace = 300 * time.Millisecond
	m1, m2, m3 := c.add(), c.add(), c.add()
	tab1 := c.waitSafe()
	written := map[int]map[string]string{}
	c.writeKeys(tab1, "before-", 0, 100, written)

	c.cutOff(m1, m2, m3)
	first := waitTable(t, m1, func(tab *partition.Table) bool { return !inTable(tab, m3.id) })
	away := 0
	for p := range parts {
		away += len(first.AwayFrom(p))
	}
	if away == 0 {
		t.Error("no slot held for m3 when it left")
	}
	// Safe (every partition with its backup on m1 or m2) only once the
	// grace ran out.
	tab2 := c.waitSafe()
	for p := range parts {
		if len(tab2.AwayFrom(p)) != 0 || len(tab2.Owners[p]) != 2 {
			t.Errorf("partition %d after the grace: %v, away %v", p, tab2.Owners[p], tab2.AwayFrom(p))
		}
	}
	c.writeKeys(tab2, "during-", 0, 1, written)
	c.deleteKeys(tab2, 1, written)
	c.writeKeys(tab2, "during-", 100, 2, written)

	c.heal(m1, m2, m3)
	final := c.waitSafe()
	if !inTable(final, m3.id) {
		t.Fatal("m3 not taken back")
	}
	c.checkReplicas(final, written)
}
