package cluster

import (
	"fmt"
	"math/bits"
	"slices"
	"testing"
	"time"
)

// A lease round asks the oldest members (the master and those next in
// line) and a logarithmic number of the others, drawn anew each round:
// not every member, whose cost would grow with the square of the cluster.
func TestLeaseTargetsOldestAndLogarithmicSample(t *testing.T) {
	for _, n := range []int{2, 4, 5, 20, 100} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			ms := make([]Member, n)
			for i := range ms {
				id := fmt.Sprintf("m%03d", i)
				ms[i] = Member{ID: id, RPC: "rpc-" + id, Started: time.Unix(int64(i), 0)}
			}
			self := ms[n/2]
			view := NewStaticView(self)
			view.Set(ms...)
			pr := NewProtocol(ProtocolConfig{View: view, Partitions: 271, Replicas: 2})
			pr.Members()
			others := n - 1
			want := others
			if rest := others - leaseOldest; rest > 0 && bits.Len(uint(rest)) < rest {
				want = leaseOldest + bits.Len(uint(rest))
			}
			seen := map[string]bool{}
			for range 200 {
				got := pr.leaseTargets()
				if len(got) != want {
					t.Fatalf("%d members: a round asks %d, want %d: %v", n, len(got), want, got)
				}
				if slices.Contains(got, "rpc-"+self.ID) {
					t.Fatalf("a round asks this member itself: %v", got)
				}
				var oldest []string
				for _, m := range ms {
					if m.ID != self.ID && len(oldest) < leaseOldest {
						oldest = append(oldest, "rpc-"+m.ID)
					}
				}
				for _, o := range oldest {
					if !slices.Contains(got, o) {
						t.Fatalf("a round leaves out %s, one of the oldest: %v", o, got)
					}
				}
				for _, a := range got {
					seen[a] = true
				}
			}
			if len(seen) != others {
				t.Errorf("200 rounds asked %d distinct members of %d", len(seen), others)
			}
		})
	}
}
