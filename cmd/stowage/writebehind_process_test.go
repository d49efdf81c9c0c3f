package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// wbDelay is the write-delay-seconds of the loss-window test, and
// wbWindow the loss window it asserts: the delay, plus the flusher's tick
// and the time one batch takes to store on a busy machine.
const (
	wbDelay  = 1
	wbWindow = wbDelay*time.Second + time.Second
)

// writeBehindConfig turns c's engine* maps to write-behind with the
// given delay (seconds).
func writeBehindConfig(t *testing.T, c *demoCluster, delay int) {
	t.Helper()
	p := filepath.Join(c.cfgDir, "hazelcast.yaml")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	y := strings.Replace(string(b), "        initial-mode: EAGER\n",
		fmt.Sprintf("        initial-mode: EAGER\n        write-delay-seconds: %d\n        write-batch-size: 500\n        write-coalescing: true\n", delay), 1)
	if y == string(b) {
		t.Fatal("hazelcast.yaml has no engine* map-store to turn to write-behind")
	}
	if err := os.WriteFile(p, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
}

// put is one HTTP PUT; it reports whether the member acknowledged it.
func put(client *http.Client, url, val string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, url, strings.NewReader(val))
	if err != nil {
		return false
	}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == http.StatusNoContent
}

// The loss window of write-behind on a full crash, measured: three member
// processes with write-delay-seconds 1 take writes (each a new key) until
// every member is SIGKILLed; after a restart every write acknowledged
// more than wbWindow before the kill is there, and the test reports how
// many of the later ones were lost.
func TestClusterProcessesWriteBehindLossWindow(t *testing.T) {
	c := testCluster(t, "wb", 3)
	writeBehindConfig(t, c, wbDelay)
	startMembers(t, c, 3)
	addrs := c.addrs()
	type ack struct {
		key string
		at  time.Time
	}
	var (
		mu    sync.Mutex
		acked []ack
	)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w, a := range addrs {
		wg.Go(func() {
			client := &http.Client{}
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				key := fmt.Sprintf("w%d-%06d", w, i)
				if put(client, fmt.Sprintf("http://%s/v1/maps/engine_runningJobState/entries/%s", a, key), key) {
					mu.Lock()
					acked = append(acked, ack{key, time.Now()})
					mu.Unlock()
				}
			}
		})
	}
	// Long enough for the queue to have been stored many times over.
	time.Sleep(4*wbWindow + 2*time.Second)
	killAt := time.Now()
	c.killAll()
	close(stop)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(acked) == 0 {
		t.Fatal("no write was acknowledged")
	}

	// As the TTL test does, the members start again a moment after the
	// kill, not at once: what is measured is on disk already.
	time.Sleep(2 * time.Second)
	startMembers(t, c, 3)
	var lostAges []time.Duration
	old := 0
	for i, k := range acked {
		u := fmt.Sprintf("http://%s/v1/maps/engine_runningJobState/entries/%s", c.addrs()[i%3], k.key)
		code, body := httpDo(t, http.MethodGet, u, "")
		age := killAt.Sub(k.at)
		if age > wbWindow {
			old++
		}
		switch {
		case code == http.StatusOK && body == k.key:
		case code == http.StatusNotFound:
			lostAges = append(lostAges, age)
		default:
			t.Fatalf("GET %s after the restart: %d %q", u, code, body)
		}
	}
	sort.Slice(lostAges, func(i, j int) bool { return lostAges[i] > lostAges[j] })
	var oldest time.Duration
	if len(lostAges) > 0 {
		oldest = lostAges[0]
	}
	t.Logf("write-behind, write-delay-seconds %d: %d writes acknowledged, %d of them more than %s before the SIGKILL of every member; lost %d, the oldest acknowledged %s before the kill",
		wbDelay, len(acked), old, wbWindow, len(lostAges), oldest.Round(time.Millisecond))
	if old == 0 {
		t.Fatalf("no write was acknowledged more than %s before the kill: the test measured nothing", wbWindow)
	}
	if oldest > wbWindow {
		n := 0
		for _, a := range lostAges {
			if a > wbWindow {
				n++
			}
		}
		t.Fatalf("%d writes acknowledged more than %s before the kill were lost (the oldest %s before it)", n, wbWindow, oldest)
	}
}
