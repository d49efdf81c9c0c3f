package cluster

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/memberlist"
)

// Member is one member of the cluster as seen by this one.
type Member struct {
	// ID is "host:port-<start Unix nanos>", stable for the member's life.
	ID string
	// Addr is the member's host:port (membership: TCP and UDP).
	Addr string
	// RPC is the address of the member's Transport ("" when it has none).
	RPC string
	// Run names the member's run in shared storage (its log files).
	Run string
	// Draining is set while the member hands its partitions over before
	// leaving (SetDraining); new partition tables leave it out.
	Draining bool
	// Started is when the member started; the oldest is the master.
	Started time.Time
	// Suspect: this member's last failure-detection probe of it got no
	// acknowledgement, and no probe has been acknowledged since; or
	// another member gossiped such a probe within the last suspicion
	// timeout (memberlist's shortest for the cluster's size). Failure
	// detection declares it dead unless it refutes in time. (memberlist
	// keeps the node state to itself: the State of the nodes its Members
	// returns is never updated, so it is followed here from its probes.)
	Suspect bool
}

// EventKind says what happened to a member.
type EventKind int

const (
	// MemberJoined: a member became visible.
	MemberJoined EventKind = iota + 1
	// MemberLeft: a member announced its departure.
	MemberLeft
	// MemberFailed: failure detection declared a member dead.
	MemberFailed
)

func (k EventKind) String() string {
	switch k {
	case MemberJoined:
		return "joined"
	case MemberLeft:
		return "left"
	case MemberFailed:
		return "failed"
	}
	return "EventKind(" + strconv.Itoa(int(k)) + ")"
}

// Event is a membership change seen by this member (never about itself).
type Event struct {
	Kind   EventKind
	Member Member
}

// ErrClosed is returned by calls on a Cluster after Leave or Close.
var ErrClosed = errors.New("stowage/cluster: closed")

// Cluster is this member's view of the cluster. It is safe for concurrent
// use.
type Cluster struct {
	cfg   Config
	self  Member
	ml    *memberlist.Memberlist
	d     *delegate
	peers []string // expanded member list without our own address

	events  chan Event
	mu      sync.Mutex
	queue   []Event
	changed chan struct{} // closed and replaced on every membership change
	refused map[string]bool
	live    map[string]Member // by id, this member included
	// suspect holds, by id, the members suspected: a zero time when this
	// member's own last probe went unanswered, otherwise until when
	// another member's gossiped suspicion stands (suspicion.go).
	suspect map[string]time.Time
	bcast   *memberlist.TransmitLimitedQueue // gossiped suspicions
	// suspicionMult and probeInterval are memberlist's, for heardFor.
	suspicionMult int
	probeInterval time.Duration
	wake          chan struct{}

	stop     chan struct{}
	wg       sync.WaitGroup
	stopOnce sync.Once
}

// Join starts a member, binds its port (trying the next ones when
// PortAutoIncrement is set), joins whatever members of MemberList answer,
// and waits, within ctx, until InitialMinClusterSize members are visible.
// Members that cannot be reached are not an error: the member then
// starts a cluster of its own and retries them in the background.
func Join(ctx context.Context, cfg Config) (*Cluster, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	c := &Cluster{cfg: cfg, events: make(chan Event), changed: make(chan struct{}),
		refused: map[string]bool{}, live: map[string]Member{}, suspect: map[string]time.Time{}, wake: make(chan struct{}, 1), stop: make(chan struct{})}
	tries := 1
	if cfg.PortAutoIncrement {
		tries = cfg.PortCount
	}
	var err error
	for i := 0; i < tries && c.ml == nil; i++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("stowage/cluster: join: %w", err)
		}
		err = c.create(cfg.Port + i)
	}
	if c.ml == nil {
		return nil, fmt.Errorf("stowage/cluster: network.port %d (%d tried): %w", cfg.Port, tries, err)
	}
	for _, e := range cfg.MemberList {
		addrs, _ := expand(e, cfg.Port) // validated above
		for _, a := range addrs {
			if a != c.self.Addr && !slices.Contains(c.peers, a) {
				c.peers = append(c.peers, a)
			}
		}
	}
	c.wg.Add(1)
	go c.dispatch()
	c.tryJoin(ctx)
	if cfg.Timing.RejoinInterval > 0 && len(c.peers) > 0 {
		c.wg.Add(1)
		go c.rejoin()
	}
	if err := c.WaitForSize(ctx, cfg.InitialMinClusterSize); err != nil {
		c.Close()
		return nil, err
	}
	cfg.Logger.Info("stowage/cluster: member started", "member", c.self.ID, "cluster_name", cfg.ClusterName,
		"members", len(c.Members()))
	return c, nil
}

func (c *Cluster) create(port int) error {
	start := time.Now()
	addr := net.JoinHostPort(c.cfg.BindAddr, strconv.Itoa(port))
	mc := memberlist.DefaultLANConfig()
	mc.Name = addr + "-" + strconv.FormatInt(start.UnixNano(), 10)
	mc.BindAddr, mc.BindPort = c.cfg.BindAddr, port
	mc.AdvertiseAddr, mc.AdvertisePort = c.cfg.BindAddr, port
	t := c.cfg.Timing
	setDur(&mc.ProbeInterval, t.ProbeInterval)
	setDur(&mc.ProbeTimeout, t.ProbeTimeout)
	setDur(&mc.GossipInterval, t.GossipInterval)
	setDur(&mc.PushPullInterval, t.PushPullInterval)
	setDur(&mc.TCPTimeout, t.TCPTimeout)
	if t.SuspicionMult > 0 {
		mc.SuspicionMult = t.SuspicionMult
	}
	if len(c.cfg.GossipKey) > 0 {
		mc.SecretKey = c.cfg.GossipKey
		mc.GossipVerifyIncoming, mc.GossipVerifyOutgoing = true, true
	}
	d := &delegate{c: c, start: start}
	mc.Delegate, mc.Events, mc.Alive, mc.Merge, mc.Ping = d, d, d, d, d
	mc.Logger = log.New(logWriter{l: c.cfg.Logger, suspect: c.suspectProbe}, "", 0)
	c.suspicionMult, c.probeInterval = mc.SuspicionMult, mc.ProbeInterval
	c.bcast = &memberlist.TransmitLimitedQueue{NumNodes: func() int { return len(c.Members()) }, RetransmitMult: mc.RetransmitMult}
	c.self = Member{ID: mc.Name, Addr: addr, RPC: c.cfg.RPCAddr, Run: c.cfg.Run, Started: start}
	c.d = d
	if c.cfg.GossipBytes != nil {
		nt, err := memberlist.NewNetTransport(&memberlist.NetTransportConfig{BindAddrs: []string{mc.BindAddr}, BindPort: port, Logger: mc.Logger})
		if err != nil {
			return err
		}
		mc.Transport = newMeteredTransport(nt, c.cfg.GossipBytes)
	}
	ml, err := memberlist.Create(mc)
	if err != nil {
		if mc.Transport != nil {
			mc.Transport.Shutdown()
		}
		return err
	}
	c.ml = ml
	return nil
}

func setDur(dst *time.Duration, v time.Duration) {
	if v > 0 {
		*dst = v
	}
}

// tryJoin contacts every member-list address that is not a member yet.
func (c *Cluster) tryJoin(ctx context.Context) {
	known := map[string]bool{}
	for _, m := range c.Members() {
		known[m.Addr] = true
	}
	for _, a := range c.peers {
		if known[a] {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-c.stop:
			return
		default:
		}
		if _, err := c.ml.Join([]string{a}); err != nil {
			c.cfg.Logger.Debug("stowage/cluster: member-list address did not join", "addr", a, "err", err)
		}
	}
}

func (c *Cluster) rejoin() {
	defer c.wg.Done()
	t := time.NewTicker(c.cfg.Timing.RejoinInterval)
	defer t.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
			c.tryJoin(ctx)
		}
	}
}

// Self returns this member.
func (c *Cluster) Self() Member {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.self
}

// Members returns the live members, oldest first (join order; id on a
// tie). The caller owns the returned slice.
func (c *Cluster) Members() []Member {
	// memberlist's Members returns nodes it keeps mutating; the view is
	// kept here instead, from the event delegate, which runs under
	// memberlist's lock.
	c.mu.Lock()
	out := make([]Member, 0, len(c.live))
	now := time.Now()
	for _, m := range c.live {
		m.Suspect = c.suspectedLocked(m.ID, now)
		out = append(out, m)
	}
	c.mu.Unlock()
	slices.SortFunc(out, func(a, b Member) int {
		if c := a.Started.Compare(b.Started); c != 0 {
			return c
		}
		if a.ID < b.ID {
			return -1
		}
		if a.ID > b.ID {
			return 1
		}
		return 0
	})
	return out
}

// Master returns the oldest live member.
func (c *Cluster) Master() Member {
	ms := c.Members()
	if len(ms) == 0 { // only after Close
		return c.self
	}
	return ms[0]
}

// IsMaster reports whether this member is the master.
func (c *Cluster) IsMaster() bool { return c.Master().ID == c.self.ID }

// Events returns the channel of membership changes, in the order they
// were seen. Events are queued without bound until read; the channel is
// closed by Leave or Close.
func (c *Cluster) Events() <-chan Event { return c.events }

// Changed returns a channel that is closed at the next membership change
// (a member joined, left, failed or updated its metadata).
func (c *Cluster) Changed() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changed
}

// WaitForSize waits until at least n members (this one included) are
// visible, or ctx is done.
func (c *Cluster) WaitForSize(ctx context.Context, n int) error {
	for {
		c.mu.Lock()
		ch := c.changed
		c.mu.Unlock()
		if len(c.Members()) >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("stowage/cluster: waiting for hazelcast.initial.min.cluster.size %d (have %d): %w",
				n, len(c.Members()), ctx.Err())
		case <-c.stop:
			return ErrClosed
		case <-ch:
		}
	}
}

// SetDraining announces that this member is about to leave and hands its
// partitions over: the others see Member.Draining. It waits (at most 5 s)
// for the update to spread.
func (c *Cluster) SetDraining() error {
	select {
	case <-c.stop:
		return ErrClosed
	default:
	}
	c.d.setFlag(flagDraining)
	c.mu.Lock()
	c.self.Draining = true
	if m, ok := c.live[c.self.ID]; ok {
		m.Draining = true
		c.live[c.self.ID] = m
	}
	c.mu.Unlock()
	return c.ml.UpdateNode(5 * time.Second)
}

// Leave tells the other members this one is leaving, waits (within ctx,
// at most 5 s without a deadline) for the message to spread, then stops
// like Close.
func (c *Cluster) Leave(ctx context.Context) error {
	select {
	case <-c.stop:
		return ErrClosed
	default:
	}
	timeout := 5 * time.Second
	if d, ok := ctx.Deadline(); ok {
		timeout = time.Until(d)
	}
	c.d.setFlag(flagLeaving)
	err := c.ml.UpdateNode(timeout)
	if err == nil {
		err = c.ml.Leave(timeout)
	}
	if cerr := c.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("stowage/cluster: leave: %w", err)
	}
	return nil
}

// Close stops the member without announcing it; the others detect the
// failure. It returns when every goroutine the Cluster started has
// stopped. Calling it again returns nil.
func (c *Cluster) Close() error {
	var err error
	c.stopOnce.Do(func() {
		close(c.stop)
		err = c.ml.Shutdown()
		c.wg.Wait()
		c.mu.Lock()
		clear(c.live)
		c.mu.Unlock()
	})
	return err
}

func (c *Cluster) member(n *memberlist.Node) (Member, error) {
	m, err := decodeMeta(n.Meta)
	if err != nil {
		return Member{}, err
	}
	return Member{ID: n.Name, Addr: net.JoinHostPort(n.Addr.String(), strconv.Itoa(int(n.Port))), RPC: m.rpc, Run: m.run, Draining: m.flags&flagDraining != 0, Started: m.start}, nil
}

// notify records a membership change, queues its event and wakes
// waiters. kind 0 is a metadata update.
func (c *Cluster) notify(kind EventKind, n *memberlist.Node) {
	m, err := c.member(n)
	if err != nil {
		return // refused by the alive delegate; never a member
	}
	c.mu.Lock()
	delete(c.suspect, m.ID) // joined, updated by itself, or gone
	if kind == MemberJoined || kind == 0 {
		c.live[m.ID] = m
	} else {
		delete(c.live, m.ID)
	}
	close(c.changed)
	c.changed = make(chan struct{})
	report := kind != 0 && m.ID != c.self.ID
	if report {
		c.queue = append(c.queue, Event{Kind: kind, Member: m})
	}
	c.mu.Unlock()
	if report {
		c.cfg.Logger.Info("stowage/cluster: member "+kind.String(), "member", m.ID)
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
}

// suspectProbe notes that this member's probe of the member named id
// got no acknowledgement, and gossips it.
func (c *Cluster) suspectProbe(id string) {
	c.mu.Lock()
	_, live := c.live[id]
	live = live && id != c.self.ID
	if live {
		c.suspect[id] = time.Time{}
	}
	c.mu.Unlock()
	if live {
		c.gossipSuspect(id)
	}
}

// probeAcked notes that a probe of the member named id was acknowledged.
func (c *Cluster) probeAcked(id string) {
	c.mu.Lock()
	delete(c.suspect, id)
	c.mu.Unlock()
}

// dispatch delivers queued events to the Events channel in order.
func (c *Cluster) dispatch() {
	defer c.wg.Done()
	defer close(c.events)
	for {
		c.mu.Lock()
		var e Event
		ok := len(c.queue) > 0
		if ok {
			e = c.queue[0]
			c.queue = c.queue[1:]
		}
		c.mu.Unlock()
		if !ok {
			select {
			case <-c.stop:
				return
			case <-c.wake:
			}
			continue
		}
		select {
		case <-c.stop:
			return
		case c.events <- e:
		}
	}
}
