package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/stowage/stowage/fsbackend/local"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/mapstore/boltstore"
	"github.com/stowage/stowage/mapstore/filestore"
	"github.com/stowage/stowage/partition"
)

// inspectRun runs `stowage inspect ARGS` and returns stdout, stderr and
// the exit status.
func inspectRun(args ...string) (string, string, int) {
	var o, e bytes.Buffer
	code := run(append([]string{"inspect"}, args...), &o, &e)
	return o.String(), e.String(), code
}

// writeFileMap writes n entries to the file map store of map name below
// ns/cluster on the local disk, in several log segments, and returns the
// map's directory.
func writeFileMap(t *testing.T, ns, cluster, name string, n int) string {
	t.Helper()
	dir := filepath.Join(ns, cluster, name)
	f, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, err := filestore.Open(ctx, filestore.Options{FS: f, SegmentSize: 4 << 10, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		k := fmt.Sprintf("key-%04d", i)
		r := mapstore.Record{Partition: partition.Of([]byte(k), s.Partitions()), Version: mapstore.Version{Epoch: 1, Seq: uint64(i + 1)},
			Key: []byte(k), Value: []byte(fmt.Sprintf("value-%d-%s", i, strings.Repeat("x", 60)))}
		if err := s.Store(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// logsOf returns the log files below dir with their contents.
func logsOf(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".log") {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			out[p] = b
		}
		return nil
	})
	return out
}

// TestInspectCompactRefusesDamage: compact on a map with a damaged record
// in the middle of a log refuses, names the file and offset of what would
// be lost and changes nothing; with --force it compacts, saying what was
// lost.
func TestInspectCompactRefusesDamage(t *testing.T) {
	ns, cluster, name := filepath.Join(t.TempDir(), "imap"), "c1", "engine_damaged"
	dir := writeFileMap(t, ns, cluster, name, 200)
	logs := logsOf(t, dir)
	if len(logs) < 3 {
		t.Fatalf("%d log files, want several", len(logs))
	}
	names := make([]string, 0, len(logs))
	for p := range logs {
		names = append(names, p)
	}
	sort.Strings(names)
	victim := names[1] // a finished segment in the middle of the log
	b := logs[victim]
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(victim, b, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--fs", "file:///", "--namespace", ns, "--cluster", cluster}

	o, e, code := inspectRun(append(args, "compact", name)...)
	if code != 1 {
		t.Fatalf("compact of a damaged map exited %d, want 1:\n%s%s", code, o, e)
	}
	rel := strings.TrimPrefix(victim, dir+"/")
	for _, want := range []string{"refused", rel, "at offset", "--force"} {
		if !strings.Contains(e, want) {
			t.Errorf("compact's refusal does not say %q:\n%s", want, e)
		}
	}
	if after := logsOf(t, dir); len(after) != len(logs) || !bytes.Equal(after[victim], b) {
		t.Fatalf("a refused compact changed the log files: %d before, %d after", len(logs), len(after))
	}

	o, _, code = inspectRun(append(args, "--json", "compact", name)...)
	var refusal struct {
		Refused bool               `json:"refused"`
		Lost    []filestore.Damage `json:"lost"`
	}
	if code != 1 || json.Unmarshal([]byte(o), &refusal) != nil || !refusal.Refused || len(refusal.Lost) == 0 || refusal.Lost[0].File != rel {
		t.Fatalf("compact --json of a damaged map: exit %d, %q", code, o)
	}

	o, e, code = inspectRun(append(args, "compact", "--force", name)...)
	if code != 0 {
		t.Fatalf("compact --force exited %d:\n%s%s", code, o, e)
	}
	if !strings.Contains(e, rel) || !strings.Contains(e, "lost for good") {
		t.Errorf("compact --force does not report what it lost:\n%s", e)
	}
	if after := logsOf(t, dir); len(after) != 0 {
		t.Errorf("after compact --force %d log files are left, want none", len(after))
	}
	o, e, code = inspectRun(append(args, "--json", "dump", name)...)
	var entries []dumpEntry
	if code != 0 || json.Unmarshal([]byte(o), &entries) != nil || len(entries) < 190 || len(entries) >= 200 {
		t.Fatalf("dump after compact --force: exit %d, %d entries (want all but the damaged), %s", code, len(entries), e)
	}
	if _, e, code = inspectRun(append(args, "verify")...); code != 0 {
		t.Fatalf("verify after compact --force exited %d: %s", code, e)
	}
	// A sound map compacts without --force.
	writeFileMap(t, ns, cluster, "engine_sound", 50)
	if o, e, code = inspectRun(append(args, "compact", "engine_sound")...); code != 0 || e != "" {
		t.Fatalf("compact of a sound map: exit %d, stderr %q, stdout %q", code, e, o)
	}
}

// writeBoltConfig writes a config directory whose engine* maps use a
// bbolt map store at path.
func writeBoltConfig(t *testing.T, dir, path string) {
	t.Helper()
	hz := `hazelcast:
  cluster-name: bolt
  map:
    engine*:
      map-store:
        enabled: true
        initial-mode: EAGER
        properties:
          type: bbolt
          path: ` + path + "\n"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "hazelcast.yaml"), []byte(hz), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestInspectBBolt: inspect --config-dir on a map-store of type bbolt
// reads the bbolt file: maps, stats, dump, get, verify (exit 1 on a
// damaged entry, naming it), and compact says it is not needed. The file
// is not changed.
func TestInspectBBolt(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "data", "maps.db")
	cfgDir := filepath.Join(dir, "config")
	writeBoltConfig(t, cfgDir, path)
	ctx := context.Background()
	for _, m := range []string{"engine_jobs", "engine_state"} {
		s, err := boltstore.Open(path, boltstore.Options{MapName: m})
		if err != nil {
			t.Fatal(err)
		}
		var rs []mapstore.Record
		for i := 0; i < 30; i++ {
			k := fmt.Sprintf("%s-%02d", m, i)
			rs = append(rs, mapstore.Record{Partition: partition.Of([]byte(k), partition.DefaultCount), Version: mapstore.Version{Epoch: 1, Seq: uint64(i + 1)}, Key: []byte(k), Value: []byte("v" + k)})
		}
		if err := s.StoreAll(ctx, rs); err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	before, _ := os.ReadFile(path)
	in := func(wantCode int, args ...string) (string, string) {
		t.Helper()
		o, e, code := inspectRun(append([]string{"--config-dir", cfgDir}, args...)...)
		if code != wantCode {
			t.Fatalf("inspect %s exited %d, want %d:\n%s%s", strings.Join(args, " "), code, wantCode, o, e)
		}
		return o, e
	}
	if o, _ := in(0, "maps"); o != "engine_jobs\nengine_state\n" {
		t.Fatalf("maps = %q", o)
	}
	o, _ := in(0, "--json", "stats", "engine_jobs")
	var st struct {
		Map     string `json:"map"`
		Store   string `json:"store"`
		Entries int64  `json:"entries"`
	}
	if json.Unmarshal([]byte(o), &st) != nil || st.Entries != 30 || st.Store != "bbolt" || st.Map != "engine_jobs" {
		t.Fatalf("stats --json = %s", o)
	}
	if o, _ = in(0, "stats", "engine_jobs"); !strings.Contains(o, "entries:      30") {
		t.Fatalf("stats = %s", o)
	}
	o, _ = in(0, "--json", "dump", "engine_state")
	var entries []dumpEntry
	if json.Unmarshal([]byte(o), &entries) != nil || len(entries) != 30 || entries[0].Key != "engine_state-00" || entries[0].Value != "vengine_state-00" {
		t.Fatalf("dump --json = %s", o)
	}
	if o, _ = in(0, "get", "engine_jobs", "engine_jobs-07"); o != "vengine_jobs-07\n" {
		t.Fatalf("get = %q", o)
	}
	in(1, "get", "engine_jobs", "no-such-key")
	if o, _ = in(0, "verify"); !strings.Contains(o, "engine_jobs: ok") || !strings.Contains(o, "2 maps verified, 0 damaged") {
		t.Fatalf("verify = %s", o)
	}
	if o, _ = in(0, "compact", "engine_jobs"); !strings.Contains(o, "not needed for bbolt") {
		t.Fatalf("compact = %s", o)
	}
	in(1, "stats", "engine_missing")
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Fatal("inspect changed the bbolt file")
	}

	// Damage one entry: verify names it and exits 1; dump skips it and
	// reports it.
	bad := "engine_jobs-03"
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		p := partition.Of([]byte(bad), partition.DefaultCount)
		return tx.Bucket([]byte("engine_jobs")).Bucket([]byte{byte(p >> 24), byte(p >> 16), byte(p >> 8), byte(p)}).Put([]byte(bad), []byte{0xEE})
	})
	if err := errors.Join(err, db.Close()); err != nil {
		t.Fatal(err)
	}
	if o, _ = in(1, "verify"); !strings.Contains(o, bad) || !strings.Contains(o, "1 damaged") {
		t.Fatalf("verify of a damaged file = %s", o)
	}
	o, e := in(0, "--json", "dump", "engine_jobs")
	if json.Unmarshal([]byte(o), &entries) != nil || len(entries) != 29 || !strings.Contains(e, bad) {
		t.Fatalf("dump of a damaged map: %d entries, stderr %q", len(entries), e)
	}

	// --bbolt names the file without a config directory.
	if o, _, code := inspectRun("--bbolt", path, "maps"); code != 0 || o != "engine_jobs\nengine_state\n" {
		t.Fatalf("inspect --bbolt maps = %q, %d", o, code)
	}
}
