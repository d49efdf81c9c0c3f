package stowage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/stowage/stowage/cluster"
	"github.com/stowage/stowage/config"
	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/nslease"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/mapstore/filestore"
)

// propLeaseTTL is the hazelcast.yaml property that sets how long the
// namespace lease of a map store stays valid unless renewed (a Go
// duration such as 15s; default nslease.DefaultTTL). A cluster whose
// members were all killed waits up to this long before another cluster,
// or a stand-alone member, may start on its namespace.
const propLeaseTTL = "stowage.namespace.lease.ttl"

// nsLease is the lease this member holds, or follows, on one map store's
// namespace/clusterName, with the FS it is written through.
type nsLease struct {
	key  string // storage properties and directory (takeNamespaces)
	l    *nslease.Lease
	fs   fsbackend.FS
	host *os.File // a member alone: its host lock (hostLock)
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
		key := leaseKey(ms)
		if seen[key] {
			continue
		}
		seen[key] = true
		f, err := n.openFS(ctx, ms.Properties)
		if err != nil {
			return fmt.Errorf("stowage: map-store of %q: %w", mc.Pattern, err)
		}
		shown := fmt.Sprintf("namespace %q clusterName %q (hazelcast.map.%s.map-store)", ms.Namespace(), ms.ClusterName(), mc.Pattern)
		l, err := n.acquireLease(ctx, key, f, nslease.Options{Dir: dir, Path: shown, TTL: ttl})
		if err != nil {
			return err
		}
		n.leaseMu.Lock()
		n.leases = append(n.leases, l)
		n.leaseMu.Unlock()
	}
	return nil
}

// acquireLease takes the lease o describes (its Dir, Records, Path and
// TTL) on f, named key among this member's leases: shared by the members
// of this cluster, renewed by the master; a member alone holds its host
// lock too. On failure it closes f.
func (n *Node) acquireLease(ctx context.Context, key string, f fsbackend.FS, o nslease.Options) (nsLease, error) {
	o.FS, o.Logger, o.Members, o.Same, o.Renew = f, n.log, n.leaseMembers, n.sameCluster, n.isMaster
	var host *os.File
	if n.tr == nil {
		var err error
		if host, err = hostLock(key); err != nil {
			f.Close()
			return nsLease{}, fmt.Errorf("stowage: %w: %s: another stand-alone member on this host holds it (%v)", ErrNamespaceInUse, o.Path, err)
		}
		o.Same = n.sameStandalone
	}
	l, err := nslease.Acquire(ctx, o)
	if err != nil {
		f.Close()
		if host != nil {
			host.Close()
		}
		return nsLease{}, fmt.Errorf("stowage: %w", err)
	}
	return nsLease{key: key, l: l, fs: f, host: host}, nil
}

// leaseKey names the namespace/clusterName of a map store: its storage
// properties and directory.
func leaseKey(ms *config.MapStoreConfig) string {
	return ms.Properties.String() + "\x00" + mapDir(ms, "")
}

// fencedStore is a file map store whose writes are admitted only while
// this member knows its cluster holds the namespace lease
// (nslease.Lease.Check: it refuses writes before another cluster can take
// the namespace over). Reads are served as before. Every other method of
// the store is the filestore's.
type fencedStore struct {
	*fileStore
	lease *nslease.Lease
}

// fileStore names the embedded store apart from MapStore's Store method.
type fileStore = filestore.Store

// Admit refuses the write with an error matching ErrNamespaceLeaseLost,
// then applies the store's own throttle.
func (s *fencedStore) Admit(ctx context.Context) error {
	if err := s.lease.Check(); err != nil {
		return fmt.Errorf("stowage: %w", err)
	}
	return s.fileStore.Admit(ctx)
}

// fenced wraps st with the lease of its namespace, if this member holds
// one (members given an in-memory cluster by Options.TestHooks do not).
func (n *Node) fenced(ms *config.MapStoreConfig, st *filestore.Store) mapstore.MapStore {
	if l := n.leaseOf(ms); l != nil {
		return &fencedStore{fileStore: st, lease: l}
	}
	return st
}

// leaseOf returns the lease of the map store's namespace that this member
// holds, or nil.
func (n *Node) leaseOf(ms *config.MapStoreConfig) *nslease.Lease {
	return n.heldLease(leaseKey(ms))
}

// heldLease returns the lease this member holds under key, or nil.
func (n *Node) heldLease(key string) *nslease.Lease {
	n.leaseMu.Lock()
	defer n.leaseMu.Unlock()
	for _, l := range n.leases {
		if l.key == key {
			return l.l
		}
	}
	return nil
}

// compactionFence is filestore.Options.Fence for a map store of the
// namespace ms: the store's compaction waits while the lease is not
// known to be renewed, as its writes do (nil without a lease).
func (n *Node) compactionFence(ms *config.MapStoreConfig) func() error {
	l := n.leaseOf(ms)
	if l == nil {
		return nil
	}
	return l.Check
}

// hostLock takes an exclusive flock (held until the file is closed; the
// kernel drops it when the process dies, even by SIGKILL) on a lock file
// of this host named by the storage and directory in key. A member alone
// holds it while it runs: a second member alone on the host fails at
// once, and a member alone that finds a lease record of a member alone of
// this host knows that member is gone (its lock was free), so it need not
// wait for the record to expire after a crash.
func hostLock(key string) (*os.File, error) {
	sum := sha256.Sum256([]byte(key))
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("stowage-%d", os.Getuid()))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, hex.EncodeToString(sum[:12])+".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, errors.New("its host lock is taken")
		}
		return nil, err
	}
	return f, nil
}

// standaloneSuffix ends the name of a member alone in lease records.
func standaloneSuffix() string {
	h, err := os.Hostname()
	if err != nil {
		h = "unknown-host"
	}
	return "@" + h
}

// sameStandalone is sameCluster for a member alone holding its host lock:
// a record of a member alone of this host is a crashed run of it.
func (n *Node) sameStandalone(members []string) bool {
	for _, m := range members {
		if strings.HasPrefix(m, "local-") && strings.HasSuffix(m, standaloneSuffix()) {
			return true
		}
	}
	return n.sameCluster(members)
}

// leaseMembers lists the addresses of the members this member sees (a
// member alone: its ID and host name).
func (n *Node) leaseMembers() []string {
	if n.tr == nil {
		return []string{memberAddr(n.view.Self()) + standaloneSuffix()}
	}
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
	n.leaseMu.Lock()
	leases := n.leases
	n.leases = nil
	n.leaseMu.Unlock()
	var errs []error
	for _, l := range leases {
		errs = append(errs, n.releaseLease(l, alone))
	}
	return errors.Join(errs...)
}

// releaseLease stops renewing l (releasing it when alone) and closes its
// FS and host lock.
func (n *Node) releaseLease(l nsLease, alone bool) error {
	var errs []error
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	if err := l.l.Close(ctx, alone); err != nil && !errors.Is(err, nslease.ErrHeld) {
		errs = append(errs, err)
	}
	cancel()
	errs = append(errs, l.fs.Close())
	if l.host != nil {
		errs = append(errs, l.host.Close())
	}
	return errors.Join(errs...)
}
