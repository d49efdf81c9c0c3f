package filestore_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stowage/stowage/fsbackend/local"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/mapstore/filestore"
	"github.com/stowage/stowage/serde/record"
)

// copyTree copies the regular files under src to dst, as they are now.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// scanLog returns how many zero bytes end a log file after its frames,
// and its damage.
func scanLog(t *testing.T, path string) (zeros int64, damage []record.Damage) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sc := record.NewScanner(b)
	for sc.Next() {
	}
	return sc.ZeroTail(), sc.Damages()
}

// TestSegmentZeroedAhead: the open log segment is kept written with
// zeros past its records, so that the sync of a batch does not grow the
// file. A store that dies with the segment open leaves it ending in
// zeros: a store opened on those files loads every record and reports no
// damage. A store closed cuts the zeros off.
func TestSegmentZeroedAhead(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	s := e.open(filestore.Options{})
	m := newModel(1)
	for b := range 20 {
		var puts, dels []mapstore.Record
		for i := range 50 {
			k := fmt.Sprintf("k%03d", (b*50+i)%700)
			puts = append(puts, m.next(k, fmt.Appendf(nil, "v%d-%d", b, i), false))
		}
		for i := 0; i < b*50; i += 97 {
			dels = append(dels, m.next(fmt.Sprintf("k%03d", i%700), nil, true))
		}
		if err := s.StoreAll(ctx, puts); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteAll(ctx, dels); err != nil {
			t.Fatal(err)
		}
	}
	// The files as a crash would leave them: the segment still open.
	crashed := t.TempDir()
	copyTree(t, e.dir, crashed)
	logs := logFiles(t, crashed)
	if len(logs) != 1 {
		t.Fatalf("want one log segment, have %v", logs)
	}
	if z, d := scanLog(t, logs[0]); z < 512<<10 || len(d) != 0 {
		t.Fatalf("the open segment ends in %d zero bytes, damage %v; want at least 512 KiB of zeros ahead and no damage", z, d)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, l := range logFiles(t, e.dir) {
		if z, d := scanLog(t, l); z != 0 || len(d) != 0 {
			t.Fatalf("closed segment %s ends in %d zero bytes, damage %v; want neither", filepath.Base(l), z, d)
		}
	}

	f, err := local.New(crashed)
	if err != nil {
		t.Fatal(err)
	}
	ce := &env{t: t, dir: crashed, fs: f}
	after := ce.open(filestore.Options{})
	defer after.Close()
	closed := e.open(filestore.Options{})
	defer closed.Close()
	got, want := replayAll(t, after), replayAll(t, closed)
	for p := range got {
		if got[p] != want[p] {
			t.Fatalf("partition %d after the crash:\n%.300s\nafter Close:\n%.300s", p, got[p], want[p])
		}
	}
	live := 0
	for p := range parts {
		live += len(m.live[p])
		loaded := map[string]string{}
		err := after.LoadPartition(ctx, p, func(r mapstore.Record) error {
			if r.Deleted {
				delete(loaded, string(r.Key))
			} else {
				loaded[string(r.Key)] = string(r.Value)
			}
			return nil
		})
		if err != nil || len(loaded) != len(m.live[p]) {
			t.Fatalf("partition %d after the crash: %d keys (%v), want %d", p, len(loaded), err, len(m.live[p]))
		}
		for k, w := range m.live[p] {
			if v, ok := loaded[k]; !ok || v != string(w.Value) {
				t.Fatalf("key %q after the crash: %q (present %v), want %q", k, v, ok, w.Value)
			}
		}
	}
	if live == 0 {
		t.Fatal("the model holds no key")
	}
	if len(ce.damages) != 0 {
		t.Fatalf("the zeros the crash left reported as damage: %v", ce.damages)
	}
}

// lastFrame returns the bytes of the last valid frame of a log file, and
// where its frames end.
func lastFrame(t *testing.T, path string) (frame []byte, end int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sc := record.NewScanner(b)
	var at int64
	for sc.Next() {
		at = sc.Offset()
		end = at + int64(record.HeaderSize+len(sc.Frame().Payload))
	}
	return b[at:end], end
}

// A reader of a segment that a live run writes into the zeros ahead of
// its records may see a later batch's frames past zeros that an earlier
// batch is filling right then. The segment's frames end at its first bad
// frame, then, as a tail that is not damage: what follows was written
// after the read passed it. Once the run ended, the same bytes are read
// by the rules for damage: zeros between frames are reported, and the
// frames after them are loaded.
func TestLiveRunsFramesEndAtZeros(t *testing.T) {
	e := newEnv(t)
	var runs liveRuns
	a := openMember(t, e.fs, &runs, filestore.Options{}, func(int) bool { return true })
	defer a.close(&runs)
	a.put("k", "v")
	logs := logFiles(t, e.dir)
	if len(logs) != 1 {
		t.Fatalf("want A's one segment, have %v", logs)
	}
	// A frame of a later write, from a store of its own.
	other := newEnv(t)
	o := openMember(t, other.fs, &runs, filestore.Options{}, func(int) bool { return true })
	o.put("late", "w")
	o.close(&runs)
	late, _ := lastFrame(t, logFiles(t, other.dir)[0])
	// It lands a page past the end of A's frames, in the zeros ahead.
	_, end := lastFrame(t, logs[0])
	seg, err := os.OpenFile(logs[0], os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := seg.WriteAt(late, end+4096); err != nil {
		t.Fatal(err)
	}
	seg.Close()
	if z, _ := scanLog(t, logs[0]); z == 0 {
		t.Fatal("the segment does not end in zeros written ahead")
	}

	var dl damageLog
	ctx := context.Background()
	b := openMember(t, e.fs, &runs, dl.options(), func(int) bool { return false })
	defer b.close(&runs)
	for key, want := range map[string]bool{"k": true, "late": false} {
		if _, ok, err := b.s.Load(ctx, []byte(key)); err != nil || ok != want {
			t.Fatalf("live run's segment: %q found %v (%v), want %v", key, ok, err, want)
		}
	}
	if damages := dl.all(); len(damages) != 0 {
		t.Fatalf("live run's segment read with damage %v", damages)
	}

	runs.set(a.run, false)
	c := openMember(t, e.fs, &runs, dl.options(), func(int) bool { return false })
	defer c.close(&runs)
	for _, key := range []string{"k", "late"} {
		if _, ok, err := c.s.Load(ctx, []byte(key)); err != nil || !ok {
			t.Fatalf("ended run's segment: %q found %v (%v)", key, ok, err)
		}
	}
	if damages := dl.all(); len(damages) == 0 || damages[0].Tail {
		t.Fatalf("want the zeros between the ended run's frames reported as damage, got %v", damages)
	}
}
