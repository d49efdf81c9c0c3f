package cluster

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"strings"
	"testing"
	"time"
)

// Tests of the dispatcher's checks: who may install a table, who is
// served a partition's replica methods, and who is served at all.

type dispatchMember struct {
	m  Member
	v  *StaticView
	pr *Protocol
}

// dispatchCluster makes one protocol per transport, every one with a view
// of members (oldest first); none is started, so that nothing but the
// test's calls moves.
func dispatchCluster(t *testing.T, trs []Transport, members []Member) []*dispatchMember {
	t.Helper()
	return partitionedCluster(t, trs, members, 4)
}

// partitionedCluster is dispatchCluster with the given partition count.
func partitionedCluster(t *testing.T, trs []Transport, members []Member, partitions int) []*dispatchMember {
	t.Helper()
	out := make([]*dispatchMember, len(trs))
	for i, tr := range trs {
		v := NewStaticView(members[i])
		v.Set(members...)
		pr := NewProtocol(ProtocolConfig{View: v, Transport: tr, Partitions: partitions, Replicas: 2, Timeout: 2 * time.Second,
			Logger: slog.New(slog.DiscardHandler)})
		pr.RegisterReplicated("probe", 0, func(b []byte) ([]int, error) {
			var ps []int
			return ps, Decode(b, &ps)
		}, func(context.Context, string, []byte) ([]byte, error) { return []byte("served"), nil })
		pr.Register("ping", 0, func(context.Context, string, []byte) ([]byte, error) { return []byte("pong"), nil })
		pr.Serve()
		t.Cleanup(func() { pr.Stop(); tr.Close() })
		out[i] = &dispatchMember{m: members[i], v: v, pr: pr}
	}
	return out
}

func memCluster(t *testing.T, ids ...string) []*dispatchMember {
	n := NewMemNetwork()
	var trs []Transport
	var ms []Member
	for i, id := range ids {
		trs = append(trs, n.Transport(id))
		ms = append(ms, Member{ID: id, RPC: id, Started: time.Unix(int64(i+1), 0)})
	}
	return dispatchCluster(t, trs, ms)
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestTableOnlyFromMaster(t *testing.T) {
	c := memCluster(t, "a", "b", "c") // a is the master
	tab := Encode(tableMsg{Version: 5, Owners: [][]string{{"a", "c"}, {"b", "c"}, {"a", "b"}, {"c", "a"}}})
	if _, err := c[1].pr.Call(testCtx(t), "c", mTable, tab); err == nil || !strings.Contains(err.Error(), ErrNotMaster.Error()) {
		t.Fatalf("a table from b, not the master: %v, want ErrNotMaster", err)
	}
	if v := c[2].pr.TableVersion(); v != 0 {
		t.Fatalf("c installed version %d from b", v)
	}
	if _, err := c[0].pr.Call(testCtx(t), "c", mTable, tab); err != nil {
		t.Fatal(err)
	}
	if v := c[2].pr.TableVersion(); v != 5 {
		t.Fatalf("c has version %d after the master's table, want 5", v)
	}
}

func TestTableVersionOverflowRefused(t *testing.T) {
	c := memCluster(t, "a", "b")
	for _, v := range []int64{math.MaxInt64, MaxTableVersion + 1} {
		tab := Encode(tableMsg{Version: v, Owners: [][]string{{"a", "b"}, {"b", "a"}, {"a", "b"}, {"b", "a"}}})
		if _, err := c[0].pr.Call(testCtx(t), "b", mTable, tab); err == nil {
			t.Errorf("version %d: accepted", v)
		}
		if got := c[1].pr.TableVersion(); got != 0 {
			t.Fatalf("version %d installed as %d", v, got)
		}
	}
	// Nor through the other ways a table arrives.
	if c[1].pr.install(tableMsg{Version: math.MaxInt64, Owners: [][]string{{"a"}, {"a"}, {"a"}, {"a"}}}.table()) {
		t.Error("install took version MaxInt64")
	}
}

func TestReplicaMethodsOnlyForReplicas(t *testing.T) {
	c := memCluster(t, "a", "b", "c")
	tab := Encode(tableMsg{Version: 3, Owners: [][]string{{"a", "c"}, {"b", "c"}, {"a", "b"}, {"c", "a"}}})
	if _, err := c[0].pr.Call(testCtx(t), "c", mTable, tab); err != nil {
		t.Fatal(err)
	}
	if _, err := c[1].pr.Call(testCtx(t), "c", "probe", Encode([]int{0})); err == nil || !strings.Contains(err.Error(), ErrNotReplica.Error()) {
		t.Errorf("b, not a replica of 0: %v, want ErrNotReplica", err)
	}
	if _, err := c[1].pr.Call(testCtx(t), "c", "probe", Encode([]int{1, 0})); err == nil {
		t.Error("b, a replica of 1 but not of 0, was served both")
	}
	if _, err := c[1].pr.Call(testCtx(t), "c", "probe", Encode([]int{99})); err == nil {
		t.Error("partition 99 was served")
	}
	if b, err := c[1].pr.Call(testCtx(t), "c", "probe", Encode([]int{1})); err != nil || string(b) != "served" {
		t.Errorf("b, a replica of 1: %q, %v", b, err)
	}
}

// TestSecureDispatchServesMembersOnly: over an authenticated transport, a
// caller that is not in the view is refused, even when its frames name
// a member's address.
func TestSecureDispatchServesMembersOnly(t *testing.T) {
	sec := &Security{Secret: []byte("a shared secret of the cluster, 1")}
	var trs []*TCPTransport
	for range 3 {
		tr, err := ListenTCP("127.0.0.1:0", TCPOptions{Security: sec})
		if err != nil {
			t.Fatal(err)
		}
		trs = append(trs, tr)
	}
	a, b := Member{ID: "a", RPC: trs[0].Addr(), Started: time.Unix(1, 0)}, Member{ID: "b", RPC: trs[1].Addr(), Started: time.Unix(2, 0)}
	x := Member{ID: "x", RPC: trs[2].Addr(), Started: time.Unix(3, 0)}
	c := dispatchCluster(t, []Transport{trs[0], trs[1], trs[2]}, []Member{a, b, x})
	c[1].v.Set(a, b) // b's view: x is not a member
	if got, err := c[0].pr.Call(testCtx(t), b.RPC, "ping", nil); err != nil || string(got) != "pong" {
		t.Fatalf("a member's call: %q, %v", got, err)
	}
	if _, err := c[2].pr.Call(testCtx(t), b.RPC, "ping", nil); !errors.Is(err, ErrNotMember) {
		t.Fatalf("x, not a member: %v, want ErrNotMember", err)
	}
	// x's frames name a's address; its certificate names its own.
	tx, err := ListenTCP("127.0.0.1:0", TCPOptions{Security: sec, Advertise: a.RPC})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	tx.tls.mu.Lock()
	tx.tls.addr, tx.tls.leaf = x.RPC, nil
	tx.tls.mu.Unlock()
	px := NewProtocol(ProtocolConfig{View: NewStaticView(x), Transport: tx, Partitions: 4, Replicas: 2, Logger: slog.New(slog.DiscardHandler)})
	defer px.Stop()
	if _, err := px.Call(testCtx(t), b.RPC, "ping", nil); !errors.Is(err, ErrNotMember) {
		t.Fatalf("x stating a's address: %v, want ErrNotMember", err)
	}
	tab := Encode(tableMsg{Version: 9, Owners: [][]string{{"x"}, {"x"}, {"x"}, {"x"}}})
	if _, err := px.Call(testCtx(t), b.RPC, mTable, tab); err == nil || c[1].pr.TableVersion() != 0 {
		t.Fatalf("x stating the master's address installed a table: %v, version %d", err, c[1].pr.TableVersion())
	}
}

// TestUnauthenticatedMemberTakenAsGone: a node in the view whose
// transport cannot prove it is a member (another secret: it got into the
// gossip but has no certificate of the cluster's) is left out of the
// members the tables are made for.
func TestUnauthenticatedMemberTakenAsGone(t *testing.T) {
	good, err := ListenTCP("127.0.0.1:0", TCPOptions{Security: &Security{Secret: []byte("a shared secret of the cluster, 1")}})
	if err != nil {
		t.Fatal(err)
	}
	stranger, err := ListenTCP("127.0.0.1:0", TCPOptions{Security: &Security{Secret: []byte("another secret, another cluster")}})
	if err != nil {
		t.Fatal(err)
	}
	x := Member{ID: "x", RPC: stranger.Addr(), Started: time.Unix(1, 0)} // the oldest
	a := Member{ID: "a", RPC: good.Addr(), Started: time.Unix(2, 0)}
	c := dispatchCluster(t, []Transport{stranger, good}, []Member{x, a})
	pa := c[1].pr
	pa.Members() // learns the addresses, as Start does
	_, err = pa.Call(testCtx(t), x.RPC, mGetTab, nil)
	if !errors.Is(err, ErrAuthFailed) || !errors.Is(err, ErrUnreachable) {
		t.Fatalf("call to the stranger: %v, want ErrAuthFailed and ErrUnreachable", err)
	}
	ms := pa.Members()
	if len(ms) != 1 || ms[0].ID != "a" {
		t.Fatalf("members after the failed handshake: %v, want a alone (a the master)", ms)
	}
}

// A member shown a newer table version by another member fetches the
// table from its master, never from whoever showed the version: a member
// that is not the master cannot hand out a table of its own making.
func TestNewerTableFetchedFromMasterOnly(t *testing.T) {
	c := memCluster(t, "a", "b", "c") // a is the master
	v5 := Encode(tableMsg{Version: 5, Owners: [][]string{{"a", "c"}, {"b", "c"}, {"a", "b"}, {"c", "a"}}})
	for _, to := range []string{"b", "c"} {
		if _, err := c[0].pr.Call(testCtx(t), to, mTable, v5); err != nil {
			t.Fatal(err)
		}
	}
	forged := tableMsg{Version: 9, Owners: [][]string{{"b"}, {"b"}, {"b"}, {"b"}}, Order: []string{"b", "a", "c"}}
	if !c[1].pr.install(forged.table()) {
		t.Fatal("b did not install its own table")
	}
	c[2].pr.NoteTable(testCtx(t), "b", 9)
	if v := c[2].pr.TableVersion(); v != 5 {
		t.Fatalf("c installed version %d shown by b, not the master", v)
	}
	// The master has a newer table: c takes that one.
	mine := tableMsg{Version: 9, Owners: [][]string{{"a", "b"}, {"c", "a"}, {"b", "c"}, {"a", "c"}}}
	c[0].pr.install(mine.table())
	c[2].pr.NoteTable(testCtx(t), "b", 9)
	got, _ := c[2].pr.Table()
	if got == nil || got.Version != 9 || got.Owner(0) != "a" {
		t.Fatalf("c's table after the master's: %+v, want the master's version 9", got)
	}
}

// A member asked for its table above a version answers the whole table
// only when its own is newer, else its version alone; asked with no
// version, it answers the whole table.
func TestGetTabAboveAnswersVersionOnly(t *testing.T) {
	c := memCluster(t, "a", "b") // a is the master
	v5 := Encode(tableMsg{Version: 5, Owners: [][]string{{"a", "b"}, {"b", "a"}, {"a", "b"}, {"b", "a"}}})
	if _, err := c[0].pr.Call(testCtx(t), "b", mTable, v5); err != nil {
		t.Fatal(err)
	}
	ask := func(body []byte) tableMsg {
		t.Helper()
		b, err := c[0].pr.Call(testCtx(t), "b", mGetTab, body)
		if err != nil {
			t.Fatal(err)
		}
		var tm tableMsg
		if err := Decode(b, &tm); err != nil {
			t.Fatal(err)
		}
		return tm
	}
	for _, tc := range []struct {
		body  []byte
		whole bool
	}{{nil, true}, {Encode(getTabReq{Above: 4}), true}, {Encode(getTabReq{Above: 5}), false}, {Encode(getTabReq{Above: 9}), false}} {
		tm := ask(tc.body)
		if tm.Version != 5 || (len(tm.Owners) == 4) != tc.whole {
			t.Fatalf("gettab %x: version %d with %d partitions, want version 5, whole table %v", tc.body, tm.Version, len(tm.Owners), tc.whole)
		}
	}
	if offers := c[0].pr.collectTables([]Member{c[0].m, c[1].m}, 5); len(offers) != 0 {
		t.Fatalf("tables above 5 collected: %d, want none", len(offers))
	}
	if offers := c[0].pr.collectTables([]Member{c[0].m, c[1].m}, 4); len(offers) != 1 || offers[0].t.Version != 5 {
		t.Fatalf("tables above 4 collected: %v, want b's version 5", offers)
	}
}
