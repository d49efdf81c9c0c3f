package hdfs_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/mapstore/filestore"
	"github.com/stowage/stowage/serde/keyhash"
)

// manyWriters is how many goroutines of TestRealMapStoreManyWritersChild
// put keys at once.
const manyWriters = 64

// envManyChild names the HDFS directory the child process of
// TestRealMapStoreManyWritersSIGKILL writes to.
const envManyChild = "STOWAGE_TEST_MANY_WRITERS_DIR"

// inflightFS counts the Syncs of log files in flight at once and reports
// each new most on report.
type inflightFS struct {
	fsbackend.FS
	inflight, most atomic.Int64
	report         func(int64)
}

func (c *inflightFS) Create(ctx context.Context, name string) (fsbackend.Writer, error) {
	w, err := c.FS.Create(ctx, name)
	if err != nil || !strings.Contains(name, "/log/") {
		return w, err
	}
	return &inflightWriter{Writer: w, c: c}, nil
}

func (c *inflightFS) Recover(ctx context.Context, name string) error {
	return fsbackend.Recover(ctx, c.FS, name)
}

type inflightWriter struct {
	fsbackend.Writer
	c *inflightFS
}

func (w *inflightWriter) Sync() error {
	n := w.c.inflight.Add(1)
	defer w.c.inflight.Add(-1)
	for {
		m := w.c.most.Load()
		if n <= m {
			break
		}
		if w.c.most.CompareAndSwap(m, n) {
			w.c.report(n)
			break
		}
	}
	return w.Writer.Sync()
}

func manyKey(w, i int) string   { return fmt.Sprintf("w%02d-%06d", w, i) }
func manyValue(w, i int) string { return fmt.Sprintf("value-%02d-%06d", w, i) }

// TestRealMapStoreManyWritersChild is the writing process of
// TestRealMapStoreManyWritersSIGKILL: manyWriters goroutines put keys one
// after another, each printing "acked W I" once its put I is acknowledged,
// and "inflight N" whenever N Syncs were in flight at once, a new most.
func TestRealMapStoreManyWritersChild(t *testing.T) {
	dir := os.Getenv(envManyChild)
	if dir == "" {
		t.Skip("the writing process of TestRealMapStoreManyWritersSIGKILL")
	}
	raw := openRaw(t, clusterProps())
	sub, err := fsbackend.Sub(raw, dir)
	if err != nil {
		t.Fatal(err)
	}
	var out sync.Mutex
	say := func(format string, a ...any) {
		out.Lock()
		fmt.Printf(format+"\n", a...)
		out.Unlock()
	}
	c := &inflightFS{FS: sub, report: func(n int64) { say("inflight %d", n) }}
	ctx := context.Background()
	// Two open files, so that two Syncs are in flight at once.
	s, err := filestore.Open(ctx, filestore.Options{FS: c, Partitions: loneParts, OpenFiles: 2})
	if err != nil {
		t.Fatal(err)
	}
	var seq atomic.Uint64
	for w := range manyWriters {
		go func() {
			for i := 0; ; i++ {
				key := manyKey(w, i)
				r := mapstore.Record{Partition: keyhash.Partition([]byte(key), loneParts), Key: []byte(key),
					Value: []byte(manyValue(w, i)), Version: mapstore.Version{Epoch: 1, Seq: seq.Add(1)}}
				if err := s.Store(ctx, r); err != nil {
					say("error %d %v", w, err)
					return
				}
				say("acked %d %d", w, i)
			}
		}()
	}
	select {} // until killed
}

// TestRealMapStoreManyWritersSIGKILL: a process whose manyWriters
// goroutines put keys into two open log files, with several Syncs in
// flight at once (counted in the process), is killed with SIGKILL; a new
// store (a new run, the dead run's files still under construction) loads
// every acknowledged put.
func TestRealMapStoreManyWritersSIGKILL(t *testing.T) {
	_, _, dir := openTest(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestRealMapStoreManyWritersChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), envManyChild+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked := make([]int, manyWriters) // per writer: its last acknowledged put
	for w := range acked {
		acked[w] = -1
	}
	total := 0
	var most int64
	read := func(line string) {
		var w, i int
		var n int64
		switch {
		case strings.HasPrefix(line, "acked "):
			if _, err := fmt.Sscanf(line, "acked %d %d", &w, &i); err == nil && w >= 0 && w < manyWriters {
				acked[w] = i
				total++
			}
		case strings.HasPrefix(line, "inflight "):
			if _, err := fmt.Sscanf(line, "inflight %d", &n); err == nil {
				most = max(most, n)
			}
		case strings.HasPrefix(line, "error "):
			t.Errorf("writing process: %s", line)
		}
	}
	sc := bufio.NewScanner(out)
	deadline := time.Now().Add(time.Minute)
	for sc.Scan() && time.Now().Before(deadline) {
		read(sc.Text())
		if total >= 4000 && most >= 2 {
			break
		}
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	// Acknowledgements printed between the last line read and the kill
	// count too.
	for sc.Scan() {
		read(sc.Text())
	}
	_ = cmd.Wait()
	t.Logf("%d puts acknowledged before SIGKILL, at most %d Syncs in flight at once", total, most)
	if total == 0 {
		t.Fatal("the writing process acknowledged nothing")
	}
	if most < 2 {
		t.Errorf("at most %d Sync in flight at once in the writing process, want several", most)
	}

	raw := openRaw(t, clusterProps())
	sub, err := fsbackend.Sub(raw, dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := filestore.Open(context.Background(), filestore.Options{FS: sub, Partitions: loneParts,
		OnDamage: func(d filestore.Damage) {
			if !d.Tail {
				t.Errorf("damage: %v", d)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := loadAll(t, s)
	lost := 0
	for w, last := range acked {
		for i := 0; i <= last; i++ {
			if got[manyKey(w, i)] != manyValue(w, i) {
				lost++
			}
		}
	}
	if lost > 0 {
		t.Fatalf("%d of %d acknowledged puts lost after SIGKILL (%d entries loaded)", lost, total, len(got))
	}
}

// syncCountFS counts the Syncs of the writers it creates.
type syncCountFS struct {
	fsbackend.FS
	syncs atomic.Int64
}

func (c *syncCountFS) Create(ctx context.Context, name string) (fsbackend.Writer, error) {
	w, err := c.FS.Create(ctx, name)
	if err != nil {
		return w, err
	}
	return &syncCountWriter{Writer: w, c: c}, nil
}

type syncCountWriter struct {
	fsbackend.Writer
	c *syncCountFS
}

func (w *syncCountWriter) Sync() error {
	w.c.syncs.Add(1)
	return w.Writer.Sync()
}

// TestRealMapStoreManyWritersFsyncCount: with several writers on the
// store's open files (several lanes), the DataNode's FsyncCount rises by at
// least one for every Sync the store made, so every acknowledged batch
// was synced to disk; with stowage.hdfs.sync-on-close false (hflush) it
// does not rise at all. The fixture runs with Hadoop's default
// dfs.datanode.synconclose false, so only the client's syncBlock makes
// the DataNode sync.
func TestRealMapStoreManyWritersFsyncCount(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the DataNode's JMX metrics, about 40 s")
	}
	need(t, envHDFS, envCtl)
	addrs := strings.Fields(ctl(t, envCtl, "dn-http"))
	if len(addrs) != 1 {
		t.Fatalf("dn-http = %v, want one DataNode", addrs)
	}
	httpAddr := addrs[0]
	measure := func(kv ...string) (fsyncs, syncs int64) {
		t.Helper()
		f, _, _ := openTest(t, kv...)
		c := &syncCountFS{FS: f}
		ctx := context.Background()
		before := settledActivity(t, httpAddr)
		s, err := filestore.Open(ctx, filestore.Options{FS: c, Partitions: loneParts, OpenFiles: 2})
		if err != nil {
			t.Fatal(err)
		}
		putConcurrently(t, s, 16, 20)
		syncs = c.syncs.Load()
		after := settledActivity(t, httpAddr)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		return after.FsyncCount - before.FsyncCount, syncs
	}
	if d, syncs := measure("stowage.hdfs.sync-on-close", "false"); d != 0 {
		t.Errorf("sync-on-close false: FsyncCount grew by %d for %d Syncs, want 0", d, syncs)
	}
	d, syncs := measure()
	t.Logf("320 puts of 16 writers: %d Syncs, FsyncCount +%d", syncs, d)
	if syncs == 0 || d < syncs {
		t.Errorf("default: FsyncCount grew by %d for %d Syncs, want at least one per Sync", d, syncs)
	}
}

// TestRealMapStoreWritersShareOneHsync: on the default single open file,
// the group commit waits for the callers of its last batch, so 16
// writers that put one key after another share each hsync instead of
// splitting into a batch being synced and one queued behind it (about 40
// Syncs for 320 puts without the wait, 20 with every writer in each);
// every put loads back.
func TestRealMapStoreWritersShareOneHsync(t *testing.T) {
	f, _, _ := openTest(t)
	c := &syncCountFS{FS: f}
	ctx := context.Background()
	s, err := filestore.Open(ctx, filestore.Options{FS: c, Partitions: loneParts})
	if err != nil {
		t.Fatal(err)
	}
	const writers, puts = 16, 20
	putConcurrently(t, s, writers, puts)
	syncs := c.syncs.Load()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d puts of %d writers: %d Syncs", writers*puts, writers, syncs)
	if syncs == 0 || syncs > 30 {
		t.Errorf("%d Syncs for %d puts of %d writers, want at most 30 (each shared by about all the writers)", syncs, writers*puts, writers)
	}
	s, err = filestore.Open(ctx, filestore.Options{FS: f, Partitions: loneParts})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := loadAll(t, s)
	for w := range writers {
		for i := range puts {
			if got[manyKey(w, i)] != manyValue(w, i) {
				t.Fatalf("%s: loaded %q, want %q", manyKey(w, i), got[manyKey(w, i)], manyValue(w, i))
			}
		}
	}
}

// putConcurrently has writers goroutines store puts keys each in s
// (manyKey, manyValue), one after another, and waits for all of them.
func putConcurrently(t *testing.T, s *filestore.Store, writers, puts int) {
	t.Helper()
	ctx := context.Background()
	var seq atomic.Uint64
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range puts {
				key := manyKey(w, i)
				r := mapstore.Record{Partition: keyhash.Partition([]byte(key), loneParts), Key: []byte(key),
					Value: []byte(manyValue(w, i)), Version: mapstore.Version{Epoch: 1, Seq: seq.Add(1)}}
				if err := s.Store(ctx, r); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}
