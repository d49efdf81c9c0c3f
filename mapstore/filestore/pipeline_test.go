package filestore_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/errorfs"
	"github.com/stowage/stowage/fsbackend/memfs"
	"github.com/stowage/stowage/fsbackend/s3"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/mapstore/filestore"
	"github.com/stowage/stowage/serde/keyhash"
)

// slowServer is an in-process S3 server (gofakes3) that answers every
// request after a fixed delay, as a real object store takes tens of
// milliseconds, and counts the PUTs of log objects in progress at once.
type slowServer struct {
	URL     string
	delay   time.Duration
	inner   http.Handler
	now     atomic.Int64 // log PUTs in progress
	most    atomic.Int64 // the most log PUTs in progress at once
	logPuts atomic.Int64
	logSent atomic.Int64 // body bytes of log PUTs
}

func newSlowServer(tb testing.TB, delay time.Duration) (*slowServer, fsbackend.FS) {
	tb.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket("pipe"); err != nil {
		tb.Fatal(err)
	}
	s := &slowServer{delay: delay, inner: gofakes3.New(backend, gofakes3.WithLogger(gofakes3.DiscardLog())).Server()}
	srv := httptest.NewServer(s)
	tb.Cleanup(srv.Close)
	s.URL = srv.URL
	f, err := s3.Open(context.Background(), fsbackend.Properties{
		"storage.type":                    "s3",
		"s3.bucket":                       "s3a://pipe/root",
		"fs.s3a.endpoint":                 srv.URL,
		"fs.s3a.access.key":               "AKIDPIPELINE",
		"fs.s3a.secret.key":               "pipeline-secret",
		"fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { f.Close() })
	return s, f
}

func (s *slowServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/log/") {
		s.logPuts.Add(1)
		s.logSent.Add(max(0, r.ContentLength))
		n := s.now.Add(1)
		for m := s.most.Load(); n > m && !s.most.CompareAndSwap(m, n); m = s.most.Load() {
		}
		defer s.now.Add(-1)
	}
	time.Sleep(s.delay)
	s.inner.ServeHTTP(w, r)
}

// keysOf returns n keys of partition p, named prefix0, prefix1, ...
// where they hash there.
func keysOf(p, n int, prefix string) []string {
	var out []string
	for i := 0; len(out) < n; i++ {
		if k := fmt.Sprint(prefix, i); keyhash.Partition([]byte(k), parts) == p {
			out = append(out, k)
		}
	}
	return out
}

// On an object store that takes 20 ms per request, 64 writers keep
// several batch files in flight at once (the server sees their PUTs
// overlap) and never more than MaxInFlight; every acknowledged write
// loads back.
func TestPipelinedCommitOverlapsBatches(t *testing.T) {
	srv, f := newSlowServer(t, 20*time.Millisecond)
	ctx := context.Background()
	const inFlight = 4
	s, err := filestore.Open(ctx, filestore.Options{FS: f, Partitions: parts, MaxInFlight: inFlight})
	if err != nil {
		t.Fatal(err)
	}
	m := newModel(1)
	want := map[string]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < 64; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				k, v := fmt.Sprintf("w%d-%d", w, i), fmt.Sprintf("v%d", i)
				if err := s.Store(ctx, m.next(k, []byte(v), false)); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				want[k] = v
				mu.Unlock()
			}
		}(w)
	}
	wg.Wait()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	most := srv.most.Load()
	t.Logf("%d log PUTs for %d puts, at most %d at once", srv.logPuts.Load(), len(want), most)
	if most < 2 || most > inFlight {
		t.Errorf("at most %d log PUTs in progress at once, want 2 to %d", most, inFlight)
	}
	s2, err := filestore.Open(ctx, filestore.Options{FS: f, Partitions: parts})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	expectSame(t, loadAll(t, s2), want)
}

// holdClose holds back the Close (which makes a file durable) of the next
// log file after arm, until release; with fail, the Close then fails.
type holdClose struct {
	armed   atomic.Bool
	reached chan string
	release chan bool // true: fail the held Close
}

func newHoldClose() *holdClose {
	return &holdClose{reached: make(chan string, 1), release: make(chan bool, 1)}
}

func (h *holdClose) MaybeError(c errorfs.Call) error {
	if c.Op != errorfs.OpClose || !strings.Contains(c.Name, "/log/") || !h.armed.CompareAndSwap(true, false) {
		return nil
	}
	h.reached <- c.Name
	if <-h.release {
		return fmt.Errorf("%w: close %s", errorfs.ErrInjected, c.Name)
	}
	return nil
}

// pipelineFixture is a store on a back end without durable append
// (memfs with durable append hidden) whose log closes can be held back.
type pipelineFixture struct {
	t    *testing.T
	mem  *memfs.FS
	hold *holdClose
	s    *filestore.Store
	m    *model
	p    int
	base map[string]string
}

func newPipelineFixture(t *testing.T) *pipelineFixture {
	x := &pipelineFixture{t: t, mem: memfs.New(), hold: newHoldClose(), m: newModel(1), base: map[string]string{}}
	s, err := filestore.Open(context.Background(), filestore.Options{FS: wholeFileFS{errorfs.Wrap(x.mem, x.hold)}, Partitions: parts})
	if err != nil {
		t.Fatal(err)
	}
	x.s = s
	t.Cleanup(func() {
		select {
		case x.hold.release <- false: // let a held batch finish, so Close returns
		default:
		}
		s.Close()
	})
	x.p = keyhash.Partition([]byte("a"), parts)
	for i, k := range keysOf(x.p, 3, "base") {
		v := fmt.Sprint("b", i)
		if err := s.Store(context.Background(), x.m.next(k, []byte(v), false)); err != nil {
			t.Fatal(err)
		}
		x.base[k] = v
	}
	return x
}

// storeAsync stores key=value pairs of partition p as one call.
func (x *pipelineFixture) storeAsync(kv ...string) <-chan error {
	var rs []mapstore.Record
	for i := 0; i+1 < len(kv); i += 2 {
		rs = append(rs, x.m.next(kv[i], []byte(kv[i+1]), false))
	}
	errc := make(chan error, 1)
	go func() { errc <- x.s.StoreAll(context.Background(), rs) }()
	return errc
}

// crashed returns what a crash now would leave.
func (x *pipelineFixture) crashed() *memfs.FS {
	c := x.mem.Clone()
	c.Crash()
	return c
}

func logCount(t *testing.T, f fsbackend.FS) int {
	t.Helper()
	return len(logNames(t, f))
}

func reopen(t *testing.T, f fsbackend.FS) *filestore.Store {
	t.Helper()
	s, err := filestore.Open(context.Background(), filestore.Options{FS: wholeFileFS{f}, Partitions: parts})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// startHeldPair writes batch A (held back before its file is durable)
// and then batch B of the same partition, and waits until B's file is
// durable while A's is not. It returns both calls' outcomes.
func (x *pipelineFixture) startHeldPair(keys []string, more ...string) (errA, errB <-chan error, held string) {
	t := x.t
	before := logCount(t, x.crashed())
	x.hold.armed.Store(true)
	errA = x.storeAsync(append([]string{keys[0], "x1", keys[2], "a1"}, more...)...)
	held = <-x.hold.reached
	errB = x.storeAsync(keys[1], "y2", keys[2], "a2")
	deadline := time.Now().Add(10 * time.Second)
	for logCount(t, x.crashed()) < before+1 {
		if time.Now().After(deadline) {
			t.Fatalf("the batch after %s never became durable: batches are not written while an earlier one is in flight", held)
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case err := <-errB:
		t.Fatalf("the later batch was acknowledged (err %v) while the earlier batch %s was not durable", err, held)
	case <-time.After(20 * time.Millisecond):
	}
	return errA, errB, held
}

// shortCopy writes into dst the first bytes of the named file as src holds
// it so far, without the last 10 bytes (in its last record): a file
// whose writer died before the end reached the disks. It returns the
// length written.
func shortCopy(t *testing.T, src, dst fsbackend.FS, name string) int {
	t.Helper()
	b, err := fsbackend.ReadFile(context.Background(), src, name)
	if err != nil {
		t.Fatal(err)
	}
	n := len(b) - 10
	if err := fsbackend.WriteFile(context.Background(), dst, name, b[:n]); err != nil {
		t.Fatal(err)
	}
	return n
}

// A later batch's file becomes durable before an earlier one's: the later
// batch is not acknowledged until the earlier one is, and a crash at that
// point recovers neither (recovery does not skip the missing batch to
// apply the one after it), while the versions the later batch used are
// not handed out again. Once the earlier batch is durable too, both are
// acknowledged and recovered, the newer value of the key both wrote
// winning.
func TestPipelinedCrashWithLaterBatchDurableSkipsNothing(t *testing.T) {
	x := newPipelineFixture(t)
	keys := keysOf(x.p, 3, "k")
	errA, errB, held := x.startHeldPair(keys)
	crash := x.crashed()
	if n := logCount(t, crash); n < 2 {
		t.Fatalf("%d log files after the crash, want the base batches and the later batch", n)
	}
	s2 := reopen(t, crash)
	expectSame(t, loadAll(t, s2), x.base)
	// On HDFS the earlier batch's file is there, cut short, after a crash:
	// what it holds of its batch loads (a torn tail), the later batch not.
	short := x.crashed()
	torn := shortCopy(t, x.mem, short, held)
	s2b := reopen(t, short)
	want := map[string]string{keys[0]: "x1"}
	for k, v := range x.base {
		want[k] = v
	}
	expectSame(t, loadAll(t, s2b), want)
	s2b.Close()
	t.Logf("the earlier batch %s cut to %d bytes", held, torn)
	x.m.mu.Lock()
	written := x.m.ver[x.p]
	x.m.mu.Unlock()
	if got := s2.LastVersion(x.p); got.Less(written) {
		t.Errorf("LastVersion %v after the crash, below %v, which the durable later batch used", got, written)
	}
	s2.Close()

	x.hold.release <- false
	if err := <-errA; err != nil {
		t.Fatal(err)
	}
	if err := <-errB; err != nil {
		t.Fatal(err)
	}
	want = map[string]string{keys[0]: "x1", keys[1]: "y2", keys[2]: "a2"}
	for k, v := range x.base {
		want[k] = v
	}
	after := reopen(t, x.crashed())
	defer after.Close()
	expectSame(t, loadAll(t, after), want)
}

// An earlier batch fails after a later one's file became durable: both
// calls fail, and the later batch's file is gone, so that a failed write
// does not come back on recovery; writes after that succeed.
func TestPipelinedFailureFailsLaterBatches(t *testing.T) {
	x := newPipelineFixture(t)
	keys := keysOf(x.p, 4, "k")
	errA, errB, _ := x.startHeldPair(keys)
	x.hold.release <- true
	if err := <-errA; !errors.Is(err, errorfs.ErrInjected) {
		t.Fatalf("earlier batch: %v, want the injected failure", err)
	}
	if err := <-errB; err == nil {
		t.Fatal("the later batch was acknowledged although the earlier one failed")
	}
	if err := <-x.storeAsync(keys[3], "z3"); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{keys[3]: "z3"}
	for k, v := range x.base {
		want[k] = v
	}
	s2 := reopen(t, x.mem)
	defer s2.Close()
	expectSame(t, loadAll(t, s2), want)
}

// Damage at rest in an earlier batch's file, taking the very record a
// later batch's link names, does not make recovery drop the later batch:
// the file is there and was whole, so only the damaged record is lost.
func TestPipelinedDamageAtRestDropsNoLaterBatch(t *testing.T) {
	x := newPipelineFixture(t)
	keys := keysOf(x.p, 3, "k")
	other := keysOf((x.p+1)%parts, 1, "o")[0]
	errA, errB, held := x.startHeldPair(keys, other, "o1")
	x.hold.release <- false
	if err := <-errA; err != nil {
		t.Fatal(err)
	}
	if err := <-errB; err != nil {
		t.Fatal(err)
	}
	// Flip a byte of the key of a1, the partition's newest record in the
	// earlier batch, which a record of another partition follows.
	ctx := context.Background()
	b, err := fsbackend.ReadFile(ctx, x.mem, held)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.LastIndex(string(b), keys[2])
	if i < 0 || !strings.Contains(string(b[i:]), other) {
		t.Fatalf("%s does not hold %s before %s", held, keys[2], other)
	}
	b[i] ^= 0x20
	if err := x.mem.Remove(ctx, held); err != nil {
		t.Fatal(err)
	}
	if err := fsbackend.WriteFile(ctx, x.mem, held, b); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{keys[0]: "x1", keys[1]: "y2", keys[2]: "a2", other: "o1"}
	for k, v := range x.base {
		want[k] = v
	}
	s2 := reopen(t, x.mem)
	defer s2.Close()
	expectSame(t, loadAll(t, s2), want)
}
