package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
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

// graceMap is the map the grace test fills so that partitions hold
// enough entries for a delta (64 a partition at least).
const graceMap = "engine_grace"

// bulkPut writes the keys prefix-<n> for n in [from, to) with values
// tag-<n> through member i, 5000 a request.
func (c *partitionCluster) bulkPut(ctx context.Context, i int, prefix, tag string, from, to int) error {
	for lo := from; lo < to; lo += 5000 {
		type entry struct {
			Key   string `json:"key"`
			Value string `json:"value"`
		}
		var req struct {
			Entries []entry `json:"entries"`
		}
		for n := lo; n < min(lo+5000, to); n++ {
			req.Entries = append(req.Entries, entry{fmt.Sprintf("%s-%06d", prefix, n), fmt.Sprintf("%s-%06d-%s", tag, n, strings.Repeat(".", 64))})
		}
		body, _ := json.Marshal(req)
		if err := c.post(ctx, i, "/v1/maps/"+graceMap+"/bulk/put", body, nil); err != nil {
			return err
		}
	}
	return nil
}

// bulkCheck reads the keys prefix-<n> for n in [0, to) through member i
// and returns how many do not hold the value want(n) wrote.
func (c *partitionCluster) bulkCheck(ctx context.Context, i int, prefix string, to int, want func(n int) string) (int, error) {
	bad := 0
	for lo := 0; lo < to; lo += 5000 {
		var req struct {
			Keys []string `json:"keys"`
		}
		for n := lo; n < min(lo+5000, to); n++ {
			req.Keys = append(req.Keys, fmt.Sprintf("%s-%06d", prefix, n))
		}
		var resp struct {
			Entries []struct {
				Key   string `json:"key"`
				Value string `json:"value"`
			} `json:"entries"`
		}
		body, _ := json.Marshal(req)
		if err := c.post(ctx, i, "/v1/maps/"+graceMap+"/bulk/get", body, &resp); err != nil {
			return 0, err
		}
		got := map[string]string{}
		for _, e := range resp.Entries {
			got[e.Key] = e.Value
		}
		for n := lo; n < min(lo+5000, to); n++ {
			if v := got[fmt.Sprintf("%s-%06d", prefix, n)]; v != fmt.Sprintf("%s-%06d-%s", want(n), n, strings.Repeat(".", 64)) {
				bad++
			}
		}
	}
	return bad, nil
}

// post sends body to member i's path and decodes the answer into out
// (when not nil).
func (c *partitionCluster) post(ctx context.Context, i int, path string, body []byte, out any) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+c.addr(i)+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("POST %s at member %d: %s %s", path, i, resp.Status, b)
	}
	if out == nil {
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(out)
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
	// 100 entries a partition: the fills and hand-overs on member 3's
	// return are deltas.
	const bulk = 27100
	if err := c.bulkPut(ctx, 1, "k", "before", 0, bulk); err != nil {
		t.Fatal(err)
	}
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
	// One entry in fifty written again while member 3 is away.
	for n := 0; n < bulk; n += 50 {
		if err := c.bulkPut(ctx, 1, "k", "during", n, n+1); err != nil {
			t.Fatal(err)
		}
	}

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
	t.Logf("member 3 held %d slots (%d owned), about %d entries of %s: members 1 and 2 sent %.0f deltas, leaving out %.0f entries member 3 held", len(slots), len(owned), bulk*len(slots)/len(before.Replicas), graceMap, deltas, saved)
	if deltas == 0 {
		t.Error("no delta sent to member 3 on its return")
	}
	wrong, err := c.bulkCheck(ctx, 3, "k", bulk, func(n int) string {
		if n%50 == 0 {
			return "during"
		}
		return "before"
	})
	if err != nil || wrong != 0 {
		t.Errorf("%d of the %d bulk entries read back wrong through member 3 (%v)", wrong, bulk, err)
	}
	c.setFaulty(0)
	r.progress(t, "writes after the heal", 300)
	pr.check(t, cut)
}

// Member 3 is killed (SIGKILL) while the members have a backup grace, and
// started again once the majority holds its slots: it comes back under a
// new id (the id carries the start time) at its address, takes exactly
// the slots held for its old id and owns again what that owned; the old
// id is held for no more. Its memory is empty after the restart, so it
// is filled whole. Nothing acknowledged is lost and the history is
// linearizable: a read the others forward to it while it takes its
// partitions back, before it holds any map, waits for the hand-over and
// finds what the hand-over brought.
func TestClusterNetworkMemberRestartedWithinGrace(t *testing.T) {
	const grace = 90 * time.Second
	ctx := context.Background()
	pr := startPartitionRun(t, localLabStorage, "--backup-grace", grace.String())
	c, r := pr.c, pr.linRun
	const bulk = 27100
	if err := c.bulkPut(ctx, 1, "k", "before", 0, bulk); err != nil {
		t.Fatal(err)
	}
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

	c.setFaulty(3)
	killed := time.Now()
	c.mu.Lock()
	old := c.nodes[2]
	c.mu.Unlock()
	old.kill()
	deadline := time.Now().Add(60 * time.Second)
	for {
		st, err := c.status(ctx, 1)
		if err == nil && slices.Equal(heldFor(st, id3), slots) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the majority's table does not hold member 3's %d slots within 60s of the kill (%v)", len(slots), err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	r.progress(t, "writes while member 3 is down", 300)
	for n := 0; n < bulk; n += 50 {
		if err := c.bulkPut(ctx, 1, "k", "during", n, n+1); err != nil {
			t.Fatal(err)
		}
	}

	c.start(ctx, 3)
	took, err := c.converged(ctx, 90*time.Second, 1, 2, 3)
	if err != nil {
		t.Fatalf("after the restart: %v", err)
	}
	t.Logf("member 3 killed, started again and converged %v after the kill (%v after the start)", time.Since(killed).Round(time.Millisecond), took.Round(time.Millisecond))
	if since := time.Since(killed); since >= grace {
		t.Fatalf("member 3 back %v after the kill, past the grace: the test shows nothing", since)
	}
	st3, err = c.status(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	after, err := c.status(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if st3.Self == id3 {
		t.Fatalf("member 3 restarted under its old id %s", id3)
	}
	slotsAfter, ownedAfter := partitionsOf(after, st3.Self)
	if !slices.Equal(slotsAfter, slots) || !slices.Equal(ownedAfter, owned) {
		t.Errorf("member 3 restarted (%s) holds slots %v and owns %v; before the kill (%s) %v and %v", st3.Self, slotsAfter, ownedAfter, id3, slots, owned)
	}
	if s, o := partitionsOf(after, id3); len(after.Away) != 0 || len(s)+len(o) != 0 {
		t.Errorf("the table still names the old id or holds slots: away %v, replica of %v", after.Away, s)
	}
	wrong, err := c.bulkCheck(ctx, 3, "k", bulk, func(n int) string {
		if n%50 == 0 {
			return "during"
		}
		return "before"
	})
	if err != nil || wrong != 0 {
		t.Errorf("%d of the %d bulk entries read back wrong through member 3 (%v)", wrong, bulk, err)
	}
	t.Logf("member 3 restarted took %d slots (%d owned) back", len(slotsAfter), len(ownedAfter))
	c.setFaulty(0)
	r.progress(t, "writes after the restart", 300)
	pr.check(t, killed)
}
