package backup_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stowage/stowage/backup"
	"github.com/stowage/stowage/cluster"
	"github.com/stowage/stowage/partition"
	"github.com/stowage/stowage/serde/keyhash"
)

// parts is the partition count of the test clusters: small, so that
// every partition's fate can be checked.
const parts = 8

// longStop bounds every wait; a safety net, not a timing assertion.
const longStop = 30 * time.Second

var errClosed = errors.New("closed")

// member is one replicator with its protocol and fake holder, on an
// in-memory network: no map engine, no sockets.
type member struct {
	id    string
	self  cluster.Member
	view  *cluster.StaticView
	tr    *cluster.MemTransport
	proto *cluster.Protocol
	repl  *backup.Replicator
	h     *fakeHolder
}

type testCluster struct {
	t       *testing.T
	net     *cluster.MemNetwork
	members []*member // live, oldest first
	seq     int
	// publishMin is the members' ProtocolConfig.PublishMin (split-brain
	// protection: a smaller side keeps its last table).
	publishMin int
	// lease is the members' ProtocolConfig.Lease (0: none).
	lease time.Duration
	// grace is the members' ProtocolConfig.BackupGrace (0: none).
	grace time.Duration
}

func newTestCluster(t *testing.T) *testCluster {
	return &testCluster{t: t, net: cluster.NewMemNetwork()}
}

// add starts a member that sees the live members and is seen by them.
func (c *testCluster) add() *member {
	id := fmt.Sprintf("m%d", c.seq+1)
	return c.addAt(id, id)
}

// addAt is add with the member's id and its advertised address given:
// a member restarted comes back at its address under a new id. It
// starts after every member before it.
func (c *testCluster) addAt(id, addr string) *member {
	c.seq++
	m := &member{id: id, self: cluster.Member{ID: id, Addr: addr, RPC: id, Run: id, Started: time.Unix(int64(c.seq), 0)}, h: newFakeHolder(parts)}
	// Like a member that joins through its member list, the new member
	// sees the others from the start (before any of them sees it and
	// sends it a table).
	m.view = cluster.NewStaticView(m.self)
	var others []cluster.Member
	for _, x := range c.members {
		others = append(others, x.self)
	}
	m.view.Set(append(others, m.self)...)
	m.tr = c.net.Transport(id)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	m.proto = cluster.NewProtocol(cluster.ProtocolConfig{View: m.view, Transport: m.tr, Partitions: parts, Replicas: 2,
		PublishMin: c.publishMin, Lease: c.lease, BackupGrace: c.grace, Timeout: longStop, Closed: errClosed, Logger: log})
	m.repl = backup.New(backup.Config{Protocol: m.proto, Holder: m.h, Workers: 2, Closed: errClosed, Logger: log})
	m.proto.Serve()
	c.members = append(c.members, m)
	c.publish()
	m.proto.Start()
	c.t.Cleanup(func() { m.stop() })
	return m
}

func (m *member) stop() {
	m.proto.Stop()
	m.tr.Close()
}

// kill stops m as a crash would, and the others' failure detection drops it.
func (c *testCluster) kill(m *member) {
	m.stop()
	c.members = slices.DeleteFunc(c.members, func(x *member) bool { return x == m })
	c.publish()
}

func (c *testCluster) publish() {
	ms := make([]cluster.Member, len(c.members))
	for i, m := range c.members {
		ms[i] = m.self
	}
	for _, m := range c.members {
		m.view.Set(ms...)
	}
}

// waitSafe waits until every live member has the same table and every
// partition is active on its owner with its backup filled.
func (c *testCluster) waitSafe() *partition.Table {
	c.t.Helper()
	deadline := time.Now().Add(longStop)
	for {
		why := ""
		t0, _ := c.members[0].proto.Table()
		for _, m := range c.members {
			t, _ := m.proto.Table()
			switch {
			case t == nil || t0 == nil || t.Version != t0.Version:
				why = fmt.Sprintf("%s has another table", m.id)
			case why == "":
				why = m.repl.LocalSafeWhy()
			}
		}
		if why == "" && t0 != nil {
			// Every live member has its share: a member that just joined
			// is not safe in a table made before it.
			for _, m := range c.members {
				if !slices.Contains(t0.Members(), m.id) {
					why = fmt.Sprintf("%s is in no replica set", m.id)
				}
			}
			for p, rs := range t0.Owners {
				for _, id := range rs {
					if !slices.ContainsFunc(c.members, func(m *member) bool { return m.id == id }) {
						why = fmt.Sprintf("partition %d has a replica on %s, not live", p, id)
					}
				}
				if len(rs) < min(2, len(c.members)) {
					why = fmt.Sprintf("partition %d has %d replicas", p, len(rs))
				}
			}
		}
		if why == "" && t0 != nil {
			return t0
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("not safe within %s: %s", longStop, why)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (c *testCluster) byID(id string) *member {
	for _, m := range c.members {
		if m.id == id {
			return m
		}
	}
	c.t.Fatalf("no live member %s", id)
	return nil
}

// outsider returns a live member that is no replica of partition p.
func (c *testCluster) outsider(tab *partition.Table, p int) *member {
	c.t.Helper()
	for _, m := range c.members {
		if !slices.Contains(tab.Owners[p], m.id) {
			return m
		}
	}
	c.t.Fatalf("every member is a replica of partition %d", p)
	return nil
}

// keysOf returns n keys of partition p.
func keysOf(p, n int) []string {
	var out []string
	for i := 0; len(out) < n; i++ {
		k := fmt.Sprintf("k%d", i)
		if keyhash.Partition([]byte(k), parts) == p {
			out = append(out, k)
		}
	}
	return out
}

// writeAll writes three keys to every partition at its owner and
// returns them by partition.
func (c *testCluster) writeAll(t *partition.Table, tag string) map[int][]string {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), longStop)
	defer cancel()
	written := map[int][]string{}
	for p := range parts {
		owner := c.byID(t.Owner(p))
		for _, k := range keysOf(p, 3) {
			if err := owner.h.put(ctx, owner.repl, p, k, tag+k); err != nil {
				c.t.Fatalf("put %s at %s (partition %d): %v", k, owner.id, p, err)
			}
			written[p] = append(written[p], k)
		}
	}
	return written
}

// checkHas fails unless m holds every written key of partition p with
// the value tag+key.
func checkHas(t *testing.T, m *member, p int, keys []string, tag string) {
	t.Helper()
	for _, k := range keys {
		if v, _, ok := m.h.value(p, k); !ok || v != tag+k {
			t.Errorf("%s partition %d key %s: %q, %v; want %q", m.id, p, k, v, ok, tag+k)
		}
	}
}

func TestFillThenPromotion(t *testing.T) {
	c := newTestCluster(t)
	m1, m2 := c.add(), c.add()
	tab := c.waitSafe()
	written := c.writeAll(tab, "v1-")
	// Every backup applied every acknowledged write.
	for p := range parts {
		checkHas(t, c.byID(tab.Owners[p][1]), p, written[p], "v1-")
	}
	oldEpoch := map[int]uint64{}
	for p := range parts {
		oldEpoch[p] = m2.repl.Replica(p).Epoch()
	}
	c.kill(m1)
	tab2 := c.waitSafe()
	for p := range parts {
		if tab2.Owner(p) != m2.id {
			t.Fatalf("partition %d owned by %s after m1 died", p, tab2.Owner(p))
		}
		checkHas(t, m2, p, written[p], "v1-")
		if tab.Owner(p) != m1.id {
			continue
		}
		// m2 was p's filled backup: a promotion of its own copy, in an
		// epoch above the old owner's.
		tos := m2.h.takeoversOf(p)
		last := tos[len(tos)-1]
		if last.src.Data != nil || last.src.Store || last.src.OwnHeld {
			t.Errorf("partition %d taken over from %+v, want this member's own backup copy", p, last.src)
		}
		if last.epoch <= oldEpoch[p] {
			t.Errorf("partition %d: epoch %d after promotion, not above %d", p, last.epoch, oldEpoch[p])
		}
	}
	// Writes go on at the new owner.
	c.writeAll(tab2, "v2-")
}

func TestHandOverAndRefill(t *testing.T) {
	c := newTestCluster(t)
	m1 := c.add()
	tab := c.waitSafe()
	written := c.writeAll(tab, "v1-")
	m2 := c.add()
	tab2 := c.waitSafe()
	moved := 0
	for p := range parts {
		owner, backupID := tab2.Owners[p][0], tab2.Owners[p][1]
		checkHas(t, c.byID(owner), p, written[p], "v1-")
		checkHas(t, c.byID(backupID), p, written[p], "v1-")
		if owner != m2.id {
			continue
		}
		moved++
		// Migrated: m2 took m1's owner data over (a hand-over, not a
		// promotion, nor the store).
		tos := m2.h.takeoversOf(p)
		last := tos[len(tos)-1]
		if last.src.Data == nil || last.src.Promoted || last.src.Store {
			t.Errorf("partition %d moved to m2 from %+v, want m1's hand-over", p, last.src)
		}
		if st := m1.repl.Replica(p).State(); st != partition.Backup {
			t.Errorf("m1 after handing partition %d over: %s, want backup", p, st)
		}
	}
	if moved == 0 || moved == parts {
		t.Fatalf("%d of %d partitions moved to the new member", moved, parts)
	}
}

func TestBackupThatLostItsCopyIsFilledAgain(t *testing.T) {
	c := newTestCluster(t)
	c.add()
	c.add()
	tab := c.waitSafe()
	written := c.writeAll(tab, "v1-")
	p := 0
	owner, b := c.byID(tab.Owners[p][0]), c.byID(tab.Owners[p][1])
	// The backup lost its copy (it missed records): it refuses the next
	// record, which changes nothing and is to be routed again.
	b.h.setFilled(p, false)
	ctx, cancel := context.WithTimeout(context.Background(), longStop)
	defer cancel()
	err := owner.h.put(ctx, owner.repl, p, "late", "x")
	if err == nil || !strings.Contains(err.Error(), "refused true") {
		t.Fatalf("write onto a backup that lost its copy: %v, want a refusal to route again", err)
	}
	// The owner fills it again; the write then succeeds and the backup
	// has everything.
	deadline := time.Now().Add(longStop)
	for {
		if err = owner.h.put(ctx, owner.repl, p, "late", "x"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("write still refused after the refill: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	checkHas(t, b, p, written[p], "v1-")
	if v, _, ok := b.h.value(p, "late"); !ok || v != "x" {
		t.Fatalf("backup after refill: late = %q, %v", v, ok)
	}
	if why := owner.repl.LocalSafeWhy(); why != "" {
		t.Fatalf("owner not safe after the refill: %s", why)
	}
}

func TestRecordFromNonOwnerRefused(t *testing.T) {
	c := newTestCluster(t)
	c.add()
	c.add()
	c.add()
	tab := c.waitSafe()
	p := 0
	b, x := c.byID(tab.Owners[p][1]), c.outsider(tab, p)
	// A member that does not own p sends p's backup a record of the
	// right epoch: refused, nothing applied.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	rec := backup.Record{Map: "m", P: p, Epoch: b.repl.Replica(p).Epoch(), Rec: backup.Entry{K: []byte("forged"), V: []byte("x"), R: backup.Ver{E: b.repl.Replica(p).Epoch(), S: 1 << 30}}}
	resp, err := x.proto.Call(ctx, b.id, "backup", cluster.Encode(rec))
	if err != nil {
		t.Fatalf("call: %v", err)
	}
	if _, _, ok := b.h.value(p, "forged"); ok {
		t.Fatal("a record from a member that does not own the partition was applied")
	}
	var ans struct {
		Code int    `msgpack:"c"`
		Msg  string `msgpack:"x"`
	}
	if err := cluster.Decode(resp, &ans); err != nil || ans.Code == 0 || !strings.Contains(ans.Msg, "not its owner") {
		t.Fatalf("answer %+v (%v), want a refusal naming the owner", ans, err)
	}
}

func TestReleaseFromNonOwnerRefused(t *testing.T) {
	c := newTestCluster(t)
	c.add()
	c.add()
	c.add()
	tab := c.waitSafe()
	written := c.writeAll(tab, "v1-")
	p := 0
	b, x := c.byID(tab.Owners[p][1]), c.outsider(tab, p)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	body := cluster.Encode(struct {
		P     int    `msgpack:"p"`
		Epoch uint64 `msgpack:"e"`
	}{P: p, Epoch: 1 << 50})
	// The dispatcher refuses it (the caller is not a replica of p), or
	// the handler does (it is not p's owner): either way nothing moves.
	if _, err := x.proto.Call(ctx, b.id, "release", body); err != nil && !strings.Contains(err.Error(), cluster.ErrNotReplica.Error()) {
		t.Fatalf("call: %v", err)
	}
	checkHas(t, b, p, written[p], "v1-")
	if k, _ := b.repl.Replica(p).Status(tab.JoinedAt(p, b.id), false); k != partition.HoldBackup {
		t.Fatalf("backup after a release from a member that does not own the partition: %v, want a filled backup", k)
	}
}
