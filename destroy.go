package stowage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/stowage/stowage/config"
)

// Map lifecycle: the maps of the cluster (Hazelcast's
// getDistributedObjects) and Destroy.

// MapNames returns the names of the maps any member holds, sorted: every
// map used since the members started, and every persisted map found at
// Open. A member that did not answer makes it fail, naming the member,
// with the names the others gave.
func (n *Node) MapNames(ctx context.Context) ([]string, error) { return n.e.MapNames(ctx) }

// MapExists reports whether any member holds the named map (see
// MapNames).
func (n *Node) MapExists(ctx context.Context, name string) (bool, error) {
	if err := ValidMapName(name); err != nil {
		return false, err
	}
	names, err := n.e.MapNames(ctx)
	for _, x := range names {
		if x == name {
			return true, nil
		}
	}
	return false, err
}

// DestroyMap removes the named map everywhere: every member drops its
// entries (owned and backed up) and its locks and closes its map store,
// then its stored data is removed (the map's directory in the map
// store's storage, or its bucket of a bbolt file), so a later Open does
// not find it. Destroy the map once its writers stopped: a write still
// in flight may hold it anew (a new map with that write's entry), as any
// later use of the name or of a handle taken before does. Entry
// listeners of the map stay registered and hear the new map. It fails,
// naming the member, if a member did not answer, or if removing the
// stored data failed; call it again, before using the name, to finish
// the job (a map made anew over files left behind cannot write them).
func (n *Node) DestroyMap(ctx context.Context, name string) error { return n.e.Destroy(ctx, name) }

// Destroy removes the map everywhere (see Node.DestroyMap).
func (m *Map[K, V]) Destroy(ctx context.Context) error { return m.m.Engine().Destroy(ctx, m.m.Name()) }

// removeStore removes the stored data of a destroyed map: META first, so
// that a removal cut short leaves no map that Open would find.
func (n *Node) removeStore(ctx context.Context, name string) error {
	mc, _ := n.cfg.Hazelcast.MapFor(name)
	ms := mc.MapStore
	if ms == nil || !ms.Enabled {
		return nil
	}
	if ms.StoreType() == config.StoreBBolt {
		path, _ := boltPath(ms) // held by holdBoltFiles
		f := n.bolts[path]
		if f == nil {
			return fmt.Errorf("stowage: map %q: its bbolt file is not open", name)
		}
		return f.DropMap(name)
	}
	f, err := n.openFS(ctx, ms.Properties)
	if err != nil {
		return err
	}
	defer f.Close()
	dir := mapDir(ms, name)
	meta := dir + "/META"
	if err := f.Remove(ctx, meta); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	list, err := f.List(ctx, dir)
	if err != nil {
		return err
	}
	for _, fi := range list {
		if !strings.HasPrefix(fi.Name, dir+"/") {
			continue
		}
		if err := f.Remove(ctx, fi.Name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}
