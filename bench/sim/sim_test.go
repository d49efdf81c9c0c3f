package sim_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stowage/stowage/bench/sim"
)

// A cluster grown to 25 members one at a time, then shrunk by failures of
// one and of three members at once and a master failure, with writers
// running: every step converges, copies close to the least data it
// needs, and no acknowledged write is lost.
func TestSimulation25(t *testing.T) {
	if testing.Short() {
		t.Skip("a 25-member simulation")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := sim.Run(ctx, sim.Options{Members: 25, Quiet: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	joins := 0
	for _, st := range res.Steps {
		t.Logf("%-11s %3d members: converged in %v, %d owners moved, %d copies (least %.1f), control %.0f B/s per member (table %.0f, lease %.0f)",
			st.What, st.Members, st.Converge.Round(time.Millisecond), st.Owners, st.Copies, st.Ideal, st.ControlPerMember, st.QuietTable, st.QuietLease)
		if st.What == "join" {
			joins++
		}
		if st.Ideal > 0 && float64(st.Copies) > math.Ceil(1.25*st.Ideal) {
			t.Errorf("%s to %d members copied %d replicas, the least needed is %.1f", st.What, st.Members, st.Copies, st.Ideal)
		}
		if st.What == "kill master" && st.NewMaster <= 0 {
			t.Errorf("kill master: no table from a new master was seen")
		}
	}
	if joins != 24 {
		t.Errorf("%d joins, want 24", joins)
	}
	if res.Acked == 0 {
		t.Fatal("no write was acknowledged")
	}
	if res.Lost != 0 {
		t.Fatalf("%d of %d acknowledged keys lost", res.Lost, res.Acked)
	}
	t.Logf("%d steps; %d writes acknowledged, %d failed, 0 lost; heap %d KiB per member", len(res.Steps), res.Acked, res.Failed, res.HeapPerMember>>10)
}

// The membership layer's traffic is counted: ten members exchange probes
// and gossip, and each member's byte rate is within what its probes alone
// cannot stay under (a probe and its ack each second) and far below a
// full state exchange per second.
func TestGossipMeasured(t *testing.T) {
	if testing.Short() {
		t.Skip("ten memberlist members for a few seconds")
	}
	perMember, err := sim.Gossip(context.Background(), 10, time.Second, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("membership traffic: %.0f B/s per member at 10 members", perMember)
	if perMember < 50 || perMember > 100_000 {
		t.Fatalf("membership traffic %.0f B/s per member: not what 10 members probing each other send", perMember)
	}
}

// With a backup grace, the member cut off and back takes its replica
// slots again: next to nothing is copied to a member that was not a
// replica of the partition before the cut (without the grace, about the
// member's share of slots, 54 at 10 members, is).
func TestSimulationCutWithinGrace(t *testing.T) {
	if testing.Short() {
		t.Skip("a 10-member simulation")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := sim.Run(ctx, sim.Options{Members: 10, Quiet: 50 * time.Millisecond, Grace: time.Minute, NoFailures: true})
	if err != nil {
		t.Fatal(err)
	}
	cut := false
	for _, st := range res.Steps {
		if st.What != "cut and back" {
			continue
		}
		cut = true
		t.Logf("cut and back at %d members: converged in %v, %d owners moved, %d copies", st.Members, st.Converge.Round(time.Millisecond), st.Owners, st.Copies)
		if share := 271 * 2 / st.Members; st.Copies*10 > share {
			t.Errorf("cut and back within the grace copied %d replicas to members that did not hold them", st.Copies)
		}
	}
	if !cut {
		t.Fatal("no cut and back step")
	}
	if res.Lost != 0 {
		t.Fatalf("%d of %d acknowledged keys lost", res.Lost, res.Acked)
	}
}
