package cluster

import (
	"context"
	"slices"
	"sync"
	"time"
)

// A member that answers gossip but not the member protocol (a firewall
// rule on one port, a transport that hangs) stays alive to failure
// detection, so the master would keep it in every table: its partitions
// would be served by nobody, and writes through the others would wait on
// it. The master notices instead. Every member asks the master for its
// table version in each lease round (the oldest members are always asked,
// see leaseTargets); a member the master has not heard from for
// unreachableAfter is asked directly, and if that call fails too, the
// master takes it as gone (down, as a refused connection does): it is
// left out of the next tables and asked again on every turn of the master
// loop (recheckDown) until it answers, and then taken back.
//
// The other members learn it from the table: a member that the current
// table no longer names, that does not answer and whose lease must have
// ended (the table was installed here longer than two leases ago) is not
// waited for by a take-over (see Unneeded).

// unreachableAfter is how long the master waits without a call from a
// live member before it asks it directly; reachTimeout bounds that call.
func (pr *Protocol) unreachableAfter() time.Duration {
	return 3 * max(pr.leaseFor, time.Second)
}

const reachTimeout = 2 * time.Second

// reach is the master's record of when it last heard from each member.
type reach struct {
	mu       sync.Mutex
	heard    map[string]time.Time
	checking bool
}

// noteHeard records a call from the member at transport address from.
func (pr *Protocol) noteHeard(from string) {
	id := pr.IDOf(from)
	if id == "" {
		return
	}
	pr.reach.mu.Lock()
	if pr.reach.heard == nil {
		pr.reach.heard = map[string]time.Time{}
	}
	pr.reach.heard[id] = time.Now()
	pr.reach.mu.Unlock()
}

// checkReach is run by the master on each turn of its loop with the live
// members: those not heard from for unreachableAfter are asked, in the
// background, and those that do not answer are taken as gone.
func (pr *Protocol) checkReach(ms []Member) {
	if pr.tr == nil {
		return
	}
	now := time.Now()
	pr.reach.mu.Lock()
	if pr.reach.checking {
		pr.reach.mu.Unlock()
		return
	}
	if pr.reach.heard == nil {
		pr.reach.heard = map[string]time.Time{}
	}
	var ask []Member
	for _, m := range ms {
		if m.ID == pr.self || m.RPC == "" {
			continue
		}
		last, ok := pr.reach.heard[m.ID]
		if !ok {
			pr.reach.heard[m.ID] = now // first seen: give it its time
			continue
		}
		if now.Sub(last) > pr.unreachableAfter() {
			ask = append(ask, m)
		}
	}
	for id := range pr.reach.heard {
		if id != pr.self && !slices.ContainsFunc(ms, func(m Member) bool { return m.ID == id }) {
			delete(pr.reach.heard, id)
		}
	}
	if len(ask) == 0 {
		pr.reach.mu.Unlock()
		return
	}
	pr.reach.checking = true
	pr.reach.mu.Unlock()
	started := pr.Go(func() {
		defer func() {
			pr.reach.mu.Lock()
			pr.reach.checking = false
			pr.reach.mu.Unlock()
		}()
		var wg sync.WaitGroup
		gone := make([]bool, len(ask))
		// others[i]: the member that answered at ask[i]'s address in
		// its place (a process started again there under a new id).
		others := make([]string, len(ask))
		for i, m := range ask {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(pr.ctx, reachTimeout)
				defer cancel()
				b, err := pr.tr.Call(ctx, m.RPC, mLease, pr.frame(Encode(leaseMsg{TV: pr.TableVersion(), Who: true})))
				if err == nil {
					back, other := pr.leaseAnsweredAs(m.ID, m.RPC, b)
					if back {
						pr.reach.mu.Lock()
						pr.reach.heard[m.ID] = time.Now()
						pr.reach.mu.Unlock()
					}
					gone[i], others[i] = other != "", other
					return
				}
				gone[i] = pr.ctx.Err() == nil
			}()
		}
		wg.Wait()
		marked := false
		for i, m := range ask {
			if !gone[i] {
				continue
			}
			if others[i] != "" {
				pr.noteReplaced(m.ID, others[i])
				continue
			}
			if pr.markDown(m.ID) {
				marked = true
				pr.log.Warn("stowage: member is alive to gossip but does not answer the member protocol: taken as gone until it answers",
					"member", m.ID, "silent", pr.unreachableAfter())
			}
		}
		if marked {
			pr.kickLoop()
		}
	})
	if !started {
		pr.reach.mu.Lock()
		pr.reach.checking = false
		pr.reach.mu.Unlock()
	}
}

// Unneeded reports whether a take-over need not wait for member id,
// which did not answer: the current table does not name it, and it was
// installed here more than two leases ago, so id either learnt of it or
// could not renew its lease with anyone (every member asks the master,
// which published it). Without leases a silent member is always waited
// for.
func (pr *Protocol) Unneeded(id string) bool {
	if pr.leaseFor <= 0 {
		return false
	}
	pr.mu.Lock()
	t, at := pr.table, pr.tabAt
	pr.mu.Unlock()
	if t == nil || time.Since(at) < 2*pr.leaseFor {
		return false
	}
	for _, rs := range t.Owners {
		for _, m := range rs {
			if m == id {
				return false
			}
		}
	}
	return true
}

// maxAnsweredID bounds the member id an answer names: ids are
// "host:port-<start Unix nanos>" with a host name of at most 255 bytes.
// The answers that name one (a version-only gettab, a lease) are a few
// bytes beside it: a longer answer is not one, and is not decoded.
const maxAnsweredID = 512

// answeredAs reports whether b, the answer to a version-only gettab sent
// to transport address addr, came from member id itself; other is the
// member it came from when that is not id ("" when that is not known or
// b is not a version-only answer). A member started again at id's
// address answers with its new id: id is still gone.
func (pr *Protocol) answeredAs(id, addr string, b []byte) (back bool, other string) {
	if len(b) > maxAnsweredID+64 {
		return false, ""
	}
	var tm tableMsg
	if err := Decode(b, &tm); err != nil || len(tm.ID) > maxAnsweredID || len(tm.Owners) > 0 {
		return false, ""
	}
	return pr.namedAs(id, addr, tm.ID)
}

// leaseAnsweredAs is answeredAs of the answer b to a lease call that
// asked who answers (leaseMsg.Who).
func (pr *Protocol) leaseAnsweredAs(id, addr string, b []byte) (back bool, other string) {
	if len(b) > maxAnsweredID+64 {
		return false, ""
	}
	var lm leaseMsg
	if err := Decode(b, &lm); err != nil || len(lm.ID) > maxAnsweredID {
		return false, ""
	}
	return pr.namedAs(id, addr, lm.ID)
}

// namedAs reports whether an answer from transport address addr that
// named member named came from member id; other is the member it came
// from when that is not id.
//
// A member that predates the naming names nobody (named is ""). Its
// answer counts for id unless the view shows a member at addr that
// started after id: one process listens at an address, so what answered
// is most likely that newer one (other). A restart the view does not
// show yet cannot be told from id that way, as before answers named
// their member.
func (pr *Protocol) namedAs(id, addr, named string) (back bool, other string) {
	if named != "" {
		if named == id {
			return true, ""
		}
		return false, named
	}
	ms := pr.view.Members()
	i := slices.IndexFunc(ms, func(m Member) bool { return m.ID == id })
	if i < 0 {
		return false, "" // failure detection has declared id dead
	}
	started := ms[i].Started
	for _, m := range ms {
		if m.RPC == addr && m.ID != id && m.Started.After(started) {
			return false, m.ID
		}
	}
	return true, ""
}
