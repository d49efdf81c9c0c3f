package filestore_test

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stowage/stowage/fsbackend/memfs"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/mapstore/filestore"
)

// A partition moves from A to B while A, not yet aware, still writes it:
// B's epoch start (taking over at seq S) makes recovery drop A's record of
// the old epoch above S, whether or not B snapshotted the partition
// before or after that record.
func TestStaleOwnersRecordIsDropped(t *testing.T) {
	for _, tc := range []struct {
		name          string
		before, after bool // B snapshots before / after A's stale write
	}{
		{"log only", false, false},
		{"snapshot before", true, false},
		{"snapshot after", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := memfs.New()
			ctx := context.Background()
			var runs liveRuns
			a := openMember(t, f, &runs, filestore.Options{}, func(int) bool { return true })
			b := openMember(t, f, &runs, filestore.Options{}, func(int) bool { return false })
			const p = 3
			key, other := keyOf(p, 0), keyOf(p, 1)
			a.put(key, "acknowledged")
			a.put(other, "kept")

			// B takes p over with a copy of A's memory; A is not told.
			taken := a.m.clone(p)
			taken.ver = mapstore.Version{Epoch: taken.ver.Epoch + 1, Seq: taken.ver.Seq}
			if err := b.s.StartEpochs(ctx, map[int]mapstore.Version{p: taken.ver}); err != nil {
				t.Fatal(err)
			}
			b.m.own(p, taken)
			b.s.Acquire(p)
			if tc.before {
				if err := b.s.ForceCompact(ctx); err != nil {
					t.Fatal(err)
				}
			}
			a.put(key, "stale") // old epoch, seq above the takeover point
			b.put(other, "from B")
			if tc.after {
				if err := b.s.ForceCompact(ctx); err != nil {
					t.Fatal(err)
				}
			}
			a.close(&runs)
			b.close(&runs)
			got := loadFresh(t, f)
			if got[key] != "acknowledged" || got[other] != "from B" {
				t.Fatalf("after recovery %s = %q, %s = %q; want %q and %q", key, got[key], other, got[other], "acknowledged", "from B")
			}
		})
	}
}

// Release drops what Open scanned for the partition, so that loading it
// later reads what other members wrote since; loading it again makes the
// store continue from the highest version on storage.
func TestReleasedPartitionIsReadAfresh(t *testing.T) {
	f := memfs.New()
	ctx := context.Background()
	const p = 5
	key := keyOf(p, 0)
	var runs liveRuns
	first := openMember(t, f, &runs, filestore.Options{}, func(int) bool { return true })
	first.put(key, "old")
	first.close(&runs)

	a := openMember(t, f, &runs, filestore.Options{}, func(q int) bool { return q != p })
	if n := a.s.PendingCount(p); n != 0 {
		t.Fatalf("partition %d released, yet %d scanned records kept", p, n)
	}
	b := openMember(t, f, &runs, filestore.Options{}, func(q int) bool { return q == p })
	b.put(key, "new")

	got := map[string]string{}
	err := a.s.ReplayPartition(ctx, p, func(r mapstore.Record) error {
		if r.Deleted {
			delete(got, string(r.Key))
		} else {
			got[string(r.Key)] = string(r.Value)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got[key] != "new" {
		t.Fatalf("%s = %q after loading the released partition, want %q", key, got[key], "new")
	}
	if last, theirs := a.s.LastVersion(p), b.s.LastVersion(p); last.Less(theirs) {
		t.Fatalf("last version %+v after loading, below %+v written by the other member", last, theirs)
	}
	a.close(&runs)
	b.close(&runs)
}

// After Acquire the store snapshots the partition from memory without
// waiting for its log to grow, and that snapshot replaces the one the
// previous owner wrote.
func TestAcquireReplacesSnapshots(t *testing.T) {
	f := memfs.New()
	ctx := context.Background()
	var runs liveRuns
	a := openMember(t, f, &runs, filestore.Options{}, func(int) bool { return true })
	b := openMember(t, f, &runs, filestore.Options{}, func(int) bool { return false })
	const p = 2
	for i := 0; i < 10; i++ {
		a.put(keyOf(p, i), fmt.Sprint("v", i))
	}
	if err := a.s.ForceCompact(ctx); err != nil {
		t.Fatal(err)
	}
	dir := fmt.Sprintf("g1/snap/%d", p)
	before := fileNames(t, f, dir)
	if len(before) != 1 {
		t.Fatalf("A's snapshots of partition %d: %v, want one", p, before)
	}
	a.moveTo(b, p)
	epoch := fmt.Sprintf("%016x-", 2)
	eventually(t, func() error {
		if err := b.s.Compact(ctx); err != nil {
			return err
		}
		names := fileNames(t, f, dir)
		if len(names) != 1 || !strings.HasPrefix(path.Base(names[0]), epoch) {
			return fmt.Errorf("snapshots of partition %d: %v, want only B's of epoch 2", p, names)
		}
		return nil
	})
	want := map[string]string{}
	a.m.contents(want)
	b.m.contents(want)
	a.close(&runs)
	b.close(&runs)
	expectSame(t, loadFresh(t, f), want)
}

// Another live member's log files do not count against a store's log
// budget: its writes are not held back by them. Once that member's run has
// ended and the store took its partitions over, the store collects them.
func TestAdmitCountsOnlyWhatTheStoreMayCollect(t *testing.T) {
	f := memfs.New()
	ctx := context.Background()
	var runs liveRuns
	opts := filestore.Options{SegmentSize: 1024, RefreshInterval: 10 * time.Millisecond}
	a := openMember(t, f, &runs, opts, func(int) bool { return true })
	a.s.SetSnapshotSource(nil) // A never compacts: its log only grows
	for i := 0; i < 400; i++ {
		a.put(keyOf(i%parts, i%40), fmt.Sprintf("%d-%s", i, strings.Repeat("x", 100)))
	}
	b := openMember(t, f, &runs, opts, func(int) bool { return false })
	done, cancel := context.WithCancel(ctx)
	cancel() // Admit answers at once: nil, or the context's error if it would wait
	if err := b.s.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.s.Admit(done); err != nil {
		t.Fatalf("B's writes wait for live member A's log files: %v", err)
	}

	// A's run ends; B takes its partitions over and collects A's files.
	a.close(&runs)
	for p := 0; p < parts; p++ {
		a.moveTo(b, p)
	}
	eventually(t, func() error {
		if err := b.s.Compact(ctx); err != nil {
			return err
		}
		if left := logsOf(t, f, a.run); len(left) > 0 {
			return fmt.Errorf("log files of ended run A left: %v", left)
		}
		return b.s.Admit(done)
	})
	want := map[string]string{}
	b.m.contents(want)
	b.close(&runs)
	expectSame(t, loadFresh(t, f), want)
}

// With SnapshotRetain 2, the previous owner's snapshot that the new owner
// would keep as its fallback is read back first: a damaged one is reported
// and removed, and the next older one is kept instead.
func TestAcquireChecksTheFallbackSnapshot(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	var runs liveRuns
	var mu sync.Mutex
	var damages []filestore.Damage
	opts := filestore.Options{SnapshotRetain: 2, OnDamage: func(d filestore.Damage) {
		mu.Lock()
		defer mu.Unlock()
		damages = append(damages, d)
	}}
	a := openMember(t, e.fs, &runs, opts, func(int) bool { return true })
	b := openMember(t, e.fs, &runs, opts, func(int) bool { return false })
	const p = 6
	dir := fmt.Sprintf("g1/snap/%d", p)
	for round := 0; round < 2; round++ {
		for i := 0; i < 10; i++ {
			a.put(keyOf(p, i), fmt.Sprint("v", round, i))
		}
		if err := a.s.ForceCompact(ctx); err != nil {
			t.Fatal(err)
		}
	}
	older := fileNames(t, e.fs, dir)
	if len(older) != 2 {
		t.Fatalf("A's snapshots of partition %d: %v, want two", p, older)
	}
	damaged := filepath.Join(e.dir, older[1])
	data, err := os.ReadFile(damaged)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0x55
	if err := os.WriteFile(damaged, data, 0o644); err != nil {
		t.Fatal(err)
	}
	a.moveTo(b, p)
	eventually(t, func() error {
		if err := b.s.Compact(ctx); err != nil {
			return err
		}
		names := fileNames(t, e.fs, dir)
		if len(names) != 2 || names[0] != older[0] || !strings.HasPrefix(path.Base(names[1]), fmt.Sprintf("%016x-", 2)) {
			return fmt.Errorf("snapshots of partition %d: %v, want %s and B's of epoch 2", p, names, older[0])
		}
		return nil
	})
	mu.Lock()
	reported := len(damages) == 1 && damages[0].File == older[1]
	mu.Unlock()
	if !reported {
		t.Fatalf("want one report naming %s, got %v", older[1], damages)
	}
	want := map[string]string{}
	a.m.contents(want)
	b.m.contents(want)
	a.close(&runs)
	b.close(&runs)
	expectSame(t, loadFresh(t, e.fs), want)
}
