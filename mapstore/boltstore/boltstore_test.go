package boltstore_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	"go.uber.org/goleak"

	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/mapstore/boltstore"
	"github.com/stowage/stowage/mapstore/mapstoretest"
	"github.com/stowage/stowage/serde/keyhash"
)

// holdEnv makes the test binary a child that holds a bbolt file: it opens
// the file named by the variable (a map in it, or with holdFileEnv=1 the
// file alone through OpenFile), prints "holding", and keeps it open until
// its stdin is closed.
const (
	holdEnv     = "STOWAGE_BOLTSTORE_TEST_HOLD"
	holdFileEnv = "STOWAGE_BOLTSTORE_TEST_HOLD_FILE"
)

func TestMain(m *testing.M) {
	if path := os.Getenv(holdEnv); path != "" {
		os.Exit(hold(path))
	}
	goleak.VerifyTestMain(m)
}

func hold(path string) int {
	var s io.Closer
	var err error
	if os.Getenv(holdFileEnv) == "1" {
		s, err = boltstore.OpenFile(path, 0)
	} else {
		s, err = boltstore.Open(path, boltstore.Options{MapName: "held"})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	fmt.Println("holding")
	io.Copy(io.Discard, os.Stdin) // until the parent closes our stdin
	if err := s.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 4
	}
	return 0
}

func open(t *testing.T, path string, opts boltstore.Options) *boltstore.Store {
	t.Helper()
	s, err := boltstore.Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// storeMap stores n entries key-I = "v" (versions 1..n) in map "m" of a
// new file at path with parts partitions, closes it and returns them.
func storeMap(t *testing.T, path string, parts, n int) []mapstore.Record {
	t.Helper()
	s := open(t, path, boltstore.Options{MapName: "m", Partitions: parts})
	var rs []mapstore.Record
	for i := 0; i < n; i++ {
		rs = append(rs, rec(fmt.Sprint("key-", i), "v", parts, uint64(i+1)))
	}
	if err := errors.Join(s.StoreAll(t.Context(), rs), s.Close()); err != nil {
		t.Fatal(err)
	}
	return rs
}

// updateFile changes the bbolt file at path with plain bbolt, behind the
// store's back.
func updateFile(t *testing.T, path string, fn func(tx *bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(db.Update(fn), db.Close()); err != nil {
		t.Fatal(err)
	}
}

func rec(key, value string, parts int, seq uint64) mapstore.Record {
	return mapstore.Record{Partition: keyhash.Partition([]byte(key), parts), Version: mapstore.Version{Epoch: 1, Seq: seq},
		Key: []byte(key), Value: []byte(value)}
}

func TestContract(t *testing.T) {
	mapstoretest.Run(t, func(t *testing.T, dir string, partitions int) mapstore.MapStore {
		return open(t, filepath.Join(dir, "maps.db"), boltstore.Options{MapName: "engine_job_state", Partitions: partitions})
	})
}

func TestMapsShareOneFile(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "maps.db")
	// A short timeout: were the file opened a second time in this process,
	// bbolt's flock would make the second Open fail with ErrLocked.
	opts := func(name string) boltstore.Options {
		return boltstore.Options{MapName: name, Partitions: 8, Timeout: 50 * time.Millisecond}
	}
	a := open(t, path, opts("a"))
	b := open(t, path, opts("b"))
	if err := a.Store(ctx, rec("k", "from a", 8, 1)); err != nil {
		t.Fatal(err)
	}
	if err := b.StoreAll(ctx, []mapstore.Record{rec("k", "from b", 8, 1), rec("only-b", "b", 8, 2)}); err != nil {
		t.Fatal(err)
	}
	// Neither map sees the other's entries.
	if ks, err := a.LoadAllKeys(ctx); err != nil || len(ks) != 1 || string(ks[0]) != "k" {
		t.Fatalf("a's keys = %q, %v; want only k", ks, err)
	}
	n := 0
	for p := 0; p < 8; p++ {
		if err := b.LoadPartition(ctx, p, func(r mapstore.Record) error {
			n++
			if string(r.Key) == "k" && string(r.Value) != "from b" {
				t.Errorf("b loads k = %q", r.Value)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if n != 2 {
		t.Fatalf("b loads %d entries, want 2", n)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	// b keeps working after a closed: the file closes with its last map.
	if r, ok, err := b.Load(ctx, []byte("k")); err != nil || !ok || string(r.Value) != "from b" {
		t.Fatalf("b after a closed: %q, %v, %v", r.Value, ok, err)
	}
	a = open(t, path, opts("a"))
	if r, ok, err := a.Load(ctx, []byte("k")); err != nil || !ok || string(r.Value) != "from a" {
		t.Fatalf("a reopened beside b: %q, %v, %v", r.Value, ok, err)
	}
	names, err := boltstore.Maps(path, 0)
	if err != nil || strings.Join(names, ",") != "a,b" {
		t.Fatalf("Maps = %v, %v; want a,b", names, err)
	}
	if err := errors.Join(a.Close(), b.Close()); err != nil {
		t.Fatal(err)
	}
	// Every map closed: the file is released, plain bbolt can take its lock.
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatalf("file still locked after its last map closed: %v", err)
	}
	db.Close()
}

func TestSameMapTwiceIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "maps.db")
	s := open(t, path, boltstore.Options{MapName: "m"})
	defer s.Close()
	_, err := boltstore.Open(path, boltstore.Options{MapName: "m"})
	if !errors.Is(err, boltstore.ErrMapOpen) || !strings.Contains(err.Error(), path) {
		t.Fatalf("second Open of one map: %v, want ErrMapOpen naming the file", err)
	}
	// The refused Open did not drop the first one's use of the file.
	if err := s.Store(t.Context(), rec("k", "v", keyhash.DefaultPartitions, 1)); err != nil {
		t.Fatal(err)
	}
}

// startHolder starts a child process holding the bbolt file at path (see
// holdEnv) and returns a function that makes it let go and waits for it.
func startHolder(t *testing.T, path string, fileOnly bool) (stop func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holdEnv+"="+path)
	if fileOnly {
		cmd.Env = append(cmd.Env, holdFileEnv+"=1")
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := false
	t.Cleanup(func() {
		if !done {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "holding\n" {
		t.Fatalf("child did not open the file: %q, %v, stderr %q", line, err, stderr.String())
	}
	return func() {
		t.Helper()
		stdin.Close() // the child closes what it holds and exits
		err := cmd.Wait()
		done = true
		if err != nil {
			t.Fatalf("child: %v, stderr %q", err, stderr.String())
		}
	}
}

func TestSecondProcessIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "maps.db")
	stop := startHolder(t, path, false)

	_, err := boltstore.Open(path, boltstore.Options{MapName: "m", Timeout: 100 * time.Millisecond})
	if !errors.Is(err, mapstore.ErrLocked) || !strings.Contains(err.Error(), path) {
		t.Fatalf("Open while another process holds the file: %v; want ErrLocked naming %s", err, path)
	}
	if _, err := boltstore.Maps(path, 100*time.Millisecond); !errors.Is(err, mapstore.ErrLocked) {
		t.Fatalf("Maps while another process holds the file: %v; want ErrLocked", err)
	}

	stop()
	s := open(t, path, boltstore.Options{MapName: "m", Timeout: 100 * time.Millisecond})
	names, err := boltstore.Maps(path, 0)
	if err != nil || strings.Join(names, ",") != "held,m" {
		t.Errorf("Maps after the child left = %v, %v; want held,m", names, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// OpenFile holds the file with no map open in it: another process can
// neither open a map in it nor the file; in this process maps share it,
// and the file is let go once the File and every map are closed.
func TestFileHoldsTheLock(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "dir", "maps.db")
	stop := startHolder(t, path, true)
	_, err := boltstore.Open(path, boltstore.Options{MapName: "m", Timeout: 100 * time.Millisecond})
	if !errors.Is(err, mapstore.ErrLocked) || !strings.Contains(err.Error(), path) {
		t.Fatalf("Open while another process holds the file with OpenFile: %v; want ErrLocked naming %s", err, path)
	}
	if _, err := boltstore.OpenFile(path, 100*time.Millisecond); !errors.Is(err, mapstore.ErrLocked) || !strings.Contains(err.Error(), path) {
		t.Fatalf("OpenFile while another process holds the file: %v; want ErrLocked naming %s", err, path)
	}
	stop()

	f, err := boltstore.OpenFile(path, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if f.Path() != path {
		t.Errorf("Path() = %q, want %q", f.Path(), path)
	}
	if names, err := f.Maps(); err != nil || len(names) != 0 {
		t.Fatalf("Maps of a file the child only held = %v, %v; want none", names, err)
	}
	// A short timeout: a map must share the held file, not wait for its lock.
	s := open(t, path, boltstore.Options{MapName: "m", Partitions: 8, Timeout: 50 * time.Millisecond})
	if err := s.Store(ctx, rec("k", "v", 8, 1)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if names, err := f.Maps(); err != nil || strings.Join(names, ",") != "m" {
		t.Fatalf("Maps = %v, %v; want m", names, err)
	}
	// The map closed, the File still holds the file.
	if db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 50 * time.Millisecond}); err == nil {
		db.Close()
		t.Fatal("the file was let go while a File held it")
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); !errors.Is(err, mapstore.ErrClosed) {
		t.Errorf("second Close: %v, want ErrClosed", err)
	}
	if _, err := f.Maps(); !errors.Is(err, mapstore.ErrClosed) {
		t.Errorf("Maps after Close: %v, want ErrClosed", err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatalf("file still locked after the File and its map closed: %v", err)
	}
	db.Close()
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(garbage, bytes.Repeat([]byte("not a bbolt file "), 1000), 0o600); err != nil {
		t.Fatal(err)
	}
	foreign := filepath.Join(dir, "foreign.db")
	updateFile(t, foreign, func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket([]byte("m"))
		if err != nil {
			return err
		}
		return b.Put([]byte("someone else's"), []byte("data"))
	})
	tests := []struct {
		name, path, mapName, want string
	}{
		{"no map name", filepath.Join(dir, "a.db"), "", "MapName"},
		{"no path", "", "m", "path"},
		{"a directory", dir, "m", dir},
		{"not a bbolt file", garbage, "m", garbage},
		{"a bucket not written by this package", foreign, "m", "not a stowage map"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := boltstore.Open(tc.path, boltstore.Options{MapName: tc.mapName, Timeout: 100 * time.Millisecond})
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "stowage/mapstore/boltstore: ") {
				t.Fatalf("error %q does not say %q", err, tc.want)
			}
		})
	}
	// A failed Open released the file: another map of it opens.
	s := open(t, foreign, boltstore.Options{MapName: "other", Timeout: 100 * time.Millisecond})
	s.Close()
}

func TestBadRecordsAreRefused(t *testing.T) {
	ctx := t.Context()
	s := open(t, filepath.Join(t.TempDir(), "maps.db"), boltstore.Options{MapName: "m", Partitions: 16})
	defer s.Close()
	good := rec("good", "v", 16, 1)
	wrong := rec("k", "v", 16, 2)
	wrong.Partition = (wrong.Partition + 1) % 16
	out := rec("k", "v", 16, 3)
	out.Partition = 16
	tests := []struct {
		name string
		r    mapstore.Record
		want string
	}{
		{"wrong partition", wrong, "hashes to"},
		{"partition out of range", out, "out of range"},
		{"empty key", mapstore.Record{Partition: keyhash.Partition(nil, 16)}, "empty key"},
		{"key too long", rec(strings.Repeat("k", bolt.MaxKeySize+1), "v", 16, 4), "exceeds"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := s.Store(ctx, tc.r); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Store: %v, want an error saying %q", err, tc.want)
			}
			// A batch with one bad record writes none of it.
			if err := s.StoreAll(ctx, []mapstore.Record{good, tc.r}); err == nil {
				t.Fatal("StoreAll with a bad record succeeded")
			}
			if _, ok, err := s.Load(ctx, good.Key); err != nil || ok {
				t.Fatalf("good record of a refused batch: present %v, %v", ok, err)
			}
		})
	}
}

func TestCancelledContext(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "maps.db"), boltstore.Options{MapName: "m"})
	defer s.Close()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := s.Store(ctx, rec("k", "v", keyhash.DefaultPartitions, 1)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Store with a cancelled context: %v", err)
	}
	if _, _, err := s.Load(ctx, []byte("k")); !errors.Is(err, context.Canceled) {
		t.Fatalf("Load with a cancelled context: %v", err)
	}
	if err := s.LoadPartition(ctx, 0, func(mapstore.Record) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("LoadPartition with a cancelled context: %v", err)
	}
}

func TestRehashOnNewPartitionCount(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "maps.db")
	s := open(t, path, boltstore.Options{MapName: "m", Partitions: 16})
	var rs []mapstore.Record
	for i := 0; i < 500; i++ {
		rs = append(rs, rec(fmt.Sprint("key-", i), fmt.Sprint("value-", i), 16, uint64(i+1)))
	}
	if err := errors.Join(s.StoreAll(ctx, rs), s.Close()); err != nil {
		t.Fatal(err)
	}
	s = open(t, path, boltstore.Options{MapName: "m", Partitions: 271})
	defer s.Close()
	seen := 0
	for p := 0; p < 271; p++ {
		err := s.LoadPartition(ctx, p, func(r mapstore.Record) error {
			seen++
			if r.Partition != p || keyhash.Partition(r.Key, 271) != p {
				t.Errorf("key %q in partition %d (record says %d), hashes to %d", r.Key, p, r.Partition, keyhash.Partition(r.Key, 271))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if seen != 500 {
		t.Fatalf("after re-hashing %d entries, want 500", seen)
	}
	r, ok, err := s.Load(ctx, []byte("key-77"))
	if err != nil || !ok || string(r.Value) != "value-77" || r.Version.Seq != 78 {
		t.Fatalf("Load after re-hashing: %+v, %v, %v", r, ok, err)
	}
	// Versions given after the change order after every stored one.
	vs := any(s).(versioned)
	for p := 0; p < 271; p++ {
		if v := vs.LastVersion(p); v.Seq < 500 {
			t.Fatalf("LastVersion(%d) after re-hashing = %+v, want at least seq 500", p, v)
		}
	}
}

// TestDamagedValueIsSkipped breaks one stored value's header (through
// bbolt, following the layout in the package doc) and checks that
// LoadPartition reports and skips it while Load names it in an error.
func TestDamagedValueIsSkipped(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "maps.db")
	const parts = 4
	rs := storeMap(t, path, parts, 40)
	bad := rs[7]
	updateFile(t, path, func(tx *bolt.Tx) error {
		name := []byte{0, 0, 0, byte(bad.Partition)}
		return tx.Bucket([]byte("m")).Bucket(name).Put(bad.Key, []byte{0xEE, 0xFF})
	})

	var damage []boltstore.Damage
	s := open(t, path, boltstore.Options{MapName: "m", Partitions: parts, OnDamage: func(d boltstore.Damage) { damage = append(damage, d) }})
	defer s.Close()
	n := 0
	if err := s.LoadPartition(ctx, bad.Partition, func(r mapstore.Record) error {
		if bytes.Equal(r.Key, bad.Key) {
			t.Errorf("damaged entry %q loaded", r.Key)
		}
		n++
		return nil
	}); err != nil {
		t.Fatalf("LoadPartition of a partition with one damaged entry: %v", err)
	}
	want := 0
	for _, r := range rs {
		if r.Partition == bad.Partition {
			want++
		}
	}
	if n != want-1 || len(damage) != 1 || !bytes.Equal(damage[0].Key, bad.Key) || damage[0].Path != s.Path() {
		t.Fatalf("loaded %d of %d entries, damage %+v", n, want, damage)
	}
	if _, _, err := s.Load(ctx, bad.Key); err == nil || !strings.Contains(err.Error(), string(bad.Key)) {
		t.Fatalf("Load of the damaged entry: %v, want an error naming it", err)
	}
}

// TestLoadPartitionFnMayWrite writes large values from inside
// LoadPartition's fn, growing the file: bbolt must remap it, which it
// cannot while a read transaction is open.
func TestLoadPartitionFnMayWrite(t *testing.T) {
	ctx := t.Context()
	const parts = 1
	s := open(t, filepath.Join(t.TempDir(), "maps.db"), boltstore.Options{MapName: "m", Partitions: parts})
	defer s.Close()
	var rs []mapstore.Record
	for i := 0; i < 10000; i++ { // several chunks
		rs = append(rs, rec(fmt.Sprintf("key-%05d", i), "v", parts, uint64(i+1)))
	}
	if err := s.StoreAll(ctx, rs); err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 1<<20)
	seq := uint64(len(rs))
	calls := 0
	errc := make(chan error, 1)
	go func() {
		errc <- s.LoadPartition(ctx, 0, func(r mapstore.Record) error {
			calls++
			if calls%2000 != 0 {
				return nil
			}
			seq++
			w := rec(fmt.Sprint("grown-", calls), "", parts, seq)
			w.Value = big
			return s.Store(ctx, w)
		})
	}()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute): // long stop: a deadlock, not slowness
		t.Fatal("LoadPartition with a writing fn did not return: deadlock")
	}
	if calls < len(rs) {
		t.Fatalf("fn called %d times, want at least %d", calls, len(rs))
	}
}

// TestConcurrentMapsOneFile writes several maps of one file at once, each
// from several goroutines, and reopens them.
func TestConcurrentMapsOneFile(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "maps.db")
	const maps, writers, each = 3, 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, maps*writers)
	stores := make([]*boltstore.Store, maps)
	for m := range stores {
		stores[m] = open(t, path, boltstore.Options{MapName: fmt.Sprint("map-", m), Partitions: 8})
	}
	for m, s := range stores {
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < each; i++ {
					r := rec(fmt.Sprintf("w%d-%d", w, i), fmt.Sprint("map ", m), 8, uint64(w*each+i+1))
					if err := s.Store(ctx, r); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for m, s := range stores {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s = open(t, path, boltstore.Options{MapName: fmt.Sprint("map-", m), Partitions: 8})
		ks, err := s.LoadAllKeys(ctx)
		if err != nil || len(ks) != writers*each {
			t.Fatalf("map-%d after reopen: %d keys, %v; want %d", m, len(ks), err, writers*each)
		}
		r, ok, err := s.Load(ctx, []byte("w3-7"))
		if err != nil || !ok || string(r.Value) != fmt.Sprint("map ", m) {
			t.Fatalf("map-%d: w3-7 = %q, %v, %v", m, r.Value, ok, err)
		}
		s.Close()
	}
}

// versioned is the two optional interfaces of the map store contract
// that bbolt implements.
type versioned interface {
	mapstore.LastVersioner
	mapstore.EpochStarter
}

func TestLastVersionCountsDeletesAndEpochs(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "maps.db")
	const parts = 4
	s := open(t, path, boltstore.Options{MapName: "m", Partitions: parts})
	var vs versioned = s
	r := rec("k", "v", parts, 5)
	other := (r.Partition + 1) % parts
	if v := vs.LastVersion(r.Partition); v != (mapstore.Version{}) {
		t.Fatalf("LastVersion of an empty partition = %+v", v)
	}
	if err := s.Store(ctx, r); err != nil {
		t.Fatal(err)
	}
	del := r
	del.Version.Seq = 9
	if err := s.Delete(ctx, del); err != nil {
		t.Fatal(err)
	}
	older := r
	older.Key, older.Version = []byte("k2"), mapstore.Version{Epoch: 1, Seq: 7}
	older.Partition = keyhash.Partition(older.Key, parts)
	if older.Partition == r.Partition {
		if err := s.Store(ctx, older); err != nil { // a lower version does not lower it
			t.Fatal(err)
		}
	}
	if err := vs.StartEpochs(ctx, map[int]mapstore.Version{other: {Epoch: 3, Seq: 40}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, path, boltstore.Options{MapName: "m", Partitions: parts})
	defer s.Close()
	vs = s
	if v := vs.LastVersion(r.Partition); v != del.Version {
		t.Fatalf("LastVersion after a delete and a restart = %+v, want the delete's %+v", v, del.Version)
	}
	if v := vs.LastVersion(other); v != (mapstore.Version{Epoch: 3, Seq: 40}) {
		t.Fatalf("LastVersion after an epoch start = %+v, want {3 40}", v)
	}
	if err := vs.StartEpochs(ctx, map[int]mapstore.Version{parts: {Epoch: 1}}); err == nil {
		t.Fatal("StartEpochs of a partition out of range succeeded")
	}
}
