package stowage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/stowage/stowage/cluster"
	"github.com/stowage/stowage/config"
	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/nslease"
)

// propLeaseTTL is the hazelcast.yaml property that sets how long the
// namespace lease of a map store stays valid unless renewed (a Go
// duration such as 15s; default nslease.DefaultTTL). A cluster whose
// members were all killed waits up to this long before another cluster,
// or a stand-alone member, may start on its namespace.
const propLeaseTTL = "stowage.namespace.lease.ttl"

// ErrNamespaceInUse: another live cluster (or stand-alone member) writes
// the map store's namespace/clusterName. The error names the namespace and
// clusterName as configured and the other cluster's members.
var ErrNamespaceInUse = nslease.ErrHeld

// nsLease is the lease this member holds, or follows, on one map store's
// namespace/clusterName, with the FS it is written through.
type nsLease struct {
	l  *nslease.Lease
	fs fsbackend.FS
}

// memberAddr names a member in lease records: its membership address, or
// its ID where it has none (a member alone, an in-memory test member).
func memberAddr(m cluster.Member) string {
	if m.Addr != "" {
		return m.Addr
	}
	return m.ID
}

// leaseTTL reads propLeaseTTL.
func (n *Node) leaseTTL() (time.Duration, error) {
	v := n.cfg.Hazelcast.Properties[propLeaseTTL]
	if v == "" {
		return nslease.DefaultTTL, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 100*time.Millisecond {
		return 0, fmt.Errorf("stowage: hazelcast.properties.%s: %q is not a duration of at least 100ms such as 15s", propLeaseTTL, v)
	}
	return d, nil
}

// takeNamespaces takes the lease of every file map store's
// namespace/clusterName (shared/DESIGN.md §2.9: one cluster writes a
// namespace at a time) before anything is loaded or written. Members of
// one cluster share the lease: a record naming the address of a member of
// this member's view, or its own address (a full restart), is this
// cluster's. Only the master (the oldest member) renews. bbolt map stores
// are guarded by their file lock instead. Members given by
// Options.TestHooks (an in-memory cluster) take no lease.
func (n *Node) takeNamespaces(ctx context.Context) error {
	if n.opts.hooks().View != nil {
		return nil
	}
	ttl, err := n.leaseTTL()
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, mc := range n.cfg.Hazelcast.Maps {
		ms := mc.MapStore
		if ms == nil || !ms.Enabled || ms.StoreType() == config.StoreBBolt {
			continue
		}
		dir := mapDir(ms, "")
		key := ms.Properties.String() + "\x00" + dir
		if seen[key] {
			continue
		}
		seen[key] = true
		f, err := n.openFS(ctx, ms.Properties)
		if err != nil {
			return fmt.Errorf("stowage: map-store of %q: %w", mc.Pattern, err)
		}
		shown := fmt.Sprintf("namespace %q clusterName %q (hazelcast.map.%s.map-store)", ms.Namespace(), ms.ClusterName(), mc.Pattern)
		l, err := nslease.Acquire(ctx, nslease.Options{
			FS: f, Dir: dir, Path: shown, TTL: ttl, Logger: n.log,
			Members: n.leaseMembers, Same: n.sameCluster, Renew: n.isMaster,
		})
		if err != nil {
			f.Close()
			return fmt.Errorf("stowage: %w", err)
		}
		n.leases = append(n.leases, nsLease{l: l, fs: f})
	}
	return nil
}

// leaseMembers lists the addresses of the members this member sees.
func (n *Node) leaseMembers() []string {
	var out []string
	for _, m := range n.view.Members() {
		out = append(out, memberAddr(m))
	}
	slices.Sort(out)
	return out
}

// sameCluster reports whether a lease record's members include this
// member's address or that of a member it sees.
func (n *Node) sameCluster(members []string) bool {
	mine := n.leaseMembers()
	mine = append(mine, memberAddr(n.view.Self()))
	for _, m := range members {
		if slices.Contains(mine, m) {
			return true
		}
	}
	return false
}

// isMaster reports whether this member is the oldest it sees: the one
// that renews the namespace leases.
func (n *Node) isMaster() bool {
	self := n.view.Self()
	for _, m := range n.view.Members() {
		if m.Started.Before(self.Started) || (m.Started.Equal(self.Started) && m.ID < self.ID) {
			return false
		}
	}
	return true
}

// releaseNamespaces stops renewing the leases; the last member of a
// cluster (alone) releases them so that another cluster may start at once.
func (n *Node) releaseNamespaces(alone bool) error {
	var errs []error
	for _, l := range n.leases {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := l.l.Close(ctx, alone); err != nil && !errors.Is(err, nslease.ErrHeld) {
			errs = append(errs, err)
		}
		cancel()
		errs = append(errs, l.fs.Close())
	}
	n.leases = nil
	return errors.Join(errs...)
}
