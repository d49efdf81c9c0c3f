package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/stowage/stowage/partition"
)

// benchFailover is one fail-over run. Every duration is measured from the
// signal (SIGKILL, or SIGSTOP); -1 means not seen.
type benchFailover struct {
	// Suspected: a survivor's failure detector first suspected the
	// victim (memberlist's "Suspect ... has failed" in its log).
	Suspected time.Duration
	// Dead: the victim was gone from a survivor's member list (GET
	// /v1/cluster), i.e. memberlist declared it failed.
	Dead time.Duration
	// Table: a survivor held a partition table that names the victim for
	// no partition, as owner or backup.
	Table time.Duration
	// Writes: a write started after the kill had succeeded on every
	// partition. This is the fail-over time.
	Writes time.Duration
	// Safe: both survivors held such a table and reported every backup
	// filled.
	Safe time.Duration

	Partitions int         // one key on each
	Waited     int         // partitions whose first write after the kill took over benchWaited, or came after a failed one
	Failed     map[int]int // writes started after the kill that failed, by HTTP status (0: no answer)
	FirstError string      // the first of them
}

func (f benchFailover) String() string {
	s := fmt.Sprintf("%s until every partition took a write; suspected %s, declared dead %s, table without it %s, backups filled %s; "+
		"%d of %d partitions waited (a write over %v, or failed)",
		benchSecs(f.Writes), benchSecs(f.Suspected), benchSecs(f.Dead), benchSecs(f.Table), benchSecs(f.Safe), f.Waited, f.Partitions, benchWaited)
	if len(f.Failed) == 0 {
		return s + ", no write failed"
	}
	codes := slices.Sorted(maps.Keys(f.Failed))
	s += "; writes failed and retried:"
	for _, c := range codes {
		what := "no answer within " + benchWriteTimeout.String()
		if c != 0 {
			what = "HTTP " + strconv.Itoa(c)
		}
		s += fmt.Sprintf(" %d with %s", f.Failed[c], what)
	}
	return s + " (first: " + f.FirstError + ")"
}

// benchWaited is the latency above which a write is taken to have waited
// for the fail-over: on a partition the victim had nothing to do with, a
// write takes milliseconds.
const benchWaited = 250 * time.Millisecond

// benchWriteTimeout bounds one write of the fail-over writers: a write
// stuck on a member that stopped answering is given up and tried again,
// so that the time measured is when the partition takes writes again.
const benchWriteTimeout = time.Second

// benchFailoverPace is how long each key's writer waits between writes:
// with one key per partition, about 1,300 writes/s over the cluster.
const benchFailoverPace = 200 * time.Millisecond

// failover starts a fresh cluster of 3 members, keeps one key on every
// partition written, SIGKILLs (with cb.freeze: SIGSTOPs) a member that is
// not the master (with cb.killMaster: the master), and times until every
// partition took a write again through the survivors.
func (cb *clusterBench) failover(ctx context.Context, client *http.Client, run int) (fo benchFailover, err error) {
	ms, err := cb.startCluster(ctx, "failover-"+strconv.Itoa(run), 3)
	if err != nil {
		return fo, err
	}
	defer cb.killEach(ms)
	defer func() {
		if err != nil {
			err = cb.withLogs(ctx, err, ms)
		}
	}()
	var victim *child
	var victimID string
	var survivors []*child
	count := 0
	for _, c := range ms {
		ci, err := benchClusterInfoOf(ctx, c.addr)
		if err != nil {
			return fo, err
		}
		count = ci.PartitionCount
		if victim == nil && (ci.Self != ci.Master) != cb.killMaster {
			victim, victimID = c, ci.Self
		} else {
			survivors = append(survivors, c)
		}
	}
	if victim == nil || count == 0 {
		return fo, fmt.Errorf("no member other than the master, or no partitions (%d)", count)
	}

	w := newBenchFailoverWriter(benchPartitionKeys(count), []string{ms[0].addr, ms[1].addr, ms[2].addr})
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); w.run(wctx, client, cb.valueSize) }()
	defer wg.Wait()
	defer stop()
	select {
	case <-w.warmed:
	case <-time.After(60 * time.Second):
		return fo, fmt.Errorf("not every partition took a write within 60s before the kill")
	case <-ctx.Done():
		return fo, ctx.Err()
	}
	var tv int64
	for _, c := range survivors {
		ci, err := benchClusterInfoOf(ctx, c.addr)
		if err != nil {
			return fo, err
		}
		tv = max(tv, ci.PartitionTableVer)
	}

	// The kill. Times run from the signal; the writes that count are
	// those started once the process is reaped (or stopped), through the
	// survivors, and every key is written at once then.
	kill := time.Now()
	if cb.freeze {
		if err := victim.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
			return fo, err
		}
		if err := benchWaitStopped(ctx, victim.cmd.Process.Pid); err != nil {
			return fo, err
		}
	} else {
		cb.kill(victim)
	}
	w.killed([]string{survivors[0].addr, survivors[1].addr})

	fo = benchFailover{Suspected: -1, Dead: -1, Table: -1, Writes: -1, Safe: -1, Partitions: count}
	deadline := kill.Add(120 * time.Second)
	for {
		safe := 0
		for _, c := range survivors {
			ci, err := benchClusterInfoOf(ctx, c.addr)
			if err != nil {
				if ctx.Err() != nil {
					return fo, ctx.Err()
				}
				continue // polled again
			}
			at := time.Since(kill)
			if fo.Dead < 0 && !slices.Contains(ci.Members, victimID) {
				fo.Dead = at
			}
			moved := ci.PartitionTableVer > tv && ci.PartitionsPerMember[victimID] == 0 && ci.BackupsPerMember[victimID] == 0
			if fo.Table < 0 && moved {
				fo.Table = at
			}
			if moved && ci.Safe {
				safe++
			}
		}
		if fo.Safe < 0 && safe == len(survivors) {
			fo.Safe = time.Since(kill)
		}
		if fo.Writes < 0 {
			select {
			case <-w.done:
				fo.Writes = w.last().Sub(kill)
			default:
			}
		}
		now := time.Now()
		// Go on until the victim is declared dead too, to tell detection
		// from hand-over.
		if fo.Writes >= 0 && (fo.Safe >= 0 && fo.Dead >= 0 || now.Sub(kill) > fo.Writes+30*time.Second) {
			break
		}
		if now.After(deadline) {
			return fo, fmt.Errorf("partitions %v took no write within %s of the signal", w.waiting(), deadline.Sub(kill))
		}
		select {
		case <-ctx.Done():
			return fo, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	stop()
	wg.Wait()
	fo.Failed, fo.FirstError = w.failed, w.firstErr
	for i, end := range w.first {
		if end.Sub(w.firstStart[i]) > benchWaited || w.keyFailed[i] {
			fo.Waited++
		}
	}
	fo.Suspected = benchFirstLogLine(kill, "Suspect "+victimID+" has failed", survivors)
	return fo, nil
}

// benchPartitionKeys returns one key on each of count partitions.
func benchPartitionKeys(count int) []string {
	keys := make([]string, count)
	for n, left := 0, count; left > 0; n++ {
		k := "fo-" + strconv.Itoa(n)
		if p := partition.Of([]byte(k), count); keys[p] == "" {
			keys[p] = k
			left--
		}
	}
	return keys
}

// benchFailoverWriter writes each of its keys every benchFailoverPace
// through one of the members, one goroutine per key, and notes for each
// key the first success of a write started after the kill.
type benchFailoverWriter struct {
	keys   []string
	warmed chan struct{} // closed once every key took a write
	done   chan struct{} // closed once every key took a write started after the kill
	kick   chan struct{} // closed at the kill

	mu         sync.Mutex
	addrs      []string
	kill       time.Time
	warm       []bool
	nwarm      int
	first      []time.Time // end of the first successful write started after the kill, per key
	firstStart []time.Time // and its start
	keyFailed  []bool      // a write of the key started after the kill failed
	left       int
	failed     map[int]int
	firstErr   string
}

func newBenchFailoverWriter(keys, addrs []string) *benchFailoverWriter {
	return &benchFailoverWriter{keys: keys, addrs: addrs, warmed: make(chan struct{}), done: make(chan struct{}), kick: make(chan struct{}),
		warm: make([]bool, len(keys)), first: make([]time.Time, len(keys)), firstStart: make([]time.Time, len(keys)),
		keyFailed: make([]bool, len(keys)), left: len(keys), failed: map[int]int{}}
}

func (w *benchFailoverWriter) run(ctx context.Context, client *http.Client, valueSize int) {
	value := make([]byte, valueSize)
	for i := range value {
		value[i] = 'a' + byte(i%26)
	}
	var wg sync.WaitGroup
	for i, key := range w.keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Spread the writes over the pace.
			pause := benchFailoverPace * time.Duration(i) / time.Duration(len(w.keys))
			kick := w.kick
			for n := i; ; n++ {
				select {
				case <-ctx.Done():
					return
				case <-time.After(pause):
				case <-kick:
					kick = nil
				}
				w.mu.Lock()
				addr := w.addrs[n%len(w.addrs)]
				w.mu.Unlock()
				start := time.Now()
				wctx, cancel := context.WithTimeout(ctx, benchWriteTimeout)
				err := benchPut(wctx, client, addr, key, value)
				cancel()
				w.record(ctx, i, start, err)
				pause = benchFailoverPace
				if err != nil {
					pause = 20 * time.Millisecond
				}
			}
		}()
	}
	wg.Wait()
}

func (w *benchFailoverWriter) record(ctx context.Context, i int, start time.Time, err error) {
	end := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		if !w.kill.IsZero() && !start.Before(w.kill) && ctx.Err() == nil {
			var pe *benchPutError
			status := 0
			if errors.As(err, &pe) {
				status = pe.Status
			}
			w.keyFailed[i] = true
			if w.failed[status]++; w.firstErr == "" {
				w.firstErr = err.Error()
				if len(w.firstErr) > 300 {
					w.firstErr = w.firstErr[:300] + "..."
				}
			}
		}
		return
	}
	if !w.warm[i] {
		w.warm[i] = true
		if w.nwarm++; w.nwarm == len(w.keys) {
			close(w.warmed)
		}
	}
	if !w.kill.IsZero() && !start.Before(w.kill) && w.first[i].IsZero() {
		w.first[i], w.firstStart[i] = end, start
		if w.left--; w.left == 0 {
			close(w.done)
		}
	}
}

// killed switches the writes to the survivors: the writes started from
// now on count, and every key is written at once.
func (w *benchFailoverWriter) killed(survivors []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.addrs = survivors
	w.kill = time.Now()
	close(w.kick)
}

// last is when the last key took its first write after the kill.
func (w *benchFailoverWriter) last() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	var t time.Time
	for _, f := range w.first {
		if f.After(t) {
			t = f
		}
	}
	return t
}

// waiting lists the partitions with no write since the kill.
func (w *benchFailoverWriter) waiting() []int {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []int
	for p, f := range w.first {
		if f.IsZero() {
			out = append(out, p)
		}
	}
	return out
}

// benchFirstLogLine returns how long after since the earliest line containing
// s was logged by any of ms (slog text lines, time=RFC 3339), or -1.
func benchFirstLogLine(since time.Time, s string, ms []*child) time.Duration {
	best := time.Duration(-1)
	for _, c := range ms {
		f, err := os.Open(c.logs.Name())
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if !strings.Contains(line, s) {
				continue
			}
			ts, _, _ := strings.Cut(strings.TrimPrefix(line, "time="), " ")
			t, err := time.Parse(time.RFC3339Nano, ts)
			if err != nil {
				continue
			}
			if d := t.Sub(since); d >= 0 && (best < 0 || d < best) {
				best = d
			}
		}
		f.Close()
	}
	return best
}

// benchWaitStopped waits until process pid is stopped (state T in
// /proc); where /proc cannot be read it returns at once.
func benchWaitStopped(ctx context.Context, pid int) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return nil
		}
		if _, rest, _ := strings.Cut(string(b), ") "); strings.HasPrefix(rest, "T") {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("member process %d not stopped 5s after SIGSTOP", pid)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
}
