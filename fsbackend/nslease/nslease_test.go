package nslease_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/fsbackendtest"
	"github.com/stowage/stowage/fsbackend/local"
	"github.com/stowage/stowage/fsbackend/memfs"
	"github.com/stowage/stowage/fsbackend/nslease"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestLeaseLocal(t *testing.T) {
	dir := t.TempDir()
	fsbackendtest.RunLease(t, func(t *testing.T) fsbackend.FS {
		f, err := local.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}, "ns/cluster-a")
}

func TestLeaseMemory(t *testing.T) {
	f := memfs.New()
	fsbackendtest.RunLease(t, func(t *testing.T) fsbackend.FS { return f }, "ns/cluster-a")
}

// staleList answers its first List with a record that renewals already
// pruned, as a listing taken just before they did would.
type staleList struct {
	fsbackend.FS
	once atomic.Bool
}

func (s *staleList) List(ctx context.Context, dir string) ([]fsbackend.FileInfo, error) {
	if !s.once.Swap(true) {
		return []fsbackend.FileInfo{{Name: dir + "/00000000000000000001"}}, nil
	}
	return s.FS.List(ctx, dir)
}

// TestPrunedWhileListed: records pruned between the listing and the read
// do not make the lease look free.
func TestPrunedWhileListed(t *testing.T) {
	ctx := context.Background()
	f := memfs.New()
	opts := func(f fsbackend.FS, member string) nslease.Options {
		return nslease.Options{FS: f, Dir: "ns/c", Path: "ns/c", TTL: time.Hour,
			Members: func() []string { return []string{member} },
			Same:    func(ms []string) bool { return slices.Contains(ms, member) }}
	}
	a, err := nslease.Acquire(ctx, opts(f, "a"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(ctx, false)
	for i := 0; i < 5; i++ {
		if err := a.Renew(ctx); err != nil {
			t.Fatal(err)
		}
	}
	cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if b, err := nslease.Acquire(cctx, opts(&staleList{FS: f}, "b")); err == nil {
		b.Close(ctx, false)
		t.Fatal("a second cluster took the lease from a listing of pruned records")
	}
}

// TestFollowerFencedBeforeTakeOver: a member that does not renew stays
// admitted while its cluster's renewer renews; once the renewer stops,
// it refuses (ErrLost) before another cluster's Acquire returns, and then
// names the other cluster.
func TestFollowerFencedBeforeTakeOver(t *testing.T) {
	ctx := context.Background()
	f := memfs.New()
	const ttl = time.Second
	opts := func(member string, renew bool, cluster ...string) nslease.Options {
		return nslease.Options{FS: f, Dir: "ns/c", Path: "ns/c", TTL: ttl,
			Members: func() []string { return []string{member} },
			Same: func(ms []string) bool {
				return slices.ContainsFunc(ms, func(m string) bool { return slices.Contains(cluster, m) })
			},
			Renew: func() bool { return renew }}
	}
	a1, err := nslease.Acquire(ctx, opts("a1", true, "a1", "a2"))
	if err != nil {
		t.Fatal(err)
	}
	defer a1.Close(ctx, false)
	a2, err := nslease.Acquire(ctx, opts("a2", false, "a1", "a2"))
	if err != nil {
		t.Fatal(err)
	}
	defer a2.Close(ctx, false)
	for end := time.Now().Add(3 * ttl); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if err := a2.Check(); err != nil {
			t.Fatalf("follower refused while its cluster renews: %v", err)
		}
	}
	a1.Close(ctx, false)
	b, err := nslease.Acquire(ctx, opts("b", true, "b"))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(ctx, false)
	if err := a2.Check(); !errors.Is(err, nslease.ErrLost) {
		t.Fatalf("follower after the take-over: %v, want ErrLost", err)
	}
	time.Sleep(ttl / 4)
	if err := a2.Check(); !errors.Is(err, nslease.ErrLost) || !strings.Contains(err.Error(), "another cluster (members b)") {
		t.Fatalf("follower after it read the other cluster's record: %v", err)
	}
}

// TestRecordsDirAndCheckAfterClose: Options.Records puts the records in a
// directory of its name, where a second cluster finds them; a closed
// lease refuses writes at once (a released one may be taken over at once).
func TestRecordsDirAndCheckAfterClose(t *testing.T) {
	ctx := context.Background()
	f := memfs.New()
	opts := func(member string) nslease.Options {
		return nslease.Options{FS: f, Dir: "ck", Records: "..lease", Path: "ck", TTL: time.Hour,
			Members: func() []string { return []string{member} },
			Same:    func(ms []string) bool { return slices.Contains(ms, member) }}
	}
	a, err := nslease.Acquire(ctx, opts("a"))
	if err != nil {
		t.Fatal(err)
	}
	if fis, err := f.List(ctx, "ck/..lease"); err != nil || len(fis) == 0 {
		t.Fatalf("records in ck/..lease: %v, %v", fis, err)
	}
	if fis, _ := f.List(ctx, "ck/"+nslease.LeaseDir); len(fis) != 0 {
		t.Fatalf("records in the default directory too: %v", fis)
	}
	if err := a.Check(); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if b, err := nslease.Acquire(cctx, opts("b")); !errors.Is(err, nslease.ErrHeld) && !errors.Is(err, context.DeadlineExceeded) {
		if b != nil {
			b.Close(ctx, false)
		}
		t.Fatalf("a second cluster on the records: %v", err)
	}
	if err := a.Close(ctx, true); err != nil {
		t.Fatal(err)
	}
	if err := a.Check(); !errors.Is(err, nslease.ErrLost) {
		t.Fatalf("Check after Close: %v, want ErrLost", err)
	}
}
