package stowage_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stowage/stowage"
)

// eventLog gathers a listener's events.
type eventLog struct {
	mu  sync.Mutex
	evs []stowage.EntryEvent[string, string]
}

func (l *eventLog) add(ev stowage.EntryEvent[string, string]) {
	l.mu.Lock()
	l.evs = append(l.evs, ev)
	l.mu.Unlock()
}

func (l *eventLog) snapshot() []stowage.EntryEvent[string, string] {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]stowage.EntryEvent[string, string](nil), l.evs...)
}

// waitFor waits until ok holds of the events gathered.
func (l *eventLog) waitFor(t *testing.T, what string, ok func([]stowage.EntryEvent[string, string]) bool) []stowage.EntryEvent[string, string] {
	t.Helper()
	deadline := time.Now().Add(longStop)
	for {
		evs := l.snapshot()
		if ok(evs) {
			return evs
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s (%d events)", what, longStop, len(evs))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A cluster-wide listener on one member hears the writes applied by
// every owner, naming the owner; a local listener on the same member
// hears only the entries that member owns.
func TestClusterListenerHearsEveryOwner(t *testing.T) {
	tc := newTCluster(t, memoryConfig(1, 0))
	for range 3 {
		tc.add()
	}
	tc.waitLoaded()
	ctx := context.Background()
	ms := tc.live()
	m1 := strMap(t, ms[0].node, "jobs")
	var all, local eventLog
	if _, err := m1.AddEntryListener(ctx, all.add, stowage.ListenerOptions{IncludeValue: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := m1.AddEntryListener(ctx, local.add, stowage.ListenerOptions{Local: true}); err != nil {
		t.Fatal(err)
	}
	via := strMap(t, ms[1].node, "jobs")
	const n = 60
	owners := map[string]string{}
	ownedBy1 := 0
	for i := range n {
		k := fmt.Sprintf("k%02d", i)
		if err := via.Put(ctx, k, "v"+k); err != nil {
			t.Fatal(err)
		}
		owners[k] = ownerOf(t, ms[0], k)
		if owners[k] == ms[0].id {
			ownedBy1++
		}
	}
	if ownedBy1 == 0 || ownedBy1 == n {
		t.Fatalf("%d of %d keys owned by %s: the test needs keys owned elsewhere and here", ownedBy1, n, ms[0].id)
	}
	evs := all.waitFor(t, "every write heard on m1", func(evs []stowage.EntryEvent[string, string]) bool { return len(evs) >= n })
	heard := map[string]bool{}
	for _, ev := range evs {
		if ev.Type != stowage.EntryAdded || ev.Err != nil || !ev.HasValue || ev.Value != "v"+ev.Key || ev.Member != owners[ev.Key] {
			t.Errorf("event %v %q = %q (has %v, err %v) from %s; want ADDED with its value from its owner %s",
				ev.Type, ev.Key, ev.Value, ev.HasValue, ev.Err, ev.Member, owners[ev.Key])
		}
		heard[ev.Key] = true
	}
	if len(heard) != n {
		t.Errorf("heard %d keys, want %d", len(heard), n)
	}
	// Events of m1's own keys were raised before the writes returned;
	// wait a little for any that should not be there.
	time.Sleep(100 * time.Millisecond)
	for _, ev := range local.snapshot() {
		if ev.Member != ms[0].id || ev.HasValue {
			t.Errorf("local listener heard %q from %s (value %v)", ev.Key, ev.Member, ev.HasValue)
		}
	}
	if got := len(local.snapshot()); got != ownedBy1 {
		t.Errorf("local listener heard %d events, want %d (the keys %s owns)", got, ownedBy1, ms[0].id)
	}
	if got := len(all.snapshot()); got != n {
		t.Errorf("cluster-wide listener heard %d events, want %d", got, n)
	}
}

// The events of one key reach a cluster-wide listener in the order the
// writes were applied while the key's owner is killed and its partition
// fails over: writers on two members increment the key concurrently
// (Compute), so the values applied go up by one each time, and the
// values heard must only go up; the listener hears both owners, and the
// last write. After RemoveEntryListener it hears nothing more.
func TestClusterListenerOrderAcrossFailover(t *testing.T) {
	tc := newTCluster(t, memoryConfig(1, 0))
	for range 3 {
		tc.add()
	}
	tc.waitLoaded()
	ctx := context.Background()
	ms := tc.live()
	// A key that the listening member does not own.
	key := ""
	for i := 0; key == ""; i++ {
		if k := fmt.Sprintf("job-%d", i); ownerOf(t, ms[0], k) != ms[0].id {
			key = k
		}
	}
	var victim *tmember
	var writers []*stowage.Map[string, string]
	for _, m := range ms {
		if m.id == ownerOf(t, ms[0], key) {
			victim = m
		} else {
			writers = append(writers, strMap(t, m.node, "jobs"))
		}
	}
	m1 := strMap(t, ms[0].node, "jobs")
	var log eventLog
	id, err := m1.AddEntryListenerForKey(ctx, key, log.add, stowage.ListenerOptions{IncludeValue: true})
	if err != nil {
		t.Fatal(err)
	}
	const perWriter = 100
	incr := func(old string, _ bool) (string, bool) {
		n, _ := strconv.Atoi(old)
		return fmt.Sprintf("%06d", n+1), true
	}
	var done atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 4*len(writers))
	for _, w := range writers {
		for range 2 {
			wg.Go(func() {
				for range perWriter {
					for {
						_, _, err := w.Compute(ctx, key, incr)
						if err == nil {
							break
						}
						if !errors.Is(err, stowage.ErrIndeterminate) {
							errs <- err
							return
						}
					}
					done.Add(1)
				}
			})
		}
	}
	total := int64(2 * perWriter * len(writers))
	for done.Load() < total/2 {
		time.Sleep(time.Millisecond)
	}
	tc.kill(victim)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	final, _, err := m1.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	evs := log.waitFor(t, "the last write heard", func(evs []stowage.EntryEvent[string, string]) bool {
		return len(evs) > 0 && evs[len(evs)-1].Value == final
	})
	prev := ""
	members := map[string]bool{}
	for i, ev := range evs {
		if ev.Type == stowage.EntryLost {
			t.Logf("%d events lost before event %d", ev.Lost, i)
			continue
		}
		if ev.Key != key || ev.Value <= prev {
			t.Fatalf("event %d: %v %q = %q after %q: out of order", i, ev.Type, ev.Key, ev.Value, prev)
		}
		prev = ev.Value
		members[ev.Member] = true
	}
	if !members[victim.id] || len(members) < 2 {
		t.Errorf("events came from %v; want the killed owner %s and its successor", members, victim.id)
	}
	if err := m1.RemoveEntryListener(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := m1.Put(ctx, key, "after"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if got := log.snapshot(); got[len(got)-1].Value == "after" {
		t.Error("a removed listener heard a later write")
	}
}

// listenerGoroutines counts the goroutines of entry listeners: their
// callers, the owners' outboxes and the announcements.
func listenerGoroutines() (int, string) {
	buf := make([]byte, 1<<22)
	dump := string(buf[:runtime.Stack(buf, true)])
	n := 0
	var found []string
	for _, g := range strings.Split(dump, "\n\n") {
		for _, fn := range []string{"(*listener).run", "(*Engine).drainOutbox", "(*Engine).runAnnounce"} {
			if strings.Contains(g, fn) {
				n++
				found = append(found, g)
				break
			}
		}
	}
	return n, strings.Join(found, "\n\n")
}

// Closing every member of a cluster with cluster-wide and local
// listeners and events in flight leaves no goroutine of the listeners.
func TestClusterListenerNoGoroutineAfterClose(t *testing.T) {
	tc := newTCluster(t, memoryConfig(1, 0))
	for range 3 {
		tc.add()
	}
	tc.waitLoaded()
	ctx := context.Background()
	var log eventLog
	for i, m := range tc.live() {
		mp := strMap(t, m.node, "jobs")
		for j := range 3 {
			if _, err := mp.AddEntryListener(ctx, log.add, stowage.ListenerOptions{Local: j == 0, IncludeValue: i == 0}); err != nil {
				t.Fatal(err)
			}
		}
	}
	mp := strMap(t, tc.live()[1].node, "jobs")
	for i := range 200 {
		if err := mp.Put(ctx, fmt.Sprint(i), "v"); err != nil {
			t.Fatal(err)
		}
	}
	log.waitFor(t, "some events", func(evs []stowage.EntryEvent[string, string]) bool { return len(evs) > 0 })
	if n, _ := listenerGoroutines(); n < 3*3+3 {
		t.Fatalf("%d listener goroutines while running, want at least %d (the count is not seeing them)", n, 3*3+3)
	}
	for _, m := range tc.live() {
		tc.kill(m)
	}
	if n, stacks := listenerGoroutines(); n != 0 {
		t.Fatalf("%d listener goroutines after Close:\n%s", n, stacks)
	}
}
