package stowage_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stowage/stowage"
	"github.com/stowage/stowage/config"
	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/errorfs"
	"github.com/stowage/stowage/httpapi"
	"github.com/stowage/stowage/internal/testhook"
	"github.com/stowage/stowage/mapstore/filestore"
	"github.com/stowage/stowage/partition"
	"github.com/stowage/stowage/serde"
)

// fill writes keys k0..k<n-1> (value "v-<i>") to the map name of a node
// on dir, then closes the node.
func fill(t *testing.T, dir, name string, n int) {
	t.Helper()
	node := open(t, stowage.Options{Config: persisted(t, dir, "")})
	m := strMap(t, node, name)
	for i := 0; i < n; i++ {
		if err := m.Put(context.Background(), fmt.Sprintf("k%d", i), fmt.Sprintf("v-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := node.Close(); err != nil {
		t.Fatal(err)
	}
}

func mapInfo(t *testing.T, n *stowage.Node, name string) stowage.MapInfo {
	t.Helper()
	for _, mi := range n.Maps() {
		if mi.Name == name {
			return mi
		}
	}
	t.Fatalf("map %q not among the node's maps %+v", name, n.Maps())
	return stowage.MapInfo{}
}

func partOf(t *testing.T, key string) int {
	t.Helper()
	kb, err := serde.String().Encode(key)
	if err != nil {
		t.Fatal(err)
	}
	return partition.Of(kb, partition.DefaultCount)
}

// A LAZY map is found at restart but loads a partition only when it is
// first used: the node is loaded (and healthy) with none of it read, the
// first Get returns the persisted value, and only the partitions touched
// are loaded.
func TestRestartLazy(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const keys = 100
	fill(t, dir, "engine_lazy", keys)

	n := open(t, stowage.Options{Config: persistedMode(t, dir, "LAZY", "")})
	defer n.Close()
	if err := n.WaitLoaded(ctx); err != nil {
		t.Fatal(err)
	}
	mi := mapInfo(t, n, "engine_lazy")
	if !mi.Persisted || mi.OwnedPartitions != partition.DefaultCount || mi.LoadedPartitions != 0 || mi.Size != 0 {
		t.Fatalf("LAZY map after restart: %+v; want %d partitions owned, none loaded", mi, partition.DefaultCount)
	}
	rec := httptest.NewRecorder()
	httpapi.Handler(n).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("/healthz with a LAZY map not loaded: %d %s, want 200", rec.Code, rec.Body)
	}

	m := strMap(t, n, "engine_lazy")
	touched := map[int]bool{}
	for _, i := range []int{0, 1, 2} {
		k := fmt.Sprintf("k%d", i)
		v, ok, err := m.Get(ctx, k)
		if err != nil || !ok || v != fmt.Sprintf("v-%d", i) {
			t.Fatalf("first Get %s after a LAZY restart = %q, %v, %v; want v-%d", k, v, ok, err, i)
		}
		touched[partOf(t, k)] = true
		mi := mapInfo(t, n, "engine_lazy")
		if mi.LoadedPartitions != len(touched) {
			t.Fatalf("after Get of %s: %d partitions loaded, want %d (those touched)", k, mi.LoadedPartitions, len(touched))
		}
	}
	// Every key is there: each Get loads the partition it needs.
	for i := 0; i < keys; i++ {
		if v, ok, err := m.Get(ctx, fmt.Sprintf("k%d", i)); err != nil || !ok || v != fmt.Sprintf("v-%d", i) {
			t.Fatalf("k%d = %q, %v, %v", i, v, ok, err)
		}
		touched[partOf(t, fmt.Sprintf("k%d", i))] = true
	}
	if mi := mapInfo(t, n, "engine_lazy"); mi.LoadedPartitions != len(touched) || len(touched) == partition.DefaultCount {
		t.Fatalf("after reading every key: %d partitions loaded, want %d", mi.LoadedPartitions, len(touched))
	}
}

// gate is an injector that holds every read of a snapshot until it is
// opened, and says when the first one arrived.
type gate struct {
	reached   chan struct{}
	once      sync.Once
	open      chan struct{}
	openOnce  sync.Once
	waitLimit time.Duration
}

func newGate() *gate {
	return &gate{reached: make(chan struct{}), open: make(chan struct{}), waitLimit: time.Minute}
}

func (g *gate) MaybeError(c errorfs.Call) error {
	if (c.Op == errorfs.OpOpen || c.Op == errorfs.OpReadAt) && strings.Contains(c.Name, "/snap/") {
		g.once.Do(func() { close(g.reached) })
		select {
		case <-g.open:
		case <-time.After(g.waitLimit): // a failed test must not hang the node's Close
		}
	}
	return nil
}

func (g *gate) release() { g.openOnce.Do(func() { close(g.open) }) }

func healthz(n *stowage.Node) (int, string) {
	rec := httptest.NewRecorder()
	httpapi.Handler(n).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	return rec.Code, rec.Body.String()
}

// EAGER: the first operation waits until the map is loaded. On a restart
// whose snapshot reads are held back, Open returns, a Get issued at once
// (no WaitLoaded) does not answer while loading is held, /healthz answers
// 503 and /v1/maps shows the map not loaded; once reads go on, the Get
// returns the persisted value and /healthz turns 200.
func TestEagerFirstOperationWaits(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const keys = 200
	fill(t, dir, "engine_eager", keys)
	// Compact into snapshots, so that loading the partitions reads files
	// after Open (Open itself only scans the log).
	root, err := fsbackend.Open(ctx, fsbackend.Properties{"fs.defaultFS": "file:///"})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := fsbackend.Sub(root, fsbackend.Join(strings.TrimPrefix(dir, "/"), "test", "engine_eager"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := filestore.Open(ctx, filestore.Options{FS: sub})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CompactOffline(ctx); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	root.Close()

	g := newGate()
	openFS := func(ctx context.Context, p fsbackend.Properties) (fsbackend.FS, error) {
		f, err := fsbackend.Open(ctx, p)
		if err != nil {
			return nil, err
		}
		return errorfs.Wrap(f, g), nil
	}
	n := open(t, stowage.Options{Config: persisted(t, dir, ""), TestHooks: &testhook.Hooks{OpenFS: openFS}})
	defer n.Close()
	defer g.release() // before Close
	m := strMap(t, n, "engine_eager")
	type result struct {
		v   string
		ok  bool
		err error
	}
	got := make(chan result, 1)
	go func() {
		v, ok, err := m.Get(ctx, "k7")
		got <- result{v, ok, err}
	}()

	select {
	case <-g.reached:
	case <-time.After(time.Minute):
		t.Fatal("the restarted node read no snapshot within a minute")
	}
	if code, body := healthz(n); code != http.StatusServiceUnavailable {
		t.Fatalf("/healthz while the EAGER map loads: %d %s, want 503", code, body)
	}
	rec := httptest.NewRecorder()
	httpapi.Handler(n).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/maps", nil))
	var maps []stowage.MapInfo
	if err := json.Unmarshal(rec.Body.Bytes(), &maps); err != nil || len(maps) != 1 || maps[0].Name != "engine_eager" || maps[0].Loaded {
		t.Fatalf("/v1/maps while loading = %s (%v); want engine_eager, not loaded", rec.Body, err)
	}
	select {
	case r := <-got:
		t.Fatalf("Get answered %+v while its map was still loading", r)
	default:
	}

	g.release()
	select {
	case r := <-got:
		if r.err != nil || !r.ok || r.v != "v-7" {
			t.Fatalf("first Get after an EAGER restart = %+v, want v-7", r)
		}
	case <-time.After(time.Minute):
		t.Fatal("Get did not answer within a minute of loading going on")
	}
	deadline := time.Now().Add(time.Minute)
	for {
		code, body := healthz(n)
		if code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/healthz still %d after loading went on: %s", code, body)
		}
		<-time.After(10 * time.Millisecond) // poll until the deadline above
	}
	if mi := mapInfo(t, n, "engine_eager"); !mi.Loaded || mi.LoadedPartitions != partition.DefaultCount || mi.Size != keys {
		t.Fatalf("after loading: %+v; want every partition loaded and %d entries", mi, keys)
	}
}

// The map-store property stowage.hdfs.open-files is refused above the
// file store's own bound, not silently lowered to it.
func TestOpenFilesBoundIsTheStores(t *testing.T) {
	if config.MaxOpenFiles != filestore.MaxOpenFiles {
		t.Fatalf("config.MaxOpenFiles %d, filestore.MaxOpenFiles %d: the property's bound must be the store's", config.MaxOpenFiles, filestore.MaxOpenFiles)
	}
}
