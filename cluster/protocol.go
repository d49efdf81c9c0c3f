package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/stowage/stowage/partition"
)

// Protocol is this member's end of the member protocol: who the members
// are and whether they answer, the partition table this member serves
// by (installed one version at a time, computed and published by the
// master), calls to the others (batched per member), the one dispatcher
// of calls from them, and the owner's lease. A member alone (no
// transport) runs the same code with a view of one. It is safe for
// concurrent use.
type Protocol struct {
	log        *slog.Logger
	view       View
	tr         Transport // nil: a member alone
	self       string    // member id
	count      int       // partitions
	replicas   int       // replica-set size in the table: owner + backups
	startMin   int       // members needed before the first table
	publishMin int       // members needed to publish any table (ProtocolConfig.PublishMin)
	timeout    time.Duration
	closed     error // what waits return once the protocol stopped

	// onTable and repair are the layer above's (SetTableHooks).
	onTable func(*partition.Table)
	repair  func()

	methods map[string]method // the dispatcher's (dispatch.go)

	instMu sync.Mutex // serialises install and onTable
	mu     sync.Mutex
	table  *partition.Table // nil until the first table
	tabAt  time.Time        // when table was installed
	tabCh  chan struct{}    // closed and replaced when the table changes
	// tabNow is table and tabCh, for Table to read without pr.mu (every
	// operation reads them, several times).
	tabNow atomic.Pointer[tableNow]
	addrs  map[string]string
	live   map[string]bool
	// down: members whose transport refused a connection (nothing listens:
	// the process is gone), kept out of tables and take-overs until they
	// answer again, ahead of failure detection.
	down map[string]time.Time
	seen map[string]bool // the live members at the last refresh

	bmu      sync.Mutex
	batchers map[batchKey]*batcher
	strag    stragglers // calls that outlasted their batch, for polls

	reach reach // the master's record of who answers (reach.go)

	// pushed is the highest table version this member pushed as master
	// (a table not taken still uses its version up).
	pushed int64
	// floor is the highest table version a member offered the master
	// without the master taking its table (offers.go): the next table's
	// version is above it.
	floor int64
	// recollect is when a newer version shown made this master collect
	// the members' tables again (NoteTable).
	recollect time.Time
	// fetching is closed when the table fetch in flight (NoteTable)
	// ends; nil with none.
	fetching chan struct{}

	goMu    sync.Mutex // orders Go's Add before Stop's Wait
	stopped bool

	// The owner's lease (lease.go).
	clock0   time.Time
	leaseFor time.Duration
	lease    leaseState
	wasMstr  bool
	// lastMembers is the member set the master last computed a table for.
	lastMembers string
	// The master's last push of the table to the members (only the
	// master loop touches it; see remindEvery).
	pushedAt  time.Time
	pushedVer int64
	// The master's record of members away (away.go).
	grace time.Duration
	away  awayState

	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	kick    chan struct{}
	fetch   chan string // members to fetch a newer table from
	running atomic.Bool
}

// ProtocolConfig configures a Protocol.
type ProtocolConfig struct {
	// View and Transport are the cluster this member is part of; a nil
	// Transport is a member alone (View is then a view of one).
	View      View
	Transport Transport
	// Partitions is the partition count; Replicas the table's replica-set
	// size (owner plus the most backups any map keeps); StartMin the
	// members needed before the first table
	// (hazelcast.initial.min.size).
	Partitions, Replicas, StartMin int
	// PublishMin is the fewest members a master must see to publish a
	// table after the first (0 or 1: any); the members of a smaller side
	// of a split keep their last table.
	PublishMin int
	// Timeout bounds a call whose context has no deadline.
	Timeout time.Duration
	// Lease is how long an owner serves after the others last confirmed
	// its table (lease.go); 0 turns the lease off.
	Lease time.Duration
	// BackupGrace is how long the master holds the backup slots of a
	// member that left without a graceful leave, for it to come back
	// and be filled by a delta (away.go); 0 gives them to the others at
	// once.
	BackupGrace time.Duration
	// Closed is the error waits return once the protocol stopped.
	Closed error
	Logger *slog.Logger
}

// NewProtocol makes a protocol; Serve makes it answer calls, Start begins
// its loops.
func NewProtocol(cfg ProtocolConfig) *Protocol {
	d := &Protocol{log: cfg.Logger, view: cfg.View, tr: cfg.Transport, self: cfg.View.Self().ID, count: cfg.Partitions, replicas: cfg.Replicas,
		startMin: max(1, cfg.StartMin), publishMin: cfg.PublishMin, timeout: cfg.Timeout, closed: cfg.Closed, leaseFor: cfg.Lease, grace: cfg.BackupGrace, tabCh: make(chan struct{}),
		addrs: map[string]string{}, live: map[string]bool{}, down: map[string]time.Time{}, seen: map[string]bool{}, batchers: map[batchKey]*batcher{},
		kick: make(chan struct{}, 1), fetch: make(chan string, 16), methods: map[string]method{}}
	if d.log == nil {
		d.log = slog.Default()
	}
	if d.closed == nil {
		d.closed = ErrClosed
	}
	d.tabNow.Store(&tableNow{ch: d.tabCh})
	d.ctx, d.cancel = context.WithCancel(context.Background())
	d.clock0 = time.Now()
	d.registerOwn()
	return d
}

// Serve installs the dispatcher as the transport's handler: from then on
// other members' calls are served. Call it once the layers above have
// registered their methods and table hooks, so that no call and no table
// arrives before they can take it.
func (pr *Protocol) Serve() {
	if pr.tr != nil {
		pr.tr.SetHandler(pr.dispatch)
	}
}

// SetTableHooks gives the layer above its part in the loops: onTable is
// called with every newer table once installed (one at a time, in
// version order), repair at every round of the master loop. Call it
// before Start.
func (pr *Protocol) SetTableHooks(onTable func(*partition.Table), repair func()) {
	pr.onTable, pr.repair = onTable, repair
}

// Start begins the loops: the master's table, fetching newer tables, the
// lease.
func (pr *Protocol) Start() {
	pr.running.Store(true)
	pr.Members()
	pr.wg.Add(2)
	go pr.masterLoop()
	go pr.fetchLoop()
	if pr.leaseFor > 0 {
		pr.wg.Add(1)
		go pr.leaseLoop()
	}
}

// Started reports whether Start was called.
func (pr *Protocol) Started() bool { return pr.running.Load() }

// Stop ends the loops and waits for every goroutine the protocol
// started.
func (pr *Protocol) Stop() {
	pr.goMu.Lock()
	pr.stopped = true
	pr.goMu.Unlock()
	pr.cancel()
	pr.wg.Wait()
}

// Go runs fn on a goroutine that Stop waits for; false (fn not run)
// once the protocol stopped.
func (pr *Protocol) Go(fn func()) bool {
	// The check and the Add are one step apart from Stop's: an Add after
	// Stop began waiting would race with the Wait.
	pr.goMu.Lock()
	if pr.stopped || pr.ctx.Err() != nil {
		pr.goMu.Unlock()
		return false
	}
	pr.wg.Add(1)
	pr.goMu.Unlock()
	go func() {
		defer pr.wg.Done()
		fn()
	}()
	return true
}

// Members reads the view: the live members (oldest first) and their
// addresses. A member whose transport refuses connections is left out.
func (pr *Protocol) Members() []Member {
	ms := pr.view.Members()
	newest := newestAt(ms)
	pr.mu.Lock()
	clear(pr.live)
	out := ms[:0:0]
	for _, m := range ms {
		if m.RPC != "" {
			pr.addrs[m.ID] = m.RPC
		}
		if _, down := pr.down[m.ID]; down {
			continue
		}
		if n, ok := newest[m.RPC]; ok && n.ID != m.ID && m.ID != pr.self {
			// A member started again at this transport address: this
			// entry is the process before it, which failure detection
			// has not declared dead yet.
			continue
		}
		pr.live[m.ID] = true
		out = append(out, m)
	}
	for id := range pr.down {
		if !slices.ContainsFunc(ms, func(m Member) bool { return m.ID == id }) {
			delete(pr.down, id) // failure detection caught up
		}
	}
	// Connections to members that left the view are closed, so that calls
	// waiting on a hung member fail now and are routed again.
	var gone []string
	for id := range pr.seen {
		if !pr.live[id] {
			if _, down := pr.down[id]; !down {
				gone = append(gone, pr.addrs[id])
			}
			delete(pr.seen, id)
		}
	}
	for id := range pr.live {
		pr.seen[id] = true
	}
	pr.mu.Unlock()
	out = pr.ranked(out)
	if dr, ok := pr.tr.(Dropper); ok {
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
func (pr *Protocol) noteRefused(addr string) {
	id := pr.IDOf(addr)
	if id == "" || id == pr.self {
		return
	}
	if !pr.markDown(id) {
		return
	}
	pr.log.Info("stowage: member's transport refuses connections: taken as gone", "member", id)
	pr.kickLoop()
	pr.Go(func() {
		ms := pr.Members()
		if len(ms) == 0 || ms[0].ID == pr.self || ms[0].RPC == "" {
			return
		}
		ctx, cancel := context.WithTimeout(pr.ctx, 2*time.Second)
		defer cancel()
		_, _ = pr.Call(ctx, ms[0].RPC, mSuspect, []byte(id))
	})
}

// markDown takes member id as gone from now, and reports whether it was
// not taken as gone already.
func (pr *Protocol) markDown(id string) bool {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if _, known := pr.down[id]; known {
		return false
	}
	pr.down[id] = time.Now()
	return true
}

// noteReplaced takes member id as gone: member other answered at id's
// transport address (a process started again there under a new id).
func (pr *Protocol) noteReplaced(id, other string) {
	if !pr.markDown(id) {
		return
	}
	pr.log.Info("stowage: another member answers at the member's transport address: taken as gone",
		"member", id, "answered", other)
	pr.kickLoop()
}

// recheckDown asks members taken as gone whether they answer again. An
// answer counts only if it names the member asked (answeredAs): a member
// started again at the same transport address under a new id answers
// there for itself, and the id before it stays gone.
func (pr *Protocol) recheckDown() {
	pr.mu.Lock()
	var ids []string
	for id, since := range pr.down {
		if time.Since(since) > 200*time.Millisecond {
			ids = append(ids, id)
		}
	}
	pr.mu.Unlock()
	for _, id := range ids {
		a := pr.Addr(id)
		if a == "" {
			continue
		}
		ctx, cancel := context.WithTimeout(pr.ctx, 500*time.Millisecond)
		// The version alone is asked for: the table is of no use here.
		b, err := pr.tr.Call(ctx, a, mGetTab, pr.frame(Encode(getTabReq{Above: MaxTableVersion})))
		cancel()
		back, other := false, ""
		if err == nil {
			back, other = pr.answeredAs(id, a, b)
		}
		pr.mu.Lock()
		if back {
			delete(pr.down, id)
		} else if other != "" || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, ErrAuthFailed) {
			pr.down[id] = time.Now()
		}
		pr.mu.Unlock()
		switch {
		case back:
			pr.log.Info("stowage: member answers again", "member", id)
			pr.kickLoop()
		case other != "":
			pr.log.Debug("stowage: another member answers at a gone member's address: it stays gone",
				"member", id, "answered", other)
		}
	}
}

// kickLoop wakes the master loop.
func (pr *Protocol) kickLoop() {
	select {
	case pr.kick <- struct{}{}:
	default:
	}
}

func (pr *Protocol) IsLive(id string) bool {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return pr.live[id]
}

func (pr *Protocol) Addr(id string) string {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return pr.addrs[id]
}

// idOf returns the member id whose transport address is addr.
func (pr *Protocol) IDOf(addr string) string {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	other := ""
	for id, a := range pr.addrs {
		if a == addr {
			if pr.live[id] {
				return id
			}
			other = id
		}
	}
	return other
}

// newestAt returns, per transport address that more than one member of
// ms has, the member that started last there (none on a tie): one
// process listens at an address, so the others are processes gone.
func newestAt(ms []Member) map[string]Member {
	if len(ms) < 2 {
		return nil
	}
	first := make(map[string]Member, len(ms))
	var out map[string]Member
	var tie map[string]bool
	for _, m := range ms {
		if m.RPC == "" {
			continue
		}
		n, ok := first[m.RPC]
		if !ok {
			first[m.RPC] = m
			continue
		}
		if out == nil {
			out, tie = map[string]Member{}, map[string]bool{}
		}
		if o, ok := out[m.RPC]; ok {
			n = o
		}
		switch {
		case m.Started.After(n.Started):
			out[m.RPC], tie[m.RPC] = m, false
		case m.Started.Equal(n.Started):
			out[m.RPC], tie[m.RPC] = n, true
		default:
			out[m.RPC] = n
		}
	}
	for a, t := range tie {
		if t {
			delete(out, a) // a tie: neither is taken as gone
		}
	}
	return out
}

// CallMember sends req (encoded) to the member with id.
func (pr *Protocol) CallMember(ctx context.Context, id, method string, req any) ([]byte, error) {
	a := pr.Addr(id)
	if a == "" || pr.tr == nil {
		return nil, fmt.Errorf("%w: member %s has no known address", ErrUnreachable, id)
	}
	return pr.Call(ctx, a, method, Encode(req))
}

// Call makes one call to the member at addr with this member's request
// header. A refused connection means nothing listens at the member's
// transport address: the process is gone. That is noted at once (see
// noteRefused), well before failure detection declares the member dead.
func (pr *Protocol) Call(ctx context.Context, addr, method string, body []byte) ([]byte, error) {
	return pr.callFramed(ctx, addr, method, pr.frame(body))
}

func (pr *Protocol) callFramed(ctx context.Context, addr, method string, framed []byte) ([]byte, error) {
	if pr.tr == nil {
		return nil, fmt.Errorf("%w: a member alone has no transport", ErrUnreachable)
	}
	b, err := pr.tr.Call(ctx, addr, method, framed)
	pr.noteFailed(addr, err)
	return b, err
}

// noteFailed notes a call's failure to connect to addr.
func (pr *Protocol) noteFailed(addr string, err error) {
	if err != nil && (errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, ErrAuthFailed)) {
		// Nothing listens there, or what does is not a member (a node
		// that got into the gossip without a certificate of the
		// cluster's): either way it cannot serve partitions.
		pr.noteRefused(addr)
	}
}

// Owns reports whether the table makes this member p's owner.
func (pr *Protocol) Owns(p int) bool {
	t, _ := pr.Table()
	return t != nil && t.Owner(p) == pr.self
}

// InReplicaSet reports whether member id is a replica of p in the table.
func (pr *Protocol) InReplicaSet(p int, id string) bool {
	t, _ := pr.Table()
	return t != nil && slices.Contains(t.Owners[p], id)
}

// Self is this member's id.
func (pr *Protocol) Self() string { return pr.self }

// Partitions is the partition count.
func (pr *Protocol) Partitions() int { return pr.count }

// Replicas is the table's replica-set size: owner plus backups.
func (pr *Protocol) Replicas() int { return pr.replicas }

// StartMin is how many members must be up before the first table.
func (pr *Protocol) StartMin() int { return pr.startMin }

// Timeout bounds a call whose context has no deadline.
func (pr *Protocol) Timeout() time.Duration { return pr.timeout }

// Context is done once the protocol stops.
func (pr *Protocol) Context() context.Context { return pr.ctx }

// View is the membership view the protocol reads.
func (pr *Protocol) View() View { return pr.view }

// Alone reports whether this member has no transport: a member alone.
func (pr *Protocol) Alone() bool { return pr.tr == nil }
