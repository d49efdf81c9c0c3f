package dmap

import (
	"context"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stowage/stowage/backup"
	"github.com/stowage/stowage/cluster"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/partition"
)

// waitForStacks waits until n goroutines' stacks show fn (a function's
// full name), or fails the test after a while.
func waitForStacks(t *testing.T, fn string, n int) {
	t.Helper()
	buf := make([]byte, 1<<20)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		if l := runtime.Stack(buf, true); strings.Count(string(buf[:l]), fn+"(") >= n {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("fewer than %d goroutines reached %s", n, fn)
}

// TestGhostReadWaitsForTakeOverData: a read (a Get, and a Range) of a
// map this member does not hold, arriving while the member takes the
// key's partition over (as a member restarted empty does when it takes
// its partitions back), waits for the take-over, and then reads the
// data the take-over brought: the take-over holds the map before it
// activates the partition. Answering "absent" because the map was not
// held when the read came hid an entry every other member showed.
func TestGhostReadWaitsForTakeOverData(t *testing.T) {
	ctx := context.Background()
	self := cluster.Member{ID: "m1", Addr: "m1"}
	e := New(Config{View: cluster.NewStaticView(self), Replicas: 1, StartMin: 1, OpTimeout: 30 * time.Second,
		OpenMap: func(context.Context, string) (MapSpec, error) { return MapSpec{}, nil }})
	e.Start()
	defer e.Close()
	key, val := []byte("job-09"), []byte("c2-1121")
	p := partition.Of(key, e.parts)
	r := e.repl.Replica(p)
	for deadline := time.Now().Add(30 * time.Second); r.State() != partition.Active; {
		if time.Now().After(deadline) {
			t.Fatalf("partition %d is %s, not active", p, r.State())
		}
		time.Sleep(time.Millisecond)
	}
	// A newer table gives the partition to this member anew: the replica
	// is acquiring, as on a member that takes back the slots held for it.
	cur, _ := e.proto.Table()
	next := *cur
	next.Version = cur.Version + 1
	next.Since = slices.Clone(cur.Since)
	next.Since[p] = next.Version
	mv := r.OnTable(&next, e.Self(), func() {}, func() {})
	if !mv.Acquire || r.State() != partition.Acquiring {
		t.Fatalf("partition %d is %s after a table that gives it anew (move %+v)", p, r.State(), mv)
	}
	if e.Held("taken") {
		t.Fatal("the map is held before the take-over")
	}

	m, err := e.Lookup("taken")
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		val []byte
		ok  bool
		err error
	}
	got := make(chan result, 1)
	go func() {
		v, ok, err := m.Get(ctx, key)
		got <- result{v, ok, err}
	}()
	ranged := make(chan result, 1)
	go func() {
		var res result
		res.err = m.Range(ctx, func(k string, v []byte) bool {
			if k == string(key) {
				res.val, res.ok = v, true
			}
			return true
		})
		ranged <- res
	}()
	waitForStacks(t, "partition.(*Replica).EnterRead", 2)
	select {
	case res := <-got:
		t.Fatalf("the read did not wait for the partition being taken over: %+v", res)
	case res := <-ranged:
		t.Fatalf("the range did not wait for the partition being taken over: %+v", res)
	default:
	}

	// The take-over installs the copy of the previous owner, which holds
	// the map here, and activates the partition.
	ver := backup.VerOf(mapstore.Version{Epoch: 1, Seq: 1})
	data := &backup.PartData{P: p, Maps: []backup.MapPart{{Map: "taken", Ver: ver, Applied: 1,
		Entries: []backup.Entry{{K: key, V: val, R: ver}}}}}
	epoch, err := holder{e}.TakeOver(ctx, p, backup.Source{Data: data}, func(seen uint64) uint64 { return seen + 1 })
	if err != nil {
		t.Fatal(err)
	}
	if !r.Activate(mv.Gen, epoch, nil, func() bool { return true }, func() {}, func() {}) {
		t.Fatalf("partition %d not activated: %s", p, r.State())
	}
	for what, ch := range map[string]chan result{"get": got, "range": ranged} {
		res := <-ch
		if res.err != nil || !res.ok || string(res.val) != string(val) {
			t.Errorf("a %s that waited for the take-over got %q, found %v, err %v; the take-over brought %q", what, res.val, res.ok, res.err, val)
		}
	}
}
