package partition_test

import (
	"slices"
	"testing"

	"github.com/stowage/stowage/partition"
)

// A member that fails (no graceful leave) within its grace period: the
// partitions it owned get an owner at once, its backup slots stay empty
// and held for it; back in time, it takes exactly those slots again;
// once its grace ran out, the slots are filled as any gap.
func TestAssignHoldingKeepsTheSlotsOfAMemberAway(t *testing.T) {
	const parts, backups = 60, 2
	all := names(5)
	gone := all[2]
	rest := slices.DeleteFunc(slices.Clone(all), func(m string) bool { return m == gone })
	t1 := partition.Assign(all, parts, backups, nil)

	t2 := partition.AssignHolding(rest, parts, backups, t1, []string{gone})
	held := 0
	for p, rs := range t2.Owners {
		if slices.Contains(rs, gone) {
			t.Fatalf("partition %d lists %s, which is gone: %v", p, gone, rs)
		}
		if rs[0] != t1.Owners[p][0] && t1.Owners[p][0] != gone {
			t.Errorf("partition %d changed owner %s -> %s though its owner stayed", p, t1.Owners[p][0], rs[0])
		}
		was := slices.Contains(t1.Owners[p], gone)
		away := t2.AwayFrom(p)
		switch {
		case was && (len(away) != 1 || away[0] != gone || len(rs) != backups):
			t.Errorf("partition %d: replicas %v away %v; want %d live replicas and %s's slot held", p, rs, away, backups, gone)
		case !was && (len(away) != 0 || !slices.Equal(rs, t1.Owners[p])):
			t.Errorf("partition %d, which %s did not hold: %v away %v, was %v", p, gone, rs, away, t1.Owners[p])
		}
		if was {
			held++
		}
	}
	if held == 0 {
		t.Fatal("the member that left held no partition; the test shows nothing")
	}

	// Back within the grace: its slots again, and nothing else moves
	// but ownership balance.
	t3 := partition.AssignHolding(all, parts, backups, t2, []string{gone})
	check(t, t3, all, parts, backups)
	for p, rs := range t3.Owners {
		if len(t3.AwayFrom(p)) != 0 {
			t.Errorf("partition %d still holds %v for members back", p, t3.AwayFrom(p))
		}
		if t1.Owners[p][0] == gone && rs[0] != gone {
			t.Errorf("partition %d: owned by %s after the return; %s owned it before the leave", p, rs[0], gone)
		}
		if slices.Contains(t1.Owners[p], gone) != slices.Contains(rs, gone) {
			t.Errorf("partition %d: %v after the return, %v before the leave", p, rs, t1.Owners[p])
		}
		for _, m := range rs {
			if !slices.Contains(t1.Owners[p], m) {
				t.Errorf("partition %d: %s is a replica after the return (%v) and was not before the leave (%v)", p, m, rs, t1.Owners[p])
			}
		}
	}

	// Fewer members than replicas: a held slot never puts a live
	// replica out.
	three := names(3)
	s1 := partition.Assign(three, parts, backups, nil)
	s2 := partition.AssignHolding(three[:2], parts, backups, s1, three[2:])
	for p, rs := range s2.Owners {
		if len(rs) != 2 {
			t.Errorf("3 members, 2 backups, one away: partition %d has replicas %v, away %v; want both live members", p, rs, s2.AwayFrom(p))
		}
	}

	// The grace ran out: the slots are given to the others.
	t4 := partition.AssignHolding(rest, parts, backups, t2, nil)
	check(t, t4, rest, parts, backups)
	for p := range t4.Owners {
		if len(t4.AwayFrom(p)) != 0 {
			t.Errorf("partition %d holds %v after the grace", p, t4.AwayFrom(p))
		}
	}
}
