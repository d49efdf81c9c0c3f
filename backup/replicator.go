package backup

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/stowage/stowage/cluster"
	"github.com/stowage/stowage/partition"
)

// Replicator keeps this member's replicas of every partition: it moves
// them as tables change, sends an owner's writes to its backups, fills
// backups, takes partitions over (promotion, hand-over, or the map
// stores) and answers the other members' calls for all of that. It is
// safe for concurrent use.
type Replicator struct {
	none     *Sent // what Send returns for a write that has no backup
	p        *cluster.Protocol
	h        Holder
	log      *slog.Logger
	m        *metrics
	ctx      context.Context // done once the protocol stops
	self     string
	count    int
	timeout  time.Duration
	workers  int
	closed   error
	replicas []*partition.Replica

	mu sync.Mutex
	// slowAsync: members that, as an async backup, did not take a fill
	// in time, until when fills to them are not waited for (fill.go).
	slowAsync map[string]time.Time

	takeOvers takeOverRing // the last take-overs, for operators
}

// Config wires a Replicator.
type Config struct {
	// Protocol is this member's end of the member protocol; the
	// replicator registers its methods and table hooks on it.
	Protocol *cluster.Protocol
	Holder   Holder
	// Workers is how many partitions a take-over installs in parallel
	// (default: 2x CPUs).
	Workers int
	// Closed is the error waits return once the member closes.
	Closed     error
	Logger     *slog.Logger
	Registerer prometheus.Registerer
}

// New makes the replicator of cfg.Protocol's partitions and registers
// its methods and table hooks on the protocol (before it starts).
func New(cfg Config) *Replicator {
	p := cfg.Protocol
	if cfg.Workers <= 0 {
		cfg.Workers = 2 * runtime.GOMAXPROCS(0)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Registerer == nil {
		cfg.Registerer = prometheus.NewRegistry()
	}
	d := &Replicator{p: p, h: cfg.Holder, log: cfg.Logger, m: newMetrics(cfg.Registerer), ctx: p.Context(), self: p.Self(),
		count: p.Partitions(), timeout: p.Timeout(), workers: cfg.Workers, closed: cfg.Closed, slowAsync: map[string]time.Time{}}
	d.none = &Sent{d: d}
	d.replicas = make([]*partition.Replica, d.count)
	for i := range d.replicas {
		d.replicas[i] = partition.NewReplica(i, d.ctx.Done(), cfg.Closed)
		if d.log.Enabled(context.Background(), slog.LevelDebug) {
			d.replicas[i].SetTrace(func(p int, from, to partition.State) {
				d.log.Debug("stowage: partition state", "partition", p, "from", from.String(), "to", to.String())
			})
		}
	}
	d.register()
	p.SetTableHooks(d.onTable, d.repair)
	return d
}

// Replica is this member's replica of partition p.
func (r *Replicator) Replica(p int) *partition.Replica { return r.replicas[p] }

// onTable moves each replica towards what table t says of this member,
// and starts the take-overs and refills that asks for.
func (r *Replicator) onTable(t *partition.Table) {
	r.m.tableVersion.Set(float64(t.Version))
	var acquire, refill []int
	var gen []uint64
	for p, rep := range r.replicas {
		mv := rep.OnTable(t, r.self, r.dropper(p), r.releaser(p))
		if mv.Acquire {
			acquire = append(acquire, p)
			gen = append(gen, mv.Gen)
		}
		if mv.Refill {
			refill = append(refill, p)
		}
	}
	if len(acquire) > 0 {
		r.p.Go(func() { r.acquire(acquire, gen) })
	}
	if len(refill) > 0 {
		r.p.Go(func() { r.refill(refill) })
	}
}

// repair refills the active partitions whose backups are not all filled
// (a fill that failed, or a backup that asked for one).
func (r *Replicator) repair() {
	t, _ := r.p.Table()
	if t == nil {
		return
	}
	var ps []int
	for p, rep := range r.replicas {
		if rep.NeedsRefill(t.Owners[p]) {
			ps = append(ps, p)
		}
	}
	if len(ps) > 0 {
		r.p.Go(func() { r.refill(ps) })
	}
}

// LocalSafeWhy says why a partition this member owns does not have each
// backup the table names filled ("" when every one has).
func (r *Replicator) LocalSafeWhy() string {
	t, _ := r.p.Table()
	if t == nil {
		return "no table"
	}
	for p, rs := range t.Owners {
		if len(rs) == 0 || rs[0] != r.self {
			continue
		}
		if why := r.replicas[p].SafeWhy(rs); why != "" {
			return why
		}
		if away := t.AwayFrom(p); len(away) > 0 {
			return fmt.Sprintf("partition %d: backups %v, the slot of %v held for its return", p, rs[1:], away)
		}
	}
	return ""
}

// dropper forgets what this member holds of partition p.
func (r *Replicator) dropper(p int) func() { return func() { r.h.Drop(p) } }

// releaser tells the map stores this member does not serve p.
func (r *Replicator) releaser(p int) func() { return func() { r.h.ReleaseStores(p) } }

// inSet reports whether this member is a replica of p in the table.
func (r *Replicator) inSet(p int) func() bool {
	return func() bool { return r.p.InReplicaSet(p, r.self) }
}

// errMoved says partition p is served elsewhere (or nowhere yet).
func errMoved(p int) error { return partition.MovedError{Partition: p} }

// IsMoved reports whether err says a partition is served elsewhere: the
// operation is routed again.
func IsMoved(err error) bool {
	var m partition.MovedError
	return errors.As(err, &m)
}
