package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stowage/stowage/internal/parallel"
	"github.com/stowage/stowage/partition"
)

// The partition table on this member: installed one version at a time,
// computed and published by the master (the oldest live member), fetched
// from any member that shows a newer one.

// Table returns the installed table (nil before the first) and the
// channel closed when it changes.
func (pr *Protocol) Table() (*partition.Table, <-chan struct{}) {
	n := pr.tabNow.Load()
	return n.t, n.ch
}

// tableNow is the installed table and the channel closed when it
// changes.
type tableNow struct {
	t  *partition.Table
	ch chan struct{}
}

func (pr *Protocol) TableVersion() int64 {
	t, _ := pr.Table()
	if t == nil {
		return 0
	}
	return t.Version
}

// ownerOf returns the owner of partition p per the current table, waiting
// (within ctx) for a first table.
func (pr *Protocol) OwnerOf(ctx context.Context, p int) (string, error) {
	for {
		t, ch := pr.Table()
		if t != nil {
			if o := t.Owner(p); o != "" {
				return o, nil
			}
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return "", fmt.Errorf("stowage: no partition table yet (waiting for %d members): %w", pr.startMin, ctx.Err())
		case <-pr.ctx.Done():
			return "", pr.closed
		}
	}
}

// install makes t the current table if it is newer, and hands it to the
// layer above (onTable).
func (pr *Protocol) install(t *partition.Table) bool {
	if t == nil || len(t.Owners) != pr.count || t.Version <= 0 || t.Version > MaxTableVersion {
		return false
	}
	if err := t.CheckAway(); err != nil {
		pr.log.Warn("stowage: partition table refused", "err", err)
		return false
	}
	// Tables are installed one at a time, so that the layer above never
	// moves back to an older table's view.
	pr.instMu.Lock()
	defer pr.instMu.Unlock()
	pr.mu.Lock()
	if pr.table != nil && t.Version <= pr.table.Version {
		pr.mu.Unlock()
		return false
	}
	pr.table, pr.tabAt = t, time.Now()
	close(pr.tabCh)
	pr.tabCh = make(chan struct{})
	pr.tabNow.Store(&tableNow{t: t, ch: pr.tabCh})
	pr.mu.Unlock()
	pr.log.Debug("stowage: partition table installed", "version", t.Version)
	if pr.onTable != nil {
		pr.onTable(t)
	}
	return true
}

// remindEvery is how often the master reminds the members of the
// table's version while the table does not change (see remind), counted
// from its last push: a member that missed a push has the table within
// about remindEvery. The master loop also runs its other rounds
// (recheckDown, checkReach, repair) at least this often.
const remindEvery = 2 * time.Second

// masterLoop recomputes and publishes the table whenever membership
// changes, while this member is the master, and reminds the members of
// its version now and then for those that missed it.
func (pr *Protocol) masterLoop() {
	defer pr.wg.Done()
	for {
		ch := pr.view.Changed()
		pr.recheckDown()
		ms := pr.Members()
		if len(ms) > 0 && ms[0].ID == pr.self {
			pr.checkReach(ms)
		}
		pr.rebalance(ms)
		if pr.repair != nil {
			pr.repair()
		}
		graceOver, stop := pr.graceTimer()
		// The next turn is remindEvery after the last push, not on a
		// fixed tick: a tick that fell while a join's table was pushed
		// (half a second to 99 members) ran the next turn right after
		// it, and pushed the same table to every member again.
		wait := remindEvery
		if d := time.Until(pr.pushedAt.Add(remindEvery)); d > 0 {
			wait = d
		}
		tick := time.NewTimer(wait)
		select {
		case <-pr.ctx.Done():
			stop()
			tick.Stop()
			return
		case <-ch:
		case <-pr.kick:
		case <-tick.C:
		case <-graceOver:
		}
		stop()
		tick.Stop()
	}
}

// rebalance is the master's work: a table for the live members, published
// to every one of them.
func (pr *Protocol) rebalance(ms []Member) {
	if len(ms) == 0 || ms[0].ID != pr.self {
		pr.mu.Lock()
		pr.wasMstr = false
		pr.mu.Unlock()
		pr.away = awayState{}
		return
	}
	cur, _ := pr.Table()
	if cur == nil && len(ms) < pr.startMin {
		return // hazelcast.initial.min.size
	}
	if len(ms) < pr.publishMin {
		return // the smaller side of a split (ProtocolConfig.PublishMin)
	}
	key := memberKey(ms)
	pr.mu.Lock()
	changed := !pr.wasMstr || key != pr.lastMembers
	pr.wasMstr, pr.lastMembers = true, key
	pr.mu.Unlock()
	if changed && pr.tr != nil {
		// A new master, or members that were apart (a healed split):
		// continue from the newest table any member has, so that the next
		// version is above every table in use.
		pr.takeOffers(ms)
		cur, _ = pr.Table()
	}
	live := pr.restartedOver(ms)
	ids := make([]string, 0, len(live))
	for _, m := range live {
		if !m.Draining {
			ids = append(ids, m.ID)
		}
	}
	if len(ids) == 0 {
		return // every member is leaving: keep the table
	}
	// A version pushed once is never reused, even if the table was not
	// taken (see below), and the next is above every version a member
	// offered (offers.go).
	base := cur
	pr.mu.Lock()
	pushed, floor := pr.pushed, pr.floor
	pr.mu.Unlock()
	if cur != nil && max(pushed, floor) > cur.Version {
		b := *cur
		b.Version = max(pushed, floor)
		base = &b
	}
	away := pr.awayMembers(cur, ms, live, time.Now())
	base, away = pr.reclaim(base, live, away)
	next := partition.AssignHolding(ids, pr.count, pr.replicas-1, base, away)
	pr.noteDeparted(next)
	if cur != nil && floor <= cur.Version && slices.EqualFunc(next.Owners, cur.Owners, slices.Equal) && sameAway(next, cur) {
		switch {
		case cur.Version != pr.pushedVer:
			// A table this master has not pushed (taken from an offer
			// or fetched): the members may not have it.
			pr.publish(ms, cur)
		case changed || time.Since(pr.pushedAt) >= remindEvery:
			pr.remind(ms, cur)
		default:
			return // pushed or reminded of lately: the members have it
		}
		pr.pushedAt, pr.pushedVer = time.Now(), cur.Version
		return
	}
	level := slog.LevelInfo
	if pr.tr == nil {
		level = slog.LevelDebug
	}
	if cur == nil || pr.publishMin <= 1 || pr.tr == nil {
		pr.install(next)
		pr.log.Log(pr.ctx, level, "stowage: partition table published", "version", next.Version, "members", len(ms))
		pr.publish(ms, next)
		pr.pushedAt, pr.pushedVer = time.Now(), next.Version
		pr.handOverNext()
		return
	}
	// With split-brain protection, a table counts only once as many
	// members as the protection's minimum took it, this one included:
	// a master whose view is out of date (it hears nobody, and its
	// member list still has a member that follows another master) must
	// not act on a table of its own that the others refused, and whose
	// version the real master's next table may also carry.
	pr.mu.Lock()
	pr.pushed = max(pr.pushed, next.Version)
	pr.mu.Unlock()
	took := pr.publish(ms, next) + 1
	pr.pushedAt, pr.pushedVer = time.Now(), next.Version
	if took < pr.publishMin {
		pr.log.Warn("stowage: partition table not installed: too few members took it",
			"version", next.Version, "took", took, "need", pr.publishMin)
		return
	}
	pr.install(next)
	pr.log.Log(pr.ctx, level, "stowage: partition table published", "version", next.Version, "members", len(ms))
	pr.handOverNext()
}

func memberKey(ms []Member) string {
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.ID
	}
	return strings.Join(ids, ",")
}

// FanOut is how many members a member calls at once when it asks or
// tells every live member the same thing (a table push, the tables a new
// master collects, a health check): the round takes about N/FanOut round
// trips instead of N, and a large cluster does not start a call per
// member at once.
const FanOut = 16

// publish pushes t to the members ms, FanOut at a time, and returns how
// many took it (this member not counted).
func (pr *Protocol) publish(ms []Member, t *partition.Table) int {
	return pr.push(ms, t, false)
}

// remind tells the members ms the version of t, the table they all
// took before, and pushes the whole table only to those that answer
// with an older version: a member that missed a push (its call failed,
// or it was cut off for a while) still gets it on the next reminder,
// while the others are sent some bytes instead of the whole table every
// remindEvery (about 10 KB a member at 100 members). A member from
// before reminders answers a version-only table with no version, and is
// sent the whole table as before.
func (pr *Protocol) remind(ms []Member, t *partition.Table) {
	pr.push(ms, t, true)
}

// push is publish, or with versionOnly remind.
func (pr *Protocol) push(ms []Member, t *partition.Table, versionOnly bool) int {
	if pr.tr == nil {
		return 0
	}
	full := sync.OnceValue(func() []byte { return Encode(tableOf(t)) })
	body := full
	if versionOnly {
		short := Encode(tableMsg{Version: t.Version})
		body = func() []byte { return short }
	}
	var to []string
	for _, m := range ms {
		if m.ID != pr.self && m.RPC != "" {
			to = append(to, m.RPC)
		}
	}
	var took atomic.Int32
	parallel.Do(FanOut, len(to), func(i int) {
		addr := to[i]
		ctx, cancel := context.WithTimeout(pr.ctx, 2*time.Second)
		defer cancel()
		b, err := pr.Call(ctx, addr, mTable, body())
		var tm tableMsg
		if err != nil || Decode(b, &tm) != nil {
			return
		}
		if versionOnly && tm.Version < t.Version {
			// Behind: the whole table.
			b, err = pr.Call(ctx, addr, mTable, full())
			if tm = (tableMsg{}); err != nil || Decode(b, &tm) != nil {
				return
			}
		}
		if tm.Version > t.Version {
			// The member has a newer table (from a master this one did
			// not know of): continue from it.
			pr.AskFetch(addr)
			pr.kickLoop()
			return
		}
		took.Add(1)
	})
	return int(took.Load())
}

// NoteTable is called with the table version another member showed (in
// a call's header, a lease or status answer): a newer one is fetched
// before the call is served, from the master alone, as tables pushed are
// taken from it alone. Whoever showed the version only says that one
// exists; a member that is not the master cannot hand out a table of its
// own making. The master itself takes the newest table of the members
// when they change (rebalance); shown a newer one, it looks again.
func (pr *Protocol) NoteTable(ctx context.Context, from string, tv int64) {
	if tv <= pr.TableVersion() || tv > MaxTableVersion || pr.tr == nil {
		return
	}
	ms := pr.Members()
	if len(ms) == 0 || ms[0].RPC == "" {
		return
	}
	if ms[0].ID == pr.self {
		// Collect the members' tables on the next turn, at most once per
		// recollectEvery: a member may claim a newer table in every
		// answer (offers.go takes from it no more than a version floor).
		pr.mu.Lock()
		again := time.Since(pr.recollect) >= recollectEvery
		if again {
			pr.wasMstr, pr.recollect = false, time.Now()
		}
		pr.mu.Unlock()
		if again {
			pr.kickLoop()
		}
		return
	}
	// One fetch at a time: while the master pushes a table, every call
	// from a member that already took it shows the newer version, and
	// each would fetch the whole table again. Those that come meanwhile
	// wait for the fetch in flight, and fetch themselves only if it did
	// not bring a table as new as they were shown.
	for {
		pr.mu.Lock()
		wait := pr.fetching
		if wait == nil {
			pr.fetching = make(chan struct{})
		}
		pr.mu.Unlock()
		if wait == nil {
			break
		}
		select {
		case <-wait:
		case <-ctx.Done():
			return
		}
		if tv <= pr.TableVersion() {
			return
		}
	}
	defer func() {
		pr.mu.Lock()
		close(pr.fetching)
		pr.fetching = nil
		pr.mu.Unlock()
	}()
	if tv <= pr.TableVersion() {
		return
	}
	b, err := pr.Call(ctx, ms[0].RPC, mGetTab, Encode(getTabReq{Above: pr.TableVersion()}))
	if err != nil {
		return
	}
	var tm tableMsg
	if Decode(b, &tm) == nil {
		pr.install(tm.table())
	}
}

// fetchLoop fetches tables that answers showed to be newer.
func (pr *Protocol) fetchLoop() {
	defer pr.wg.Done()
	for {
		select {
		case <-pr.ctx.Done():
			return
		case addr := <-pr.fetch:
			ctx, cancel := context.WithTimeout(pr.ctx, 2*time.Second)
			pr.NoteTable(ctx, addr, pr.TableVersion()+1)
			cancel()
		}
	}
}

// askFetch queues a table fetch from addr.
func (pr *Protocol) AskFetch(addr string) {
	select {
	case pr.fetch <- addr:
	default:
	}
}

// ranked orders ms (given oldest first) the way the master is chosen:
// the members the installed table admitted, in its order, then the
// others as given. Whoever the table admitted first and is live is the
// master; a start time a member claims in its gossip metadata only ranks
// it against members no table admitted yet (before the first table, and
// members joining now), so a member that joins claiming to be the oldest
// cannot take the mastership.
func (pr *Protocol) ranked(ms []Member) []Member {
	t, _ := pr.Table()
	if t == nil || len(t.Order) == 0 || len(ms) < 2 {
		return ms
	}
	rank := make(map[string]int, len(t.Order))
	for i, id := range t.Order {
		rank[id] = i
	}
	out := slices.Clone(ms)
	slices.SortStableFunc(out, func(a, b Member) int {
		ra, oka := rank[a.ID]
		rb, okb := rank[b.ID]
		switch {
		case oka && okb:
			return ra - rb
		case oka:
			return -1
		case okb:
			return 1
		}
		return 0
	})
	return out
}

// ViewRanked returns the view's live members, the master first, in the
// order the master is chosen (see ranked).
func (pr *Protocol) ViewRanked() []Member { return pr.ranked(pr.view.Members()) }
