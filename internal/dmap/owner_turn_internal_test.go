package dmap

import (
	"context"
	"testing"
	"time"

	"github.com/stowage/stowage/cluster"
	"github.com/stowage/stowage/mapstore"
)

// gatedStore is a countingStore whose first Store waits for open.
type gatedStore struct {
	*countingStore
	entered chan struct{} // closed when the first Store is called
	open    chan struct{}
	first   bool
}

func (s *gatedStore) Store(ctx context.Context, r mapstore.Record) error {
	s.mu.Lock()
	first := !s.first
	s.first = true
	s.mu.Unlock()
	if first {
		close(s.entered)
		<-s.open
	}
	return s.countingStore.Store(ctx, r)
}

// TestWritesOfOneKeyTakeTurns: a write of a key whose previous write is
// still being stored waits for it, and goes on once it ended (the key's
// turn is handed over without a channel per write), seeing its value.
func TestWritesOfOneKeyTakeTurns(t *testing.T) {
	ctx := context.Background()
	st := &gatedStore{countingStore: newCountingStore(), entered: make(chan struct{}), open: make(chan struct{})}
	self := cluster.Member{ID: "m1", Addr: "m1"}
	e := New(Config{View: cluster.NewStaticView(self), Replicas: 1, StartMin: 1, OpTimeout: 10 * time.Second,
		OpenMap: func(context.Context, string) (MapSpec, error) { return MapSpec{Store: st, Lazy: true}, nil }})
	e.Start()
	defer e.Close()
	m, err := e.Map(ctx, "turns")
	if err != nil {
		t.Fatal(err)
	}
	firstDone := make(chan error, 1)
	go func() {
		_, _, err := m.Put(ctx, []byte("k"), []byte("v1"))
		firstDone <- err
	}()
	select {
	case <-st.entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the first write did not reach the store")
	}
	type result struct {
		old []byte
		had bool
		err error
	}
	second := make(chan result, 2)
	for range 2 { // two waiters for the same turn
		go func() {
			old, had, err := m.Put(ctx, []byte("k"), []byte("v2"))
			second <- result{old, had, err}
		}()
	}
	select {
	case r := <-second:
		t.Fatalf("a write of the key went ahead while the previous one was being stored: %+v", r)
	case <-time.After(100 * time.Millisecond): // room for a write that does not wait
	}
	close(st.open)
	if err := <-firstDone; err != nil {
		t.Fatal(err)
	}
	sawFirst := false
	for range 2 {
		select {
		case r := <-second:
			if r.err != nil {
				t.Fatal(r.err)
			}
			if !r.had {
				t.Errorf("a write after the first saw no value")
			}
			sawFirst = sawFirst || string(r.old) == "v1"
		case <-time.After(30 * time.Second):
			t.Fatal("a write waiting for the key's turn never went on")
		}
	}
	if !sawFirst {
		t.Error("neither later write saw the first one's value")
	}
}
