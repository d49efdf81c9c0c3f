package dmap

import (
	"context"
	"fmt"
	"github.com/stowage/stowage/internal/parallel"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/stowage/stowage/backup"
	"github.com/stowage/stowage/cluster"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/partition"
)

// MapSpec is what the engine needs to know of a map when it first holds
// it: its store and how it is replicated and protected.
type MapSpec struct {
	// Store is the map's store (nil: memory only). The engine owns it from
	// then on and closes it at Close.
	Store mapstore.MapStore
	// Lazy loads a partition from the store on its first use instead of
	// when the partition becomes this member's (EAGER).
	Lazy bool
	// SyncBackups and AsyncBackups: how many replicas after the owner
	// apply each write before it is acknowledged, and how many get it
	// after.
	SyncBackups, AsyncBackups int
	// WriteQuorum and ReadQuorum: split-brain protection, the members that
	// must be live for writes and for reads (0: none).
	WriteQuorum, ReadQuorum int
	// TTL is the time to live of an entry written without one of its
	// own (time-to-live-seconds; 0: none); MaxIdle removes an entry not
	// accessed for that long (max-idle-seconds; 0: none). See expiry.go.
	TTL, MaxIdle time.Duration
	// WriteBehind, with a Delay > 0 and a Store, queues the writes for
	// the store instead of writing through (writebehind.go).
	WriteBehind WriteBehind
}

// Config wires an Engine.
type Config struct {
	// View and Transport are the cluster this member is part of; a nil
	// Transport is a member alone (View is then a view of one).
	View      cluster.View
	Transport cluster.Transport
	// Replicas is the partition table's replica-set size (owner plus the
	// most backups any map keeps); StartMin the members needed before the
	// first table (hazelcast.initial.min.cluster.size).
	Replicas, StartMin int
	// PublishMin: a master that sees fewer members publishes no new
	// table (cluster.ProtocolConfig.PublishMin).
	PublishMin int
	// OpTimeout bounds an operation whose context has no deadline.
	OpTimeout time.Duration
	// Lease is the owner's lease (lease.go); 0 turns it off.
	Lease time.Duration
	// BackupGrace is cluster.ProtocolConfig.BackupGrace.
	BackupGrace time.Duration
	// LoadWorkers is how many partitions load in parallel (default: 2x
	// CPUs).
	LoadWorkers int
	// OpenMap describes a map the engine holds for the first time. It is
	// called with the engine's map registry locked: it must not call the
	// engine.
	OpenMap func(ctx context.Context, name string) (MapSpec, error)
	// Methods are further member-protocol methods this member serves
	// (the root package's storage probe), by name.
	Methods map[string]Handler
	Logger  *slog.Logger
	// Registerer receives the engine's metrics.
	Registerer prometheus.Registerer
	// ExpiryInterval is how often an owner removes its expired entries
	// (default 1 s); OnExpired, if set, is told of each removal.
	ExpiryInterval time.Duration
	OnExpired      ExpiredFunc
	// RemoveStore, if set, removes a destroyed map's stored data once no
	// member holds the map (destroy.go).
	RemoveStore func(ctx context.Context, name string) error
	// ListenerAnnounce is how often a member with cluster-wide entry
	// listeners announces them to the others (default 1 s; events_remote.go).
	ListenerAnnounce time.Duration
}

// Handler serves one member-protocol method: from is the caller's
// transport address.
type Handler func(ctx context.Context, from string, body []byte) ([]byte, error)

// Engine is this member's part of the cluster's maps: the maps it holds
// and their partitions' records, the routing of each operation to its
// owner, and the owner's write path. The member protocol (cluster) and
// the replication of partitions (backup) are its parts. It is safe for
// concurrent use.
type Engine struct {
	cfg   Config
	log   *slog.Logger
	m     *metrics
	proto *cluster.Protocol
	repl  *backup.Replicator
	parts int // partitions

	lis listeners // entry listeners (events.go)

	deadlines *opDeadlines // the operations bounded by OpTimeout (opctx.go)

	loaded loadWaiters // WaitLoaded's wake-up (health.go)

	mu     sync.Mutex
	maps   map[string]*heldMap
	closed bool
	ctx    context.Context
	cancel context.CancelFunc
}

// New makes an engine over cfg's cluster and starts serving the member
// protocol; Start begins the cluster work once the persisted maps are
// known.
func New(cfg Config) *Engine {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.LoadWorkers <= 0 {
		cfg.LoadWorkers = 2 * runtime.GOMAXPROCS(0)
	}
	if cfg.OpTimeout <= 0 {
		cfg.OpTimeout = 60 * time.Second
	}
	if cfg.Registerer == nil {
		cfg.Registerer = prometheus.NewRegistry()
	}
	n := &Engine{cfg: cfg, log: cfg.Logger, maps: map[string]*heldMap{}, parts: partition.DefaultCount, deadlines: newOpDeadlines(),
		loaded: loadWaiters{poll: loadedPoll, c: make(chan struct{})}}
	n.m = newMetrics(cfg.Registerer)
	n.ctx, n.cancel = context.WithCancel(context.Background())
	n.proto = cluster.NewProtocol(cluster.ProtocolConfig{
		View: cfg.View, Transport: cfg.Transport, Partitions: n.parts, Replicas: cfg.Replicas, StartMin: cfg.StartMin, PublishMin: cfg.PublishMin,
		Timeout: cfg.OpTimeout, Lease: cfg.Lease, BackupGrace: cfg.BackupGrace, Closed: ErrClosed, Logger: cfg.Logger,
	})
	n.repl = backup.New(backup.Config{Protocol: n.proto, Holder: holder{n}, Workers: cfg.LoadWorkers, Closed: ErrClosed,
		Logger: cfg.Logger, Registerer: cfg.Registerer})
	n.register()
	n.proto.Serve()
	return n
}

// Start begins the cluster work: the master's table, take-overs, the
// lease.
func (e *Engine) Start() {
	e.proto.Start()
	e.proto.Go(e.sweepLocks)
	e.proto.Go(e.runExpiry)
	e.proto.Go(e.runAnnounce)
	e.proto.Go(e.runWriteBehind)
}

// Self is this member's id.
func (e *Engine) Self() string { return e.proto.Self() }

// Members returns the live members, the master first (see
// cluster.Protocol.ViewRanked).
func (e *Engine) Members() []cluster.Member { return e.proto.ViewRanked() }

// Call makes one member-protocol call to the member at addr.
func (e *Engine) Call(ctx context.Context, addr, method string, body []byte) ([]byte, error) {
	return e.proto.Call(ctx, addr, method, body)
}

// ObserveBatch records one group-commit batch of a map store.
func (e *Engine) ObserveBatch(recs, bytes int, took time.Duration, err error) {
	if err == nil {
		e.m.batchRecords.Observe(float64(recs))
		e.m.batchBytes.Observe(float64(bytes))
		e.m.batchSeconds.Observe(took.Seconds())
	}
}

// MaxMapNameLen is the longest map name, in bytes. A map's name is the
// name of its directory in the map store's storage, which must fit one
// path element on every back end (255 bytes on local file systems and
// HDFS) with room to spare.
const MaxMapNameLen = 200

// ValidMapName reports whether name can name a map: 1 to MaxMapNameLen
// bytes of UTF-8 with no control character, no "/" or "\\", and no "."
// first (names starting with a dot are stowage's own files, and "." and
// ".." would escape the map's directory: invariant 7).
func ValidMapName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: the name is empty", ErrInvalidMapName)
	case len(name) > MaxMapNameLen:
		return fmt.Errorf("%w: %s is %d bytes; the limit is %d", ErrInvalidMapName, quoteStart(name), len(name), MaxMapNameLen)
	case !utf8.ValidString(name):
		return fmt.Errorf("%w: %s is not UTF-8", ErrInvalidMapName, quoteStart(name))
	case strings.HasPrefix(name, "."):
		return fmt.Errorf("%w: %s starts with a dot (reserved for stowage's own files)", ErrInvalidMapName, quoteStart(name))
	case strings.ContainsAny(name, "/\\"):
		return fmt.Errorf("%w: %s holds a slash or backslash", ErrInvalidMapName, quoteStart(name))
	case strings.ContainsFunc(name, unicode.IsControl):
		return fmt.Errorf("%w: %s holds a control character", ErrInvalidMapName, quoteStart(name))
	}
	return nil
}

// quoteStart quotes a name for an error, cut after 40 bytes.
func quoteStart(name string) string {
	if len(name) > 40 {
		return strconv.Quote(name[:40]) + "..."
	}
	return strconv.Quote(name)
}

// Map returns the named map, holding it (and opening its store) on first
// use.
func (e *Engine) Map(ctx context.Context, name string) (*Map, error) {
	c, err := e.hold(ctx, name)
	if err != nil {
		return nil, err
	}
	return &Map{n: e, name: name, c: c}, nil
}

// Lookup returns a handle of the named map without holding it: reads of a
// map no member holds find nothing and create nothing, here or on the
// owners; the first write through the handle holds it as Map does.
func (e *Engine) Lookup(name string) (*Map, error) {
	if err := ValidMapName(name); err != nil {
		return nil, err
	}
	return &Map{n: e, name: name}, nil
}

// Held reports whether this member holds the named map.
func (e *Engine) Held(name string) bool { return e.held(name) != nil }

// held returns the named map if this member holds it.
func (e *Engine) held(name string) *heldMap {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.maps[name]
}

// Map is a handle of one of the cluster's maps on this engine.
type Map struct {
	n    *Engine
	name string

	mu sync.Mutex
	c  *heldMap // nil until the map is held here
	lk *heldMap // the map's locks (locks.go), nil until used here
}

// Name is the map's name.
func (m *Map) Name() string { return m.name }

// reader is the map to read through: the one held here, else a ghost.
func (m *Map) reader() *heldMap {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.forgetDestroyed()
	if m.c == nil {
		m.c = m.n.held(m.name)
	}
	if m.c == nil {
		return newGhost(m.n, m.name)
	}
	return m.c
}

// forgetDestroyed lets go of the held maps Destroy dropped. m.mu held.
func (m *Map) forgetDestroyed() {
	if m.c != nil && m.c.destroyed.Load() {
		m.c = nil
	}
	if m.lk != nil && m.lk.destroyed.Load() {
		m.lk = nil
	}
}

// writer is the map to write through, held here from now on.
func (m *Map) writer(ctx context.Context) (*heldMap, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.forgetDestroyed()
	if m.c == nil {
		c, err := m.n.hold(ctx, m.name)
		if err != nil {
			return nil, err
		}
		m.c = c
	}
	return m.c, nil
}

// hold returns the named map, creating it (and its store) on first use.
func (e *Engine) hold(ctx context.Context, name string) (*heldMap, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	c, made, err := e.makeHeldMap(ctx, name)
	if err != nil || !made {
		return c, err
	}
	// Not only once the engine started: a member serves the protocol from
	// New on, so a table pushed to it before Start has it take partitions
	// over before the node held the maps it found persisted; those maps
	// must load the partitions already taken over (readyMap passes over
	// the others).
	// Lock order: a replica's lock is never taken under n.mu.
	if o, ok := c.store.(mapstore.PartitionOwner); ok {
		// What the new store scanned of partitions served elsewhere is
		// not this member's to trust.
		for p := range e.parts {
			if e.repl.Replica(p).Released() {
				o.Release(p)
			}
		}
	}
	if c.eager != nil {
		// An EAGER map made while the node runs loads its owned
		// partitions now, not on first use.
		if !e.proto.Go(func() { e.readyMap(c); close(c.eager) }) {
			close(c.eager)
		}
	}
	return c, nil
}

// makeHeldMap returns the named map, creating it (and opening its store)
// when it is new here.
func (e *Engine) makeHeldMap(ctx context.Context, name string) (*heldMap, bool, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, false, ErrClosed
	}
	if c := e.maps[name]; c != nil {
		return c, false, nil
	}
	var spec MapSpec
	if _, ok := lockBase(name); ok {
		spec = e.lockSpec()
	} else if e.cfg.OpenMap != nil {
		var err error
		if spec, err = e.cfg.OpenMap(ctx, name); err != nil {
			return nil, false, err
		}
	}
	c := newHeldMap(e, name, e.parts, spec.Store, spec.Lazy, spec.SyncBackups, spec.AsyncBackups)
	c.wq, c.rq = spec.WriteQuorum, spec.ReadQuorum
	c.exp.ttl, c.exp.maxIdle = spec.TTL, spec.MaxIdle
	if spec.Store != nil && spec.WriteBehind.Delay > 0 {
		c.wb = newWBQueue(c, spec.WriteBehind)
	}
	if spec.Store != nil && !spec.Lazy {
		c.eager = make(chan struct{}) // closed by hold once readyMap ran
	}
	if base, ok := lockBase(name); ok {
		if b := e.maps[base]; b != nil {
			b.locks.Store(c)
		}
	} else if lk := e.maps[lockMapName(name)]; lk != nil {
		c.locks.Store(lk)
	}
	e.maps[name] = c
	return c, true, nil
}

// readyMap readies every partition of a map made while the node runs
// that this member owns, waiting for those still being taken over.
func (e *Engine) readyMap(c *heldMap) {
	var ps []int
	for p := range e.parts {
		if st := e.repl.Replica(p).State(); st == partition.Active || st == partition.Acquiring {
			ps = append(ps, p)
		}
	}
	ctx := e.proto.Context()
	parallel.Do(e.cfg.LoadWorkers, len(ps), func(i int) {
		pt := c.parts[ps[i]]
		err := e.repl.Replica(pt.id).EnterRead(ctx)
		if err == nil {
			err = c.readyPart(ctx, pt)
		}
		if err != nil && !isMoved(err) && ctx.Err() == nil {
			e.log.Warn("stowage: loading a partition of a new map failed; it loads on first use", "map", c.name, "partition", pt.id, "err", err)
		}
	})
}

// quorumOK reports whether at least min members are live (split-brain
// protection; min 0 or 1 means none).
func (e *Engine) quorumOK(min int) error {
	if min <= 1 {
		return nil
	}
	if live := len(e.proto.View().Members()); live < min {
		return fmt.Errorf("%w: %d members live, the map's split-brain protection needs %d", ErrNoQuorum, live, min)
	}
	return nil
}
