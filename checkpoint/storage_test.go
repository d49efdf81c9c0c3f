package checkpoint_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stowage/stowage/checkpoint"
	"github.com/stowage/stowage/checkpoint/checkpointtest"
	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/errorfs"
	"github.com/stowage/stowage/fsbackend/memfs"
)

var ctx = context.Background()

func mustStore(t testing.TB, s checkpoint.Storage, st checkpoint.PipelineState) {
	t.Helper()
	if _, err := s.StoreCheckpoint(ctx, st); err != nil {
		t.Fatalf("StoreCheckpoint(%d/%d): %v", st.PipelineID, st.CheckpointID, err)
	}
}

func TestOpenNamespace(t *testing.T) {
	cases := []struct {
		ns      string
		ok      bool
		display string
	}{
		{"", true, "/seatunnel/checkpoint/"},
		{"/seatunnel/checkpoint/", true, "/seatunnel/checkpoint/"},
		{"relative/ns/", true, "/relative/ns/"},
		{"/", true, "/"},
		{"/no/trailing/slash", false, ""},
		{"/a/../b/", false, ""},
		{"/a//b/", false, ""},
		{"/nul\x00/", false, ""},
	}
	for _, tc := range cases {
		s, err := checkpoint.Open(ctx, checkpoint.Options{FS: memfs.New(), Namespace: tc.ns})
		if !tc.ok {
			if err == nil || !strings.Contains(err.Error(), "namespace") {
				s.Close()
				t.Errorf("Open(namespace %q) = %v, want an error naming namespace", tc.ns, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Open(namespace %q): %v", tc.ns, err)
			continue
		}
		if s.Namespace() != tc.display {
			t.Errorf("Namespace() = %q, want %q", s.Namespace(), tc.display)
		}
		s.Close()
	}
	if _, err := checkpoint.Open(ctx, checkpoint.Options{}); err == nil {
		t.Fatal("Open without FS succeeded")
	}
}

func TestLayoutOnDisk(t *testing.T) {
	fsys := memfs.New()
	s := checkpointtest.Open(t, fsys, checkpoint.Options{Namespace: "/seatunnel/checkpoint/"})
	name, err := s.StoreCheckpoint(ctx, checkpointtest.State("57743", 1, 42))
	if err != nil {
		t.Fatal(err)
	}
	want := "p0000000001-c0000000000000000042.ckpt"
	if name != want {
		t.Fatalf("stored as %q, want %q", name, want)
	}
	if _, err := fsys.Stat(ctx, "seatunnel/checkpoint/57743/"+want); err != nil {
		t.Fatalf("file not at <namespace><jobId>/<name>: %v", err)
	}
	fis, _ := fsys.List(ctx, "")
	var names []string
	for _, fi := range fis {
		names = append(names, fi.Name)
	}
	// The checkpoint, and in the job's latest directory the job's marker,
	// the pipeline's marker and its pointer (seq 1, checkpoint 42): no
	// temporary left.
	dir := "seatunnel/checkpoint/57743/"
	wantNames := []string{dir + "latest/complete", dir + "latest/p0000000001", dir + "latest/p0000000001-s0000000000000000001-c0000000000000000042", dir + want}
	if strings.Join(names, " ") != strings.Join(wantNames, " ") {
		t.Fatalf("files after one store:\n%v\nwant\n%v", names, wantNames)
	}
}

func TestFileNameRoundTrip(t *testing.T) {
	cases := []struct {
		p  int
		id int64
	}{{0, 0}, {1, 1}, {2, 3}, {checkpoint.MaxPipelineID, 1<<63 - 1}, {99999, 1234567890123}}
	for _, tc := range cases {
		n := checkpoint.FileName(tc.p, tc.id)
		p, id, ok := checkpoint.ParseFileName(n)
		if !ok || p != tc.p || id != tc.id {
			t.Errorf("ParseFileName(%q) = %d, %d, %v", n, p, id, ok)
		}
	}
	for _, bad := range []string{"", "p1-c1.ckpt", "p0000000001-c0000000000000000042.ckpt.tmp-ab", "p000000000x-c0000000000000000042.ckpt",
		"p0000000001-c00000000000000000-2.ckpt", "p9999999999-c0000000000000000042.ckpt", "x0000000001-c0000000000000000042.ckpt"} {
		if _, _, ok := checkpoint.ParseFileName(bad); ok {
			t.Errorf("ParseFileName(%q) accepted", bad)
		}
	}
	// Names sort like (pipeline, id).
	if !(checkpoint.FileName(1, 9) < checkpoint.FileName(1, 10) && checkpoint.FileName(1, 1<<40) < checkpoint.FileName(2, 0)) {
		t.Fatal("file names do not sort by pipeline, then checkpoint id")
	}
}

func TestInvalidPipelineIDs(t *testing.T) {
	s := checkpointtest.Open(t, memfs.New(), checkpoint.Options{})
	for _, st := range []checkpoint.PipelineState{
		{JobID: "j", PipelineID: -1, CheckpointID: 1},
		{JobID: "j", PipelineID: checkpoint.MaxPipelineID + 1, CheckpointID: 1},
		{JobID: "j", PipelineID: 1, CheckpointID: -5},
	} {
		if _, err := s.StoreCheckpoint(ctx, st); !errors.Is(err, checkpoint.ErrInvalidID) {
			t.Errorf("store %d/%d: err %v, want ErrInvalidID", st.PipelineID, st.CheckpointID, err)
		}
	}
}

// TestLatestReadsOneFile checks that the latest of a pipeline is found from
// the listing: one file read, two when the latest is damaged.
func TestLatestReadsOneFile(t *testing.T) {
	mem := memfs.New()
	efs := errorfs.Wrap(mem, errorfs.InjectorFunc(func(errorfs.Call) error { return nil }))
	s := checkpointtest.Open(t, efs, checkpoint.Options{MaxRetained: checkpoint.KeepAll})
	for id := int64(1); id <= 200; id++ {
		mustStore(t, s, checkpointtest.State("j", 1, id))
	}
	mustStore(t, s, checkpointtest.State("j", 2, 1))
	before := efs.Calls(errorfs.OpOpen)
	got, err := s.GetLatestCheckpointByJobAndPipeline(ctx, "j", 1)
	if err != nil || got.CheckpointID != 200 {
		t.Fatalf("latest = %d, %v; want 200", got.CheckpointID, err)
	}
	if n := efs.Calls(errorfs.OpOpen) - before; n != 1 {
		t.Fatalf("latest of 200 checkpoints opened %d files, want 1", n)
	}
	checkpointtest.Rewrite(t, mem, checkpointtest.FilePath("j", 1, 200), func(b []byte) []byte { return b[:len(b)-1] })
	before = efs.Calls(errorfs.OpOpen)
	got, err = s.GetLatestCheckpointByJobAndPipeline(ctx, "j", 1)
	if err != nil || got.CheckpointID != 199 {
		t.Fatalf("latest with damaged 200 = %d, %v; want 199", got.CheckpointID, err)
	}
	if n := efs.Calls(errorfs.OpOpen) - before; n != 2 {
		t.Fatalf("fallback opened %d files, want 2", n)
	}
}

// TestDamageIsLogged checks the slog warning of a skipped damaged file.
func TestDamageIsLogged(t *testing.T) {
	mem := memfs.New()
	var buf syncBuffer
	s := checkpointtest.Open(t, mem, checkpoint.Options{MaxRetained: checkpoint.KeepAll, Logger: newTextLogger(&buf)})
	mustStore(t, s, checkpointtest.State("j", 1, 1))
	mustStore(t, s, checkpointtest.State("j", 1, 2))
	checkpointtest.Rewrite(t, mem, checkpointtest.FilePath("j", 1, 2), func(b []byte) []byte { b[len(b)-2] ^= 0xFF; return b })
	if _, err := s.GetLatestCheckpointByJobAndPipeline(ctx, "j", 1); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.Contains(out, "level=WARN") || !strings.Contains(out, checkpoint.FileName(1, 2)) {
		t.Fatalf("no warning naming the damaged file in the log:\n%s", out)
	}
}

// TestCrashMidStore crashes the memory FS at every operation of a store
// and checks that afterwards no checkpoint reads as valid but wrong: each
// one reads back exactly as stored, and the latest is the new checkpoint
// or the previous one.
//
// The new checkpoint's id follows the previous one (2) or leaves a gap (5),
// which a pointer cannot lead to by probing: either way a new checkpoint
// that survived complete is the latest, never the previous one.
func TestCrashMidStore(t *testing.T) {
	for _, nextID := range []int64{2, 5} {
		for _, keep := range []int{checkpoint.KeepAll, 1} {
			for _, atomicRename := range []bool{true, false} {
				crashMidStore(t, nextID, keep, atomicRename)
			}
		}
	}
}

func crashMidStore(t *testing.T, nextID int64, keep int, atomicRename bool) {
	for k := int64(0); ; k++ {
		mem := memfs.New()
		var base fsbackend.FS = mem
		if !atomicRename {
			base = objectStoreFS{mem}
		}
		var calls atomic.Int64
		var dead atomic.Bool
		efs := errorfs.Wrap(base, errorfs.InjectorFunc(func(c errorfs.Call) error {
			if dead.Load() {
				return fmt.Errorf("%w: process is gone", errorfs.ErrInjected)
			}
			if calls.Add(1)-1 == k {
				mem.Crash()
				dead.Store(true)
				return fmt.Errorf("%w: crash at %s %s", errorfs.ErrInjected, c.Op, c.Name)
			}
			return nil
		}))
		s, err := checkpoint.Open(ctx, checkpoint.Options{FS: efs, Namespace: checkpointtest.Namespace, MaxRetained: keep})
		if err != nil {
			t.Fatal(err)
		}
		prev := checkpointtest.State("j", 1, 1)
		next := checkpointtest.State("j", 1, nextID)
		next.States = bytes.Repeat([]byte("new state "), 500)
		// Arm the crash only for the second store.
		calls.Store(-1 << 40)
		mustStore(t, s, prev)
		calls.Store(0)
		_, storeErr := s.StoreCheckpoint(ctx, next)
		s.Close()
		crashed := dead.Load()

		// "Restart": a new storage on what survived.
		s2 := checkpointtest.Open(t, mem, checkpoint.Options{MaxRetained: checkpoint.KeepAll})
		got, err := s2.GetLatestCheckpointByJobAndPipeline(ctx, "j", 1)
		if err != nil {
			t.Fatalf("keep %d rename %v crash at call %d: latest: %v", keep, atomicRename, k, err)
		}
		switch got.CheckpointID {
		case nextID:
			if !bytes.Equal(got.States, next.States) {
				t.Fatalf("crash at call %d: checkpoint %d reads valid but wrong", k, nextID)
			}
		case 1:
			if !bytes.Equal(got.States, prev.States) {
				t.Fatalf("crash at call %d: checkpoint 1 reads valid but wrong", k)
			}
			if storeErr == nil && keep == checkpoint.KeepAll {
				t.Fatalf("crash at call %d: store reported success but checkpoint %d is gone", k, nextID)
			}
			if _, err := s2.GetCheckpoint(ctx, "j", 1, nextID); err == nil {
				t.Fatalf("keep %d rename %v crash at call %d: checkpoint %d survived complete, yet the latest is 1", keep, atomicRename, k, nextID)
			}
		default:
			t.Fatalf("crash at call %d: latest is %d", k, got.CheckpointID)
		}
		r, err := checkpoint.Verify(ctx, mem, checkpointtest.Namespace, checkpoint.VerifyOptions{})
		if err != nil || !r.OK() {
			t.Fatalf("crash at call %d: verify %+v, %v", k, r, err)
		}
		if !crashed {
			if storeErr != nil {
				t.Fatalf("no crash, yet store failed: %v", storeErr)
			}
			if k < 3 {
				t.Fatalf("a store took only %d calls", k)
			}
			t.Logf("next id %d, max-retained %d, atomic rename %v: crashed at each of %d calls", nextID, keep, atomicRename, k)
			break // every call of the store has been a crash point
		}
		if storeErr == nil && got.CheckpointID != nextID && keep == checkpoint.KeepAll {
			t.Fatalf("crash at call %d: store returned nil but the checkpoint is not readable", k)
		}
	}
}

// TestTornWriteIsCaught: a disk that silently drops the end of a file
// (errorfs.TearAt) must never yield a valid-looking checkpoint; with
// retention the read-back before deleting older checkpoints reports it.
func TestTornWriteIsCaught(t *testing.T) {
	for _, keep := range []int{checkpoint.KeepAll, 1} {
		mem := memfs.New()
		sw := errorfs.NewSwitch(errorfs.TearAt("checkpointtest/j/"+checkpoint.FileName(1, 2), 40))
		efs := errorfs.Wrap(mem, sw)
		s := checkpointtest.Open(t, efs, checkpoint.Options{MaxRetained: keep})
		mustStore(t, s, checkpointtest.State("j", 1, 1))
		sw.Arm()
		_, err := s.StoreCheckpoint(ctx, checkpointtest.State("j", 1, 2))
		sw.Disarm()
		if keep == 1 && !errors.Is(err, checkpoint.ErrCorrupt) {
			t.Fatalf("keep 1: store onto a tearing disk: err %v, want ErrCorrupt from the read-back", err)
		}
		got, gerr := s.GetLatestCheckpointByJobAndPipeline(ctx, "j", 1)
		if gerr != nil || got.CheckpointID != 1 {
			t.Fatalf("keep %d: latest = %d, %v; want the previous checkpoint 1", keep, got.CheckpointID, gerr)
		}
		r, _ := checkpoint.Verify(ctx, mem, checkpointtest.Namespace, checkpoint.VerifyOptions{})
		if r.OK() {
			t.Fatalf("keep %d: verify found no damage in a torn checkpoint: %+v", keep, r)
		}
	}
}

func TestInjectedStoreFailures(t *testing.T) {
	for _, op := range []errorfs.Op{errorfs.OpCreate, errorfs.OpWrite, errorfs.OpClose, errorfs.OpRename} {
		t.Run(string(op), func(t *testing.T) {
			mem := memfs.New()
			sw := errorfs.NewSwitch(errorfs.After(op, 0))
			s := checkpointtest.Open(t, errorfs.Wrap(mem, sw), checkpoint.Options{MaxRetained: checkpoint.KeepAll})
			mustStore(t, s, checkpointtest.State("j", 1, 1))
			sw.Arm()
			_, err := s.StoreCheckpoint(ctx, checkpointtest.State("j", 1, 2))
			if !errors.Is(err, errorfs.ErrInjected) {
				t.Fatalf("sync store with failing %s: err %v, want ErrInjected", op, err)
			}
			p := s.AsyncStoreCheckpoint(ctx, checkpointtest.State("j", 1, 3))
			if _, err := p.Wait(ctx); !errors.Is(err, errorfs.ErrInjected) {
				t.Fatalf("async store with failing %s: err %v, want ErrInjected", op, err)
			}
			if !errors.Is(p.Err(), errorfs.ErrInjected) {
				t.Fatalf("Pending.Err = %v", p.Err())
			}
			sw.Disarm()
			got, err := s.GetLatestCheckpointByJobAndPipeline(ctx, "j", 1)
			if err != nil || got.CheckpointID != 1 {
				t.Fatalf("latest after failed stores = %d, %v; want 1", got.CheckpointID, err)
			}
			fis, _ := mem.List(ctx, "")
			var left []string
			for _, fi := range fis {
				if !strings.HasPrefix(fi.Name, "checkpointtest/j/latest/") {
					left = append(left, fi.Name)
				}
			}
			if len(left) != 1 || left[0] != checkpointtest.FilePath("j", 1, 1) {
				t.Fatalf("failed stores left files behind: %v", left)
			}
			// The storage still works once the fault is gone.
			mustStore(t, s, checkpointtest.State("j", 1, 2))
		})
	}
}

// gateFS blocks every Create until the gate opens.
type gateFS struct {
	fsbackend.FS
	gate    chan struct{}
	entered chan struct{}
}

func (g *gateFS) Create(ctx context.Context, name string) (fsbackend.Writer, error) {
	select {
	case g.entered <- struct{}{}:
	default:
	}
	select {
	case <-g.gate:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return g.FS.Create(ctx, name)
}

// TestAsyncBlocksWhenFullAndCloseDrains fills the queue while the only
// worker is stuck, checks that a submitter blocks and honours its context,
// then closes the storage: queued stores complete, blocked submitters get
// ErrClosed, and nothing is lost unreported.
func TestAsyncBlocksWhenFullAndCloseDrains(t *testing.T) {
	mem := memfs.New()
	g := &gateFS{FS: mem, gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	s, err := checkpoint.Open(ctx, checkpoint.Options{FS: g, Namespace: "/ns/", MaxRetained: checkpoint.KeepAll, AsyncQueue: 2, AsyncWorkers: 1})
	if err != nil {
		t.Fatal(err)
	}
	first := s.AsyncStoreCheckpoint(ctx, checkpointtest.State("j", 1, 1))
	<-g.entered // the worker holds store 1
	queued := []*checkpoint.Pending{
		s.AsyncStoreCheckpoint(ctx, checkpointtest.State("j", 1, 2)),
		s.AsyncStoreCheckpoint(ctx, checkpointtest.State("j", 1, 3)),
	}
	// The queue is full: a submitter with a cancelled context fails.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.AsyncStoreCheckpoint(cctx, checkpointtest.State("j", 1, 99)).Err(); !errors.Is(err, context.Canceled) {
		t.Fatalf("submit to a full queue with a cancelled context: %v", err)
	}
	// Submitters that block.
	const blocked = 5
	results := make(chan *checkpoint.Pending, blocked)
	var started sync.WaitGroup
	for i := range blocked {
		started.Add(1)
		go func() {
			started.Done()
			results <- s.AsyncStoreCheckpoint(ctx, checkpointtest.State("j", 2, int64(i+1)))
		}()
	}
	started.Wait()
	select {
	case p := <-results:
		t.Fatalf("a submit returned while the queue was full (err %v)", p.Err())
	default:
	}
	closed := make(chan error)
	go func() { closed <- s.Close() }()
	// Close waits for the stuck store; release it.
	close(g.gate)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	for i, p := range append([]*checkpoint.Pending{first}, queued...) {
		select {
		case <-p.Done():
		default:
			t.Fatalf("queued store %d not finished when Close returned", i+1)
		}
		if p.Err() != nil {
			t.Fatalf("queued store %d: %v", i+1, p.Err())
		}
	}
	stored := 3
	for range blocked {
		p := <-results
		<-p.Done()
		switch err := p.Err(); {
		case err == nil:
			stored++
		case errors.Is(err, checkpoint.ErrClosed):
		default:
			t.Fatalf("blocked submitter: %v", err)
		}
	}
	if n := len(checkpointtest.CheckpointFilesIn(t, mem, "ns/j")); n != stored {
		t.Fatalf("%d files for %d successful stores", n, stored)
	}
	if err := s.AsyncStoreCheckpoint(ctx, checkpointtest.State("j", 1, 4)).Err(); !errors.Is(err, checkpoint.ErrClosed) {
		t.Fatalf("submit after Close: %v", err)
	}
	if _, err := s.StoreCheckpoint(ctx, checkpointtest.State("j", 1, 4)); !errors.Is(err, checkpoint.ErrClosed) {
		t.Fatalf("store after Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// TestAsyncManySubmittersSmallQueue: every submission completes or reports
// an error, none lost, under a queue of one and a slow disk.
func TestAsyncManySubmittersSmallQueue(t *testing.T) {
	mem := memfs.New()
	var n atomic.Int64
	efs := errorfs.Wrap(mem, errorfs.InjectorFunc(func(c errorfs.Call) error {
		if c.Op == errorfs.OpClose && n.Add(1)%7 == 0 {
			return errorfs.ErrInjected
		}
		return nil
	}))
	s := checkpointtest.Open(t, efs, checkpoint.Options{MaxRetained: checkpoint.KeepAll, AsyncQueue: 1, AsyncWorkers: 3})
	const submitters, each = 16, 8
	var ok, failed atomic.Int64
	var wg sync.WaitGroup
	for g := range submitters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var ps []*checkpoint.Pending
			for i := range each {
				ps = append(ps, s.AsyncStoreCheckpoint(ctx, checkpointtest.State("many", g, int64(i))))
			}
			wctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			for _, p := range ps {
				if _, err := p.Wait(wctx); err == nil {
					ok.Add(1)
				} else if errors.Is(err, errorfs.ErrInjected) {
					failed.Add(1)
				} else {
					t.Errorf("unexpected error: %v", err)
				}
			}
		}()
	}
	wg.Wait()
	if ok.Load()+failed.Load() != submitters*each || failed.Load() == 0 {
		t.Fatalf("ok %d + failed %d != %d submissions (or no injected failure)", ok.Load(), failed.Load(), submitters*each)
	}
	all, err := s.GetAllCheckpoints(ctx, "many")
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(all)) != ok.Load() {
		t.Fatalf("%d checkpoints readable, %d stores reported success", len(all), ok.Load())
	}
}

func TestPendingCompleteOnce(t *testing.T) {
	p := checkpoint.NewPending()
	if p.Err() != nil {
		t.Fatal("Err before completion")
	}
	select {
	case <-p.Done():
		t.Fatal("new Pending is done")
	default:
	}
	want := errors.New("first")
	p.Complete("", want)
	p.Complete("second", nil)
	if name, err := p.Wait(ctx); err != want || name != "" {
		t.Fatalf("Wait = %q, %v; want the first outcome", name, err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := checkpoint.NewPending().Wait(cctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait with a cancelled context: %v", err)
	}
}
