package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fl := flag.NewFlagSet("demo", flag.ContinueOnError)
	fl.SetOutput(stderr)
	dir := fl.String("dir", "", "working directory (default: a new temporary directory, removed afterwards)")
	members := fl.Int("members", 3, "cluster members (processes on 127.0.0.1)")
	writers := fl.Int("writers", 16, "concurrent writers")
	keep := fl.Bool("keep-running", false, "after the restart, leave the members serving (status page, HTTP API) until interrupted")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *members < 1 {
		return fmt.Errorf("--members %d: at least 1", *members)
	}
	if *dir == "" {
		d, err := os.MkdirTemp("", "stowage-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		*dir = d
	}
	base, err := freeMemberPorts(10)
	if err != nil {
		return err
	}
	cfgDir, dataDir := filepath.Join(*dir, "config"), filepath.Join(*dir, "data")
	err = writeConfigDirOn(cfgDir, "stowage-demo", filepath.Join(dataDir, "imap"), filepath.Join(dataDir, "checkpoint")+"/",
		netSpec{Port: base, Ports: 10, MinSize: *members, Backups: 1}, map[string]string{"storage.type": "hdfs", "fs.defaultFS": "file:///"})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "stowage demo: a %d-member cluster on 127.0.0.1 (member ports %d-%d), backup-count 1,\n", *members, base, base+9)
	fmt.Fprintf(stdout, "engine* maps persisted EAGER under %s (local files the members share)\n", dataDir)
	fmt.Fprintf(stdout, "config: %s; member logs: %s/member-N.log\n\n", cfgDir, *dir)
	c := &demoCluster{cfgDir: cfgDir, logDir: *dir}
	defer c.killAll()

	step := func(f string, a ...any) { fmt.Fprintf(stdout, f+"\n", a...) }
	start := time.Now()
	if err := c.start(ctx, *members); err != nil {
		return err
	}
	step("started %d members; loaded in %v", *members, time.Since(start).Round(time.Millisecond))
	step("%s", c.describe(ctx))

	wl := newWorkload("engine_runningJobState", *writers, 64)
	wctx, stopWriters := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { wl.run(wctx, c.addrs, 0, uint64(time.Now().UnixNano())); close(done) }()
	waitAcked := func(n int, limit time.Duration) bool {
		deadline := time.Now().Add(limit)
		for wl.acked() < n && time.Now().Before(deadline) && ctx.Err() == nil {
			time.Sleep(10 * time.Millisecond)
		}
		return wl.acked() >= n
	}
	waitAcked(2000, time.Minute)
	step("%d writers wrote job state through every member: %d writes acknowledged", *writers, wl.acked())

	if *members > 1 {
		victim := c.nodes[len(c.nodes)-1]
		before := wl.acked()
		killedAt := time.Now()
		c.kill(victim)
		step("SIGKILL one member while the writes run ...")
		if !waitAcked(before+2000, time.Minute) {
			stopWriters()
			<-done
			return fmt.Errorf("writes did not go on after a member died")
		}
		step("  writes went on through the others: %d more acknowledged within %v of the SIGKILL", wl.acked()-before, time.Since(killedAt).Round(time.Millisecond))
	}
	stopWriters()
	<-done
	total := wl.acked()
	step("SIGKILL every member ...")
	c.killAll()

	start = time.Now()
	if err := c.start(ctx, *members); err != nil {
		return err
	}
	step("started %d members again; every partition EAGER-loaded from the map store in %v", *members, time.Since(start).Round(time.Millisecond))
	checked, bad := 0, 0
	for i, addr := range c.addrs() {
		n, wrong, err := wl.verify(ctx, addr)
		if err != nil {
			return err
		}
		checked += n
		bad += len(wrong)
		for j, b := range wrong {
			if j == 5 {
				step("  ... and %d more", len(wrong)-5)
				break
			}
			step("  wrong: %s", b)
		}
		if i == 0 {
			step("read every key through member 1: %d keys checked, %d wrong", n, len(wrong))
		}
	}
	step("\n%d writes acknowledged in all; after the whole cluster was SIGKILLed and restarted, %d reads through %d members, %d wrong",
		total, checked, *members, bad)
	if bad > 0 {
		return exitError(1)
	}
	step("every acknowledged write came back.")
	if *keep {
		return c.keepRunning(ctx, stdout, cfgDir)
	}
	return nil
}

// keepRunning leaves the members serving until ctx ends (Ctrl-C, SIGTERM),
// then stops them.
func (c *demoCluster) keepRunning(ctx context.Context, stdout io.Writer, cfgDir string) error {
	as := c.addrs()
	fmt.Fprintf(stdout, "\nthe %d members keep running; Ctrl-C stops them.\n", len(as))
	for _, a := range as[1:] {
		fmt.Fprintf(stdout, "  member HTTP API: http://%s/\n", a)
	}
	fmt.Fprintf(stdout, "try: stowage inspect --config-dir %s maps\n", cfgDir)
	fmt.Fprintf(stdout, "     stowage inspect --config-dir %s stats engine_runningJobState\n", cfgDir)
	fmt.Fprintf(stdout, "status page: http://%s/\n", as[0])
	<-ctx.Done()
	c.stopAll(10 * time.Second)
	fmt.Fprintln(stdout, "members stopped.")
	return nil
}

// demoCluster is the demo's member processes.
type demoCluster struct {
	cfgDir, logDir string
	mu             sync.Mutex
	nodes          []*child
	n              int
}

// start starts k members at once and waits until the cluster is loaded.
func (c *demoCluster) start(ctx context.Context, k int) error {
	nodes := make([]*child, k)
	errs := make([]error, k)
	var wg sync.WaitGroup
	for i := range nodes {
		c.n++
		logPath := filepath.Join(c.logDir, fmt.Sprintf("member-%d.log", c.n))
		wg.Add(1)
		go func() {
			defer wg.Done()
			nodes[i], errs[i] = startNode(ctx, c.cfgDir, logPath)
		}()
	}
	wg.Wait()
	for _, n := range nodes {
		if n != nil {
			c.mu.Lock()
			c.nodes = append(c.nodes, n)
			c.mu.Unlock()
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, n := range nodes {
		if _, err := n.waitHealthy(ctx, 2*time.Minute); err != nil {
			return err
		}
	}
	return nil
}

func (c *demoCluster) addrs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.nodes))
	for _, n := range c.nodes {
		out = append(out, n.addr)
	}
	return out
}

func (c *demoCluster) kill(n *child) {
	c.mu.Lock()
	c.nodes = slices.DeleteFunc(c.nodes, func(x *child) bool { return x == n })
	c.mu.Unlock()
	n.kill()
}

func (c *demoCluster) killAll() {
	c.mu.Lock()
	nodes := c.nodes
	c.nodes = nil
	c.mu.Unlock()
	for _, n := range nodes {
		n.kill()
	}
}

// stopAll sends every member SIGTERM (a graceful leave) and SIGKILLs
// those still running after limit.
func (c *demoCluster) stopAll(limit time.Duration) {
	c.mu.Lock()
	nodes := c.nodes
	c.nodes = nil
	c.mu.Unlock()
	var wg sync.WaitGroup
	for _, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			done := make(chan struct{})
			go func() { _ = n.stop(); close(done) }()
			select {
			case <-done:
			case <-time.After(limit):
				_ = n.cmd.Process.Kill()
				<-done
			}
		}()
	}
	wg.Wait()
}

// describe summarises GET /v1/cluster of the first member.
func (c *demoCluster) describe(ctx context.Context) string {
	as := c.addrs()
	if len(as) == 0 {
		return ""
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+as[0]+"/v1/cluster", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	var ci struct {
		Members             []string       `json:"members"`
		Master              string         `json:"master"`
		Version             int64          `json:"partition_table_version"`
		PartitionsPerMember map[string]int `json:"partitions_per_member"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&ci); err != nil {
		return err.Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "partition table version %d; master %s; partitions per member:", ci.Version, ci.Master)
	for _, m := range ci.Members {
		fmt.Fprintf(&b, " %d", ci.PartitionsPerMember[m])
	}
	return b.String()
}

type crashResult struct {
	acks, checked, lost int
}

// crashRounds starts the node, writes for a random while, SIGKILLs it in
// the middle of writes, restarts it and checks every key, rounds times.
func crashRounds(ctx context.Context, cfgDir, logPath string, wl *workload, rounds int, out io.Writer) (crashResult, error) {
	var res crashResult
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	node, err := startNode(ctx, cfgDir, logPath)
	if err != nil {
		return res, err
	}
	defer func() {
		if node != nil {
			node.kill()
		}
	}()
	if _, err := node.waitHealthy(ctx, time.Minute); err != nil {
		return res, err
	}
	for r := 1; r <= rounds; r++ {
		wctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		before := wl.acked()
		seed := rng.Uint64()
		addr := node.addr
		go func() { wl.run(wctx, func() []string { return []string{addr} }, 0, seed); close(done) }()
		// Let the writers run a random while, then kill the member under them.
		time.Sleep(time.Duration(300+rng.IntN(900)) * time.Millisecond)
		node.kill()
		cancel()
		<-done
		acked := wl.acked() - before
		node, err = startNode(ctx, cfgDir, logPath)
		if err != nil {
			return res, err
		}
		took, err := node.waitHealthy(ctx, time.Minute)
		if err != nil {
			return res, err
		}
		checked, bad, err := wl.verify(ctx, node.addr)
		if err != nil {
			return res, err
		}
		res.acks += acked
		res.checked += checked
		res.lost += len(bad)
		fmt.Fprintf(out, "round %d: %6d writes acknowledged, SIGKILL, restarted and loaded in %v, %d keys checked, %d wrong\n", r, acked, took.Round(time.Millisecond), checked, len(bad))
		for i, b := range bad {
			if i == 10 {
				fmt.Fprintf(out, "  ... and %d more\n", len(bad)-10)
				break
			}
			fmt.Fprintf(out, "  wrong: %s\n", b)
		}
	}
	return res, nil
}
