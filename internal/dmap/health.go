package dmap

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/stowage/stowage/cluster"
	"github.com/stowage/stowage/internal/parallel"
	"github.com/stowage/stowage/partition"
)

// localLoaded reports whether this member serves every partition the
// table gives it, with every EAGER map loaded.
func (e *Engine) localLoaded() (bool, string) {
	t, _ := e.proto.Table()
	if t == nil {
		return false, fmt.Sprintf("waiting for %d members (hazelcast.initial.min.cluster.size)", e.proto.StartMin())
	}
	held := e.heldMaps()
	for p, rs := range t.Owners {
		if len(rs) == 0 || rs[0] != e.proto.Self() {
			continue
		}
		if st := e.repl.Replica(p).State(); st != partition.Active {
			return false, fmt.Sprintf("partition %d is %s", p, st)
		}
		for _, c := range held {
			if c.store == nil || c.lazy {
				continue
			}
			pt := c.parts[p]
			pt.mu.Lock()
			ready := pt.ready
			pt.mu.Unlock()
			if !ready {
				return false, fmt.Sprintf("map %q partition %d is loading", c.name, p)
			}
		}
	}
	return true, ""
}

// Loaded reports whether the cluster's maps are loaded: this member and
// every other live member serve the partitions the table gives them.
func (e *Engine) Loaded() bool {
	ok, _ := e.LoadState(context.Background())
	return ok
}

// LoadState is Loaded with the reason when it is false: the first
// partition, map or member found still loading.
func (e *Engine) LoadState(ctx context.Context) (loaded bool, why string) {
	if ok, why := e.localLoaded(); !ok {
		return false, why
	}
	return e.everyMember(ctx, func(a healthAns) bool { return a.Loaded })
}

// everyMember asks every other live member for its health and reports
// whether ok holds of each answer, with the same table version as here.
// The members are asked cluster.FanOut at a time; the reason given is
// that of the first member, in member order, that fails.
func (e *Engine) everyMember(ctx context.Context, ok func(healthAns) bool) (bool, string) {
	if e.proto.Alone() {
		return true, ""
	}
	tv := e.proto.TableVersion()
	var ms []cluster.Member
	for _, m := range e.proto.Members() {
		if m.ID != e.proto.Self() {
			ms = append(ms, m)
		}
	}
	why := make([]string, len(ms))
	failed := make([]bool, len(ms)) // failed of itself, not for a call given up
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	parallel.Do(cluster.FanOut, len(ms), func(i int) {
		m := ms[i]
		if actx.Err() != nil {
			why[i] = fmt.Sprintf("member %s: not asked: %v", m.ID, actx.Err())
			return
		}
		cctx, ccancel := context.WithTimeout(actx, 2*time.Second)
		b, err := e.proto.Call(cctx, m.RPC, mHealth, nil)
		ccancel()
		var ans healthAns
		if err == nil {
			err = cluster.Decode(b, &ans)
		}
		switch {
		case err != nil && actx.Err() != nil:
			why[i] = fmt.Sprintf("member %s: %v", m.ID, err)
			return
		case err != nil:
			why[i] = fmt.Sprintf("member %s: %v", m.ID, err)
		case !ok(ans) || ans.TV != tv:
			why[i] = fmt.Sprintf("member %s: loaded %v, safe %v, table %d (here %d): %s", m.ID, ans.Loaded, ans.Safe, ans.TV, tv, ans.Why)
		default:
			return
		}
		failed[i] = true
		cancel() // one member failing answers the question
	})
	for i, w := range why {
		if failed[i] {
			return false, w
		}
	}
	for _, w := range why {
		if w != "" {
			return false, w // ctx ended
		}
	}
	return true, ""
}

// Safe reports whether the cluster is safe, as Hazelcast's
// PartitionService.isClusterSafe: every member is loaded with the same
// table, and every partition's backups are filled, so that losing any
// backup-count members loses nothing. A rolling restart waits for it
// before stopping the next member.
func (e *Engine) Safe(ctx context.Context) bool {
	ok, _ := e.safeWhy(ctx)
	return ok
}

func (e *Engine) safeWhy(ctx context.Context) (bool, string) {
	if ok, why := e.localLoaded(); !ok {
		return false, why
	}
	if why := e.repl.LocalSafeWhy(); why != "" {
		return false, why
	}
	return e.everyMember(ctx, func(a healthAns) bool { return a.Safe })
}

// WaitLoaded blocks until this member serves every partition the table
// gives it, with its EAGER maps loaded.
func (e *Engine) WaitLoaded(ctx context.Context) error {
	t := time.NewTicker(e.loaded.poll)
	defer t.Stop()
	for {
		woken := e.loaded.wake()
		if ok, _ := e.localLoaded(); ok {
			return nil
		}
		select {
		case <-ctx.Done():
			_, why := e.localLoaded()
			return fmt.Errorf("stowage: not loaded (%s): %w", why, ctx.Err())
		case <-e.ctx.Done():
			return ErrClosed
		case <-woken:
		case <-t.C:
		}
	}
}

// loadedPoll is how often WaitLoaded looks again besides being woken: for
// what no partition's activation tells (the first table, a member).
const loadedPoll = 10 * time.Millisecond

// loadWaiters wakes WaitLoaded as soon as a partition here is made
// active or a map's part of it ready, instead of at its next look: a
// member's start is done the moment its last partition is.
type loadWaiters struct {
	poll time.Duration
	mu   sync.Mutex
	c    chan struct{} // closed, and replaced, at each change
}

// wake returns the channel closed at the next change.
func (w *loadWaiters) wake() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.c
}

// changed wakes the waiters.
func (w *loadWaiters) changed() {
	w.mu.Lock()
	close(w.c)
	w.c = make(chan struct{})
	w.mu.Unlock()
}

// MapInfo describes a map as this member holds it.
type MapInfo struct {
	Name      string `json:"name"`
	Size      int    `json:"size"` // entries in the partitions this member owns (Map.Size counts all)
	Backups   int    `json:"backup_entries"`
	Loaded    bool   `json:"loaded"`
	Persisted bool   `json:"persisted"`
	// OwnedPartitions is how many partitions this member owns, and
	// LoadedPartitions how many of those hold the map's data (read from
	// its store, taken over, or new). An EAGER map loads every owned
	// partition at start; a LAZY one loads a partition on its first use,
	// so LoadedPartitions counts the partitions used since.
	OwnedPartitions  int `json:"owned_partitions"`
	LoadedPartitions int `json:"loaded_partitions"`
	// Write-behind maps: WriteBehindQueued is how many records this
	// member's queue holds, not yet stored; UnstoredKeys how many keys of
	// its copies (owned and backed up) have a write it has not seen
	// stored (a new owner stores those).
	WriteBehindQueued int `json:"write_behind_queued,omitempty"`
	UnstoredKeys      int `json:"unstored_keys,omitempty"`
}

// MapInfo describes the named map as this member holds it; false when
// the map is not held here.
func (e *Engine) MapInfo(name string) (MapInfo, bool) {
	e.mu.Lock()
	c := e.maps[name]
	e.mu.Unlock()
	if c == nil {
		return MapInfo{}, false
	}
	return e.mapInfo(c), true
}

// Maps describes the maps this member holds.
func (e *Engine) Maps() []MapInfo {
	var out []MapInfo
	for _, c := range e.heldMaps() {
		if _, ok := lockBase(c.name); ok {
			continue // a map's locks, not a map of its own
		}
		out = append(out, e.mapInfo(c))
	}
	return out
}

func (e *Engine) mapInfo(c *heldMap) MapInfo {
	mi := MapInfo{Name: c.name, Persisted: c.store != nil, Loaded: true}
	for p, pt := range c.parts {
		st := e.repl.Replica(p).State()
		pt.mu.Lock()
		switch st {
		case partition.Active:
			mi.Size += len(pt.entries)
			mi.OwnedPartitions++
			if pt.ready {
				mi.LoadedPartitions++
			} else if !c.lazy {
				mi.Loaded = false
			}
		case partition.Acquiring:
			mi.Loaded = false
		case partition.Backup, partition.Held:
			mi.Backups += len(pt.entries)
		}
		mi.UnstoredKeys += len(pt.pending)
		pt.mu.Unlock()
	}
	if c.wb != nil {
		mi.WriteBehindQueued = c.wb.Len()
	}
	return mi
}

// ClusterInfo describes the cluster as this member sees it.
type ClusterInfo struct {
	ClusterName         string         `json:"cluster_name"`
	Self                string         `json:"self"`
	Members             []string       `json:"members"`
	Master              string         `json:"master"`
	PartitionCount      int            `json:"partition_count"`
	PartitionTableVer   int64          `json:"partition_table_version"`
	PartitionsPerMember map[string]int `json:"partitions_per_member"`
	BackupsPerMember    map[string]int `json:"backups_per_member"`
	ReplicaCount        int            `json:"replica_count"`
	Loaded              bool           `json:"loaded"`
	Loading             string         `json:"loading,omitempty"`
	// Safe: loaded, and every partition's backups are filled.
	Safe bool `json:"safe"`
}

// Cluster describes the cluster: members (the master first, in the
// order the masters admitted them), master, the
// partition table's version and each member's partitions.
func (e *Engine) Cluster(ctx context.Context) ClusterInfo {
	ci := ClusterInfo{Self: e.proto.Self(), PartitionCount: e.parts,
		PartitionsPerMember: map[string]int{}, BackupsPerMember: map[string]int{}, ReplicaCount: e.proto.Replicas()}
	for _, m := range e.proto.ViewRanked() {
		ci.Members = append(ci.Members, m.ID)
	}
	if len(ci.Members) > 0 {
		ci.Master = ci.Members[0]
	}
	if t, _ := e.proto.Table(); t != nil {
		ci.PartitionTableVer = t.Version
		for _, rs := range t.Owners {
			if len(rs) > 0 {
				ci.PartitionsPerMember[rs[0]]++
			}
			for _, b := range rs[min(1, len(rs)):] {
				ci.BackupsPerMember[b]++
			}
		}
	}
	ci.Loaded, ci.Loading = e.LoadState(ctx)
	ci.Safe = ci.Loaded && e.Safe(ctx)
	return ci
}

// Owner returns the member id owning partition p in this member's
// current table ("" before the first table).
func (e *Engine) Owner(p int) string {
	t, _ := e.proto.Table()
	if t == nil {
		return ""
	}
	return t.Owner(p)
}

// Replicas returns the member ids of partition p's replica set in this
// member's current table: the owner first, then the backups in order (nil
// before the first table).
func (e *Engine) Replicas(p int) []string {
	t, _ := e.proto.Table()
	if t == nil || p < 0 || p >= len(t.Owners) {
		return nil
	}
	return slices.Clone(t.Owners[p])
}

// SafeWhy says why the cluster is not safe ("" when it is).
func (e *Engine) SafeWhy() string {
	_, why := e.safeWhy(context.Background())
	return why
}
