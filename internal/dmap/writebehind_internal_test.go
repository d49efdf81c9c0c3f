package dmap

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/stowage/stowage/cluster"
	"github.com/stowage/stowage/mapstore"
)

// countingStore is a MapStore in memory that counts its store calls and
// keeps every record it was given, in order.
type countingStore struct {
	mu    sync.Mutex
	calls int                        // StoreAll, Store, DeleteAll and Delete calls
	recs  []mapstore.Record          // every record given, in order
	live  map[string]mapstore.Record // the highest version per key
}

func newCountingStore() *countingStore {
	return &countingStore{live: map[string]mapstore.Record{}}
}

func (s *countingStore) put(rs ...mapstore.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	for _, r := range rs {
		s.recs = append(s.recs, r)
		if cur, ok := s.live[string(r.Key)]; !ok || cur.Version.Less(r.Version) {
			s.live[string(r.Key)] = r
		}
	}
}

func (s *countingStore) Store(_ context.Context, r mapstore.Record) error { s.put(r); return nil }
func (s *countingStore) StoreAll(_ context.Context, rs []mapstore.Record) error {
	s.put(rs...)
	return nil
}
func (s *countingStore) Delete(_ context.Context, r mapstore.Record) error { s.put(r); return nil }
func (s *countingStore) DeleteAll(_ context.Context, rs []mapstore.Record) error {
	s.put(rs...)
	return nil
}
func (s *countingStore) Load(context.Context, []byte) (mapstore.Record, bool, error) {
	return mapstore.Record{}, false, nil
}
func (s *countingStore) LoadAll(context.Context, [][]byte) ([]mapstore.Record, error) {
	return nil, nil
}
func (s *countingStore) LoadAllKeys(context.Context) ([][]byte, error) { return nil, nil }
func (s *countingStore) LoadPartition(context.Context, int, func(mapstore.Record) error) error {
	return nil
}
func (s *countingStore) Close() error { return nil }

// snapshot returns the call count and the records given so far.
func (s *countingStore) snapshot() (int, []mapstore.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls, append([]mapstore.Record(nil), s.recs...)
}

// wbEngine is a started engine of one member whose maps are written
// behind to st.
func wbEngine(t *testing.T, st *countingStore, wb WriteBehind) *Engine {
	return wbEngineExpiring(t, st, wb, time.Hour)
}

// wbEngineExpiring is wbEngine whose owner removes expired entries every
// interval.
func wbEngineExpiring(t *testing.T, st *countingStore, wb WriteBehind, interval time.Duration) *Engine {
	t.Helper()
	self := cluster.Member{ID: "m1", Addr: "m1"}
	e := New(Config{View: cluster.NewStaticView(self), Replicas: 1, StartMin: 1, OpTimeout: 10 * time.Second,
		ExpiryInterval: interval, OpenMap: func(context.Context, string) (MapSpec, error) {
			return MapSpec{Store: st, Lazy: true, WriteBehind: wb}, nil
		}})
	e.Start()
	return e
}

// waitStored waits until st was given n records.
func waitStored(t *testing.T, st *countingStore, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, recs := st.snapshot(); len(recs) >= n {
			return
		}
		if time.Now().After(deadline) {
			_, recs := st.snapshot()
			t.Fatalf("the store got %d records within 30 s, want %d", len(recs), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// N writes of one key within the delay reach the store as one record,
// the last value, in one store call; the writes were acknowledged before
// anything was stored.
func TestWriteBehindCoalescing(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx := context.Background()
	st := newCountingStore()
	e := wbEngine(t, st, WriteBehind{Delay: 500 * time.Millisecond, BatchSize: 100, Coalescing: true})
	defer e.Close()
	m, err := e.Map(ctx, "jobs")
	if err != nil {
		t.Fatal(err)
	}
	const n = 50
	for i := range n {
		if _, _, err := m.Put(ctx, []byte("k"), fmt.Appendf(nil, "v%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if calls, recs := st.snapshot(); calls != 0 || len(recs) != 0 {
		t.Fatalf("the store got %d calls (%d records) before the delay passed, want none", calls, len(recs))
	}
	if q := e.Pending("jobs"); q != 1 {
		t.Fatalf("%d records queued after %d writes of one key, want 1", q, n)
	}
	waitStored(t, st, 1)
	time.Sleep(3 * wbTick) // nothing else follows
	calls, recs := st.snapshot()
	if calls != 1 || len(recs) != 1 {
		t.Fatalf("%d writes of one key made %d store calls with %d records, want 1 and 1", n, calls, len(recs))
	}
	if got := string(recs[0].Value); got != fmt.Sprintf("v%d", n-1) {
		t.Fatalf("stored %q, want the last value v%d", got, n-1)
	}
}

// Without coalescing every write is stored, in order, at most BatchSize
// records per call; a remove goes through the queue as a delete.
func TestWriteBehindNoCoalescingKeepsOrder(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx := context.Background()
	st := newCountingStore()
	e := wbEngine(t, st, WriteBehind{Delay: 200 * time.Millisecond, BatchSize: 2, Coalescing: false})
	defer e.Close()
	m, err := e.Map(ctx, "jobs")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if _, _, err := m.Put(ctx, []byte("k"), fmt.Appendf(nil, "v%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := m.Remove(ctx, []byte("k")); err != nil {
		t.Fatal(err)
	}
	waitStored(t, st, 6)
	time.Sleep(3 * wbTick)
	calls, recs := st.snapshot()
	if len(recs) != 6 {
		t.Fatalf("stored %d records, want 6", len(recs))
	}
	for i := range 5 {
		if string(recs[i].Value) != fmt.Sprintf("v%d", i) || recs[i].Deleted {
			t.Fatalf("record %d is %q (deleted %v), want v%d", i, recs[i].Value, recs[i].Deleted, i)
		}
		if !recs[i].Version.Less(recs[i+1].Version) {
			t.Fatalf("record %d (%v) is not older than record %d (%v)", i, recs[i].Version, i+1, recs[i+1].Version)
		}
	}
	if !recs[5].Deleted {
		t.Fatal("the remove was not stored as a delete")
	}
	// Batches of two: two puts, two puts, then a put and the delete (a
	// StoreAll and a DeleteAll): four calls.
	if calls != 4 {
		t.Fatalf("%d store calls, want 4 (batches of at most 2)", calls)
	}
}

// Flush stores the queue before the delay; Close stores what is left.
func TestWriteBehindFlushAndClose(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx := context.Background()
	st := newCountingStore()
	e := wbEngine(t, st, WriteBehind{Delay: time.Hour, BatchSize: 10, Coalescing: true})
	defer e.Close() // on failure; Close twice does nothing more
	m, err := e.Map(ctx, "jobs")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 21 {
		if _, _, err := m.Put(ctx, fmt.Appendf(nil, "a%d", i), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if calls, recs := st.snapshot(); len(recs) != 21 || calls != 3 {
		t.Fatalf("after Flush the store has %d records in %d calls, want 21 in 3 (at most 10 per call)", len(recs), calls)
	}
	for i := range 7 {
		if _, _, err := m.Put(ctx, fmt.Appendf(nil, "b%d", i), []byte("y")); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, recs := st.snapshot(); len(recs) != 28 {
		t.Fatalf("after Close the store has %d records, want 28", len(recs))
	}
}

// An entry's expiry reaches the store through the queue: the put, then a
// delete of a higher version.
func TestWriteBehindExpiryIsQueued(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx := context.Background()
	st := newCountingStore()
	e := wbEngineExpiring(t, st, WriteBehind{Delay: 100 * time.Millisecond, BatchSize: 10, Coalescing: false}, 20*time.Millisecond)
	defer e.Close()
	m, err := e.Map(ctx, "jobs")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.PutWithTTL(ctx, []byte("k"), []byte("v"), 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	waitStored(t, st, 2)
	_, recs := st.snapshot()
	if recs[0].Deleted || string(recs[0].Value) != "v" || recs[0].Expires == 0 {
		t.Fatalf("first stored record %+v, want the put with its deadline", recs[0])
	}
	if !recs[1].Deleted || !recs[0].Version.Less(recs[1].Version) {
		t.Fatalf("second stored record %+v, want the expiry's delete, of a higher version", recs[1])
	}
}

// A queue at its capacity refuses writes, changing nothing, until it is
// stored.
func TestWriteBehindQueueCapacity(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx := context.Background()
	st := newCountingStore()
	e := wbEngine(t, st, WriteBehind{Delay: time.Hour, BatchSize: 10, Coalescing: true, Capacity: 3})
	defer e.Close()
	m, err := e.Map(ctx, "jobs")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, _, err := m.Put(ctx, fmt.Appendf(nil, "k%d", i), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := m.Put(ctx, []byte("k3"), []byte("v")); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("a write beyond the capacity: %v, want ErrQueueFull", err)
	}
	if _, ok, _ := m.Get(ctx, []byte("k3")); ok {
		t.Fatal("the refused write took effect")
	}
	if err := m.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.Put(ctx, []byte("k3"), []byte("v")); err != nil {
		t.Fatalf("a write once the queue was stored: %v", err)
	}
}

// The stored watermark is just below the oldest version pending or in
// flight on the owner; a backup drops the pending keys at or below it.
func TestWriteBehindStoredMark(t *testing.T) {
	v := func(seq uint64) mapstore.Version { return mapstore.Version{Epoch: 3, Seq: seq} }
	owner := &fragment{ready: true, ver: v(20), pending: map[string]mapstore.Version{"a": v(9), "b": v(15)},
		inflight: map[uint64]struct{}{18: {}}}
	if w, ok := owner.storedMark(); !ok || w != v(8) {
		t.Fatalf("watermark %v (%v), want %v", w, ok, v(8))
	}
	owner.pending = map[string]mapstore.Version{"b": v(15)}
	if w, _ := owner.storedMark(); w != v(14) {
		t.Fatalf("watermark %v, want %v", w, v(14))
	}
	owner.pending, owner.inflight = nil, map[uint64]struct{}{}
	if w, _ := owner.storedMark(); w != v(20) {
		t.Fatalf("watermark with nothing pending %v, want the last version %v", w, v(20))
	}
	if _, ok := (&fragment{}).storedMark(); ok {
		t.Fatal("a partition not ready here gave a watermark")
	}
	b := &fragment{pending: map[string]mapstore.Version{"old": {Epoch: 2, Seq: 40}, "a": v(9), "b": v(15)}}
	b.dropStored(v(9))
	if _, ok := b.pending["b"]; !ok || len(b.pending) != 1 {
		t.Fatalf("after the watermark %v the backup keeps %v, want only b", v(9), b.pending)
	}
}
