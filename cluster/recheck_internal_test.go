package cluster

import (
	"context"
	"log/slog"
	"testing"
	"time"
)

// Tests of the re-check of members taken as gone (recheckDown): an
// answer at a gone member's address counts for it only if the process
// that answered is that member.

// recheckAsker is member a with old, at transport address "c", taken as
// gone long enough ago to be asked again; view is a's view of the
// members.
func recheckAsker(t *testing.T, n *MemNetwork, view ...Member) *Protocol {
	t.Helper()
	tr := n.Transport("a")
	v := NewStaticView(view[0])
	v.Set(view...)
	pr := NewProtocol(ProtocolConfig{View: v, Transport: tr, Partitions: 4, Replicas: 2, Timeout: 2 * time.Second,
		Logger: slog.New(slog.DiscardHandler)})
	pr.Serve()
	t.Cleanup(func() { pr.Stop(); tr.Close() })
	pr.Members() // learns the addresses, as Start does
	pr.mu.Lock()
	pr.down["c-1"] = time.Now().Add(-time.Second)
	pr.mu.Unlock()
	return pr
}

// isDown reports whether pr still takes id as gone.
func isDown(pr *Protocol, id string) bool {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	_, down := pr.down[id]
	return down
}

// answering starts a member with id at transport address addr of n that
// answers calls with the member protocol.
func answering(t *testing.T, n *MemNetwork, id, addr string, view ...Member) {
	t.Helper()
	tr := n.Transport(addr)
	v := NewStaticView(Member{ID: id, RPC: addr, Started: time.Unix(9, 0)})
	v.Set(view...)
	pr := NewProtocol(ProtocolConfig{View: v, Transport: tr, Partitions: 4, Replicas: 2, Timeout: 2 * time.Second,
		Logger: slog.New(slog.DiscardHandler)})
	pr.Serve()
	t.Cleanup(func() { pr.Stop(); tr.Close() })
}

var (
	recheckA    = Member{ID: "a-1", RPC: "a", Started: time.Unix(1, 0)}
	recheckOld  = Member{ID: "c-1", RPC: "c", Started: time.Unix(2, 0)}
	recheckNew  = Member{ID: "c-2", RPC: "c", Started: time.Unix(9, 0)}
	recheckBare = tableMsg{Version: 3} // an answer from a member that names nobody
)

// The process at the gone member's address is the member started again
// under a new id, before the view shows the new id: the old id stays
// gone. The same member itself answering is taken back.
func TestRecheckCountsOnlyTheMemberItself(t *testing.T) {
	n := NewMemNetwork()
	pr := recheckAsker(t, n, recheckA, recheckOld)
	answering(t, n, recheckNew.ID, "c", recheckA, recheckNew)
	pr.recheckDown()
	if !isDown(pr, recheckOld.ID) {
		t.Fatal("c-1 taken back on an answer from c-2, the member started again at its address")
	}
	if ms := pr.Members(); len(ms) != 1 || ms[0].ID != recheckA.ID {
		t.Fatalf("members after the re-check: %v, want a-1 alone", ms)
	}

	n2 := NewMemNetwork()
	pr2 := recheckAsker(t, n2, recheckA, recheckOld)
	answering(t, n2, recheckOld.ID, "c", recheckA, recheckOld)
	pr2.recheckDown()
	if isDown(pr2, recheckOld.ID) {
		t.Fatal("c-1 answering for itself is still taken as gone")
	}
}

// A member that predates the id in gettab's answer names nobody: its
// answer counts unless the view shows a member started later at the
// address.
func TestRecheckAnswerNamingNobody(t *testing.T) {
	for _, tc := range []struct {
		name string
		view []Member
		back bool
	}{
		{"address of the gone member alone", []Member{recheckA, recheckOld}, true},
		{"a newer member at the address", []Member{recheckA, recheckOld, recheckNew}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := NewMemNetwork()
			pr := recheckAsker(t, n, tc.view...)
			old := n.Transport("c")
			t.Cleanup(func() { old.Close() })
			old.SetHandler(func(context.Context, string, string, []byte) ([]byte, error) {
				return Encode(recheckBare), nil
			})
			pr.recheckDown()
			if back := !isDown(pr, recheckOld.ID); back != tc.back {
				t.Fatalf("c-1 taken back: %v, want %v", back, tc.back)
			}
		})
	}
}

// An answer that is not a version-only gettab answer, or names an id
// longer than any member's, does not count.
func TestRecheckAnswerBounded(t *testing.T) {
	pr := NewProtocol(ProtocolConfig{View: NewStaticView(recheckA), Partitions: 4, Replicas: 2})
	long := make([]byte, maxAnsweredID+1)
	for i := range long {
		long[i] = 'c'
	}
	for name, b := range map[string][]byte{
		"id too long": Encode(tableMsg{Version: 3, ID: string(long)}),
		"whole table": Encode(tableMsg{Version: 3, Owners: [][]string{{"c-1"}}, ID: "c-1"}),
		"not msgpack": []byte{0xc1},
	} {
		if back, other := pr.answeredAs("c-1", "c", b); back || other != "" {
			t.Errorf("%s: taken back %v, other %q; want neither", name, back, other)
		}
	}
	if back, _ := pr.answeredAs("c-1", "c", Encode(tableMsg{Version: 3, ID: "c-1"})); !back {
		t.Error("c-1's own answer not taken")
	}
}

// The master's check of a member it has not heard from (checkReach) is
// answered at the member's address by the member started again there
// under a new id, which the view does not show yet: the member is taken
// as gone. The member itself answering is heard.
func TestReachCheckCountsOnlyTheMemberItself(t *testing.T) {
	for _, tc := range []struct {
		answer string
		gone   bool
	}{{recheckNew.ID, true}, {recheckOld.ID, false}} {
		t.Run("answered by "+tc.answer, func(t *testing.T) {
			pr := askerOfLiveOld(t, tc.answer)
			ms := pr.Members()
			pr.reach.mu.Lock()
			pr.reach.heard = map[string]time.Time{recheckOld.ID: time.Now().Add(-time.Hour)}
			pr.reach.mu.Unlock()
			pr.checkReach(ms)
			deadline := time.Now().Add(5 * time.Second)
			for {
				pr.reach.mu.Lock()
				checking := pr.reach.checking
				pr.reach.mu.Unlock()
				if !checking {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the reach check did not end")
				}
				time.Sleep(time.Millisecond)
			}
			if gone := isDown(pr, recheckOld.ID); gone != tc.gone {
				t.Fatalf("c-1 taken as gone: %v, want %v", gone, tc.gone)
			}
			pr.reach.mu.Lock()
			heard := time.Since(pr.reach.heard[recheckOld.ID]) < time.Minute
			pr.reach.mu.Unlock()
			if heard == tc.gone {
				t.Fatalf("c-1 heard: %v, want %v", heard, !tc.gone)
			}
		})
	}
}

// A member whose connection to c-1 was refused asks the master to check
// it (suspect); at c-1's address c-2 answers, the member started again
// there: the master takes c-1 as gone. c-1 itself answering is not.
func TestSuspectCheckAnsweredByAnotherMember(t *testing.T) {
	for _, tc := range []struct {
		answer string
		gone   bool
	}{{recheckNew.ID, true}, {recheckOld.ID, false}} {
		t.Run("answered by "+tc.answer, func(t *testing.T) {
			pr := askerOfLiveOld(t, tc.answer)
			if _, err := pr.dispatch(testCtx(t), "b", mSuspect, pr.frame([]byte(recheckOld.ID))); err != nil {
				t.Fatal(err)
			}
			if gone := isDown(pr, recheckOld.ID); gone != tc.gone {
				t.Fatalf("c-1 taken as gone: %v, want %v", gone, tc.gone)
			}
		})
	}
}

// askerOfLiveOld is a member that takes c-1 as live, with answer
// answering at c-1's address.
func askerOfLiveOld(t *testing.T, answer string) *Protocol {
	t.Helper()
	n := NewMemNetwork()
	pr := recheckAsker(t, n, recheckA, recheckOld)
	pr.mu.Lock()
	delete(pr.down, recheckOld.ID)
	pr.mu.Unlock()
	answering(t, n, answer, "c", recheckA, recheckOld)
	return pr
}
