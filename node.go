package stowage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/stowage/stowage/cluster"
	"github.com/stowage/stowage/config"
	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/internal/dmap"
	"github.com/stowage/stowage/internal/logscrub"
	"github.com/stowage/stowage/internal/testhook"
	// The local disk is the default storage (fs.defaultFS: file:///), so
	// it is always built in; other back ends are imported by the program
	// (fsbackend/all, or one of fsbackend/hdfs, s3, oss, cos, gcs).
	_ "github.com/stowage/stowage/fsbackend/local"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/mapstore/boltstore"
	"github.com/stowage/stowage/mapstore/filestore"
	"github.com/stowage/stowage/partition"
)

// Options configure a Node. Only Config is usually set.
type Options struct {
	// Config is the parsed SeaTunnel configuration (nil: config.Default()).
	// It must not be modified once Open returned. When hazelcast.yaml
	// enables network.join.tcp-ip, the node joins the cluster of its
	// member-list; otherwise it is a member alone.
	Config *config.Config
	// Logger receives the node's structured logs (default slog.Default()).
	// Lines at Info and above name files by their last two elements
	// ("…/log/0003.log"), never by the absolute path where the data is
	// kept; Debug lines keep the whole path.
	Logger *slog.Logger
	// Registerer receives the node's metrics (default: a new registry,
	// available from Node.Gatherer).
	Registerer prometheus.Registerer
	// OnDamage, if set, receives every piece of damage a map store finds.
	OnDamage func(mapName string, d filestore.Damage)
	// LoadWorkers is how many partitions load in parallel (default: 2x CPUs).
	LoadWorkers int

	// OpTimeout bounds a map operation whose context has no deadline,
	// including the time to find a partition's new owner (default 60 s).
	OpTimeout time.Duration
	// Lease is how long an owner serves after the other members last
	// confirmed that its partition table is current (see lease.go). It
	// must stay below the least time failure detection takes to declare
	// a hung member dead: zero derives it from Timing (half of it, at most
	// 2 s; 2 s with a View given here); negative turns the lease off.
	Lease time.Duration
	// BackupGrace is how long the master holds the backup slots of a
	// member that left without a graceful leave (it failed, or was cut
	// off), as Elasticsearch's index.unassigned.node_left.delayed_timeout:
	// the partitions it owned get a new owner at once, the others run
	// with a backup fewer (the cluster is not safe meanwhile), and if the
	// member comes back in time it takes those slots again and is filled
	// by a delta against the copies it still holds instead of whole ones.
	// Zero (the default) gives the slots to the others at once, as
	// Hazelcast does: with one backup a grace leaves the partitions
	// without any for its length, and a restarted member comes back under
	// a new id (its id carries its start time) with nothing to keep. A
	// member that rejoins after its slots were given away is still
	// filled by a delta wherever it is given a partition it holds a copy
	// of.
	BackupGrace time.Duration

	// ExpiryInterval is how often a partition's owner removes the entries
	// whose time to live or max idle time ran out (default 1 s); reads
	// never see an expired entry in between. OnExpired, if set, is told
	// of each removal on the owner (the hook for expiry events).
	ExpiryInterval time.Duration
	OnExpired      func(mapName string, key, val []byte)

	// TestHooks are for the project's own tests (an in-memory cluster,
	// fault-injecting storage); programs leave them nil.
	TestHooks *testhook.Hooks
}

// hooks returns the test hooks, never nil.
func (o *Options) hooks() *testhook.Hooks {
	if o.TestHooks == nil {
		return &testhook.Hooks{}
	}
	return o.TestHooks
}

// leaseTime is the owner's lease: Options.Lease, or half the least time
// memberlist takes to declare a member that stopped answering dead, at
// most 2 s.
func (n *Node) leaseTime() time.Duration {
	switch {
	case n.opts.Lease < 0:
		return 0
	case n.opts.Lease > 0:
		return n.opts.Lease
	case n.opts.hooks().View != nil:
		return maxLease
	}
	return min(maxLease, n.opts.hooks().Timing.DetectionFloor()/2)
}

// maxLease bounds the derived lease.
const maxLease = 2 * time.Second

// Node is one member: it holds the maps, their map stores, its part of
// the partitions, and loads persisted maps EAGERly. It is safe for
// concurrent use.
type Node struct {
	opts Options
	cfg  *config.Config
	log  *slog.Logger
	reg  *prometheus.Registry
	e    *dmap.Engine
	view cluster.View
	// liveRuns caches the runs of view's members (runIsLive).
	liveRuns liveRuns
	clu      *cluster.Cluster  // nil unless Open joined a cluster itself
	tr       cluster.Transport // nil for a member alone; closed by Close when Open made it
	ownT     bool

	// bolts holds the file of every configured bbolt map store, by
	// absolute path, from Open to Close: a second process on one of them
	// fails at Open instead of at its first write.
	bolts map[string]*boltstore.File
	// leases are the namespace leases of the file map stores and of the
	// checkpoint storage (namespace.go, checkpoints.go).
	leaseMu sync.Mutex
	leases  []nsLease
	ckMu    sync.Mutex // one acquisition of the checkpoint lease at a time

	live liveCache // MapLiveBytes' counts

	mu     sync.Mutex
	closed bool
}

// Open starts a node: it validates the configuration, joins the cluster
// (when the configuration or Options name one), takes the file of every
// bbolt map store (held until Close; another process holding one fails
// Open with an error matching mapstore.ErrLocked that names the file),
// opens the map store of every map already persisted under a configured
// map-store (found by listing namespace/clusterName/, or the maps in the
// bbolt file) and starts
// loading the partitions it owns once hazelcast.initial.min.cluster.size
// members are up. Map operations wait until their partition is loaded.
func Open(ctx context.Context, opts Options) (*Node, error) {
	if opts.Config == nil {
		opts.Config = config.Default()
	}
	if err := opts.Config.Validate(); err != nil {
		return nil, err
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	n := &Node{opts: opts, cfg: opts.Config, log: logscrub.Logger(opts.Logger)}
	if opts.Registerer == nil {
		n.reg = prometheus.NewRegistry()
		opts.Registerer = n.reg
	}
	view, tr, err := n.joinCluster(ctx)
	if err != nil {
		return nil, err
	}
	n.view = view
	cc := n.clusterConfig()
	n.e = dmap.New(dmap.Config{
		View: view, Transport: tr, Replicas: cc.replicas, StartMin: cc.startMin, PublishMin: cc.publishMin,
		OpTimeout: opts.OpTimeout, Lease: n.leaseTime(), BackupGrace: max(opts.BackupGrace, 0), LoadWorkers: opts.LoadWorkers,
		OpenMap: n.openMap, Methods: map[string]dmap.Handler{mProbe: n.onProbe},
		Logger: n.log, Registerer: opts.Registerer,
		ExpiryInterval: opts.ExpiryInterval, OnExpired: opts.OnExpired, RemoveStore: n.removeStore,
	})
	if err := n.takeNamespaces(ctx); err != nil {
		n.Close()
		return nil, err
	}
	if err := n.holdBoltFiles(); err != nil {
		n.Close()
		return nil, err
	}
	names, err := n.persistedMaps(ctx)
	if err != nil {
		n.Close()
		return nil, err
	}
	for _, name := range names {
		if _, err := n.e.Map(ctx, name); err != nil {
			n.Close()
			return nil, err
		}
	}
	if err := n.checkShared(ctx); err != nil {
		n.Close()
		return nil, err
	}
	n.e.Start()
	return n, nil
}

// Gatherer returns the node's own metrics registry, or nil when
// Options.Registerer was given.
func (n *Node) Gatherer() prometheus.Gatherer {
	if n.reg == nil {
		return nil
	}
	return n.reg
}

// Config returns the node's configuration; it must not be modified.
func (n *Node) Config() *config.Config { return n.cfg }

// MaxMapNameLen is the longest map name, in bytes: a map's name is the
// name of its directory in the map store's storage, which must fit one
// path element on every back end with room to spare.
const MaxMapNameLen = dmap.MaxMapNameLen

// ValidMapName reports whether name can name a map: 1 to MaxMapNameLen
// bytes of UTF-8 with no control character, no "/" or "\\", and no "."
// first (names starting with a dot are stowage's own files; "." and ".."
// would escape the map's directory). The error wraps ErrInvalidMapName and
// says which rule the name breaks.
func ValidMapName(name string) error { return dmap.ValidMapName(name) }

func (n *Node) openFS(ctx context.Context, p fsbackend.Properties) (fsbackend.FS, error) {
	if open := n.opts.hooks().OpenFS; open != nil {
		return open(ctx, p)
	}
	return fsbackend.Open(ctx, p)
}

// mapDir returns the FS directory of a map: namespace/clusterName/<map>.
func mapDir(ms *config.MapStoreConfig, name string) string {
	return fsbackend.Join(strings.TrimPrefix(ms.Properties.Get("namespace", ""), "/"), ms.Properties.Get("clusterName", ""), name)
}

// holdBoltFiles takes the file of every enabled bbolt map store.
func (n *Node) holdBoltFiles() error {
	for _, mc := range n.cfg.Hazelcast.Maps {
		ms := mc.MapStore
		if ms == nil || !ms.Enabled || ms.StoreType() != config.StoreBBolt {
			continue
		}
		path, err := boltPath(ms)
		if err != nil {
			return fmt.Errorf("stowage: map-store of %q: path: %w", mc.Pattern, err)
		}
		if n.bolts[path] != nil {
			continue
		}
		f, err := boltstore.OpenFile(path, 0)
		if err != nil {
			return fmt.Errorf("stowage: map-store of %q: %w", mc.Pattern, err)
		}
		if n.bolts == nil {
			n.bolts = map[string]*boltstore.File{}
		}
		n.bolts[path] = f
	}
	return nil
}

// boltPath is the absolute path of a bbolt map store's file, the key of
// n.bolts.
func boltPath(ms *config.MapStoreConfig) (string, error) {
	return filepath.Abs(ms.Properties.Get("path", ""))
}

// persistedMaps lists the maps stored under every configured map store
// (map directories, or the maps of a bbolt file) whose names match the map
// pattern they were found under.
func (n *Node) persistedMaps(ctx context.Context) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	add := func(pattern, name string) {
		if seen[name] || ValidMapName(name) != nil {
			return
		}
		if got, ok := n.cfg.Hazelcast.MapFor(name); ok && got.Pattern == pattern {
			seen[name] = true
			out = append(out, name)
		}
	}
	for _, mc := range n.cfg.Hazelcast.Maps {
		ms := mc.MapStore
		if ms == nil || !ms.Enabled {
			continue
		}
		if ms.StoreType() == config.StoreBBolt {
			path, _ := boltPath(ms) // held by holdBoltFiles
			names, err := n.bolts[path].Maps()
			if err != nil {
				return nil, fmt.Errorf("stowage: map-store of %q: %w", mc.Pattern, err)
			}
			for _, name := range names {
				add(mc.Pattern, name)
			}
			continue
		}
		f, err := n.openFS(ctx, ms.Properties)
		if err != nil {
			return nil, fmt.Errorf("stowage: map-store of %q: %w", mc.Pattern, err)
		}
		base := mapDir(ms, "")
		list, err := f.List(ctx, base)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("stowage: list persisted maps under %q: %w", base, err)
		}
		for _, fi := range list {
			rest := strings.TrimPrefix(fi.Name, base+"/")
			if name, file, ok := strings.Cut(rest, "/"); ok && file == "META" {
				add(mc.Pattern, name)
			}
		}
	}
	return out, nil
}

// openMap describes a map the node holds for the first time: its store
// (opened here) and replication, from the map's hazelcast.yaml entry.
func (n *Node) openMap(ctx context.Context, name string) (dmap.MapSpec, error) {
	mc, _ := n.cfg.Hazelcast.MapFor(name)
	spec := dmap.MapSpec{SyncBackups: mc.SyncBackups(n.cfg.Engine.BackupCount), AsyncBackups: mc.AsyncBackupCount}
	spec.WriteQuorum, spec.ReadQuorum = n.quorumOf(name)
	spec.TTL = time.Duration(mc.TimeToLiveSeconds) * time.Second
	spec.MaxIdle = time.Duration(mc.MaxIdleSeconds) * time.Second
	if ms := mc.MapStore; ms != nil && ms.Enabled {
		store, err := n.openStore(ctx, name, ms)
		if err != nil {
			return spec, err
		}
		spec.Store, spec.Lazy = store, strings.EqualFold(ms.InitialMode, "LAZY")
		spec.WriteBehind = dmap.WriteBehind{Delay: time.Duration(ms.WriteDelaySeconds) * time.Second,
			BatchSize: ms.WriteBatchSize, Coalescing: ms.WriteCoalescing}
		if spec.WriteBehind.Capacity, err = n.behindCapacity(); err != nil {
			store.Close()
			return spec, err
		}
	}
	return spec, nil
}

func (n *Node) openStore(ctx context.Context, name string, ms *config.MapStoreConfig) (mapstore.MapStore, error) {
	switch ms.StoreType() {
	case "bbolt":
		return boltstore.Open(ms.Properties.Get("path", ""), boltstore.Options{MapName: name, Partitions: partition.DefaultCount, Logger: n.log})
	default:
		f, err := n.openFS(ctx, ms.Properties)
		if err != nil {
			return nil, fmt.Errorf("stowage: map %q: %w", name, err)
		}
		sub, err := fsbackend.Sub(f, mapDir(ms, name))
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("stowage: map %q: %w", name, err)
		}
		seg := int64(0)
		if v := ms.Properties.Get("block.size", ""); v != "" {
			seg, _ = strconv.ParseInt(v, 10, 64) // validated by config
		}
		retain, _ := strconv.Atoi(ms.Properties.Get("snapshot.retain", "1"))
		delay, _ := ms.CommitDelay() // validated by config
		open, _ := ms.OpenFiles()    // validated by config
		st, err := filestore.Open(ctx, filestore.Options{
			FS: sub, Backend: f, Partitions: partition.DefaultCount, SegmentSize: seg, SnapshotRetain: retain, Logger: n.log,
			CommitDelay: delay, OpenFiles: open,
			RunID: n.runID(), IsLive: n.storeLiveness(), Fence: n.compactionFence(ms),
			OnDamage: func(d filestore.Damage) {
				if n.opts.OnDamage != nil {
					n.opts.OnDamage(name, d)
				}
			},
			OnBatch: n.e.ObserveBatch,
		})
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("stowage: map %q: %w", name, err)
		}
		return n.fenced(ms, st), nil
	}
}

// Leave hands this member's partitions over to the others, then stops
// it like Close. Without other members it is Close.
func (n *Node) Leave(ctx context.Context) error {
	// Write-behind: what this member queued is stored before its
	// partitions go (Close stores what was queued since).
	if err := n.e.FlushLocal(ctx); err != nil {
		n.log.Warn("stowage: leaving with write-behind records not stored; the partitions' new owners store them", "err", err)
	}
	if n.clu != nil && len(n.view.Members()) > 1 {
		n.clu.SetDraining()
		if err := n.e.Drain(ctx); err != nil {
			n.log.Warn("stowage: leaving before every partition was handed over", "err", err)
		}
		if err := n.clu.Leave(ctx); err != nil && !errors.Is(err, cluster.ErrClosed) {
			n.log.Warn("stowage: leave", "err", err)
		}
	}
	return n.Close()
}

// Close stops the node without handing partitions over (the others take
// them as from a failed member): it stops loading and the cluster work,
// flushes and closes every map store, leaves membership, and returns once
// every goroutine the node started has stopped.
func (n *Node) Close() error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil
	}
	n.closed = true
	n.mu.Unlock()
	alone := n.view == nil || len(n.view.Members()) <= 1
	var errs []error
	if n.clu != nil {
		errs = append(errs, n.clu.Close())
	}
	if n.e != nil {
		n.e.Stop()
	}
	if n.ownT && n.tr != nil {
		errs = append(errs, n.tr.Close())
	}
	if n.e != nil {
		errs = append(errs, n.e.Close())
	}
	for _, f := range n.bolts {
		errs = append(errs, f.Close())
	}
	errs = append(errs, n.releaseNamespaces(alone))
	return errors.Join(errs...)
}
