package main

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// Three member processes take entries with a time to live (HTTP PUT
// ?ttl=) and without; every member is SIGKILLed before the deadline, and
// the cluster started again after it: none of the expired entries comes
// back, through any member, and every other entry does.
func TestClusterProcessesRestartAfterTTL(t *testing.T) {
	c := testCluster(t, "ttl", 3)
	startMembers(t, c, 3)
	const dying, kept = 60, 20
	const ttl = 3 * time.Second
	addrs := c.addrs()
	for i := 0; i < dying+kept; i++ {
		u := fmt.Sprintf("http://%s/v1/maps/engine_finishedJobs/entries/job-%03d", addrs[i%len(addrs)], i)
		if i < dying {
			u += "?ttl=" + ttl.String()
		}
		if code, body := httpDo(t, http.MethodPut, u, "state"); code != http.StatusNoContent {
			t.Fatalf("PUT %s: %d %s", u, code, body)
		}
	}
	written := time.Now() // every deadline is before written+ttl
	c.killAll()
	if d := time.Until(written.Add(ttl + 100*time.Millisecond)); d > 0 {
		time.Sleep(d)
	}
	startMembers(t, c, 3)
	for _, a := range c.addrs() {
		for i := 0; i < dying+kept; i++ {
			u := fmt.Sprintf("http://%s/v1/maps/engine_finishedJobs/entries/job-%03d", a, i)
			code, body := httpDo(t, http.MethodGet, u, "")
			want := http.StatusOK
			if i < dying {
				want = http.StatusNotFound
			}
			if code != want {
				t.Fatalf("GET %s after the restart: %d %s, want %d", u, code, body, want)
			}
		}
	}
}
