package filestore

import (
	"context"
	"testing"
	"time"

	"github.com/stowage/stowage/fsbackend/local"
	"github.com/stowage/stowage/mapstore"
)

// Compaction waits while partitions load, for at most compactInterval at
// a time, and not at all once none loads.
func TestPutOffForLoads(t *testing.T) {
	s := &Store{}
	var putOff time.Time
	now := time.Unix(1000, 0)
	if s.putOffForLoads(&putOff, now) {
		t.Fatal("put off with no load running")
	}
	s.loads.Add(1)
	if !s.putOffForLoads(&putOff, now) {
		t.Fatal("not put off while a load runs")
	}
	if !s.putOffForLoads(&putOff, now.Add(compactInterval-time.Millisecond)) {
		t.Fatal("not put off while a load runs, within compactInterval")
	}
	if s.putOffForLoads(&putOff, now.Add(compactInterval)) {
		t.Fatalf("still put off %v after it began to wait", compactInterval)
	}
	// A new wait starts after a compaction.
	later := now.Add(compactInterval + time.Second)
	if !s.putOffForLoads(&putOff, later) || putOff != later {
		t.Fatalf("after a compaction: not put off anew (since %v)", putOff)
	}
	s.loads.Add(-1)
	if s.putOffForLoads(&putOff, later) || !putOff.IsZero() {
		t.Fatal("put off after the loads ended")
	}
	// A load that just ended puts compaction off for loadsSettle: the
	// next partition's load may be about to start.
	ended := later.Add(time.Second)
	s.loadEnd.Store(ended.UnixNano())
	if !s.putOffForLoads(&putOff, ended.Add(loadsSettle-time.Millisecond)) {
		t.Fatalf("not put off %v after a load ended", loadsSettle-time.Millisecond)
	}
	if s.putOffForLoads(&putOff, ended.Add(loadsSettle)) || !putOff.IsZero() {
		t.Fatalf("still put off %v after the last load ended", loadsSettle)
	}
}

// A partition load counts as running until it returns, whichever way
// it loads.
func TestLoadsCounted(t *testing.T) {
	ctx := context.Background()
	f, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(ctx, Options{FS: f, Partitions: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Store(ctx, mapstore.Record{Version: mapstore.Version{Epoch: 1, Seq: 1}, Key: []byte("k"), Value: []byte("v")}); err != nil {
		t.Fatal(err)
	}
	for name, load := range map[string]func(check func()) error{
		"ReplayPartition": func(check func()) error {
			return s.ReplayPartition(ctx, 0, func(mapstore.Record) error { check(); return nil })
		},
		"ReplayPartitionKeys": func(check func()) error {
			return s.ReplayPartitionKeys(ctx, 0, nil, func(string, mapstore.Record) error { check(); return nil })
		},
		"LoadPartition": func(check func()) error {
			return s.LoadPartition(ctx, 0, func(mapstore.Record) error { check(); return nil })
		},
	} {
		calls := 0
		err := load(func() {
			calls++
			if n := s.loads.Load(); n != 1 {
				t.Errorf("%s: %d loads counted while it ran, want 1", name, n)
			}
		})
		if err != nil || calls != 1 {
			t.Fatalf("%s: %d records, %v", name, calls, err)
		}
		if n := s.loads.Load(); n != 0 {
			t.Errorf("%s: %d loads counted once it returned, want 0", name, n)
		}
		if end := time.Unix(0, s.loadEnd.Load()); time.Since(end) > time.Minute || time.Until(end) > 0 {
			t.Errorf("%s: the last load's end is %v, want the moment it returned", name, end)
		}
	}
}
