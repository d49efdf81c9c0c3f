package filestore_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/memfs"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/mapstore/filestore"
	"github.com/stowage/stowage/serde/keyhash"
)

// Several members share one map directory: each opens its own Store with
// its own run id, and each partition has one owner at a time. These tests
// play the members' in-memory maps with ownModel and move partitions
// between them the way the cluster does: Release on the old owner, the
// data handed over in memory, an epoch start and Acquire on the new one.

// liveRuns plays cluster membership for Options.IsLive.
type liveRuns struct {
	mu   sync.Mutex
	live map[string]bool
}

func (l *liveRuns) set(run string, live bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.live == nil {
		l.live = map[string]bool{}
	}
	l.live[run] = live
}

func (l *liveRuns) isLive(run string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.live[run]
}

// partState is one partition of a member's memory.
type partState struct {
	ver  mapstore.Version
	live map[string]mapstore.Record
}

// ownModel is one member's in-memory map: the partitions it owns.
type ownModel struct {
	mu    sync.Mutex
	parts map[int]*partState
}

func newOwnModel() *ownModel { return &ownModel{parts: map[int]*partState{}} }

func (m *ownModel) own(p int, st *partState) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.parts[p] = st
}

func (m *ownModel) release(p int) *partState {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.parts[p]
	delete(m.parts, p)
	return st
}

// clone returns a copy of partition p's memory.
func (m *ownModel) clone(p int) *partState {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.parts[p]
	return &partState{ver: st.ver, live: maps.Clone(st.live)}
}

func (m *ownModel) owns(p int) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.parts[p] != nil
}

// write versions a change of key in memory and returns its record.
func (m *ownModel) write(key string, val []byte, del bool) mapstore.Record {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := keyhash.Partition([]byte(key), parts)
	st := m.parts[p]
	st.ver.Seq++
	r := mapstore.Record{Partition: p, Version: st.ver, Key: []byte(key), Value: val, Deleted: del}
	if del {
		delete(st.live, key)
	} else {
		st.live[key] = r
	}
	return r
}

var errNotOwned = errors.New("partition not owned by this member")

func (m *ownModel) source(_ context.Context, p int) ([]mapstore.Record, mapstore.Version, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.parts[p]
	if st == nil {
		return nil, mapstore.Version{}, fmt.Errorf("partition %d: %w", p, errNotOwned)
	}
	out := make([]mapstore.Record, 0, len(st.live))
	for _, r := range st.live {
		out = append(out, r)
	}
	return out, st.ver, nil
}

// contents adds every live entry of the model to out.
func (m *ownModel) contents(out map[string]string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, st := range m.parts {
		for k, r := range st.live {
			out[k] = string(r.Value)
		}
	}
}

func (m *ownModel) liveBytes() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	var n int64
	for _, st := range m.parts {
		for k, r := range st.live {
			n += int64(len(k) + len(r.Value))
		}
	}
	return n
}

// damageLog collects the damage the stores it gave options to report.
type damageLog struct {
	mu  sync.Mutex
	got []filestore.Damage
}

func (l *damageLog) options() filestore.Options {
	return filestore.Options{OnDamage: func(d filestore.Damage) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.got = append(l.got, d)
	}}
}

// all returns the damage reported so far.
func (l *damageLog) all() []filestore.Damage {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.got)
}

// member is one cluster member's store and memory.
type member struct {
	t   *testing.T
	s   *filestore.Store
	m   *ownModel
	run string
}

// openMember opens a store on f as a new run that is live in runs, and
// loads the partitions in mine (empty ones start epoch 1), releasing the
// others.
func openMember(t *testing.T, f fsbackend.FS, runs *liveRuns, opts filestore.Options, mine func(p int) bool) *member {
	t.Helper()
	ctx := context.Background()
	opts.FS, opts.Partitions, opts.RunID = f, parts, filestore.NewRunID()
	opts.IsLive = runs.isLive
	runs.set(opts.RunID, true)
	s, err := filestore.Open(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	mb := &member{t: t, s: s, m: newOwnModel(), run: opts.RunID}
	s.SetSnapshotSource(mb.m.source)
	starts := map[int]mapstore.Version{}
	for p := 0; p < parts; p++ {
		if !mine(p) {
			s.Release(p)
			continue
		}
		st := &partState{live: map[string]mapstore.Record{}}
		err := s.ReplayPartition(ctx, p, func(r mapstore.Record) error {
			cur, ok := st.live[string(r.Key)]
			switch {
			case ok && !cur.Version.Less(r.Version):
			case r.Deleted:
				delete(st.live, string(r.Key))
			default:
				st.live[string(r.Key)] = r
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		last := s.LastVersion(p)
		st.ver = mapstore.Version{Epoch: last.Epoch + 1, Seq: last.Seq}
		starts[p] = st.ver
		mb.m.own(p, st)
	}
	if err := s.StartEpochs(ctx, starts); err != nil {
		t.Fatal(err)
	}
	return mb
}

// write changes key the way the map does: Admit, version in memory, then
// Store or Delete.
func (mb *member) write(key, val string, del bool) error {
	ctx := context.Background()
	if err := mb.s.Admit(ctx); err != nil {
		return err
	}
	if del {
		return mb.s.Delete(ctx, mb.m.write(key, nil, true))
	}
	return mb.s.Store(ctx, mb.m.write(key, []byte(val), false))
}

func (mb *member) put(key, val string) {
	mb.t.Helper()
	if err := mb.write(key, val, false); err != nil {
		mb.t.Fatal(err)
	}
}

// moveTo hands partition p from mb to to: mb releases it, its memory goes
// over, and to starts a new epoch from the last version it took over.
func (mb *member) moveTo(to *member, p int) {
	mb.t.Helper()
	mb.s.Release(p)
	st := mb.m.release(p)
	st.ver = mapstore.Version{Epoch: st.ver.Epoch + 1, Seq: st.ver.Seq}
	if err := to.s.StartEpochs(context.Background(), map[int]mapstore.Version{p: st.ver}); err != nil {
		mb.t.Fatal(err)
	}
	to.m.own(p, st)
	to.s.Acquire(p)
}

func (mb *member) close(runs *liveRuns) {
	mb.t.Helper()
	if err := mb.s.Close(); err != nil {
		mb.t.Fatal(err)
	}
	runs.set(mb.run, false)
}

// keyOf returns a key of partition p.
func keyOf(p, i int) string {
	for j := 0; ; j++ {
		k := fmt.Sprintf("p%d-k%d-%d", p, i, j)
		if keyhash.Partition([]byte(k), parts) == p {
			return k
		}
	}
}

// fileNames lists the files below dir on f.
func fileNames(t *testing.T, f fsbackend.FS, dir string) []string {
	t.Helper()
	list, err := f.List(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, fi := range list {
		out = append(out, fi.Name)
	}
	return out
}

// logsOf lists the log files of one run.
func logsOf(t *testing.T, f fsbackend.FS, run string) []string {
	t.Helper()
	var out []string
	for _, name := range fileNames(t, f, "") {
		if strings.Contains(name, "/log/"+run+"/") {
			out = append(out, name)
		}
	}
	return out
}

// eventually calls try until it returns nil, or fails the test with its
// last error after a long-stop deadline.
func eventually(t *testing.T, try func() error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := try()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// loadFresh opens a third store, as one member after a full restart, and
// loads every partition.
func loadFresh(t *testing.T, f fsbackend.FS) map[string]string {
	t.Helper()
	s, err := filestore.Open(context.Background(), filestore.Options{FS: f, Partitions: parts})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	return loadAll(t, s)
}

// A store never deletes a log file of a run that is live, even one that
// every snapshot it knows covers: on local disk that run keeps appending
// to its active segment, and what it writes afterwards must survive.
func TestLiveRunsFilesAreNotDeleted(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	var runs liveRuns
	a := openMember(t, e.fs, &runs, filestore.Options{}, func(int) bool { return true })
	want := map[string]string{}
	for i := 0; i < 40; i++ {
		k, v := fmt.Sprintf("early%02d", i), fmt.Sprint("v", i)
		a.put(k, v)
		want[k] = v
	}
	// Every record in A's active segment is now covered by A's snapshots.
	if err := a.s.ForceCompact(ctx); err != nil {
		t.Fatal(err)
	}
	b := openMember(t, e.fs, &runs, filestore.Options{}, func(int) bool { return false })
	if err := b.s.ForceCompact(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.s.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if len(logsOf(t, e.fs, a.run)) == 0 {
		t.Fatal("B deleted the active segment of live run A")
	}
	for i := 0; i < 40; i++ {
		k, v := fmt.Sprintf("late%02d", i), fmt.Sprint("w", i)
		a.put(k, v)
		want[k] = v
	}
	a.close(&runs)
	b.close(&runs)
	expectSame(t, loadFresh(t, e.fs), want)
}

// Once a run has ended, a member collects its log files, also those
// created after the member opened, as soon as its own snapshots of the
// partitions it took over cover them.
func TestEndedRunsFilesAreCollected(t *testing.T) {
	f := memfs.New()
	ctx := context.Background()
	var runs liveRuns
	opts := filestore.Options{SegmentSize: 2048, RefreshInterval: 10 * time.Millisecond}
	b := openMember(t, f, &runs, opts, func(int) bool { return false })
	a := openMember(t, f, &runs, opts, func(int) bool { return true })
	for i := 0; i < 300; i++ {
		a.put(keyOf(i%parts, i%50), fmt.Sprint("v", i))
	}
	// A fails; B takes every partition over with A's memory.
	for p := 0; p < parts; p++ {
		a.moveTo(b, p)
	}
	a.close(&runs)
	if len(logsOf(t, f, a.run)) == 0 {
		t.Fatal("A left no log file behind")
	}
	want := map[string]string{}
	b.m.contents(want)
	eventually(t, func() error {
		if err := b.s.Compact(ctx); err != nil {
			return err
		}
		if left := logsOf(t, f, a.run); len(left) > 0 {
			return fmt.Errorf("log files of ended run A left: %v", left)
		}
		return nil
	})
	b.close(&runs)
	expectSame(t, loadFresh(t, f), want)
}

// owned returns the partitions the member owns.
func (m *ownModel) owned() []int {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []int
	for p := 0; p < parts; p++ {
		if m.parts[p] != nil {
			out = append(out, p)
		}
	}
	return out
}

// The end of a live run's active segment may be a batch it is writing:
// a store reading it does not report it as damage. Once the run has
// ended, a cut-off batch is a torn tail and reported as one.
func TestLiveRunsUnfinishedBatchIsNotDamage(t *testing.T) {
	e := newEnv(t)
	var runs liveRuns
	a := openMember(t, e.fs, &runs, filestore.Options{}, func(int) bool { return true })
	a.put("k", "v")
	logs := logFiles(t, e.dir)
	if len(logs) != 1 {
		t.Fatalf("want A's one segment, have %v", logs)
	}
	// The first bytes of a batch, as another member sees them mid-write.
	seg, err := os.OpenFile(logs[0], os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	seg.Write([]byte{0xF7, 0x5A, 1, 'P', 100, 0, 0, 0, 1, 2, 3})
	seg.Close()
	var dl damageLog
	b := openMember(t, e.fs, &runs, dl.options(), func(int) bool { return false })
	if damages := dl.all(); len(damages) != 0 {
		t.Fatalf("live run's unfinished batch reported: %v", damages)
	}
	runs.set(a.run, false)
	c := openMember(t, e.fs, &runs, dl.options(), func(int) bool { return false })
	if damages := dl.all(); len(damages) != 1 || !damages[0].Tail {
		t.Fatalf("want the ended run's torn tail reported once, got %v", damages)
	}
	for _, mb := range []*member{c, b, a} {
		mb.close(&runs)
	}
}
