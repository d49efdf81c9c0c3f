package dmap

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/stowage/stowage/cluster"
)

// The maps of the cluster (Hazelcast's getDistributedObjects) and their
// destruction.
//
// MapNames asks every member of the view which maps it holds (a member
// holds a map once it was used there, or found persisted at Open).
// Destroy makes every member of the view drop the map: its entries in
// memory, owned and backed up, its lock map, and its store, closed; the
// caller then removes the stored data (Config.RemoveStore). A handle of
// the map taken before holds the map anew at its next write, as a new,
// empty map.

const (
	mMaps    = "maps"    // the names of the maps the callee holds
	mDestroy = "destroy" // drop a map: memory, locks, store closed
)

type mapsAns struct {
	Names []string `msgpack:"n"`
}

type destroyReq struct {
	Map string `msgpack:"m"`
}

// heldNames is the names of the user maps this member holds, sorted.
func (e *Engine) heldNames() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]string, 0, len(e.maps))
	for name := range e.maps {
		if _, lk := lockBase(name); !lk {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// eachMember runs call on every member of the view but this one, in
// parallel, and joins the errors, each naming its member.
func (e *Engine) eachMember(ctx context.Context, method string, req any) ([][]byte, error) {
	var mu sync.Mutex
	var errs []error
	var out [][]byte
	var wg sync.WaitGroup
	for _, m := range e.proto.View().Members() {
		if m.ID == e.proto.Self() {
			continue
		}
		wg.Go(func() {
			var b []byte
			var err error
			if m.RPC == "" {
				err = fmt.Errorf("%w: no transport address", cluster.ErrUnreachable)
			} else {
				b, err = e.proto.Call(ctx, m.RPC, method, cluster.Encode(req))
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("member %s: %w", m.ID, err))
				return
			}
			out = append(out, b)
		})
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// MapNames returns the names of the maps any member of the view holds,
// sorted. A member that does not answer makes it fail, naming the
// member, with the names the others gave.
func (e *Engine) MapNames(ctx context.Context) ([]string, error) {
	oc := e.bound(ctx)
	defer oc.cancel()
	ctx = oc
	names := e.heldNames()
	answers, err := e.eachMember(ctx, mMaps, struct{}{})
	for _, b := range answers {
		var a mapsAns
		if derr := cluster.Decode(b, &a); derr != nil {
			err = errors.Join(err, derr)
			continue
		}
		names = append(names, a.Names...)
	}
	sort.Strings(names)
	names = slices.Compact(names)
	if err != nil {
		return names, fmt.Errorf("stowage: list the maps: %w", err)
	}
	return names, nil
}

// Destroy drops the named map on every member of the view (see above),
// then removes its stored data. It fails, naming the members, if one did
// not answer: that member may still hold the map, and Destroy may be
// called again.
func (e *Engine) Destroy(ctx context.Context, name string) error {
	if err := ValidMapName(name); err != nil {
		return err
	}
	oc := e.bound(ctx)
	defer oc.cancel()
	ctx = oc
	errs := []error{e.drop(name)}
	if _, err := e.eachMember(ctx, mDestroy, destroyReq{Map: name}); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("stowage: destroy map %q: %w", name, err)
	}
	if e.cfg.RemoveStore != nil {
		if err := e.cfg.RemoveStore(ctx, name); err != nil {
			return fmt.Errorf("stowage: destroy map %q: remove its stored data: %w", name, err)
		}
	}
	return nil
}

// drop forgets the named map and its lock map on this member and closes
// their stores.
func (e *Engine) drop(name string) error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return ErrClosed
	}
	var gone []*heldMap
	for _, n := range []string{name, lockMapName(name)} {
		if c := e.maps[n]; c != nil {
			gone = append(gone, c)
			delete(e.maps, n)
		}
	}
	e.mu.Unlock()
	var errs []error
	for _, c := range gone {
		c.destroyed.Store(true)
		if c.wb != nil {
			e.m.behindQueued.DeleteLabelValues(c.name) // its queue is dropped with it
		}
		if c.store != nil {
			errs = append(errs, c.store.Close())
		}
	}
	return errors.Join(errs...)
}

// registerDestroy makes the protocol serve MapNames and Destroy.
func (e *Engine) registerDestroy() {
	e.proto.Register(mMaps, 0, func(context.Context, string, []byte) ([]byte, error) {
		return cluster.Encode(mapsAns{Names: e.heldNames()}), nil
	})
	e.proto.Register(mDestroy, 0, func(_ context.Context, _ string, body []byte) ([]byte, error) {
		var req destroyReq
		if err := cluster.Decode(body, &req); err != nil {
			return nil, err
		}
		if err := ValidMapName(req.Map); err != nil {
			return nil, err
		}
		return nil, e.drop(req.Map)
	})
}
