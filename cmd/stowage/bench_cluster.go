package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/stowage/stowage"
	"github.com/stowage/stowage/partition"
)

// clusterBench is the cluster section of `stowage bench`: member
// processes on 127.0.0.1 driven over the HTTP API, each cluster fresh,
// every process it starts killed before it returns (also on error and
// when ctx is cancelled by an interrupt).
type clusterBench struct {
	dir        string // data, config and logs of every cluster started
	writers    int    // concurrent writers of the throughput run
	perWriter  int    // puts per writer
	valueSize  int
	failovers  int  // fail-over runs, each on a fresh cluster
	killMaster bool // SIGKILL the master in the fail-over runs, not another member
	freeze     bool // SIGSTOP instead of SIGKILL: the member hangs, its connections stay open
	tls        bool // member TLS (a cluster secret) on every member

	say func(format string, args ...any) // progress lines

	// onStart, if set, is called with every member process started.
	onStart func(*child)

	mu      sync.Mutex
	live    []*child // started and not yet killed
	started []*child // every process started, for the record
	logs    int
}

// benchMap is the map the cluster section writes: engine* maps persist on
// the local disk in the configuration writeConfigDirOn writes.
const benchMap = "engine_bench"

// benchStoreProps puts the map store on the local disk.
var benchStoreProps = map[string]string{"storage.type": "hdfs", "fs.defaultFS": "file:///"}

// benchClusterResult is what the section measured.
type benchClusterResult struct {
	OneMember, ThreeMembers float64   // puts/s over all rounds
	Rounds                  []float64 // ratio 3 members / one member of each round
	// OneCPU and ThreeCPU are the CPU time the members used per put
	// (all three together for ThreeCPU); 0 when unknown.
	OneCPU, ThreeCPU time.Duration
	// Embedded are the rows of members opened in the bench process.
	Embedded  []benchEmbeddedRow
	Failovers []benchFailover
}

// run measures write throughput and fail-over and prints the section.
func (cb *clusterBench) run(ctx context.Context, stdout io.Writer) (res benchClusterResult, err error) {
	defer cb.killAll()
	client := benchClient(cb.writers)
	defer client.CloseIdleConnections()

	if err := cb.throughput(ctx, client, &res); err != nil {
		return res, err
	}
	fmt.Fprintf(stdout, "cluster on 127.0.0.1: member processes (stowage node), driven over the HTTP API; skip with --cluster=false\n")
	fmt.Fprintf(stdout, "write-through, %d writers, %d B values, map %s on local disk, fdatasync'd, %d alternating rounds\n",
		cb.writers, cb.valueSize, benchMap, len(res.Rounds))
	fmt.Fprintf(stdout, "  %-36s %12s %10s\n", "", "puts/s", "ratio")
	fmt.Fprintf(stdout, "  %-36s %12.0f %10s\n", "one member", res.OneMember, "1.00")
	fmt.Fprintf(stdout, "  %-36s %12.0f %10.2f   (writers spread over the 3 members: about 2/3 of puts forwarded)\n",
		"3 members, backup-count 1", res.ThreeMembers, res.ThreeMembers/res.OneMember)
	fmt.Fprintf(stdout, "  ratio (aim: at least 0.3) by round:")
	for _, r := range res.Rounds {
		fmt.Fprintf(stdout, " %.2f", r)
	}
	fmt.Fprintf(stdout, "\n")
	if res.OneCPU > 0 && res.ThreeCPU > 0 {
		fmt.Fprintf(stdout, "  member CPU per put: one member %d µs, 3 members %d µs together (%.1fx); %d CPUs here, shared with the writers\n",
			res.OneCPU.Microseconds(), res.ThreeCPU.Microseconds(), float64(res.ThreeCPU)/float64(res.OneCPU), runtime.NumCPU())
	}
	fmt.Fprintf(stdout, "\n")
	if res.Embedded, err = cb.embedded(ctx, stdout); err != nil {
		return res, err
	}

	if cb.failovers <= 0 {
		return res, nil
	}
	fmt.Fprintf(stdout, "fail-over: 3 members, backup-count 1, memberlist LAN profile; a writer on every one of the %d partitions;\n", partition.DefaultCount)
	victim := "a member that is not the master"
	if cb.killMaster {
		victim = "the master"
	}
	signal := "SIGKILL"
	if cb.freeze {
		signal = "SIGSTOP (connections stay open, as when a host or the network fails)"
	}
	fmt.Fprintf(stdout, "%s of %s, until a write started after it succeeded on every partition\n", signal, victim)
	for i := 1; i <= cb.failovers; i++ {
		cb.say("cluster: fail-over run %d of %d ...", i, cb.failovers)
		fo, err := cb.failover(ctx, client, i)
		if err != nil {
			return res, fmt.Errorf("fail-over run %d: %w", i, err)
		}
		res.Failovers = append(res.Failovers, fo)
		fmt.Fprintf(stdout, "  run %d: %s\n", i, fo)
	}
	times := make([]time.Duration, len(res.Failovers))
	for i, fo := range res.Failovers {
		times[i] = fo.Writes
	}
	fmt.Fprintf(stdout, "  median %s over %d runs (aim: under 5 s)\n", benchSecs(benchMedian(times)), len(times))
	return res, nil
}

// benchThroughputRounds is how many times the one-member and the 3-member
// measurements alternate, so that load from elsewhere on the machine
// falls on both alike.
const benchThroughputRounds = 2

// throughput starts a one-member and a 3-member cluster (backup-count 1),
// then measures puts/s of cb.writers writers against each in turn,
// benchThroughputRounds times; the rates are over all rounds.
func (cb *clusterBench) throughput(ctx context.Context, client *http.Client, res *benchClusterResult) error {
	cb.say("cluster: starting one member and 3 members ...")
	one, err := cb.startCluster(ctx, "tp-one", 1)
	if err != nil {
		return fmt.Errorf("one member: %w", err)
	}
	defer cb.killEach(one)
	three, err := cb.startCluster(ctx, "tp-three", 3)
	if err != nil {
		return fmt.Errorf("3 members: %w", err)
	}
	defer cb.killEach(three)
	rounds := min(benchThroughputRounds, cb.perWriter)
	var puts, oneTime, threeTime float64
	var oneCPU, threeCPU time.Duration
	for r := range rounds {
		n := cb.perWriter / rounds
		if r < cb.perWriter%rounds {
			n++
		}
		cb.say("cluster: write-through round %d of %d: one member ...", r+1, rounds)
		cpu0 := benchProcessCPU(one)
		a, err := benchPuts(ctx, client, benchAddrs(one), nil, benchMap, fmt.Sprintf("r%d", r), cb.writers, n, cb.valueSize)
		if err != nil {
			return cb.withLogs(ctx, fmt.Errorf("one member: %w", err), one)
		}
		oneCPU += benchProcessCPU(one) - cpu0
		cb.say("cluster: write-through round %d of %d: 3 members ...", r+1, rounds)
		cpu0 = benchProcessCPU(three)
		b, err := benchPuts(ctx, client, benchAddrs(three), nil, benchMap, fmt.Sprintf("r%d", r), cb.writers, n, cb.valueSize)
		if err != nil {
			return cb.withLogs(ctx, fmt.Errorf("3 members: %w", err), three)
		}
		threeCPU += benchProcessCPU(three) - cpu0
		k := float64(cb.writers * n)
		puts += k
		oneTime += k / a
		threeTime += k / b
		res.Rounds = append(res.Rounds, b/a)
	}
	res.OneMember, res.ThreeMembers = puts/oneTime, puts/threeTime
	if oneCPU >= 0 && threeCPU >= 0 {
		res.OneCPU, res.ThreeCPU = oneCPU/time.Duration(puts), threeCPU/time.Duration(puts)
	}
	return nil
}

// benchProcessCPU is the user and system CPU time the processes used so far,
// from /proc (Linux counts it in ticks of 10 ms); a large negative value
// when it cannot be read, so that differences stay negative.
func benchProcessCPU(cs []*child) time.Duration {
	const unknown = -1 << 60
	var total time.Duration
	for _, c := range cs {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(c.cmd.Process.Pid) + "/stat")
		if err != nil {
			return unknown
		}
		// pid (comm) state ppid ... utime stime: the 14th and 15th fields.
		_, rest, _ := strings.Cut(string(b), ") ")
		f := strings.Fields(rest)
		if len(f) < 13 {
			return unknown
		}
		for _, v := range f[11:13] {
			ticks, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return unknown
			}
			total += time.Duration(ticks) * 10 * time.Millisecond
		}
	}
	return total
}

func benchAddrs(ms []*child) []string {
	out := make([]string, len(ms))
	for i, c := range ms {
		out[i] = c.addr
	}
	return out
}

// startCluster writes a config directory for a fresh cluster of k members
// (its own ports, data directory and cluster name), starts them, and waits
// until each is healthy and every backup is filled.
func (cb *clusterBench) startCluster(ctx context.Context, name string, k int) ([]*child, error) {
	dir, cfgDir, err := cb.writeClusterConfig(name, k)
	if err != nil {
		return nil, err
	}
	ms, err := cb.start(ctx, cfgDir, dir, k)
	if err != nil {
		return nil, err
	}
	for _, c := range ms {
		if _, err := c.waitHealthy(ctx, 90*time.Second); err != nil {
			return nil, cb.withLogs(ctx, err, ms)
		}
	}
	if err := benchWaitCluster(ctx, ms, 90*time.Second, func(ci benchClusterInfo) bool {
		return len(ci.Members) == k && ci.Safe
	}); err != nil {
		return nil, cb.withLogs(ctx, fmt.Errorf("cluster of %d not formed and safe: %w", k, err), ms)
	}
	return ms, nil
}

// start starts k members from cfgDir at once, logging under logDir.
func (cb *clusterBench) start(ctx context.Context, cfgDir, logDir string, k int) ([]*child, error) {
	out := make([]*child, k)
	errs := make([]error, k)
	var wg sync.WaitGroup
	for i := range k {
		cb.mu.Lock()
		cb.logs++
		log := filepath.Join(logDir, "member-"+strconv.Itoa(cb.logs)+".log")
		cb.mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := startNode(ctx, cfgDir, log)
			if err != nil {
				errs[i] = err
				return
			}
			cb.mu.Lock()
			cb.live = append(cb.live, c)
			cb.started = append(cb.started, c)
			cb.mu.Unlock()
			out[i] = c
			if cb.onStart != nil {
				cb.onStart(c)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err // the ones that started are killed by killAll
	}
	return out, nil
}

// kill SIGKILLs c (once) and reaps it.
func (cb *clusterBench) kill(c *child) {
	cb.mu.Lock()
	i := slices.Index(cb.live, c)
	if i >= 0 {
		cb.live = slices.Delete(cb.live, i, i+1)
	}
	cb.mu.Unlock()
	if i >= 0 {
		c.kill()
	}
}

func (cb *clusterBench) killEach(cs []*child) {
	for _, c := range cs {
		cb.kill(c)
	}
}

// killAll kills every process still running.
func (cb *clusterBench) killAll() {
	cb.mu.Lock()
	live := slices.Clone(cb.live)
	cb.mu.Unlock()
	cb.killEach(live)
}

// withLogs adds the tail of the members' logs to err, unless the run was
// interrupted.
func (cb *clusterBench) withLogs(ctx context.Context, err error, ms []*child) error {
	if ctx.Err() != nil {
		return err
	}
	var b strings.Builder
	for _, c := range ms {
		if c == nil || c.logs == nil {
			continue
		}
		tail, _ := os.ReadFile(c.logs.Name())
		if len(tail) > 3000 {
			tail = tail[len(tail)-3000:]
		}
		fmt.Fprintf(&b, "\n%s ends:\n%s", c.logs.Name(), tail)
	}
	return fmt.Errorf("%w%s", err, b.String())
}

// benchClient is an HTTP client that keeps a connection per writer.
func benchClient(writers int) *http.Client {
	return &http.Client{Timeout: 90 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: writers + partition.DefaultCount}}
}

// benchPutError is a PUT that was not acknowledged: Status is the HTTP status,
// 0 when no answer came.
type benchPutError struct {
	Status int
	Msg    string
	Err    error // the client's error when no answer came
}

func (e *benchPutError) Error() string { return e.Msg }
func (e *benchPutError) Unwrap() error { return e.Err }

// benchPut writes value under key through the member at addr; nil means
// acknowledged (durable and replicated), else a *benchPutError.
func benchPut(ctx context.Context, client *http.Client, addr, key string, value []byte) error {
	return benchPutIn(ctx, client, addr, benchMap, key, value)
}

// benchPutIn is benchPut on map mapName.
func benchPutIn(ctx context.Context, client *http.Client, addr, mapName, key string, value []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, "http://"+addr+"/v1/maps/"+mapName+"/entries/"+key, bytes.NewReader(value))
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return &benchPutError{Msg: err.Error(), Err: err}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		msg := strings.Join(strings.Fields(string(b)), " ") // the JSON answer on one line
		return &benchPutError{Status: resp.StatusCode, Msg: fmt.Sprintf("PUT %s at %s: %s: %s", key, addr, resp.Status, msg)}
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return nil
}

// benchPuts measures puts/s of writers goroutines, n puts of valueSize
// bytes each on keys of their own (named after prefix) in map mapName,
// writer w going through addrs[w%len], or, with route, through the member
// route gives for the key (benchRoute). One put per writer first creates
// the map and the connections, untimed.
func benchPuts(ctx context.Context, client *http.Client, addrs []string, route func(key, fallback string) string, mapName, prefix string, writers, n, valueSize int) (float64, error) {
	at := func(w int, key string) string {
		if route != nil {
			return route(key, addrs[w%len(addrs)])
		}
		return addrs[w%len(addrs)]
	}
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	value := bytes.Repeat([]byte{'v'}, valueSize)
	// phase runs fn for every writer; the first error stops the others
	// and is returned (the context's, if the caller's was done).
	phase := func(fn func(w int) error) error {
		var first error
		var once sync.Once
		var wg sync.WaitGroup
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := fn(w); err != nil {
					once.Do(func() { first = err })
					cancel()
				}
			}()
		}
		wg.Wait()
		if err := parent.Err(); err != nil {
			return err
		}
		return first
	}
	if err := phase(func(w int) error {
		key := fmt.Sprintf("warm-%03d", w)
		return benchPutIn(ctx, client, at(w, key), mapName, key, value)
	}); err != nil {
		return 0, err
	}
	start := time.Now()
	if err := phase(func(w int) error {
		for i := range n {
			key := fmt.Sprintf("%s-w%03d-%07d", prefix, w, i)
			if err := benchPutIn(ctx, client, at(w, key), mapName, key, value); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return 0, err
	}
	return float64(writers*n) / time.Since(start).Seconds(), nil
}

// benchClusterInfo is GET /v1/cluster.
type benchClusterInfo = stowage.ClusterInfo

func benchClusterInfoOf(ctx context.Context, addr string) (benchClusterInfo, error) {
	var ci benchClusterInfo
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/v1/cluster", nil)
	if err != nil {
		return ci, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return ci, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return ci, fmt.Errorf("GET /v1/cluster at %s: %s", addr, resp.Status)
	}
	return ci, json.NewDecoder(resp.Body).Decode(&ci)
}

// benchWaitCluster polls GET /v1/cluster on every member until ok holds for
// each, within limit.
func benchWaitCluster(ctx context.Context, ms []*child, limit time.Duration, ok func(benchClusterInfo) bool) error {
	deadline := time.Now().Add(limit)
	for {
		all := true
		var last error
		for _, c := range ms {
			ci, err := benchClusterInfoOf(ctx, c.addr)
			if err != nil || !ok(ci) {
				all, last = false, err
				break
			}
		}
		if all {
			return nil
		}
		if time.Now().After(deadline) {
			if last == nil {
				last = errors.New("condition not met")
			}
			return fmt.Errorf("not within %s: %w", limit, last)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func benchMedian(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// benchSecs formats d as seconds with two decimals ("-" for a negative d,
// which stands for never seen).
func benchSecs(d time.Duration) string {
	if d < 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

// meanFailover is the mean fail-over time (Writes) of the runs.
func meanFailover(fs []benchFailover) time.Duration {
	if len(fs) == 0 {
		return 0
	}
	var sum time.Duration
	for _, f := range fs {
		sum += f.Writes
	}
	return (sum / time.Duration(len(fs))).Round(time.Millisecond)
}

// writeClusterConfig writes the config directory of a fresh cluster of k
// members named name under cb.dir: its own ports, data directory and
// cluster name, and with cb.tls a cluster secret. It returns the
// cluster's directory and its config directory.
func (cb *clusterBench) writeClusterConfig(name string, k int) (dir, cfgDir string, err error) {
	base, err := freeMemberPorts(10)
	if err != nil {
		return "", "", err
	}
	dir = filepath.Join(cb.dir, name)
	cfgDir = filepath.Join(dir, "config")
	spec := netSpec{Port: base, Ports: 10, MinSize: k, Backups: 1}
	if cb.tls {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", "", err
		}
		secret := filepath.Join(dir, "cluster.secret")
		if err := os.WriteFile(secret, []byte(strconv.FormatInt(time.Now().UnixNano(), 36)+"-bench-cluster-secret\n"), 0o600); err != nil {
			return "", "", err
		}
		spec.SSL = "    ssl:\n      enabled: true\n      properties:\n        cluster-secret-file: " + strconv.Quote(secret) + "\n"
	}
	err = writeConfigDirOn(cfgDir, "bench-"+name, filepath.Join(dir, "data", "imap"), filepath.Join(dir, "data", "checkpoint")+"/",
		spec, benchStoreProps)
	return dir, cfgDir, err
}
