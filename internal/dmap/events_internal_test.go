package dmap

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/stowage/stowage/cluster"
)

// aloneEngine is a started engine of one member with its own registry.
func aloneEngine(t *testing.T) (*Engine, *prometheus.Registry) {
	t.Helper()
	self := cluster.Member{ID: "m1", Addr: "m1"}
	reg := prometheus.NewRegistry()
	e := New(Config{View: cluster.NewStaticView(self), Replicas: 1, StartMin: 1, OpTimeout: 10 * time.Second,
		Registerer: reg, ExpiryInterval: time.Hour})
	e.Start()
	return e, reg
}

// dropped sums stowage_listener_events_dropped_total of a map and place.
func dropped(t *testing.T, reg *prometheus.Registry, name, where string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() != "stowage_listener_events_dropped_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if labels(m)["map"] == name && labels(m)["where"] == where {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}

func labels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// collector gathers a listener's events.
type collector struct {
	mu  sync.Mutex
	evs []Event
	got chan struct{}
}

func newCollector() *collector { return &collector{got: make(chan struct{}, 1<<16)} }

func (c *collector) fn(ev Event) {
	c.mu.Lock()
	c.evs = append(c.evs, ev)
	c.mu.Unlock()
	c.got <- struct{}{}
}

// wait returns the first n events, failing after a long wait.
func (c *collector) wait(t *testing.T, n int) []Event {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		c.mu.Lock()
		if len(c.evs) >= n {
			out := append([]Event(nil), c.evs...)
			c.mu.Unlock()
			return out
		}
		have := len(c.evs)
		c.mu.Unlock()
		select {
		case <-c.got:
		case <-deadline:
			t.Fatalf("%d events, want %d", have, n)
		}
	}
}

func (c *collector) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.evs)
}

// A listener hears added, updated, removed and expired, with the values
// it asked for, in the order of the writes; a key listener hears its key
// only; a listener without values gets none.
func TestListenerEventKinds(t *testing.T) {
	e, _ := aloneEngine(t)
	defer e.Close()
	ctx := context.Background()
	all, one, bare := newCollector(), newCollector(), newCollector()
	if _, err := e.AddListener(ctx, "jobs", ListenerOptions{IncludeValue: true}, all.fn); err != nil {
		t.Fatal(err)
	}
	if _, err := e.AddListener(ctx, "jobs", ListenerOptions{Key: []byte("b"), IncludeValue: true}, one.fn); err != nil {
		t.Fatal(err)
	}
	if _, err := e.AddListener(ctx, "jobs", ListenerOptions{}, bare.fn); err != nil {
		t.Fatal(err)
	}
	m, err := e.Map(ctx, "jobs")
	if err != nil {
		t.Fatal(err)
	}
	must := func(_ []byte, _ bool, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(m.Put(ctx, []byte("a"), []byte("1")))
	must(m.Put(ctx, []byte("a"), []byte("2")))
	must(m.PutIfAbsent(ctx, []byte("a"), []byte("3"))) // no write, no event
	must(m.Remove(ctx, []byte("a")))
	must(m.Remove(ctx, []byte("a"))) // nothing to remove, no event
	must(m.PutWithTTL(ctx, []byte("b"), []byte("x"), time.Millisecond))
	time.Sleep(5 * time.Millisecond)
	if n := e.ExpireNow(ctx); n != 1 {
		t.Fatalf("ExpireNow removed %d, want 1", n)
	}
	type want struct {
		kind          EventKind
		key, val, old string
	}
	wants := []want{
		{EventAdded, "a", "1", ""},
		{EventUpdated, "a", "2", "1"},
		{EventRemoved, "a", "", "2"},
		{EventAdded, "b", "x", ""},
		{EventExpired, "b", "", "x"},
	}
	got := all.wait(t, len(wants))
	for i, w := range wants {
		g := got[i]
		if g.Kind != w.kind || string(g.Key) != w.key || string(g.Val) != w.val || string(g.Old) != w.old || g.Member != "m1" || g.Map != "jobs" {
			t.Errorf("event %d = %v %q val %q old %q member %q, want %v %q val %q old %q", i, g.Kind, g.Key, g.Val, g.Old, g.Member, w.kind, w.key, w.val, w.old)
		}
	}
	if kb := one.wait(t, 2); kb[0].Kind != EventAdded || kb[1].Kind != EventExpired || string(kb[0].Key) != "b" {
		t.Errorf("key listener heard %v %q, %v", kb[0].Kind, kb[0].Key, kb[1].Kind)
	}
	for _, g := range bare.wait(t, len(wants)) {
		if g.Val != nil || g.Old != nil {
			t.Errorf("a listener without values got %v val %q old %q", g.Kind, g.Val, g.Old)
		}
	}
	time.Sleep(20 * time.Millisecond)
	if n := all.count(); n != len(wants) {
		t.Errorf("%d events, want %d (a write that changed nothing raised one)", n, len(wants))
	}
	if n := one.count(); n != 2 {
		t.Errorf("key listener: %d events, want 2", n)
	}
}

// A listener that does not return does not hold up writes: its queue
// fills, further events are dropped and counted, and once it returns it
// is told how many it missed, before the events that fit again.
func TestListenerOverflowCounted(t *testing.T) {
	e, reg := aloneEngine(t)
	defer e.Close()
	ctx := context.Background()
	release := make(chan struct{})
	var relOnce sync.Once
	rel := func() { relOnce.Do(func() { close(release) }) }
	defer rel() // before Close, which waits for the listener
	var mu sync.Mutex
	var evs []Event
	first := make(chan struct{})
	var once sync.Once
	_, err := e.AddListener(ctx, "slow", ListenerOptions{QueueSize: 4}, func(ev Event) {
		once.Do(func() { close(first) })
		<-release
		mu.Lock()
		evs = append(evs, ev)
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	m, err := e.Map(ctx, "slow")
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if _, _, err := m.Put(wctx, []byte("k0"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	<-first // the listener holds event 0; its queue is empty
	const writes = 50
	for i := 1; i < writes; i++ {
		if _, _, err := m.Put(wctx, fmt.Appendf(nil, "k%d", i), []byte("v")); err != nil {
			t.Fatalf("write %d while the listener is stuck: %v", i, err)
		}
	}
	// 1 taken, 4 queued, the rest dropped.
	if d := dropped(t, reg, "slow", "queue"); d != writes-5 {
		t.Fatalf("dropped %v, want %d", d, writes-5)
	}
	rel()
	waitN := func(want int) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			mu.Lock()
			n := len(evs)
			mu.Unlock()
			if n == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d events delivered, want %d (5, a loss, 1)", n, want)
			}
			time.Sleep(time.Millisecond)
		}
	}
	waitN(6) // the queue drained, then the count of the dropped ones
	if _, _, err := m.Put(wctx, []byte("after"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	waitN(7)
	mu.Lock()
	defer mu.Unlock()
	if evs[5].Kind != EventLost || evs[5].Lost != writes-5 {
		t.Errorf("event 5 = %v lost %d, want LOST %d", evs[5].Kind, evs[5].Lost, writes-5)
	}
	if evs[6].Kind != EventAdded || string(evs[6].Key) != "after" {
		t.Errorf("event 6 = %v %q, want ADDED after", evs[6].Kind, evs[6].Key)
	}
}

// A removed listener hears nothing more; Close leaves no goroutine of
// the listeners behind, even of one stuck in its function until Close.
func TestListenerRemoveAndClose(t *testing.T) {
	before := runtime.NumGoroutine()
	e, _ := aloneEngine(t)
	ctx := context.Background()
	c := newCollector()
	id, err := e.AddListener(ctx, "jobs", ListenerOptions{}, c.fn)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if _, err := e.AddListener(ctx, "jobs", ListenerOptions{Local: i%2 == 0}, func(Event) {}); err != nil {
			t.Fatal(err)
		}
	}
	m, _ := e.Map(ctx, "jobs")
	if _, _, err := m.Put(ctx, []byte("a"), []byte("1")); err != nil {
		t.Fatal(err)
	}
	c.wait(t, 1)
	if err := e.RemoveListener(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := e.RemoveListener(ctx, id); err == nil {
		t.Error("removing a listener twice did not fail")
	}
	if _, _, err := m.Put(ctx, []byte("a"), []byte("2")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	if n := c.count(); n != 1 {
		t.Errorf("%d events, want 1: the removed listener heard a later write", n)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.AddListener(ctx, "jobs", ListenerOptions{}, c.fn); err == nil {
		t.Error("AddListener after Close did not fail")
	}
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines after Close, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// An event of a partition's former owner that arrives after one of its
// new owner (a higher epoch) is dropped, not delivered out of order.
func TestListenerStaleEpochDropped(t *testing.T) {
	self := cluster.Member{ID: "m1", Addr: "m1", RPC: "m1"}
	other := cluster.Member{ID: "m2", Addr: "m2", RPC: "m2"}
	view := cluster.NewStaticView(self)
	view.Set(self, other)
	reg := prometheus.NewRegistry()
	e := New(Config{View: view, Replicas: 1, StartMin: 1, OpTimeout: 10 * time.Second, Registerer: reg})
	defer e.Close()
	ctx := context.Background()
	c := newCollector()
	if _, err := e.AddListener(ctx, "jobs", ListenerOptions{IncludeValue: true}, c.fn); err != nil {
		t.Fatal(err)
	}
	ev := func(epoch uint64, val string) wireEvent {
		return wireEvent{Map: "jobs", Kind: EventUpdated, Key: []byte("k"), Val: []byte(val), Part: 7, Epoch: epoch}
	}
	if err := e.onEvents("m2", &eventsReq{Events: []wireEvent{ev(3, "new"), ev(2, "old"), ev(3, "newer")}}); err != nil {
		t.Fatal(err)
	}
	if err := e.onEvents("m2", &eventsReq{Events: []wireEvent{{Map: "jobs", Kind: 99, Key: []byte("k")}}}); err == nil {
		t.Error("an event of an unknown kind was accepted")
	}
	got := c.wait(t, 2)
	if string(got[0].Val) != "new" || string(got[1].Val) != "newer" || got[0].Member != "m2" {
		t.Errorf("delivered %q from %q, %q; want new from m2, newer", got[0].Val, got[0].Member, got[1].Val)
	}
	if d := dropped(t, reg, "jobs", "stale"); d != 1 {
		t.Errorf("stale drops %v, want 1", d)
	}
	// Events the owner dropped are told with its next call, even
	// without an event.
	if err := e.onEvents("m2", &eventsReq{Lost: []lostCount{{Map: "jobs", N: 3}}}); err != nil {
		t.Fatal(err)
	}
	if got := c.wait(t, 3)[2]; got.Kind != EventLost || got.Lost != 3 {
		t.Errorf("after a call with 3 lost: %v lost %d, want LOST 3", got.Kind, got.Lost)
	}
}

// BenchmarkPutListened measures a put on a member alone with no
// listener, and with one listener of the map that keeps up.
func BenchmarkPutListened(b *testing.B) {
	for _, listened := range []bool{false, true} {
		b.Run(fmt.Sprintf("listener=%v", listened), func(b *testing.B) {
			self := cluster.Member{ID: "m1", Addr: "m1"}
			e := New(Config{View: cluster.NewStaticView(self), Replicas: 1, StartMin: 1, OpTimeout: 10 * time.Second,
				Registerer: prometheus.NewRegistry()})
			defer e.Close()
			e.Start()
			ctx := context.Background()
			if listened {
				if _, err := e.AddListener(ctx, "jobs", ListenerOptions{IncludeValue: true}, func(Event) {}); err != nil {
					b.Fatal(err)
				}
			}
			m, err := e.Map(ctx, "jobs")
			if err != nil {
				b.Fatal(err)
			}
			keys := make([][]byte, 1024)
			for i := range keys {
				keys[i] = fmt.Appendf(nil, "k%d", i)
			}
			val := []byte("value")
			for i := 0; b.Loop(); i++ {
				if _, _, err := m.Put(ctx, keys[i%len(keys)], val); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
