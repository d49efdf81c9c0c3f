package hdfs_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/mapstore/filestore"
	"github.com/stowage/stowage/serde/keyhash"
)

const loneParts = 16

// countingFS counts the log files created and the Syncs of their writers.
type countingFS struct {
	fsbackend.FS
	logCreates, syncs atomic.Int64
}

func (c *countingFS) Create(ctx context.Context, name string) (fsbackend.Writer, error) {
	w, err := c.FS.Create(ctx, name)
	if err != nil || !strings.Contains(name, "/log/") {
		return w, err
	}
	c.logCreates.Add(1)
	return &countingWriter{Writer: w, c: c}, nil
}

func (c *countingFS) Recover(ctx context.Context, name string) error {
	return fsbackend.Recover(ctx, c.FS, name)
}

type countingWriter struct {
	fsbackend.Writer
	c *countingFS
}

func (w *countingWriter) Sync() error {
	w.c.syncs.Add(1)
	return w.Writer.Sync()
}

// lonePut writes key i of a lone writer, one after another.
func lonePut(ctx context.Context, s *filestore.Store, i int) error {
	key := []byte(fmt.Sprintf("key-%06d", i))
	p := keyhash.Partition(key, loneParts)
	return s.Store(ctx, mapstore.Record{Partition: p, Key: key, Value: []byte(fmt.Sprintf("value-%06d", i)),
		Version: mapstore.Version{Epoch: 1, Seq: uint64(i + 1)}})
}

// loadAll returns every entry of the store by key.
func loadAll(t *testing.T, s *filestore.Store) map[string]string {
	t.Helper()
	got := map[string]string{}
	for p := range loneParts {
		err := s.LoadPartition(context.Background(), p, func(r mapstore.Record) error {
			got[string(r.Key)] = string(r.Value)
			return nil
		})
		if err != nil {
			t.Fatalf("LoadPartition(%d): %v", p, err)
		}
	}
	return got
}

// TestRealMapStoreLoneWriterOneFile: one caller writing one key after
// another lands in the open log files of the partitions' lanes (one file
// per lane), each put made durable by a Sync (hsync), not a new file per
// put; everything loads back after Close.
func TestRealMapStoreLoneWriterOneFile(t *testing.T) {
	sub, _, _ := openTest(t)
	c := &countingFS{FS: sub}
	ctx := context.Background()
	s, err := filestore.Open(ctx, filestore.Options{FS: c, Partitions: loneParts})
	if err != nil {
		t.Fatal(err)
	}
	const puts = 300
	for i := range puts {
		if err := lonePut(ctx, s, i); err != nil {
			t.Fatalf("put %d: %v", i, err)
		}
	}
	creates, syncs := c.logCreates.Load(), c.syncs.Load()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d puts: %d log files created, %d syncs", puts, creates, syncs)
	// A second idle on a busy machine may finish a file once or twice.
	if creates > 3*filestore.DefaultOpenFiles {
		t.Errorf("%d puts by one writer created %d log files, want one open file per lane (at most %d)", puts, creates, 3*filestore.DefaultOpenFiles)
	}
	if syncs < puts {
		t.Errorf("%d puts made durable by %d syncs, want one per put", puts, syncs)
	}
	s, err = filestore.Open(ctx, filestore.Options{FS: sub, Partitions: loneParts})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := loadAll(t, s); len(got) != puts {
		t.Errorf("loaded %d entries, want %d", len(got), puts)
	}
}

// envLoneChild names the HDFS directory the child process of
// TestRealMapStoreLoneWriterSIGKILL writes to.
const envLoneChild = "STOWAGE_TEST_LONE_WRITER_DIR"

// TestRealMapStoreLoneWriterChild is the writing process of
// TestRealMapStoreLoneWriterSIGKILL: it prints the number of every put
// once it is acknowledged, until it is killed.
func TestRealMapStoreLoneWriterChild(t *testing.T) {
	dir := os.Getenv(envLoneChild)
	if dir == "" {
		t.Skip("the writing process of TestRealMapStoreLoneWriterSIGKILL")
	}
	raw := openRaw(t, clusterProps())
	sub, err := fsbackend.Sub(raw, dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, err := filestore.Open(ctx, filestore.Options{FS: sub, Partitions: loneParts})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("open")
	for i := 0; ; i++ {
		if err := lonePut(ctx, s, i); err != nil {
			t.Fatalf("put %d: %v", i, err)
		}
		fmt.Println("acked", i)
	}
}

// TestRealMapStoreLoneWriterSIGKILL: a process writing one key after
// another into the open log file is killed with SIGKILL; a new store
// (another process's view: a new run, the dead run's file still under
// construction) loads every acknowledged put, having recovered the file.
func TestRealMapStoreLoneWriterSIGKILL(t *testing.T) {
	_, _, dir := openTest(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestRealMapStoreLoneWriterChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), envLoneChild+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked := -1
	sc := bufio.NewScanner(out)
	deadline := time.Now().Add(time.Minute)
	for sc.Scan() && time.Now().Before(deadline) {
		var n int
		if _, err := fmt.Sscanf(sc.Text(), "acked %d", &n); err == nil {
			acked = n
			if acked >= 400 {
				break
			}
		}
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	// Acknowledgements printed between the last line read and the kill
	// count too.
	for sc.Scan() {
		var n int
		if _, err := fmt.Sscanf(sc.Text(), "acked %d", &n); err == nil {
			acked = n
		}
	}
	_ = cmd.Wait()
	if acked < 0 {
		t.Fatal("the writing process acknowledged nothing")
	}
	t.Logf("%d puts acknowledged before SIGKILL", acked+1)

	raw := openRaw(t, clusterProps())
	sub, err := fsbackend.Sub(raw, dir)
	if err != nil {
		t.Fatal(err)
	}
	list, err := sub.List(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	logs := 0
	for _, fi := range list {
		if strings.Contains(fi.Name, "/log/") {
			logs++
			t.Logf("%s: %d bytes listed", fi.Name, fi.Size)
		}
	}
	if logs > 3*filestore.DefaultOpenFiles {
		t.Errorf("the lone writer left %d log files, want its open files, one per lane (at most %d)", logs, 3*filestore.DefaultOpenFiles)
	}
	var tails atomic.Int64
	s, err := filestore.Open(context.Background(), filestore.Options{FS: sub, Partitions: loneParts,
		OnDamage: func(d filestore.Damage) {
			if !d.Tail {
				t.Errorf("damage: %v", d)
			}
			tails.Add(1)
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := loadAll(t, s)
	lost := 0
	for i := 0; i <= acked; i++ {
		k := fmt.Sprintf("key-%06d", i)
		if got[k] != fmt.Sprintf("value-%06d", i) {
			lost++
		}
	}
	if lost > 0 {
		t.Fatalf("%d of %d acknowledged puts lost after SIGKILL (%d entries loaded)", lost, acked+1, len(got))
	}
}
