package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stowage/stowage"
	"github.com/stowage/stowage/config"
	"github.com/stowage/stowage/serde"
)

// The embedded part of the cluster section: members opened in this
// process (stowage.Open, the configuration a member process would load,
// members joining over 127.0.0.1 as processes do), each running its
// share of the writers on Map.Put. The CPU per put is this process's
// (every member and every writer are in it).

// benchMemMap is the in-memory map of the embedded runs: no map store
// matches it; backup-count 1 as every map's default.
const benchMemMap = "bench_mem"

// benchEmbeddedRow is one measured row.
type benchEmbeddedRow struct {
	Members int
	Map     string
	PutsSec float64
	CPU     time.Duration // per put
}

// embedded measures puts/s and CPU per put of 1 and 3 embedded members,
// in memory and write-through, and prints the rows.
func (cb *clusterBench) embedded(ctx context.Context, stdout io.Writer) ([]benchEmbeddedRow, error) {
	var rows []benchEmbeddedRow
	for _, k := range []int{1, 3} {
		cb.say("cluster: embedded, %d member(s) in this process ...", k)
		nodes, err := cb.openEmbedded(ctx, fmt.Sprintf("emb-%d", k), k)
		if err != nil {
			return nil, fmt.Errorf("%d embedded member(s): %w", k, err)
		}
		for _, name := range []string{benchMemMap, benchMap} {
			r, err := benchEmbeddedPuts(ctx, nodes, name, cb.writers, cb.perWriter, cb.valueSize)
			if err != nil {
				closeNodes(nodes)
				return nil, fmt.Errorf("%d embedded member(s), map %s: %w", k, name, err)
			}
			rows = append(rows, r)
		}
		closeNodes(nodes)
	}
	fmt.Fprintf(stdout, "embedded: members in this process, each running its share of the %d writers on Map.Put, %d B values, backup-count 1\n", cb.writers, cb.valueSize)
	fmt.Fprintf(stdout, "  %-36s %12s %16s\n", "", "puts/s", "CPU µs per put")
	for _, r := range rows {
		what := "in memory"
		if r.Map == benchMap {
			what = "write-through, local disk"
		}
		label := fmt.Sprintf("%d member(s), %s", r.Members, what)
		fmt.Fprintf(stdout, "  %-36s %12.0f %16.1f\n", label, r.PutsSec, float64(r.CPU)/float64(time.Microsecond))
	}
	fmt.Fprintf(stdout, "  (CPU: this process's user+system time over the timed puts, members and writers together)\n\n")
	return rows, nil
}

func closeNodes(nodes []*stowage.Node) {
	for _, n := range nodes {
		n.Close()
	}
}

// openEmbedded opens k members of a fresh cluster in this process and
// waits until each serves and every backup is filled.
func (cb *clusterBench) openEmbedded(ctx context.Context, name string, k int) ([]*stowage.Node, error) {
	dir, cfgDir, err := cb.writeClusterConfig(name, k)
	if err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, "members.log"))
	if err != nil {
		return nil, err
	}
	defer logf.Close() // the handler writes unbuffered; a late line after Close is lost
	log := slog.New(slog.NewTextHandler(logf, &slog.HandlerOptions{Level: slog.LevelWarn}))
	nodes := make([]*stowage.Node, k)
	errs := make([]error, k)
	var wg sync.WaitGroup
	for i := range k {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cfg, err := config.Load(cfgDir)
			if err != nil {
				errs[i] = err
				return
			}
			nodes[i], errs[i] = stowage.Open(ctx, stowage.Options{Config: cfg, Logger: log.With("member", i+1)})
		}()
	}
	wg.Wait()
	opened := nodes[:0:0]
	for _, n := range nodes {
		if n != nil {
			opened = append(opened, n)
		}
	}
	if err := errors.Join(errs...); err != nil {
		closeNodes(opened)
		return nil, err
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		ready := true
		for _, n := range nodes {
			ci := n.Cluster(ctx)
			ready = ready && len(ci.Members) == k && ci.Safe
		}
		if ready {
			return nodes, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			closeNodes(nodes)
			return nil, fmt.Errorf("cluster of %d not formed and safe within 90 s", k)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// benchEmbeddedPuts runs writers goroutines, writer w putting n values
// through nodes[w mod len], and measures puts/s and this process's CPU
// per put. One put per writer first creates the map and the connections,
// untimed.
func benchEmbeddedPuts(ctx context.Context, nodes []*stowage.Node, name string, writers, n, valueSize int) (benchEmbeddedRow, error) {
	row := benchEmbeddedRow{Members: len(nodes), Map: name}
	maps := make([]*stowage.Map[string, []byte], len(nodes))
	for i, node := range nodes {
		m, err := stowage.GetMap(ctx, node, name, serde.String(), serde.Bytes())
		if err != nil {
			return row, err
		}
		maps[i] = m
	}
	value := make([]byte, valueSize)
	for w := range writers {
		if err := maps[w%len(maps)].Put(ctx, fmt.Sprintf("warm-%03d", w), value); err != nil {
			return row, err
		}
	}
	cpu0 := processCPU()
	start := time.Now()
	var failed atomic.Pointer[error]
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := maps[w%len(maps)]
			for i := range n {
				if failed.Load() != nil {
					return
				}
				if err := m.Put(ctx, fmt.Sprintf("w%03d-%07d", w, i), value); err != nil {
					failed.CompareAndSwap(nil, &err)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu := processCPU() - cpu0
	if p := failed.Load(); p != nil {
		return row, *p
	}
	puts := writers * n
	row.PutsSec = float64(puts) / elapsed.Seconds()
	row.CPU = cpu / time.Duration(max(1, puts))
	return row, nil
}
