// Package sim runs a cluster of many members in one process, each with
// its real partition table, master election, migration, backups and lease
// over the in-memory transport, and a map store on one shared in-memory
// file system. Membership is scripted: a member the simulation removes
// is gone from every view at once, so the times it reports start when
// failure detection would have finished. It grows the cluster one member
// at a time, kills members one by one and three at once, and kills
// the master (stops without a hand-over), with writers running throughout; it reports per step what
// the change cost and, at the end, whether any acknowledged write was
// lost.
package sim

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stowage/stowage"
	"github.com/stowage/stowage/cluster"
	"github.com/stowage/stowage/config"
	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/memfs"
	"github.com/stowage/stowage/internal/testhook"
)

// Options say what to simulate.
type Options struct {
	// Members is the largest cluster size N (at least 2).
	Members int
	// Backups is the map's sync backup count (default 1).
	Backups int
	// Writers is how many writers run throughout (default 4); each
	// writes its own keys through a random live member.
	Writers int
	// Keys is how many keys each writer cycles over (default 200).
	Keys int
	// Quiet is how long the simulation watches an idle cluster after
	// each size is reached, for the control traffic (default 500 ms).
	Quiet time.Duration
	// Logger receives the members' logs (default: warnings to nowhere).
	Logger *slog.Logger
	// Step, if set, is told of each step once it converged.
	Step func(Step)
	// Grace is the members' stowage.Options.BackupGrace: the "cut and
	// back" step's member gets its slots back; the failure steps then
	// converge only once the grace ran out.
	Grace time.Duration
	// NoFailures ends the run after the "cut and back" step.
	NoFailures bool
}

// Step is what one membership change cost.
type Step struct {
	// What happened: "join", "fail" (a member stopped, as by SIGKILL),
	// "fail 3" (three at once), "kill master", "cut and back" (a member
	// cut off from the others until they serve without it, then back;
	// Owners and Copies compare the tables before the cut and after the
	// return).
	What string
	// Members is the cluster's size after the step.
	Members int
	// Converge is the time from the change until every member has the
	// same partition table, serves every partition it owns and has every
	// backup filled.
	Converge time.Duration
	// Tables is the time from the change until every live member had
	// installed the table the step ended with (its partitions may still
	// have been moving then).
	Tables time.Duration
	// Owners is how many partitions changed owner; Copies how many
	// replica slots went to a member that was not a replica of that
	// partition before (each a copy of the partition's data). Ideal is
	// the least number of copies the change needs: on a join the new
	// member's share (271 × replicas / N), on a leave the replicas the
	// leavers held.
	Owners, Copies int
	Ideal          float64
	// DataBytes counts the bytes of member calls other than table
	// publication and lease rounds during the step (writes, backups,
	// fills, take-overs).
	DataBytes int64
	// TableBytes and LeaseBytes count the bytes of table publication and
	// of lease rounds during the step.
	TableBytes, LeaseBytes int64
	// ControlPerMember is, on the idle cluster after the step, the bytes
	// of table and lease calls per member per second.
	ControlPerMember float64
	// QuietTable and QuietLease split ControlPerMember into table
	// publication and lease rounds.
	QuietTable, QuietLease float64
	// NewMaster is set on "kill master": the time until every live
	// member had a table published by the new master.
	NewMaster time.Duration
}

// Result is the whole run.
type Result struct {
	Steps []Step
	// Acked counts the writes acknowledged; Lost those whose value was
	// not read back at the end (must be 0); Failed the writes that
	// returned an error (their outcome is unknown, which is allowed).
	Acked, Lost, Failed int64
	// HeapPerMember is the Go heap in use at N members, divided by N.
	HeapPerMember int64
}

const mapName = "engine_sim"

type member struct {
	id   string
	self cluster.Member
	view *cluster.StaticView
	tr   *cluster.MemTransport
	node *stowage.Node
}

type sim struct {
	o       Options
	net     *cluster.MemNetwork
	fs      *memfs.FS
	mu      sync.Mutex
	members []*member // live, oldest first
	seq     int
	// changedAt is when the step under way first changed the views
	// (zero before).
	changedAt time.Time

	table, lease, data atomic.Int64
}

// noClose shares one file system between the members: closing a member's
// store must not close it for the others.
type noClose struct{ fsbackend.FS }

func (noClose) Close() error { return nil }

// Run runs the simulation.
func Run(ctx context.Context, o Options) (Result, error) {
	if o.Members < 2 {
		return Result{}, fmt.Errorf("sim: members %d: at least 2", o.Members)
	}
	if o.Backups <= 0 {
		o.Backups = 1
	}
	if o.Writers <= 0 {
		o.Writers = 4
	}
	if o.Keys <= 0 {
		o.Keys = 200
	}
	if o.Quiet <= 0 {
		o.Quiet = 500 * time.Millisecond
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &sim{o: o, net: cluster.NewMemNetwork(), fs: memfs.New()}
	s.net.SetMeter(func(_, _, method string, req, ans int) {
		switch method {
		case "table":
			s.table.Add(int64(req + ans))
		case "lease":
			s.lease.Add(int64(req + ans))
		default:
			s.data.Add(int64(req + ans))
		}
	})
	defer s.closeAll()
	var res Result
	if _, err := s.add(ctx); err != nil {
		return res, err
	}
	for !s.converged(ctx, s.live()) {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		time.Sleep(2 * time.Millisecond) // polling interval
	}
	w := s.startWriters(ctx)
	record := func(st Step) {
		res.Steps = append(res.Steps, st)
		if o.Step != nil {
			o.Step(st)
		}
	}
	for len(s.live()) < o.Members {
		st, err := s.change(ctx, "join", func() error { _, err := s.add(ctx); return err })
		if err != nil {
			w.stop()
			return res, err
		}
		record(st)
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	res.HeapPerMember = int64(ms.HeapInuse) / int64(o.Members)
	st, err := s.change(ctx, "cut and back", func() error { return s.cutAndBack(ctx) })
	if err != nil {
		w.stop()
		return res, err
	}
	record(st)
	if o.NoFailures {
		w.stop()
		res.Acked, res.Failed = w.acked.Load(), w.failed.Load()
		lost, err := w.verify(ctx, s)
		res.Lost = lost
		return res, err
	}
	st, err = s.change(ctx, "kill master", func() error { return s.kill(s.live()[0]) })
	if err != nil {
		w.stop()
		return res, err
	}
	record(st)
	for len(s.live()) > o.Backups+2 {
		k := 1
		what := "fail"
		if len(s.live())%2 == 0 && len(s.live()) > o.Backups+4 {
			k, what = 3, "fail 3"
		}
		st, err := s.change(ctx, what, func() error { return s.fail(k) })
		if err != nil {
			w.stop()
			return res, err
		}
		record(st)
	}
	w.stop()
	res.Acked, res.Failed = w.acked.Load(), w.failed.Load()
	lost, err := w.verify(ctx, s)
	res.Lost = lost
	return res, err
}

func (s *sim) live() []*member {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.members)
}

func (s *sim) config() *config.Config {
	cfg := config.Default()
	cfg.Hazelcast.ClusterName = "sim"
	mc := config.MapConfig{Pattern: "engine*", MapStore: config.LocalMapStore("/sim", "sim")}
	mc.SetBackupCount(s.o.Backups)
	cfg.AddMap(mc)
	return cfg
}

// add starts a member that sees every live member, and makes them see it.
func (s *sim) add(ctx context.Context) (*member, error) {
	s.mu.Lock()
	s.seq++
	id := "m" + strconv.Itoa(s.seq)
	seq := s.seq
	s.mu.Unlock()
	self := cluster.Member{ID: id, Addr: id, RPC: id, Run: fmt.Sprintf("run-%d-%d", seq, time.Now().UnixNano()), Started: time.Unix(int64(seq), 0)}
	m := &member{id: id, self: self, view: cluster.NewStaticView(self), tr: s.net.Transport(id)}
	var all []cluster.Member
	for _, x := range s.live() {
		all = append(all, x.self)
	}
	m.view.Set(append(all, self)...)
	openFS := func(context.Context, fsbackend.Properties) (fsbackend.FS, error) { return noClose{s.fs}, nil }
	n, err := stowage.Open(ctx, stowage.Options{Config: s.config(), Logger: s.o.Logger.With("member", id),
		TestHooks: &testhook.Hooks{View: m.view, Transport: m.tr, OpenFS: openFS}, BackupGrace: s.o.Grace})
	if err != nil {
		m.tr.Close()
		return nil, fmt.Errorf("sim: start %s: %w", id, err)
	}
	m.node = n
	s.mu.Lock()
	s.members = append(s.members, m)
	s.mu.Unlock()
	s.publish()
	return m, nil
}

// publish makes every live member see the live members. The first
// publication of a step is when the change happened, as far as the
// others can tell: a step's times start there.
func (s *sim) publish() {
	live := s.live()
	ms := make([]cluster.Member, len(live))
	for i, m := range live {
		ms[i] = m.self
	}
	s.mu.Lock()
	if s.changedAt.IsZero() {
		s.changedAt = time.Now()
	}
	s.mu.Unlock()
	for _, m := range live {
		m.view.Set(ms...)
	}
}

// kill stops m without a hand-over and removes it from every view.
func (s *sim) kill(m *member) error {
	s.stop(m)
	s.publish()
	return nil
}

// stop stops m without a hand-over and removes it from the live
// members; the others' views still show it.
func (s *sim) stop(m *member) {
	m.tr.Close()
	m.node.Close()
	s.mu.Lock()
	s.members = slices.DeleteFunc(s.members, func(x *member) bool { return x == m })
	s.mu.Unlock()
}

// fail kills k members from the middle of the join order at once: they
// stop without handing anything over, as after a crash, and leave every
// view in one change (as failure detection that suspected them
// together would have them), and their partitions are taken over from
// backups or from the map store.
func (s *sim) fail(k int) error {
	live := s.live()
	i := len(live) / 3
	var wg sync.WaitGroup
	for _, m := range slices.Clone(live[i : i+k]) {
		wg.Go(func() { s.stop(m) })
	}
	wg.Wait()
	s.publish()
	return nil
}

// cutAndBack cuts a member from the middle of the join order off from
// the others (their views lose it, the network drops every call; its own
// view keeps them, as split-brain protection would keep it from acting
// alone: the simulated map has none), waits until the others serve
// without it (with a grace, its slots held; without, given to others),
// then heals the cut.
func (s *sim) cutAndBack(ctx context.Context) error {
	live := s.live()
	x := live[len(live)/2]
	s.net.Isolate(x.id)
	s.mu.Lock()
	s.members = slices.DeleteFunc(s.members, func(m *member) bool { return m == x })
	s.mu.Unlock()
	s.publish()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		ok := true
		others := s.live()
		for _, m := range others {
			pt := m.node.PartitionTable()
			for _, rs := range pt.Replicas {
				ok = ok && !slices.Contains(rs, x.id)
			}
			ok = ok && pt.Version == others[0].node.PartitionTable().Version && m.node.Loaded()
		}
		if ok {
			break
		}
		time.Sleep(2 * time.Millisecond) // polling interval
	}
	s.net.HealAll()
	s.mu.Lock()
	s.members = append(s.members, x)
	slices.SortFunc(s.members, func(a, b *member) int { return a.self.Started.Compare(b.self.Started) })
	s.mu.Unlock()
	s.publish()
	return nil
}

func (s *sim) closeAll() {
	for _, m := range s.live() {
		m.node.Close()
		m.tr.Close()
	}
}
