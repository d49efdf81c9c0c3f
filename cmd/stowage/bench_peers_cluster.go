package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The cluster ceiling of `stowage bench --peers --peers-cluster`:
// Hazelcast 5.7 open source, no map store, backup-count 1, one member and
// 3 (each a JVM of its own on 127.0.0.1) loaded through its Java client
// (bench/peers HzClusterMember, HzClusterClient), beside stowage's
// embedded in-memory members and its 3 member processes over HTTP, in
// interleaved rounds of the same run.

// hzJVMFlags open the JDK internals Hazelcast asks for at start; without
// them it warns and takes slower paths.
var hzJVMFlags = []string{"--add-modules", "java.se",
	"--add-exports", "java.base/jdk.internal.ref=ALL-UNNAMED",
	"--add-opens", "java.base/java.lang=ALL-UNNAMED",
	"--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED",
	"--add-opens", "java.management/sun.management=ALL-UNNAMED",
	"--add-opens", "jdk.management/com.sun.management.internal=ALL-UNNAMED"}

// clusterRow is one measured row of the cluster ceiling.
type clusterRow struct {
	System  string  `json:"system"` // "hazelcast" or "stowage"
	Members int     `json:"members"`
	Kind    string  `json:"kind"` // how stowage was driven: "embedded" (in memory), "embedded-wt" (write-through), "http" or "http-routed" (each put to its owner), "http-mem" and "http-routed-mem" the same in memory; "client" for Hazelcast
	Round   int     `json:"round"`
	Puts    int     `json:"puts"`
	PerSec  float64 `json:"puts_per_sec"`
	// CPUUS is the members' CPU µs per put (Hazelcast, stowage over
	// HTTP), or the bench process's with its writers (stowage embedded);
	// 0 when unknown.
	CPUUS float64 `json:"cpu_us_per_put"`
}

// hzMemberArgs is the java command line of Hazelcast member port of a
// cluster whose members listen on ports.
func hzMemberArgs(jar, cluster string, port int, ports []int) []string {
	ms := make([]string, len(ports))
	for i, p := range ports {
		ms[i] = "127.0.0.1:" + strconv.Itoa(p)
	}
	args := append([]string{"-Xmx1g"}, hzJVMFlags...)
	return append(args, "-cp", jar, "stowage.peers.HzClusterMember",
		"--cluster", cluster, "--port", strconv.Itoa(port), "--members", strings.Join(ms, ","))
}

// hzClientArgs is the java command line of the client loading that
// cluster with writers threads, puts timed puts after warmup untimed ones.
func hzClientArgs(jar, cluster string, ports []int, writers, puts, warmup, valueSize int) []string {
	ms := make([]string, len(ports))
	for i, p := range ports {
		ms[i] = "127.0.0.1:" + strconv.Itoa(p)
	}
	args := append([]string{"-Xmx1g"}, hzJVMFlags...)
	return append(args, "-cp", jar, "stowage.peers.HzClusterClient",
		"--cluster", cluster, "--members", strings.Join(ms, ","), "--size", strconv.Itoa(len(ports)),
		"--writers", strconv.Itoa(writers), "--puts", strconv.Itoa(puts), "--warmup", strconv.Itoa(warmup),
		"--value-size", strconv.Itoa(valueSize))
}

// parseHzClusterResult decodes the client's JSON result line.
func parseHzClusterResult(line string) (clusterRow, error) {
	var r clusterRow
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		return r, fmt.Errorf("Hazelcast client: line %q: %w", line, err)
	}
	if r.System != "hazelcast" || r.Members < 1 || r.Puts < 1 || r.PerSec <= 0 {
		return r, fmt.Errorf("Hazelcast client: line %q: want system hazelcast, members, puts and puts_per_sec", line)
	}
	r.Kind = "client"
	return r, nil
}

// hzMember is a running Hazelcast member JVM.
type hzMember struct {
	c     *child
	stdin io.WriteCloser
}

// stop closes the member's input (it shuts down) and kills it.
func (m *hzMember) stop() {
	m.stdin.Close()
	m.c.kill()
}

// startHzCluster starts k Hazelcast members on free ports and waits
// until each has started.
func (p *peersBench) startHzCluster(ctx context.Context, jar, dir, cluster string, k int) ([]*hzMember, []int, error) {
	base, err := freeMemberPorts(k)
	if err != nil {
		return nil, nil, err
	}
	ports := make([]int, k)
	for i := range ports {
		ports[i] = base + i
	}
	var ms []*hzMember
	stopAll := func() {
		for _, m := range ms {
			m.stop()
		}
	}
	ready := make(chan error, k)
	for _, port := range ports {
		logf, err := os.Create(filepath.Join(dir, fmt.Sprintf("%s-%d.log", cluster, port)))
		if err != nil {
			stopAll()
			return nil, nil, err
		}
		cmd := exec.CommandContext(ctx, "java", hzMemberArgs(jar, cluster, port, ports)...)
		cmd.Stderr = logf
		in, err := cmd.StdinPipe()
		if err != nil {
			stopAll()
			return nil, nil, err
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			stopAll()
			return nil, nil, err
		}
		if err := cmd.Start(); err != nil {
			stopAll()
			return nil, nil, fmt.Errorf("starting a Hazelcast member: %w", err)
		}
		ms = append(ms, &hzMember{c: &child{cmd: cmd, addr: "127.0.0.1:" + strconv.Itoa(port), logs: logf}, stdin: in})
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if strings.HasPrefix(sc.Text(), "READY") {
					ready <- nil
					_, _ = io.Copy(io.Discard, out)
					return
				}
			}
			ready <- fmt.Errorf("Hazelcast member on port %d ended before it started; its log: %s", port, logf.Name())
		}()
	}
	timeout := time.After(180 * time.Second)
	for range ports {
		select {
		case err := <-ready:
			if err != nil {
				stopAll()
				return nil, nil, err
			}
		case <-timeout:
			stopAll()
			return nil, nil, errors.New("Hazelcast members not started within 180 s")
		case <-ctx.Done():
			stopAll()
			return nil, nil, ctx.Err()
		}
	}
	return ms, ports, nil
}

// hzCluster measures one Hazelcast cluster of k members: the client's
// puts/s and the members' CPU per timed put.
func (p *peersBench) hzCluster(ctx context.Context, jar, dir string, round, k, puts int) (clusterRow, error) {
	cluster := fmt.Sprintf("peers-r%d-m%d-%d", round, k, time.Now().UnixNano())
	ms, ports, err := p.startHzCluster(ctx, jar, dir, cluster, k)
	if err != nil {
		return clusterRow{}, err
	}
	defer func() {
		for _, m := range ms {
			m.stop()
		}
	}()
	members := make([]*child, len(ms))
	for i, m := range ms {
		members[i] = m.c
	}
	cmd := exec.CommandContext(ctx, "java", hzClientArgs(jar, cluster, ports, 64, puts, max(puts/5, 1000), 256)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return clusterRow{}, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return clusterRow{}, err
	}
	if err := cmd.Start(); err != nil {
		return clusterRow{}, fmt.Errorf("starting the Hazelcast client: %w", err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	sc := bufio.NewScanner(out)
	var cpu0 time.Duration
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "WARM":
			cpu0 = benchProcessCPU(members)
			if _, err := io.WriteString(in, "GO\n"); err != nil {
				return clusterRow{}, err
			}
		case strings.HasPrefix(line, "{"):
			cpu := benchProcessCPU(members) - cpu0
			r, err := parseHzClusterResult(line)
			if err != nil {
				return r, err
			}
			r.Round = round
			if cpu0 >= 0 && cpu >= 0 {
				r.CPUUS = float64(cpu.Microseconds()) / float64(r.Puts)
			}
			return r, nil
		}
	}
	_ = cmd.Wait()
	return clusterRow{}, fmt.Errorf("Hazelcast client printed no result\n%s", tail(stderr.String(), 4000))
}

// stowageClusterRows measures stowage's rows for the same shape with the
// cluster section's own functions: embedded members in memory (1 and 3)
// and 3 member processes over HTTP.
func (p *peersBench) stowageClusterRows(ctx context.Context, dir string, round, puts int) ([]clusterRow, error) {
	cb := &clusterBench{dir: dir, writers: 64, perWriter: max(1, puts/64), valueSize: 256, say: p.say}
	defer cb.killAll()
	n := cb.writers * cb.perWriter
	var rows []clusterRow
	for _, e := range []struct {
		members int
		kind    string
		mapName string
	}{{1, "embedded", benchMemMap}, {3, "embedded", benchMemMap}, {3, "embedded-wt", benchMap}} {
		k := e.members
		p.say("peers: round %d: stowage, %d embedded member(s), %s ...", round, k, kindWhat(e.kind))
		nodes, err := cb.openEmbedded(ctx, fmt.Sprintf("r%d-%s-%d", round, e.kind, k), k)
		if err != nil {
			return rows, fmt.Errorf("%d embedded member(s): %w", k, err)
		}
		r, err := benchEmbeddedPuts(ctx, nodes, e.mapName, cb.writers, cb.perWriter, cb.valueSize)
		closeNodes(nodes)
		if err != nil {
			return rows, fmt.Errorf("%d embedded member(s): %w", k, err)
		}
		rows = append(rows, clusterRow{System: "stowage", Members: k, Kind: e.kind, Round: round, Puts: n,
			PerSec: r.PutsSec, CPUUS: float64(r.CPU) / float64(time.Microsecond)})
	}
	p.say("peers: round %d: stowage, 3 member processes over HTTP ...", round)
	ms, err := cb.startCluster(ctx, fmt.Sprintf("r%d-http-3", round), 3)
	if err != nil {
		return rows, fmt.Errorf("3 member processes: %w", err)
	}
	defer cb.killEach(ms)
	client := benchClient(cb.writers)
	defer client.CloseIdleConnections()
	// The same members four times: writer w through member w mod 3
	// (about 2/3 of puts forwarded to their owner), then each put sent to
	// its owner (the table from GET /v1/status, as Hazelcast's smart
	// client does); each on the write-through map, then on a map in
	// memory, as Hazelcast's members hold theirs.
	var route func(key, fallback string) string
	for _, h := range []struct {
		kind, mapName string
		routed        bool
	}{{"http", benchMap, false}, {"http-routed", benchMap, true}, {"http-mem", benchMemMap, false}, {"http-routed-mem", benchMemMap, true}} {
		p.say("peers: round %d: stowage, 3 member processes over HTTP, %s ...", round, kindWhat(h.kind))
		var to func(key, fallback string) string
		if h.routed {
			if route == nil {
				if route, err = benchRoute(ctx, client, benchAddrs(ms)); err != nil {
					return rows, cb.withLogs(ctx, fmt.Errorf("3 member processes: %w", err), ms)
				}
			}
			to = route
		}
		cpu0 := benchProcessCPU(ms)
		rate, err := benchPuts(ctx, client, benchAddrs(ms), to, h.mapName, fmt.Sprintf("r%d-%s", round, h.kind), cb.writers, cb.perWriter, cb.valueSize)
		if err != nil {
			return rows, cb.withLogs(ctx, fmt.Errorf("3 member processes, %s: %w", h.kind, err), ms)
		}
		cpu := benchProcessCPU(ms) - cpu0
		row := clusterRow{System: "stowage", Members: 3, Kind: h.kind, Round: round, Puts: n, PerSec: rate}
		if cpu0 >= 0 && cpu >= 0 {
			row.CPUUS = float64(cpu.Microseconds()) / float64(n)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// runCluster runs the cluster ceiling: per round, Hazelcast with one
// member and 3, and stowage's rows, the side that goes first alternating.
func (p *peersBench) runCluster(ctx context.Context, stdout io.Writer, puts int) error {
	jar, err := p.harness(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "cluster ceiling vs Hazelcast 5.7.0 (open source, no map store), backup-count 1, 64 writers, 256 B values, %d timed puts per row, %d interleaved rounds\n", puts, p.rounds)
	var all []clusterRow
	for r := 1; r <= p.rounds; r++ {
		dir := filepath.Join(p.dir, fmt.Sprintf("cluster-r%d", r))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		runStowage := func() error {
			rows, err := p.stowageClusterRows(ctx, dir, r, puts)
			all = append(all, rows...)
			return err
		}
		runPeer := func() error {
			for _, k := range []int{1, 3} {
				p.say("peers: round %d: Hazelcast, %d member(s) ...", r, k)
				row, err := p.hzCluster(ctx, jar, dir, r, k, puts)
				if err != nil {
					return fmt.Errorf("Hazelcast, %d member(s): %w", k, err)
				}
				all = append(all, row)
			}
			return nil
		}
		if err := alternate(r, runStowage, runPeer); err != nil {
			return err
		}
	}
	printRows(stdout, all)
	printClusterRatios(stdout, all)
	return nil
}

// clusterRatio is one stowage row beside Hazelcast's with as many members,
// medians over rounds.
type clusterRatio struct {
	Label            string
	Members          int
	PerSec, HzPerSec float64
	CPUUS, HzCPUUS   float64
}

// clusterRatios pairs each stowage row kind with Hazelcast's row of as
// many members; medians over rounds, in the order stowage's rows came.
func clusterRatios(all []clusterRow) []clusterRatio {
	type key struct {
		system, kind string
		members      int
	}
	var order []key
	rate, cpu := map[key][]float64{}, map[key][]float64{}
	for _, r := range all {
		k := key{r.System, r.Kind, r.Members}
		if _, ok := rate[k]; !ok && r.System == "stowage" {
			order = append(order, k)
		}
		rate[k] = append(rate[k], r.PerSec)
		if r.CPUUS > 0 {
			cpu[k] = append(cpu[k], r.CPUUS)
		}
	}
	var out []clusterRatio
	for _, k := range order {
		hz := key{"hazelcast", "client", k.members}
		if len(rate[hz]) == 0 {
			continue
		}
		label := fmt.Sprintf("%d member(s) embedded, %s", k.members, kindWhat(k.kind))
		switch {
		case strings.HasPrefix(k.kind, "http-routed"):
			label = fmt.Sprintf("%d member processes over HTTP to the owner, %s", k.members, kindWhat(k.kind))
		case strings.HasPrefix(k.kind, "http"):
			label = fmt.Sprintf("%d member processes over HTTP, %s", k.members, kindWhat(k.kind))
		}
		out = append(out, clusterRatio{Label: label, Members: k.members,
			PerSec: midMedian(rate[k]), HzPerSec: midMedian(rate[hz]), CPUUS: midMedian(cpu[k]), HzCPUUS: midMedian(cpu[hz])})
	}
	return out
}

// printClusterRatios prints the ratio table: puts/s stowage/Hazelcast
// (above 1: stowage faster) and CPU per put stowage/Hazelcast (below 1:
// stowage spends less).
func printClusterRatios(w io.Writer, all []clusterRow) {
	fmt.Fprintf(w, "  %-72s %10s %10s %7s %10s %10s %7s\n", "stowage row (median of rounds)", "puts/s", "Hazelcast", "ratio", "CPU µs", "Hazelcast", "ratio")
	for _, r := range clusterRatios(all) {
		cpuRatio := "-"
		if r.CPUUS > 0 && r.HzCPUUS > 0 {
			cpuRatio = fmt.Sprintf("%.2f", r.CPUUS/r.HzCPUUS)
		}
		fmt.Fprintf(w, "  %-72s %10.0f %10.0f %7.2f %10.1f %10.1f %7s\n", r.Label, r.PerSec, r.HzPerSec, r.PerSec/r.HzPerSec, r.CPUUS, r.HzCPUUS, cpuRatio)
	}
	fmt.Fprintf(w, "  (medians: of two rounds, their mean. CPU: Hazelcast's and the HTTP members' is the member processes' user+system time over the timed puts, the writers being elsewhere;\n")
	fmt.Fprintf(w, "   the embedded rows' is the bench process's, members and writers together. Write-through is to local disk, each batch fdatasync'd.)\n")
}

// kindWhat says what a stowage row kind stores: "embedded" runs a map
// in memory, "embedded-wt" one that writes through to local disk; the
// "http" members write through too and "http-mem" hold the map in memory
// ("http-routed", "http-routed-mem": each put sent to its partition's
// owner).
func kindWhat(kind string) string {
	if kind == "embedded" || strings.HasSuffix(kind, "-mem") {
		return "in memory"
	}
	return "write-through to local disk"
}

// midMedian is the median of xs, the mean of the middle two for an even
// count (two rounds: their mean, not the higher); 0 for none.
func midMedian(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
