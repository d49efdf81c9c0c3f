package cluster

import (
	"io"
	"log/slog"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/stowage/stowage/partition"
)

// A table's Departed travels with it, and a table of a member that
// predates it (no Departed) decodes, as a table with one goes to such a
// member.
func TestTableDepartedOnTheWire(t *testing.T) {
	tab := &partition.Table{Version: 3, Owners: [][]string{{"a"}, {"b"}}, Away: [][]string{{"c"}, nil},
		Departed: map[string]partition.Departed{"c": {Since: 12345, Addr: "10.0.0.3:5701"}}}
	var got tableMsg
	if err := Decode(Encode(tableOf(tab)), &got); err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(got.table().Departed, tab.Departed) {
		t.Errorf("decoded Departed %v, sent %v", got.table().Departed, tab.Departed)
	}
	// The table message as it was before Departed.
	type oldTableMsg struct {
		Version int64      `msgpack:"v"`
		Owners  [][]string `msgpack:"o"`
		Since   []int64    `msgpack:"s"`
		Joined  [][]int64  `msgpack:"j"`
		Order   []string   `msgpack:"r,omitempty"`
		Away    [][]string `msgpack:"a,omitempty"`
		AwayOwn []string   `msgpack:"ao,omitempty"`
	}
	var old oldTableMsg
	if err := Decode(Encode(tableOf(tab)), &old); err != nil || old.Version != 3 || len(old.Away) != 2 {
		t.Errorf("a member without Departed decodes %+v, %v", old, err)
	}
	var fromOld tableMsg
	if err := Decode(Encode(oldTableMsg{Version: 4, Owners: tab.Owners, Away: tab.Away}), &fromOld); err != nil || fromOld.table().Departed != nil {
		t.Errorf("a table without Departed decodes as %+v, %v", fromOld, err)
	}
	if err := fromOld.table().CheckAway(); err != nil {
		t.Error(err)
	}
}

// A member installs no table whose Departed names a member whose slot
// it does not hold, or an address over the bound.
func TestInstallRefusesUnboundedDeparted(t *testing.T) {
	pr := &Protocol{count: 2, log: slog.New(slog.NewTextHandler(io.Discard, nil)), tabCh: make(chan struct{})}
	base := partition.Table{Version: 1, Owners: [][]string{{"a"}, {"b"}}, Away: [][]string{{"c"}, nil}}
	bad := []map[string]partition.Departed{
		{"x": {Since: 1}},
		{"c": {Since: 1, Addr: string(make([]byte, partition.MaxDepartedAddr+1))}},
	}
	for i, d := range bad {
		tab := base
		tab.Version = int64(i + 1)
		tab.Departed = d
		if pr.install(&tab) {
			t.Errorf("installed a table with Departed %.40v", d)
		}
	}
	good := base
	good.Departed = map[string]partition.Departed{"c": {Since: 1, Addr: "h:1"}}
	if !pr.install(&good) {
		t.Error("refused a table whose Departed names the member away")
	}
}

// A new master continues a grace from the time the table keeps; a time
// ahead of its clock counts from now, and one more than a grace back
// is a grace run out.
func TestGoneSinceClampsOtherClocks(t *testing.T) {
	const grace = time.Minute
	pr := &Protocol{grace: grace}
	now := time.Now()
	tab := &partition.Table{Departed: map[string]partition.Departed{
		"past":   {Since: now.Add(-20 * time.Second).UnixNano()},
		"future": {Since: now.Add(time.Hour).UnixNano()},
		"old":    {Since: 1},
		"zero":   {},
	}}
	for id, want := range map[string]time.Time{
		"past": now.Add(-20 * time.Second), "future": now, "old": now.Add(-grace), "zero": now, "none": now,
	} {
		if got := pr.goneSince(tab, id, now); !got.Equal(want) {
			t.Errorf("%s: gone since %v, want %v", id, got, want)
		}
	}
}

// The address in a member id Cluster makes; none in ids of other forms.
func TestAddrInID(t *testing.T) {
	for id, want := range map[string]string{
		"127.0.0.1:5701-1796414288932505714": "127.0.0.1:5701",
		"[::1]:5701-17":                      "[::1]:5701",
		"m3":                                 "",
		"host-12":                            "",
		"h:1-":                               "",
		"h:1-12a":                            "",
	} {
		if got := addrInID(id); got != want {
			t.Errorf("addrInID(%q) = %q, want %q", id, got, want)
		}
	}
}

// Two members of the list at one transport address: the one started
// last is the process there; on a tie neither is taken as gone.
func TestNewestAt(t *testing.T) {
	at := func(id, rpc string, s int64) Member { return Member{ID: id, RPC: rpc, Started: time.Unix(s, 0)} }
	got := newestAt([]Member{at("a", "x", 1), at("b", "y", 2), at("a2", "x", 3), at("c", "z", 4)})
	if len(got) != 1 || got["x"].ID != "a2" {
		t.Errorf("newestAt: %v, want a2 at x", got)
	}
	if got := newestAt([]Member{at("a2", "x", 3), at("a", "x", 1), at("a1", "x", 2)}); len(got) != 1 || got["x"].ID != "a2" {
		t.Errorf("newestAt, newest first: %v, want a2 at x", got)
	}
	if got := newestAt([]Member{at("a", "x", 1), at("b", "x", 1)}); len(got) != 0 {
		t.Errorf("newestAt on a tie: %v, want none", got)
	}
}

// reclaim hands held slots over one to one: a member new to the table at
// the address of one member away takes its slots; two members away at
// one address, or two new members at one, match nothing; a member the
// table already names, or one whose old id is still a replica, takes
// nothing (yet).
func TestReclaimIsOneToOne(t *testing.T) {
	held := func(ids ...string) *partition.Table {
		tab := &partition.Table{Version: 5, Owners: [][]string{{"a"}, {"a"}, {"b"}}, Away: make([][]string, 3), AwayOwner: make([]string, 3)}
		for i, id := range ids {
			tab.Away[i] = []string{id}
		}
		tab.AwayOwner[0] = ids[0]
		return tab
	}
	mk := func(addr map[string]string) *Protocol {
		return &Protocol{grace: time.Minute, log: slog.New(slog.NewTextHandler(io.Discard, nil)),
			away: awayState{since: map[string]time.Time{}, addr: addr}}
	}
	live := func(ids ...string) []Member {
		ms := []Member{{ID: "a", Addr: "ha"}, {ID: "b", Addr: "hb"}}
		for _, id := range ids {
			ms = append(ms, Member{ID: id, Addr: "hx"})
		}
		return ms
	}

	pr := mk(map[string]string{"x": "hx"})
	base, away := pr.reclaim(held("x"), live("x2"), []string{"x"})
	if len(away) != 0 || !slices.Equal(base.AwayFrom(0), []string{"x2"}) || base.AwayOwnerOf(0) != "x2" {
		t.Errorf("one member back at x's address: away %v, slots %v, owner %q", away, base.Away, base.AwayOwnerOf(0))
	}

	pr = mk(map[string]string{"x": "hx", "y": "hx"})
	if base, away := pr.reclaim(held("x", "y"), live("x2"), []string{"x", "y"}); len(away) != 2 || base.AwayOwnerOf(0) != "x" {
		t.Errorf("two members away at one address: away %v, slots %v", away, base.Away)
	}
	pr = mk(map[string]string{"x": "hx"})
	if base, away := pr.reclaim(held("x"), live("x2", "x3"), []string{"x"}); len(away) != 1 || base.AwayOwnerOf(0) != "x" {
		t.Errorf("two new members at one address: away %v, slots %v", away, base.Away)
	}
	pr = mk(map[string]string{"x": "hx"})
	tab := held("x")
	tab.Owners[2] = []string{"b", "x2"} // x2 is a replica already
	if base, away := pr.reclaim(tab, live("x2"), []string{"x"}); len(away) != 1 || base.AwayOwnerOf(0) != "x" {
		t.Errorf("a member the table names: away %v, slots %v", away, base.Away)
	}
	pr = mk(map[string]string{"x": "hx"})
	tab = &partition.Table{Version: 5, Owners: [][]string{{"x", "a"}, {"a"}, {"b"}}}
	if base, away := pr.reclaim(tab, live("x2"), []string{"x"}); len(away) != 1 || !slices.Equal(base.Owners[0], []string{"x", "a"}) || !pr.away.handOver {
		t.Errorf("old id still a replica: away %v, owners %v, hand over next %v", away, base.Owners, pr.away.handOver)
	}
}
