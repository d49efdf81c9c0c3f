package dmap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/stowage/stowage/cluster"
	"github.com/stowage/stowage/partition"
)

// dist is the member's part in the cluster: the partition table, what
// this member holds of each partition, and the loops that keep both
// current. A member alone (no transport) runs the same code with a view
// of one.
type dist struct {
	n        *Engine
	log      *slog.Logger
	view     cluster.View
	tr       cluster.Transport // nil: a member alone
	self     string            // member id
	count    int               // partitions
	replicas int               // replica-set size in the table: owner + backups
	startMin int               // members needed before the first table
	timeout  time.Duration     // bound on one operation without a deadline

	instMu sync.Mutex // serialises install and reconcile
	mu     sync.Mutex
	table  *partition.Table // nil until the first table
	tabCh  chan struct{}    // closed and replaced when the table changes
	addrs  map[string]string
	live   map[string]bool
	// down: members whose transport refused a connection (nothing listens:
	// the process is gone), kept out of tables and take-overs until they
	// answer again, ahead of failure detection.
	down map[string]time.Time
	seen map[string]bool // the live members at the last refresh
	// slowAsync: members that, as an async backup, did not take a fill
	// in time, until when fills to them are not waited for (fill.go).
	slowAsync map[string]time.Time

	bmu      sync.Mutex
	batchers map[batchKey]*batcher
	strag    stragglers // calls that outlasted their batch, for polls

	// The owner's lease (lease.go).
	clock0   time.Time
	leaseFor time.Duration
	lease    leaseState
	wasMstr  bool
	// lastMembers is the member set the master last computed a table for.
	lastMembers string

	slots   []*partition.Replica
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	kick    chan struct{}
	fetch   chan string // members to fetch a newer table from
	running atomic.Bool
}

func newDist(n *Engine, view cluster.View, tr cluster.Transport, count, replicas, startMin int, timeout time.Duration) *dist {
	d := &dist{n: n, log: n.log, view: view, tr: tr, self: view.Self().ID, count: count, replicas: replicas,
		startMin: max(1, startMin), timeout: timeout, tabCh: make(chan struct{}),
		addrs: map[string]string{}, live: map[string]bool{}, down: map[string]time.Time{}, seen: map[string]bool{}, slowAsync: map[string]time.Time{}, batchers: map[batchKey]*batcher{}, kick: make(chan struct{}, 1), fetch: make(chan string, 16)}
	d.ctx, d.cancel = context.WithCancel(context.Background())
	d.clock0 = time.Now()
	d.slots = make([]*partition.Replica, count)
	for i := range d.slots {
		d.slots[i] = partition.NewReplica(i, d.ctx.Done(), ErrClosed)
		if n.log.Enabled(context.Background(), slog.LevelDebug) {
			d.slots[i].SetTrace(func(p int, from, to partition.State) {
				d.log.Debug("stowage: partition state", "partition", p, "from", from.String(), "to", to.String())
			})
		}
	}
	return d
}

func (d *dist) start() {
	d.running.Store(true)
	d.refreshMembers()
	d.wg.Add(2)
	go d.masterLoop()
	go d.fetchLoop()
	if d.leaseFor > 0 {
		d.wg.Add(1)
		go d.leaseLoop()
	}
}

func (d *dist) started() bool { return d.running.Load() }

// readyMap readies every partition of a map made while the node runs
// that this member owns, waiting for those still being taken over.
func (d *dist) readyMap(c *core) {
	var ps []int
	for p, s := range d.slots {
		if st := s.State(); st == partition.Active || st == partition.Acquiring {
			ps = append(ps, p)
		}
	}
	d.n.parallel(len(ps), func(i int) {
		pt := c.parts[ps[i]]
		err := d.slots[pt.id].EnterRead(d.ctx)
		if err == nil {
			err = c.readyPart(d.ctx, pt, partition.WriteTicket{})
		}
		if err != nil && !isMoved(err) && d.ctx.Err() == nil {
			d.log.Warn("stowage: loading a partition of a new map failed; it loads on first use", "map", c.name, "partition", pt.id, "err", err)
		}
	})
}

// stop ends the loops and waits for every goroutine dist started.
func (d *dist) stop() {
	d.cancel()
	d.wg.Wait()
}

func (d *dist) goBackground(fn func()) bool {
	select {
	case <-d.ctx.Done():
		return false
	default:
	}
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		fn()
	}()
	return true
}

// refreshMembers reads the view: live members and their addresses. A
// member whose transport refuses connections is left out.
func (d *dist) refreshMembers() []cluster.Member {
	ms := d.view.Members()
	d.mu.Lock()
	clear(d.live)
	out := ms[:0:0]
	for _, m := range ms {
		if m.RPC != "" {
			d.addrs[m.ID] = m.RPC
		}
		if _, down := d.down[m.ID]; down {
			continue
		}
		d.live[m.ID] = true
		out = append(out, m)
	}
	for id := range d.down {
		if !slices.ContainsFunc(ms, func(m cluster.Member) bool { return m.ID == id }) {
			delete(d.down, id) // failure detection caught up
		}
	}
	// Connections to members that left the view are closed, so that calls
	// waiting on a hung member fail now and are routed again.
	var gone []string
	for id := range d.seen {
		if !d.live[id] {
			if _, down := d.down[id]; !down {
				gone = append(gone, d.addrs[id])
			}
			delete(d.seen, id)
		}
	}
	for id := range d.live {
		d.seen[id] = true
	}
	d.mu.Unlock()
	if dr, ok := d.tr.(cluster.Dropper); ok {
		for _, a := range gone {
			if a != "" {
				dr.Drop(a)
			}
		}
	}
	return out
}

// noteRefused takes a member whose transport refused a connection as
// gone: it is left out from now on, the master is told (it checks for
// itself), and this member's own loop recomputes if it is the master now.
func (d *dist) noteRefused(addr string) {
	id := d.idOf(addr)
	if id == "" || id == d.self {
		return
	}
	d.mu.Lock()
	_, known := d.down[id]
	if !known {
		d.down[id] = time.Now()
	}
	d.mu.Unlock()
	if known {
		return
	}
	d.log.Info("stowage: member's transport refuses connections: taken as gone", "member", id)
	d.kickLoop()
	d.goBackground(func() {
		ms := d.refreshMembers()
		if len(ms) == 0 || ms[0].ID == d.self || ms[0].RPC == "" {
			return
		}
		ctx, cancel := context.WithTimeout(d.ctx, 2*time.Second)
		defer cancel()
		_, _ = d.rpc(ctx, ms[0].RPC, mSuspect, []byte(id))
	})
}

// recheckDown asks members taken as gone whether they answer again.
func (d *dist) recheckDown() {
	d.mu.Lock()
	var ids []string
	for id, since := range d.down {
		if time.Since(since) > 200*time.Millisecond {
			ids = append(ids, id)
		}
	}
	d.mu.Unlock()
	for _, id := range ids {
		a := d.addr(id)
		if a == "" {
			continue
		}
		ctx, cancel := context.WithTimeout(d.ctx, 500*time.Millisecond)
		_, err := d.tr.Call(ctx, a, mGetTab, nil)
		cancel()
		d.mu.Lock()
		if err == nil {
			delete(d.down, id)
		} else if errors.Is(err, syscall.ECONNREFUSED) {
			d.down[id] = time.Now()
		}
		d.mu.Unlock()
		if err == nil {
			d.log.Info("stowage: member answers again", "member", id)
			d.kickLoop()
		}
	}
}

// kickLoop wakes the master loop.
func (d *dist) kickLoop() {
	select {
	case d.kick <- struct{}{}:
	default:
	}
}

func (d *dist) isLive(id string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.live[id]
}

func (d *dist) addr(id string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.addrs[id]
}

// idOf returns the member id whose transport address is addr.
func (d *dist) idOf(addr string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	for id, a := range d.addrs {
		if a == addr {
			return id
		}
	}
	return ""
}

// currentTable returns the installed table (nil before the first) and the
// channel closed when it changes.
func (d *dist) currentTable() (*partition.Table, <-chan struct{}) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.table, d.tabCh
}

func (d *dist) tableVersion() int64 {
	t, _ := d.currentTable()
	if t == nil {
		return 0
	}
	return t.Version
}

// ownerOf returns the owner of partition p per the current table, waiting
// (within ctx) for a first table.
func (d *dist) ownerOf(ctx context.Context, p int) (string, error) {
	for {
		t, ch := d.currentTable()
		if t != nil {
			if o := t.Owner(p); o != "" {
				return o, nil
			}
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return "", fmt.Errorf("stowage: no partition table yet (waiting for %d members): %w", d.startMin, ctx.Err())
		case <-d.ctx.Done():
			return "", ErrClosed
		}
	}
}

// install makes t the current table if it is newer, and moves every slot
// to what t makes of this member.
func (d *dist) install(t *partition.Table) bool {
	if t == nil || len(t.Owners) != d.count {
		return false
	}
	// Tables are installed one at a time, so that the slots never move
	// back to an older table's view.
	d.instMu.Lock()
	defer d.instMu.Unlock()
	d.mu.Lock()
	if d.table != nil && t.Version <= d.table.Version {
		d.mu.Unlock()
		return false
	}
	d.table = t
	close(d.tabCh)
	d.tabCh = make(chan struct{})
	d.mu.Unlock()
	d.log.Debug("stowage: partition table installed", "version", t.Version)
	d.n.m.tableVersion.Set(float64(t.Version))
	d.reconcile(t)
	return true
}

// reconcile moves each slot towards what table t says of this member.
func (d *dist) reconcile(t *partition.Table) {
	var acquire []int
	var refill []int
	var gen []uint64
	for p, s := range d.slots {
		mv := s.OnTable(t, d.self, d.dropper(p), d.releaser(p))
		if mv.Acquire {
			acquire = append(acquire, p)
			gen = append(gen, mv.Gen)
		}
		if mv.Refill {
			refill = append(refill, p)
		}
	}
	if len(acquire) > 0 {
		d.goBackground(func() { d.acquire(acquire, gen) })
	}
	if len(refill) > 0 {
		d.goBackground(func() { d.refill(refill) })
	}
}

// masterLoop recomputes and publishes the table whenever membership
// changes, while this member is the master, and republishes it now and
// then for members that missed it.
func (d *dist) masterLoop() {
	defer d.wg.Done()
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		ch := d.view.Changed()
		d.recheckDown()
		ms := d.refreshMembers()
		d.rebalance(ms)
		d.repair()
		select {
		case <-d.ctx.Done():
			return
		case <-ch:
		case <-d.kick:
		case <-tick.C:
		}
	}
}

// rebalance is the master's work: a table for the live members, published
// to every one of them.
func (d *dist) rebalance(ms []cluster.Member) {
	if len(ms) == 0 || ms[0].ID != d.self {
		d.mu.Lock()
		d.wasMstr = false
		d.mu.Unlock()
		return
	}
	cur, _ := d.currentTable()
	if cur == nil && len(ms) < d.startMin {
		return // hazelcast.initial.min.cluster.size
	}
	key := memberKey(ms)
	d.mu.Lock()
	changed := !d.wasMstr || key != d.lastMembers
	d.wasMstr, d.lastMembers = true, key
	d.mu.Unlock()
	if changed && d.tr != nil {
		// A new master, or members that were apart (a healed split):
		// continue from the newest table any member has, so that the next
		// version is above every table in use.
		for _, t := range d.collectTables(ms) {
			d.install(t)
		}
		cur, _ = d.currentTable()
	}
	ids := make([]string, 0, len(ms))
	for _, m := range ms {
		if !m.Draining {
			ids = append(ids, m.ID)
		}
	}
	if len(ids) == 0 {
		return // every member is leaving: keep the table
	}
	next := partition.Assign(ids, d.count, d.replicas-1, cur)
	if cur != nil && slices.EqualFunc(next.Owners, cur.Owners, slices.Equal) {
		d.publish(ms, cur)
		return
	}
	d.install(next)
	level := slog.LevelInfo
	if d.tr == nil {
		level = slog.LevelDebug
	}
	d.log.Log(d.ctx, level, "stowage: partition table published", "version", next.Version, "members", len(ms))
	d.publish(ms, next)
}

func memberKey(ms []cluster.Member) string {
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.ID
	}
	return strings.Join(ids, ",")
}

func (d *dist) collectTables(ms []cluster.Member) []*partition.Table {
	var out []*partition.Table
	for _, m := range ms {
		if m.ID == d.self || m.RPC == "" {
			continue
		}
		ctx, cancel := context.WithTimeout(d.ctx, 2*time.Second)
		b, err := d.rpc(ctx, m.RPC, mGetTab, nil)
		cancel()
		if err != nil {
			continue
		}
		var tm tableMsg
		if dec(b, &tm) == nil && tm.Version > 0 {
			out = append(out, tm.table())
		}
	}
	return out
}

func (d *dist) publish(ms []cluster.Member, t *partition.Table) {
	if d.tr == nil {
		return
	}
	body := enc(tableOf(t))
	var wg sync.WaitGroup
	for _, m := range ms {
		if m.ID == d.self || m.RPC == "" {
			continue
		}
		wg.Add(1)
		go func(addr string) {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(d.ctx, 2*time.Second)
			defer cancel()
			b, err := d.rpc(ctx, addr, mTable, body)
			var tm tableMsg
			if err == nil && dec(b, &tm) == nil && tm.Version > t.Version {
				// The member has a newer table (from a master this one did
				// not know of): continue from it.
				d.askFetch(addr)
				d.kickLoop()
			}
		}(m.RPC)
	}
	wg.Wait()
}

// repair refills the active partitions whose backups are not all filled
// (a fill that failed, or a backup that asked for one).
func (d *dist) repair() {
	t, _ := d.currentTable()
	if t == nil {
		return
	}
	var ps []int
	for p, s := range d.slots {
		if s.NeedsRefill(t.Owners[p]) {
			ps = append(ps, p)
		}
	}
	if len(ps) > 0 {
		d.goBackground(func() { d.refill(ps) })
	}
}

// noteTable is called with the table version a caller sent: a newer one
// is fetched from it before the call is served.
func (d *dist) noteTable(ctx context.Context, from string, tv int64) {
	if tv <= d.tableVersion() || d.tr == nil {
		return
	}
	b, err := d.rpc(ctx, from, mGetTab, nil)
	if err != nil {
		return
	}
	var tm tableMsg
	if dec(b, &tm) == nil {
		d.install(tm.table())
	}
}

// fetchLoop fetches tables that answers showed to be newer.
func (d *dist) fetchLoop() {
	defer d.wg.Done()
	for {
		select {
		case <-d.ctx.Done():
			return
		case addr := <-d.fetch:
			ctx, cancel := context.WithTimeout(d.ctx, 2*time.Second)
			d.noteTable(ctx, addr, d.tableVersion()+1)
			cancel()
		}
	}
}

// askFetch queues a table fetch from addr.
func (d *dist) askFetch(addr string) {
	select {
	case d.fetch <- addr:
	default:
	}
}

// quorumOK reports whether at least min members are live (split-brain
// protection; min 0 or 1 means none).
func (d *dist) quorumOK(min int) error {
	if min <= 1 {
		return nil
	}
	n := len(d.view.Members())
	if n < min {
		return fmt.Errorf("%w: %d members live, the map's split-brain protection needs %d", ErrNoQuorum, n, min)
	}
	return nil
}

// call sends a request to a member by id.
func (d *dist) call(ctx context.Context, id, method string, req any) ([]byte, error) {
	a := d.addr(id)
	if a == "" || d.tr == nil {
		return nil, fmt.Errorf("%w: member %s has no known address", cluster.ErrUnreachable, id)
	}
	return d.rpc(ctx, a, method, enc(req))
}

// rpc is every call of the engine to another member. A refused
// connection means nothing listens at the member's transport address: the
// process is gone. That is noted at once (see noteRefused), well before
// failure detection declares the member dead.
func (d *dist) rpc(ctx context.Context, addr, method string, body []byte) ([]byte, error) {
	b, err := d.tr.Call(ctx, addr, method, body)
	if err != nil && errors.Is(err, syscall.ECONNREFUSED) {
		d.noteRefused(addr)
	}
	return b, err
}

// owns reports whether the table makes this member p's owner.
func (d *dist) owns(p int) bool {
	t, _ := d.currentTable()
	return t != nil && t.Owner(p) == d.self
}
