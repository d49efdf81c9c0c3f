package hdfs_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stowage/stowage/fsbackend"
)

// The fixture's blocks are 1 MiB (dfs.blocksize in MiniHdfs.java), so a
// few MiB make a file of several blocks. The NameNode refuses the third
// and later block allocations with NotReplicatedYetException while the
// DataNode has not reported the block before the previous one; pausing the
// DataNode's incremental block reports makes that certain.

// rewrites is an slog.Handler that counts the writer's rewrite records and
// calls the armed function on the left-th record after arm.
type rewrites struct {
	n    atomic.Int64
	mu   sync.Mutex
	left int
	f    func()
}

func (r *rewrites) Enabled(context.Context, slog.Level) bool { return true }
func (r *rewrites) Handle(_ context.Context, rec slog.Record) error {
	if !strings.Contains(rec.Message, "rewriting the file") {
		return nil
	}
	r.n.Add(1)
	r.mu.Lock()
	var f func()
	if r.left--; r.left == 0 {
		f, r.f = r.f, nil
	}
	r.mu.Unlock()
	if f != nil {
		f()
	}
	return nil
}
func (r *rewrites) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *rewrites) WithGroup(string) slog.Handler      { return r }

func (r *rewrites) arm(after int, f func()) {
	r.mu.Lock()
	r.left, r.f = after, f
	r.mu.Unlock()
}

// pauseIBR holds back the DataNode's block reports until resume is called
// (or the test ends); it skips the test on a fixture without the command.
func pauseIBR(t *testing.T) (resume func()) {
	t.Helper()
	if _, err := ctlSend(envCtl, "ibr pause"); err != nil {
		if strings.Contains(err.Error(), "unknown command") {
			t.Skipf("the running HDFS fixture predates the ibr command (restart it): %v", err)
		}
		t.Fatal(err)
	}
	var once sync.Once
	resume = func() {
		once.Do(func() {
			if _, err := ctlSend(envCtl, "ibr resume"); err != nil {
				t.Errorf("ibr resume: %v", err)
			}
		})
	}
	t.Cleanup(resume)
	return resume
}

func openCounting(t *testing.T) (fsbackend.FS, *rewrites) {
	t.Helper()
	need(t, envHDFS, envCtl)
	rec := &rewrites{}
	return openLogged(t, rec), rec
}

// pattern is n bytes in which no block-sized shift repeats, distinct per
// seed.
func pattern(n int, seed byte) []byte {
	period := make([]byte, 4093)
	for i := range period {
		period[i] = byte(i*7+i/251) ^ seed
	}
	return bytes.Repeat(period, n/len(period)+1)[:n]
}

// writeOdd writes data to a new file in odd-sized chunks and closes it.
func writeOdd(ctx context.Context, f fsbackend.FS, name string, data []byte) error {
	w, err := f.Create(ctx, name)
	if err != nil {
		return err
	}
	for off, step := 0, 1; off < len(data); step = step*3%65521 + 1 {
		end := min(off+step, len(data))
		if _, err := w.Write(data[off:end]); err != nil {
			_ = w.Abort()
			return fmt.Errorf("write at %d: %w", off, err)
		}
		off = end
	}
	if err := w.Close(); err != nil {
		_ = w.Abort()
		return err
	}
	return nil
}

func TestRealRewriteWhileBlocksUnreported(t *testing.T) {
	f, rec := openCounting(t)
	ctx := context.Background()
	resume := pauseIBR(t)
	// The first refusal lets the reports go; the rewrite after the
	// writer's backoff then gets its blocks.
	rec.arm(1, resume)
	data := pattern(4<<20+12345, 1)
	w, err := f.Create(ctx, "unreported/file")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	if _, err := w.Write(data); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if rec.n.Load() == 0 {
		t.Fatal("no block allocation was refused while the block reports were held back")
	}
	// The rewritten file kept the name all along: it is still exclusive,
	// and no side file is left over.
	if _, err := f.Create(ctx, "unreported/file"); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Create of the name being rewritten: %v, want ErrExist", err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if got := readFile(t, f, "unreported/file"); !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes, want the %d written", len(got), len(data))
	}
	list, err := f.List(ctx, "unreported")
	if err != nil || len(list) != 1 || list[0].Name != "unreported/file" {
		t.Errorf("List = %v, %v; want only unreported/file", list, err)
	}
	t.Logf("%d rewrites", rec.n.Load())
}

// TestRealManyBlocksQuickly writes many multi-block files from several
// goroutines at once, in rounds that start with the block reports held
// back until as many refusals as writers were seen (or 3 s passed), and
// checks that no write failed and every file reads back as written.
func TestRealManyBlocksQuickly(t *testing.T) {
	f, rec := openCounting(t)
	ctx := context.Background()
	const writers, files, size, rounds = 6, 3, 5<<20 + 777, 2
	for round := range rounds {
		resume := pauseIBR(t)
		rec.arm(writers, resume)
		// Under load a writer may reach its close before every other one
		// was refused: the reports then go after a few seconds whatever
		// was seen, well inside the close's retry schedule (18 s).
		late := time.AfterFunc(3*time.Second, resume)
		var wg sync.WaitGroup
		errs := make(chan error, writers*files)
		for g := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range files {
					name := fmt.Sprintf("r%d/w%d/f%d", round, g, i)
					if err := writeOdd(ctx, f, name, pattern(size, byte(round*writers*files+g*files+i))); err != nil {
						errs <- fmt.Errorf("%s: %w", name, err)
					}
				}
			}()
		}
		wg.Wait()
		late.Stop()
		resume()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		for g := range writers {
			for i := range files {
				name := fmt.Sprintf("r%d/w%d/f%d", round, g, i)
				if got := readFile(t, f, name); !bytes.Equal(got, pattern(size, byte(round*writers*files+g*files+i))) {
					t.Errorf("%s: read back %d bytes that differ from the %d written", name, len(got), size)
				}
			}
		}
	}
	if rec.n.Load() == 0 {
		t.Error("no block allocation was refused: the test did not exercise rewrites")
	}
	t.Logf("%d rewrites", rec.n.Load())
}
