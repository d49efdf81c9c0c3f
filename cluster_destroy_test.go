package stowage_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stowage/stowage"
)

// filesUnder lists the regular files under dir.
func filesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return out
}

// Destroy removes a persisted map on every member of a 3-member cluster,
// its locks and its files, and nothing of another map; MapNames and
// MapExists see it go; a handle taken before holds the name anew as an
// empty map; after a full restart the destroyed map is not found.
func TestClusterDestroy(t *testing.T) {
	dir := t.TempDir()
	cfg := sharedConfig(t, dir, 1, 3)
	tc := newTCluster(t, cfg)
	for range 3 {
		tc.add()
	}
	tc.waitLoaded()
	ctx := context.Background()
	ms := tc.live()
	gone, kept := strMap(t, ms[0].node, "engine_gone"), strMap(t, ms[0].node, "engine_kept")
	for i := range 100 {
		k := fmt.Sprintf("k%03d", i)
		if err := gone.Put(ctx, k, "v"); err != nil {
			t.Fatal(err)
		}
		if i < 10 {
			if err := kept.Put(ctx, k, "v"); err != nil {
				t.Fatal(err)
			}
		}
	}
	holder := stowage.WithLockOwner(ctx, "task")
	if _, err := gone.Lock(holder, "k001", time.Hour); err != nil {
		t.Fatal(err)
	}
	old := strMap(t, ms[1].node, "engine_gone") // a handle on another member
	names, err := ms[2].node.MapNames(ctx)
	if err != nil || !slices.Contains(names, "engine_gone") || !slices.Contains(names, "engine_kept") {
		t.Fatalf("MapNames = %v, %v", names, err)
	}
	goneDir := filepath.Join(dir, "test", "engine_gone")
	if len(filesUnder(t, goneDir)) == 0 {
		t.Fatalf("no files under %s before Destroy", goneDir)
	}

	if err := gone.Destroy(ctx); err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if ok, err := m.node.MapExists(ctx, "engine_gone"); err != nil || ok {
			t.Errorf("%s: MapExists(engine_gone) = %v, %v after Destroy", m.id, ok, err)
		}
		if ok, err := m.node.MapExists(ctx, "engine_kept"); err != nil || !ok {
			t.Errorf("%s: MapExists(engine_kept) = %v, %v", m.id, ok, err)
		}
	}
	if fs := filesUnder(t, goneDir); len(fs) != 0 {
		t.Errorf("files left after Destroy: %v", fs)
	}
	if n, err := kept.Size(ctx); err != nil || n != 10 {
		t.Errorf("the other map has %d entries (%v), want 10", n, err)
	}
	if n, err := old.Size(ctx); err != nil || n != 0 {
		t.Errorf("a destroyed map seen through an old handle has %d entries (%v)", n, err)
	}
	if locked, err := old.IsLocked(ctx, "k001"); err != nil || locked {
		t.Errorf("a destroyed map's key is still locked: %v, %v", locked, err)
	}
	// The old handle holds the name anew, as a new map.
	if err := old.Put(ctx, "again", "v"); err != nil {
		t.Fatal(err)
	}
	if n, err := gone.Size(ctx); err != nil || n != 1 {
		t.Errorf("the map made anew has %d entries (%v), want 1", n, err)
	}
	if err := old.Destroy(ctx); err != nil {
		t.Fatal(err)
	}

	for _, m := range tc.live() {
		tc.kill(m)
	}
	again := newTCluster(t, cfg)
	for range 3 {
		again.add()
	}
	again.waitLoaded()
	names, err = again.live()[0].node.MapNames(ctx)
	if err != nil || slices.Contains(names, "engine_gone") || !slices.Contains(names, "engine_kept") {
		t.Errorf("after a restart MapNames = %v, %v; want engine_kept without engine_gone", names, err)
	}
	if n, err := strMap(t, again.live()[1].node, "engine_kept").Size(ctx); err != nil || n != 10 {
		t.Errorf("after a restart the other map has %d entries (%v), want 10", n, err)
	}
}

// Destroy of a map on a bbolt map store removes its bucket: after a
// restart the map is not found and the other map is whole; the name can
// be used again at once.
func TestBBoltDestroy(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "maps.db")
	n := open(t, stowage.Options{Config: boltConfig(t, path)})
	gone, kept := strMap(t, n, "engine_gone"), strMap(t, n, "engine_kept")
	for i := range 20 {
		if err := gone.Put(ctx, fmt.Sprint(i), "v"); err != nil {
			t.Fatal(err)
		}
		if err := kept.Put(ctx, fmt.Sprint(i), "v"); err != nil {
			t.Fatal(err)
		}
	}
	if err := n.DestroyMap(ctx, "engine_gone"); err != nil {
		t.Fatal(err)
	}
	if ok, err := n.MapExists(ctx, "engine_gone"); err != nil || ok {
		t.Fatalf("MapExists after Destroy = %v, %v", ok, err)
	}
	if err := gone.Put(ctx, "new", "v"); err != nil {
		t.Fatalf("a write after Destroy: %v", err)
	}
	if err := n.DestroyMap(ctx, "engine_gone"); err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	n = open(t, stowage.Options{Config: boltConfig(t, path)})
	defer n.Close()
	if err := n.WaitLoaded(ctx); err != nil {
		t.Fatal(err)
	}
	names, err := n.MapNames(ctx)
	if err != nil || !slices.Equal(names, []string{"engine_kept"}) {
		t.Fatalf("after a restart MapNames = %v, %v; want [engine_kept]", names, err)
	}
	if size, err := strMap(t, n, "engine_kept").Size(ctx); err != nil || size != 20 {
		t.Fatalf("engine_kept has %d entries (%v), want 20", size, err)
	}
}
