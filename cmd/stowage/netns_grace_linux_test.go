package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// labStatus is the part of a member's GET /v1/status the grace test
// reads.
type labStatus struct {
	Self      string               `json:"self"`
	Owners    []string             `json:"owners"`
	Replicas  [][]string           `json:"replicas"`
	Away      [][]string           `json:"away"`
	AwaySince map[string]time.Time `json:"away_since"`
	Safe      bool                 `json:"safe"`
}

// status is member i's GET /v1/status.
func (c *partitionCluster) status(ctx context.Context, i int) (labStatus, error) {
	var st labStatus
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+c.addr(i)+"/v1/status", nil)
	if err != nil {
		return st, err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("GET /v1/status at member %d: %s", i, resp.Status)
	}
	return st, json.NewDecoder(resp.Body).Decode(&st)
}

// metric sums the samples of the counter name in member i's /metrics.
func (c *partitionCluster) metric(ctx context.Context, i int, name string) (float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+c.addr(i)+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sum := 0.0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && (f[0] == name || strings.HasPrefix(f[0], name+"{")) {
			v, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				return 0, fmt.Errorf("metric %s at member %d: %w", name, i, err)
			}
			sum += v
		}
	}
	return sum, sc.Err()
}

// partitionsOf returns the partitions whose replica set names id, and
// those it owns.
func partitionsOf(st labStatus, id string) (replica, owned []int) {
	for p, rs := range st.Replicas {
		if slices.Contains(rs, id) {
			replica = append(replica, p)
		}
		if p < len(st.Owners) && st.Owners[p] == id {
			owned = append(owned, p)
		}
	}
	return replica, owned
}

// heldFor returns the partitions whose slot st holds for id.
func heldFor(st labStatus, id string) []int {
	var out []int
	for p, a := range st.Away {
		if slices.Contains(a, id) {
			out = append(out, p)
		}
	}
	return out
}

// The minority test with a backup grace on the members: member 3's link
// goes down, the majority holds its slots (the status's away and
// away_since name it, and its partitions run with a backup fewer) while
// it serves; the link comes back within the grace, and member 3 takes
// exactly its slots again and owns again what it owned, brought up to
// date by deltas. The history is linearizable and every acknowledged
// write reads back.
func TestClusterNetworkPartitionWithinGrace(t *testing.T) {
	const grace = 90 * time.Second // far longer than the cut
	ctx := context.Background()
	pr := startPartitionRun(t, localLabStorage, "--backup-grace", grace.String())
	c, r := pr.c, pr.linRun
	before, err := c.status(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	st3, err := c.status(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	id3 := st3.Self
	slots, owned := partitionsOf(before, id3)
	if len(slots) == 0 || len(owned) == 0 || len(before.Away) != 0 {
		t.Fatalf("before the cut member 3 (%s) holds %d slots, owns %d, away %v", id3, len(slots), len(owned), before.Away)
	}

	c.setFaulty(3)
	cut := time.Now()
	linkDown.cut(c)
	acking, err := c.quiet(3, cut, 3*time.Second, 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the minority member acknowledged writes for %v after the cut", acking.Round(time.Millisecond))
	// The majority's table holds member 3's slots: every partition it
	// owned has a new owner, and no other member took a slot of it.
	var during labStatus
	deadline := time.Now().Add(60 * time.Second)
	for {
		during, err = c.status(ctx, 1)
		if err == nil && slices.Equal(heldFor(during, id3), slots) {
			if _, own := partitionsOf(during, id3); len(own) == 0 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the majority's table does not hold member 3's %d slots within 60s (%v, held %v)", len(slots), err, heldFor(during, id3))
		}
		time.Sleep(100 * time.Millisecond)
	}
	since, ok := during.AwaySince[id3]
	if !ok || since.Before(cut.Add(-time.Second)) || since.After(time.Now()) {
		t.Errorf("away_since %v, %v for member 3, cut at %v", since, ok, cut)
	}
	for _, p := range slots {
		if len(during.Replicas[p]) != 1 {
			t.Errorf("partition %d: replicas %v while member 3's slot is held", p, during.Replicas[p])
		}
	}
	r.progress(t, "writes on the majority side while member 3's slots are held", 300)

	linkDown.heal(c)
	took, err := c.converged(ctx, 90*time.Second, 1, 2, 3)
	if err != nil {
		t.Fatalf("after the heal: %v", err)
	}
	back := time.Since(cut)
	t.Logf("converged %v after the heal, member 3 back %v after the cut (grace %v)", took.Round(time.Millisecond), back.Round(time.Millisecond), grace)
	if back >= grace {
		t.Fatalf("member 3 back %v after the cut, past the grace: the test shows nothing", back)
	}
	after, err := c.status(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	slotsAfter, ownedAfter := partitionsOf(after, id3)
	if !slices.Equal(slotsAfter, slots) || !slices.Equal(ownedAfter, owned) {
		t.Errorf("member 3 holds slots %v and owns %v after its return; before the cut %v and %v", slotsAfter, ownedAfter, slots, owned)
	}
	if len(after.Away) != 0 || len(after.AwaySince) != 0 {
		t.Errorf("the table still holds %v (%v) with member 3 back", after.Away, after.AwaySince)
	}
	var deltas, saved float64
	for i := 1; i <= 2; i++ {
		d, err1 := c.metric(ctx, i, "stowage_partition_deltas_total")
		s, err2 := c.metric(ctx, i, "stowage_partition_delta_entries_saved_total")
		if err1 != nil || err2 != nil {
			t.Fatalf("metrics of member %d: %v %v", i, err1, err2)
		}
		deltas, saved = deltas+d, saved+s
	}
	t.Logf("member 3 held %d slots (%d owned): members 1 and 2 sent %.0f deltas, leaving out %.0f entries member 3 held", len(slots), len(owned), deltas, saved)
	if deltas == 0 {
		t.Error("no delta sent to member 3 on its return")
	}
	c.setFaulty(0)
	r.progress(t, "writes after the heal", 300)
	pr.check(t, cut)
}
