package errorfs_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/errorfs"
	"github.com/stowage/stowage/fsbackend/fsbackendtest"
	"github.com/stowage/stowage/fsbackend/local"
	"github.com/stowage/stowage/fsbackend/memfs"
	"github.com/stowage/stowage/serde/record"
)

var ctx = context.Background()

func TestConformanceWithoutFaults(t *testing.T) {
	fsbackendtest.Run(t, func(t *testing.T) fsbackend.FS {
		return errorfs.Wrap(memfs.New(), errorfs.InjectorFunc(func(errorfs.Call) error { return nil }))
	})
}

// TestConformanceDisarmedOverLocal runs the suite through every injector,
// disarmed, over the local back end: a disarmed wrapper changes nothing.
func TestConformanceDisarmedOverLocal(t *testing.T) {
	fsbackendtest.Run(t, func(t *testing.T) fsbackend.FS {
		f, err := local.New(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		sw := errorfs.NewSwitch(errorfs.Any(errorfs.Fail(), errorfs.TearAt("", 0), errorfs.Latency(time.Hour)))
		return errorfs.Wrap(f, sw)
	})
}

func TestConformanceWithLatency(t *testing.T) {
	fsbackendtest.RunWith(t, func(t *testing.T) fsbackend.FS {
		return errorfs.Wrap(memfs.New(), errorfs.Latency(time.Microsecond))
	}, fsbackendtest.Options{LargeFile: 64 << 10})
}

// prepare makes the files every op case below works on.
func prepare(t *testing.T, m *memfs.FS) {
	t.Helper()
	for _, n := range []string{"a", "b"} {
		if err := fsbackend.WriteFile(ctx, m, n, []byte("content of "+n)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestEveryOpCanFail fails each kind of call in turn and checks that the
// failure matches ErrInjected and that the wrapped FS was not touched.
func TestEveryOpCanFail(t *testing.T) {
	for _, tc := range []struct {
		op     errorfs.Op
		call   func(f fsbackend.FS) error
		intact string // a file that must keep its content
	}{
		{errorfs.OpCreate, func(f fsbackend.FS) error { _, err := f.Create(ctx, "new"); return err }, "a"},
		{errorfs.OpWrite, func(f fsbackend.FS) error { return fsbackend.WriteFile(ctx, f, "new", []byte("x")) }, "a"},
		{errorfs.OpSync, func(f fsbackend.FS) error {
			w, err := f.Create(ctx, "new")
			if err != nil {
				return err
			}
			defer w.Abort()
			return w.Sync()
		}, "a"},
		{errorfs.OpTruncate, func(f fsbackend.FS) error {
			w, err := f.Create(ctx, "new")
			if err != nil {
				return err
			}
			defer w.Abort()
			return w.(fsbackend.Truncater).Truncate(0)
		}, "a"},
		{errorfs.OpClose, func(f fsbackend.FS) error { return fsbackend.WriteFile(ctx, f, "new", []byte("x")) }, "a"},
		{errorfs.OpOpen, func(f fsbackend.FS) error { _, err := f.Open(ctx, "a"); return err }, "a"},
		{errorfs.OpReadAt, func(f fsbackend.FS) error { _, err := fsbackend.ReadFile(ctx, f, "a"); return err }, "a"},
		{errorfs.OpList, func(f fsbackend.FS) error { _, err := f.List(ctx, ""); return err }, "a"},
		{errorfs.OpStat, func(f fsbackend.FS) error { _, err := f.Stat(ctx, "a"); return err }, "a"},
		{errorfs.OpRemove, func(f fsbackend.FS) error { return f.Remove(ctx, "a") }, "a"},
		{errorfs.OpRename, func(f fsbackend.FS) error { return f.Rename(ctx, "a", "b") }, "b"},
	} {
		t.Run(string(tc.op), func(t *testing.T) {
			m := memfs.New()
			prepare(t, m)
			f := errorfs.Wrap(m, errorfs.After(tc.op, 0))
			if err := tc.call(f); !errors.Is(err, errorfs.ErrInjected) {
				t.Fatalf("%s: %v, want an error matching ErrInjected", tc.op, err)
			}
			if f.Calls(tc.op) == 0 {
				t.Errorf("Calls(%s) = 0 after a failed call", tc.op)
			}
			want := "content of " + tc.intact
			if b, err := fsbackend.ReadFile(ctx, m, tc.intact); err != nil || string(b) != want {
				t.Errorf("%s = %q, %v after an injected %s; want %q", tc.intact, b, err, tc.op, want)
			}
			if _, err := m.Stat(ctx, "new"); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a file was left behind by the failed %s: %v", tc.op, err)
			}
			// The same call goes through without the injector.
			if err := tc.call(errorfs.Wrap(m, nil)); err != nil && tc.op != errorfs.OpRename && tc.op != errorfs.OpRemove {
				t.Errorf("%s without faults: %v", tc.op, err)
			}
		})
	}
}

// creates runs n WriteFile calls and returns which of them failed.
func creates(f fsbackend.FS, prefix string, n int) []bool {
	failed := make([]bool, n)
	for i := range failed {
		err := fsbackend.WriteFile(ctx, f, fmt.Sprintf("%s%d", prefix, i), []byte("x"))
		failed[i] = err != nil
	}
	return failed
}

func TestCountingInjectors(t *testing.T) {
	for _, tc := range []struct {
		name string
		inj  errorfs.Injector
		want string // one letter per create: F failed, . succeeded
	}{
		{"OnIndex", errorfs.OnIndex(errorfs.OpCreate, 2), "..F..."},
		{"OnIndexFirst", errorfs.OnIndex(errorfs.OpCreate, 0), "F....."},
		{"After", errorfs.After(errorfs.OpCreate, 3), "...FFF"},
		{"AfterZero", errorfs.After(errorfs.OpCreate, 0), "FFFFFF"},
		{"OtherOp", errorfs.OnIndex(errorfs.OpRemove, 0), "......"},
		{"Nth", errorfs.Nth(errorfs.OpClose, 1, errorfs.Fail()), ".F...."},
		{"FromNth", errorfs.FromNth(errorfs.OpWrite, 4, errorfs.Fail()), "....FF"},
		{"OnOps", errorfs.OnOps(errorfs.Fail(), errorfs.OpStat, errorfs.OpSync), "......"},
		{"AnyCountsAll", errorfs.Any(errorfs.OnIndex(errorfs.OpCreate, 1), errorfs.OnIndex(errorfs.OpCreate, 4)), ".F..F."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := creates(errorfs.Wrap(memfs.New(), tc.inj), "f", len(tc.want))
			var b strings.Builder
			for _, f := range got {
				b.WriteByte(map[bool]byte{true: 'F', false: '.'}[f])
			}
			if b.String() != tc.want {
				t.Fatalf("failures = %s, want %s", b.String(), tc.want)
			}
		})
	}
}

func TestOnPrefixAndOnName(t *testing.T) {
	m := memfs.New()
	// Only the second write under log/ fails: the index counts log/ writes.
	f := errorfs.Wrap(m, errorfs.OnPrefix("log/", errorfs.OnIndex(errorfs.OpWrite, 1)))
	steps := []struct {
		name string
		fail bool
	}{{"log/1", false}, {"snap/1", false}, {"snap/2", false}, {"log/2", true}, {"log/3", false}}
	for _, s := range steps {
		err := fsbackend.WriteFile(ctx, f, s.name, []byte("x"))
		if got := errors.Is(err, errorfs.ErrInjected); got != s.fail {
			t.Errorf("WriteFile(%s): %v, want failure %v", s.name, err, s.fail)
		}
	}
	g := errorfs.Wrap(m, errorfs.OnName(func(n string) bool { return strings.HasSuffix(n, ".snap") }, errorfs.Fail()))
	if _, err := g.Stat(ctx, "log/1"); err != nil {
		t.Errorf("Stat(log/1) through OnName: %v", err)
	}
	if _, err := g.Stat(ctx, "p/1.snap"); !errors.Is(err, errorfs.ErrInjected) {
		t.Errorf("Stat(p/1.snap) through OnName: %v, want ErrInjected", err)
	}
}

func TestShortWrite(t *testing.T) {
	m := memfs.New()
	f := errorfs.Wrap(m, errorfs.OnPrefix("seg", errorfs.Nth(errorfs.OpWrite, 1, errorfs.ShortWrite("", 3))))
	w, err := f.Create(ctx, "seg")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := w.Write([]byte("first;")); n != 6 || err != nil {
		t.Fatalf("first write = %d, %v", n, err)
	}
	n, err := w.Write([]byte("second"))
	if n != 3 || !errors.Is(err, errorfs.ErrInjected) {
		t.Fatalf("short write = %d, %v; want 3, ErrInjected", n, err)
	}
	if n, err := w.Write([]byte(";third")); n != 6 || err != nil {
		t.Fatalf("third write = %d, %v", n, err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if b, _ := fsbackend.ReadFile(ctx, m, "seg"); string(b) != "first;sec;third" {
		t.Fatalf("file = %q, want the first 3 bytes of the short write", b)
	}
	// A k larger than the buffer writes it all and still fails.
	g := errorfs.Wrap(memfs.New(), errorfs.ShortWrite("", 100))
	w, _ = g.Create(ctx, "x")
	if n, err := w.Write([]byte("abc")); n != 3 || !errors.Is(err, errorfs.ErrInjected) {
		t.Fatalf("short write with k > len = %d, %v", n, err)
	}
}

func TestTearAt(t *testing.T) {
	m := memfs.New()
	f := errorfs.Wrap(m, errorfs.TearAt("t", 4))
	w, err := f.Create(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"01", "2345", "6789"} {
		if n, err := w.Write([]byte(p)); n != len(p) || err != nil {
			t.Fatalf("torn write %q = %d, %v; want full success", p, n, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if b, _ := fsbackend.ReadFile(ctx, m, "t"); string(b) != "0123" {
		t.Fatalf("torn file = %q, want 0123", b)
	}
	if err := fsbackend.WriteFile(ctx, f, "other", []byte("0123456789")); err != nil {
		t.Fatal(err)
	}
	if b, _ := fsbackend.ReadFile(ctx, m, "other"); string(b) != "0123456789" {
		t.Fatalf("a file without the prefix was torn: %q", b)
	}
}

// TestTornTailAfterCrash is the use TearAt is for: a log whose last frame
// was torn when the process died. The scanner must find the frames before
// the tear and report the rest as a tail.
func TestTornTailAfterCrash(t *testing.T) {
	m := memfs.New()
	var frames []byte
	for i := 0; i < 3; i++ {
		frames = record.Append(frames, 1, []byte(fmt.Sprintf("record-%d", i)))
	}
	tear := int64(record.Size(8)*2 + 5) // inside the third frame
	f := errorfs.Wrap(m, errorfs.TearAt("log/", tear))
	w, err := f.Create(ctx, "log/1.log")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(frames); err != nil {
		t.Fatal(err)
	}
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	m.Crash()
	b, err := fsbackend.ReadFile(ctx, m, "log/1.log")
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(b)) != tear {
		t.Fatalf("file after crash has %d bytes, want %d", len(b), tear)
	}
	s := record.NewScanner(b)
	var got []string
	for s.Next() {
		got = append(got, string(s.Frame().Payload))
	}
	if fmt.Sprint(got) != "[record-0 record-1]" {
		t.Fatalf("frames = %q", got)
	}
	d := s.Damages()
	if len(d) != 1 || !d[0].Tail || s.End() != int64(record.Size(8)*2) {
		t.Fatalf("damages %+v, End %d; want one tail at %d", d, s.End(), record.Size(8)*2)
	}
}

func TestLatencyHonoursContext(t *testing.T) {
	m := memfs.New()
	prepare(t, m)
	f := errorfs.Wrap(m, errorfs.Latency(time.Hour))
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	// With an hour of latency these return only because the context is done.
	if _, err := f.Stat(cctx, "a"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Stat with a cancelled context: %v, want context.Canceled", err)
	}
	if err := f.Remove(cctx, "a"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Remove with a cancelled context: %v", err)
	}
	if _, err := m.Stat(ctx, "a"); err != nil {
		t.Fatalf("a cancelled Remove removed the file: %v", err)
	}
	g := errorfs.Wrap(m, errorfs.Latency(time.Millisecond))
	if _, err := g.Stat(ctx, "a"); err != nil {
		t.Fatalf("Stat with a short latency: %v", err)
	}
}

func TestAnyCombines(t *testing.T) {
	m := memfs.New()
	// Latency and a failure together: the call fails (after the delay).
	f := errorfs.Wrap(m, errorfs.Any(errorfs.Latency(time.Microsecond), errorfs.After(errorfs.OpStat, 0)))
	if _, err := f.Stat(ctx, "x"); !errors.Is(err, errorfs.ErrInjected) {
		t.Fatalf("Stat: %v, want ErrInjected", err)
	}
	// Two tears: the earlier one applies; a short write on top fails.
	g := errorfs.Wrap(m, errorfs.Any(errorfs.TearAt("", 6), errorfs.TearAt("", 3)))
	if err := fsbackend.WriteFile(ctx, g, "t", []byte("0123456789")); err != nil {
		t.Fatal(err)
	}
	if b, _ := fsbackend.ReadFile(ctx, m, "t"); string(b) != "012" {
		t.Fatalf("file = %q, want 012", b)
	}
	h := errorfs.Wrap(m, errorfs.Any(errorfs.TearAt("", 1), errorfs.ShortWrite("", 2)))
	w, _ := h.Create(ctx, "u")
	if n, err := w.Write([]byte("abcd")); n != 2 || !errors.Is(err, errorfs.ErrInjected) {
		t.Fatalf("tear+short = %d, %v", n, err)
	}
	w.Close()
	if b, _ := fsbackend.ReadFile(ctx, m, "u"); string(b) != "a" {
		t.Fatalf("file = %q, want a", b)
	}
}

// TestSwitchMidRun arms a fault while writers run: writes before Arm
// succeed, writes after it fail, and Disarm heals.
func TestSwitchMidRun(t *testing.T) {
	sw := errorfs.NewSwitch(errorfs.After(errorfs.OpClose, 0))
	f := errorfs.Wrap(memfs.New(), sw)
	if sw.Armed() {
		t.Fatal("a new switch is armed")
	}
	const workers = 4
	var wg, pre sync.WaitGroup
	armed := make(chan struct{})
	results := make(chan error, workers*20)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		pre.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				if err := fsbackend.WriteFile(ctx, f, fmt.Sprintf("pre/%d/%d", w, i), nil); err != nil {
					results <- fmt.Errorf("before Arm: %w", err)
				}
			}
			pre.Done()
			<-armed
			for i := 0; i < 10; i++ {
				if err := fsbackend.WriteFile(ctx, f, fmt.Sprintf("post/%d/%d", w, i), nil); !errors.Is(err, errorfs.ErrInjected) {
					results <- fmt.Errorf("after Arm: %v, want ErrInjected", err)
				}
			}
		}()
	}
	pre.Wait()
	sw.Arm()
	close(armed)
	wg.Wait()
	close(results)
	for err := range results {
		t.Error(err)
	}
	if l, _ := f.List(ctx, "pre"); len(l) != workers*10 {
		t.Errorf("%d files created before Arm, want %d", len(l), workers*10)
	}
	if l, _ := f.List(ctx, "post"); len(l) != 0 {
		t.Errorf("files created while armed: %v", l)
	}
	sw.Disarm()
	if err := fsbackend.WriteFile(ctx, f, "healed", nil); err != nil {
		t.Fatalf("after Disarm: %v", err)
	}
}

func TestTruncaterOnlyWhenWrapped(t *testing.T) {
	w, err := errorfs.Wrap(memfs.New(), nil).Create(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	if _, ok := w.(fsbackend.Truncater); !ok {
		t.Fatal("a wrapped memfs writer lost Truncate")
	}
	w2, err := errorfs.Wrap(noTruncate{memfs.New()}, nil).Create(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Abort()
	if _, ok := w2.(fsbackend.Truncater); ok {
		t.Fatal("a writer that cannot truncate claims to")
	}
}

// noTruncate hides the Truncater of its writers.
type noTruncate struct{ *memfs.FS }

func (n noTruncate) Create(ctx context.Context, name string) (fsbackend.Writer, error) {
	w, err := n.FS.Create(ctx, name)
	return struct{ fsbackend.Writer }{w}, err
}

func TestCallDescribesTheCall(t *testing.T) {
	var mu sync.Mutex
	var calls []errorfs.Call
	f := errorfs.Wrap(memfs.New(), errorfs.InjectorFunc(func(c errorfs.Call) error {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, c)
		return nil
	}))
	w, _ := f.Create(ctx, "a")
	w.Write([]byte("12345"))
	w.Write([]byte("678"))
	w.Close()
	f.Rename(ctx, "a", "b")
	want := []errorfs.Call{
		{Op: errorfs.OpCreate, Name: "a"},
		{Op: errorfs.OpWrite, Name: "a", Offset: 0, Len: 5},
		{Op: errorfs.OpWrite, Name: "a", Offset: 5, Len: 3},
		{Op: errorfs.OpClose, Name: "a", Offset: 8},
		{Op: errorfs.OpRename, Name: "a", NewName: "b"},
	}
	if fmt.Sprint(calls) != fmt.Sprint(want) {
		t.Fatalf("calls = %+v\nwant    %+v", calls, want)
	}
}
