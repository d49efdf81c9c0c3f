package hdfs_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/hdfs"
)

func TestRealCreateReadListRemove(t *testing.T) {
	f, _, _ := openTest(t)
	ctx := context.Background()
	if c := f.Capabilities(); c.DurableAppend || !c.SyncOpen || !c.AtomicRename || !c.ConditionalCreate {
		t.Errorf("Capabilities = %+v, want DurableAppend false, SyncOpen, AtomicRename and ConditionalCreate true", c)
	}
	data := bytes.Repeat([]byte("stowage "), 4096)
	writeFile(t, f, "a/b/c.log", data)
	writeFile(t, f, "a/top", []byte("x"))
	writeFile(t, f, "z", nil)

	if got := readFile(t, f, "a/b/c.log"); !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes, want %d equal bytes", len(got), len(data))
	}
	if got := readFile(t, f, "z"); len(got) != 0 {
		t.Errorf("empty file read back %d bytes", len(got))
	}
	fi, err := f.Stat(ctx, "a/b/c.log")
	if err != nil || fi.Size != int64(len(data)) || fi.Name != "a/b/c.log" {
		t.Errorf("Stat = %+v, %v", fi, err)
	}
	if _, err := f.Stat(ctx, "a/b"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat of a directory: %v, want ErrNotExist", err)
	}
	list, err := f.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, fi := range list {
		names = append(names, fi.Name)
	}
	if got := strings.Join(names, ","); got != "a/b/c.log,a/top,z" {
		t.Errorf("List = %s", got)
	}
	if list, err := f.List(ctx, "a/b"); err != nil || len(list) != 1 || list[0].Name != "a/b/c.log" {
		t.Errorf("List(a/b) = %v, %v", list, err)
	}
	if list, err := f.List(ctx, "nope"); err != nil || len(list) != 0 {
		t.Errorf("List(missing) = %v, %v; want empty, nil", list, err)
	}
	if list, err := f.List(ctx, "a/top"); err != nil || len(list) != 0 {
		t.Errorf("List(a file) = %v, %v; want empty, nil", list, err)
	}

	// Exclusive create.
	if _, err := f.Create(ctx, "a/top"); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Create of an existing file: %v, want ErrExist", err)
	}
	// ReadAt with io.EOF at the end, from several goroutines.
	r, err := f.Open(ctx, "a/b/c.log")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 100)
			off := int64(i * 1000)
			if n, err := r.ReadAt(buf, off); n != 100 || err != nil || !bytes.Equal(buf, data[off:off+100]) {
				t.Errorf("ReadAt(%d) = %d, %v", off, n, err)
			}
		}()
	}
	wg.Wait()
	buf := make([]byte, 10)
	if n, err := r.ReadAt(buf, int64(len(data)-4)); n != 4 || !errors.Is(err, io.EOF) {
		t.Errorf("ReadAt across the end = %d, %v; want 4, EOF", n, err)
	}
	if r.Size() != int64(len(data)) {
		t.Errorf("Size = %d", r.Size())
	}
	r.Close()

	// Rename replaces atomically; Remove prunes emptied directories.
	if err := f.Rename(ctx, "a/top", "a/b/c.log"); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, f, "a/b/c.log"); string(got) != "x" {
		t.Errorf("after rename read %q, want x", got)
	}
	if err := f.Rename(ctx, "a/b/c.log", "moved/deep/c"); err != nil {
		t.Fatal(err)
	}
	if err := f.Rename(ctx, "gone", "x"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Rename of a missing file: %v, want ErrNotExist", err)
	}
	for _, n := range []string{"moved/deep/c", "z"} {
		if err := f.Remove(ctx, n); err != nil {
			t.Fatalf("Remove(%s): %v", n, err)
		}
	}
	if err := f.Remove(ctx, "z"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("second Remove: %v, want ErrNotExist", err)
	}
	if _, err := f.Open(ctx, "z"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open of a removed file: %v, want ErrNotExist", err)
	}
	if list, err := f.List(ctx, ""); err != nil || len(list) != 0 {
		t.Errorf("List after removing all = %v, %v", list, err)
	}
}

func TestRealWriterSemantics(t *testing.T) {
	f, _, _ := openTest(t)
	ctx := context.Background()
	w, err := f.Create(ctx, "w/one")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	// Sync is hsync: the file stays open for more writes.
	if err := w.Sync(); err != nil {
		t.Errorf("Sync = %v, want nil", err)
	}
	if _, err := w.Write([]byte(", world")); err != nil {
		t.Fatal(err)
	}
	// A file being written is already taken.
	if _, err := f.Create(ctx, "w/one"); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Create while being written: %v, want ErrExist", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); !errors.Is(err, fsbackend.ErrClosed) {
		t.Errorf("second Close = %v, want ErrClosed", err)
	}
	if _, err := w.Write([]byte("x")); !errors.Is(err, fsbackend.ErrClosed) {
		t.Errorf("Write after Close = %v, want ErrClosed", err)
	}
	if err := w.Sync(); !errors.Is(err, fsbackend.ErrClosed) {
		t.Errorf("Sync after Close = %v, want ErrClosed", err)
	}
	if got := readFile(t, f, "w/one"); string(got) != "hello, world" {
		t.Errorf("read %q", got)
	}

	// Abort removes the file.
	w, err = f.Create(ctx, "w/aborted")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(bytes.Repeat([]byte{1}, 70000)); err != nil {
		t.Fatal(err)
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Stat(ctx, "w/aborted"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat after Abort: %v, want ErrNotExist", err)
	}
	// A multi-block file (the fixture's block size is 1 MiB).
	big := make([]byte, 2<<20+12345)
	for i := range big {
		big[i] = byte(i * 7)
	}
	writeFile(t, f, "w/big", big)
	if got := readFile(t, f, "w/big"); !bytes.Equal(got, big) {
		t.Errorf("multi-block file read back differently (%d bytes)", len(got))
	}
	if err := fsbackend.WriteFileAtomic(ctx, f, "w/atomic", "t1", []byte("v1")); err != nil {
		t.Fatal(err)
	}
	if err := fsbackend.WriteFileAtomic(ctx, f, "w/atomic", "t2", []byte("v2")); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, f, "w/atomic"); string(got) != "v2" {
		t.Errorf("WriteFileAtomic left %q", got)
	}
}

func TestRealConcurrentCreateOneWins(t *testing.T) {
	f, _, _ := openTest(t)
	var wins, exists int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := fsbackend.WriteFile(context.Background(), f, "race/x", []byte{byte(i)})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
			case errors.Is(err, fs.ErrExist):
				exists++
			default:
				t.Errorf("WriteFile: %v", err)
			}
		}()
	}
	wg.Wait()
	if wins != 1 || exists != 7 {
		t.Errorf("%d creates won and %d saw ErrExist, want 1 and 7", wins, exists)
	}
}

// recorder is an slog.Handler that keeps the messages it is given.
type recorder struct {
	mu   sync.Mutex
	msgs []string
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, rec.Message)
	return nil
}
func (r *recorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *recorder) WithGroup(string) slog.Handler      { return r }

func (r *recorder) saw(sub string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range r.msgs {
		if strings.Contains(m, sub) {
			return true
		}
	}
	return false
}

func TestRealClosedFileSurvivesNameNodeRestart(t *testing.T) {
	need(t, envHDFS, envCtl)
	rec := &recorder{}
	f := openLogged(t, rec)
	data := []byte("durable once closed")
	writeFile(t, f, "restart/kept", data)
	ctl(t, envCtl, "restart")
	// The same FS carries on: its client broke with the restart and is
	// rebuilt on the next call.
	if got := readFile(t, f, "restart/kept"); !bytes.Equal(got, data) {
		t.Errorf("after NameNode restart read %q, want %q", got, data)
	}
	if !rec.saw("rebuilding client") {
		t.Errorf("the client that broke with the restart was not rebuilt (log: %v)", rec.msgs)
	}
	writeFile(t, f, "restart/after", []byte("new"))
	if got := readFile(t, f, "restart/after"); string(got) != "new" {
		t.Errorf("write after restart read back %q", got)
	}
}

func TestRealSafeMode(t *testing.T) {
	f, _, _ := openTest(t)
	writeFile(t, f, "sm/before", []byte("1"))
	ctl(t, envCtl, "safemode enter")
	t.Cleanup(func() { ctl(t, envCtl, "safemode leave") })
	err := fsbackend.WriteFile(context.Background(), f, "sm/during", []byte("2"))
	if !errors.Is(err, hdfs.ErrSafeMode) {
		t.Fatalf("write in safe mode: %v, want ErrSafeMode", err)
	}
	if !strings.Contains(err.Error(), "safe mode") || !strings.Contains(err.Error(), "sm/during") {
		t.Errorf("error %q should say safe mode and name the path", err)
	}
	// Reads still work in safe mode.
	if got := readFile(t, f, "sm/before"); string(got) != "1" {
		t.Errorf("read in safe mode = %q", got)
	}
	ctl(t, envCtl, "safemode leave")
	writeFile(t, f, "sm/during", []byte("2"))
	if got := readFile(t, f, "sm/during"); string(got) != "2" {
		t.Errorf("read after leaving safe mode = %q", got)
	}
}

func TestRealQuotaExceeded(t *testing.T) {
	_, raw, dir := openTest(t)
	ctx := context.Background()
	tests := []struct {
		name, quota, want string
	}{
		// The directory itself counts as one name.
		{"namespace", "3 -", "namespace quota"},
		// Every new block reserves a whole block (1 MiB) against the quota.
		{"disk space", "- 1024", "disk space quota"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			qdir := dir + "/" + strings.ReplaceAll(tc.name, " ", "-")
			ctl(t, envCtl, "mkdir /"+qdir)
			ctl(t, envCtl, "quota /"+qdir+" "+tc.quota)
			f, err := fsbackend.Sub(raw, qdir)
			if err != nil {
				t.Fatal(err)
			}
			var qerr error
			for i := range 5 {
				if err := fsbackend.WriteFile(ctx, f, fmt.Sprintf("f%d", i), []byte("data")); err != nil {
					qerr = err
					break
				}
			}
			if !errors.Is(qerr, hdfs.ErrQuotaExceeded) {
				t.Fatalf("writes under a %s quota ended with %v, want ErrQuotaExceeded", tc.name, qerr)
			}
			if !strings.Contains(qerr.Error(), tc.want) || !strings.Contains(qerr.Error(), qdir) {
				t.Errorf("error %q should say %q and name the path", qerr, tc.want)
			}
			ctl(t, envCtl, "clrquota /"+qdir)
			if err := fsbackend.WriteFile(ctx, f, "after", []byte("ok")); err != nil {
				t.Errorf("write after clearing the quota: %v", err)
			}
		})
	}
}

func TestRealPermissionDenied(t *testing.T) {
	_, _, dir := openTest(t)
	ctl(t, envCtl, "mkdir /"+dir+"/private")
	ctl(t, envCtl, "chmod /"+dir+"/private 700")
	// The NameNode's superuser is the user running the fixture; another
	// user is refused.
	alice := openRaw(t, clusterProps("seatunnel.hadoop.hadoop.user.name", "stowage-alice"))
	err := fsbackend.WriteFile(context.Background(), alice, dir+"/private/x", []byte("no"))
	if !errors.Is(err, fs.ErrPermission) || !errors.Is(err, hdfs.ErrPermission) {
		t.Fatalf("write as another user into a 700 directory: %v, want ErrPermission", err)
	}
	if !strings.Contains(err.Error(), "permission denied") || !strings.Contains(err.Error(), "private") {
		t.Errorf("error %q should say permission denied and name the path", err)
	}
}

func TestRealDatanodeHostnameReachesClient(t *testing.T) {
	need(t, envHDFS, envCtl)
	// The fixture's DataNode registers as host "localhost", address
	// 127.0.0.1: the dialed address shows which one the client used.
	for _, tc := range []struct{ value, wantHost string }{{"true", "localhost"}, {"false", "127.0.0.1"}} {
		t.Run(tc.value, func(t *testing.T) {
			var mu sync.Mutex
			var dialed []string
			var d net.Dialer
			f, err := hdfs.OpenWithOptions(context.Background(),
				clusterProps("seatunnel.hadoop.dfs.client.use.datanode.hostname", tc.value),
				hdfs.Options{DialDataNode: func(ctx context.Context, network, addr string) (net.Conn, error) {
					mu.Lock()
					dialed = append(dialed, addr)
					mu.Unlock()
					return d.DialContext(ctx, network, addr)
				}})
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if got := f.Config().ClientOptions().UseDatanodeHostname; got != (tc.value == "true") {
				t.Errorf("ClientOptions.UseDatanodeHostname = %t", got)
			}
			name := uniqueDir(t) + "/f"
			writeFile(t, f, name, []byte("dn"))
			mu.Lock()
			defer mu.Unlock()
			if len(dialed) == 0 {
				t.Fatal("no DataNode was dialed")
			}
			for _, a := range dialed {
				if host, _, _ := net.SplitHostPort(a); host != tc.wantHost {
					t.Errorf("dialed DataNode %s, want host %s", a, tc.wantHost)
				}
			}
		})
	}
}

func TestRealSharedClientReferenceCounted(t *testing.T) {
	need(t, envHDFS, envCtl)
	ctx := context.Background()
	a := openRaw(t, clusterProps())
	b := openRaw(t, clusterProps())
	dir := uniqueDir(t)
	// A file open on a's client survives a.Close, and b keeps working.
	w, err := a.Create(ctx, dir+"/open")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Stat(ctx, dir+"/open"); !errors.Is(err, fsbackend.ErrClosed) {
		t.Errorf("Stat on a closed FS: %v, want ErrClosed", err)
	}
	writeFile(t, b, dir+"/b", []byte("b"))
	if _, err := w.Write([]byte("still open")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("closing a file whose FS was closed: %v", err)
	}
	if got := readFile(t, b, dir+"/open"); string(got) != "still open" {
		t.Errorf("read %q", got)
	}
	// A private client (disable.cache) works the same.
	c := openRaw(t, clusterProps("disable.cache", "true"))
	if got := readFile(t, c, dir+"/b"); string(got) != "b" {
		t.Errorf("private client read %q", got)
	}
}

func TestRealContextCanceled(t *testing.T) {
	f, _, _ := openTest(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.Create(ctx, "c/x"); !errors.Is(err, context.Canceled) {
		t.Errorf("Create with a canceled context: %v, want context.Canceled", err)
	}
	if _, err := f.List(ctx, ""); !errors.Is(err, context.Canceled) {
		t.Errorf("List with a canceled context: %v, want context.Canceled", err)
	}
}

func TestRealUnreachableError(t *testing.T) {
	need(t, envHDFS)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	_, err = hdfs.Open(context.Background(), fsbackend.Properties{"fs.defaultFS": "hdfs://" + addr,
		"seatunnel.hadoop.dfs.client.failover.max.attempts":      "1",
		"seatunnel.hadoop.dfs.client.failover.sleep.base.millis": "10"})
	if !errors.Is(err, hdfs.ErrNameNodeUnreachable) || !strings.Contains(err.Error(), addr) {
		t.Errorf("Open on a dead port: %v, want ErrNameNodeUnreachable naming %s", err, addr)
	}
}
