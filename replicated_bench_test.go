//go:build unix

package stowage_test

import (
	"context"
	"fmt"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stowage/stowage"
	"github.com/stowage/stowage/bench"
	"github.com/stowage/stowage/cluster"
	"github.com/stowage/stowage/config"
	"github.com/stowage/stowage/internal/testhook"
	"github.com/stowage/stowage/mapstore/filestore"
	"github.com/stowage/stowage/serde"
)

// benchWriters is how many goroutines put at once in the replicated-put
// benchmarks, spread over the members (writer w through member w mod n).
const benchWriters = 64

// BenchmarkReplicatedPut measures Map.Put of 256 B values in memory on 3
// in-process members connected by the TCP transport on 127.0.0.1, backup
// count 1: about 2/3 of the puts are forwarded to their owner, and every
// put is backed up on another member. It reports the process's CPU per
// put (every member runs in it), the goroutines started per put and,
// from the transports, the frames and connection writes per put.
func BenchmarkReplicatedPut(b *testing.B) {
	nodes := benchTCPCluster(b, 3, memoryConfig(1, 0))
	benchPutsOn(b, nodes, "bench")
}

// BenchmarkReplicatedPutWriteThrough is BenchmarkReplicatedPut with the
// map written through to a map store on local disk that the members
// share: each put is durable on the disk (group commit and fdatasync on
// its owner) and applied on its backup before it returns.
func BenchmarkReplicatedPutWriteThrough(b *testing.B) {
	nodes := benchTCPCluster(b, 3, sharedConfig(b, b.TempDir(), 1, 1))
	benchPutsOn(b, nodes, "engine_bench")
}

// BenchmarkLocalPutWriteThrough is the same write-through load on one
// member alone.
func BenchmarkLocalPutWriteThrough(b *testing.B) {
	n, err := stowage.Open(context.Background(), stowage.Options{Config: sharedConfig(b, b.TempDir(), 1, 1)()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { n.Close() })
	benchPutsOn(b, []*benchNode{{node: n}}, "engine_bench")
}

// BenchmarkLocalPut is the same load on one member alone: the put that
// BenchmarkReplicatedPut pays the member protocol on top of.
func BenchmarkLocalPut(b *testing.B) {
	n, err := stowage.Open(context.Background(), stowage.Options{Config: memoryConfig(1, 0)()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { n.Close() })
	benchPutsOn(b, []*benchNode{{node: n}}, "bench")
}

type benchNode struct {
	node *stowage.Node
	tr   *cluster.TCPTransport // nil for a member alone
}

// benchTCPCluster starts k members in this process over TCP and waits
// until every one serves the same table.
func benchTCPCluster(b *testing.B, k int, cfg func() *config.Config) []*benchNode {
	b.Helper()
	nodes := make([]*benchNode, k)
	selves := make([]cluster.Member, k)
	views := make([]*cluster.StaticView, k)
	for i := range nodes {
		tr, err := cluster.ListenTCP("127.0.0.1:0", cluster.TCPOptions{})
		if err != nil {
			b.Fatal(err)
		}
		id := fmt.Sprintf("m%d", i+1)
		selves[i] = cluster.Member{ID: id, Addr: tr.Addr(), RPC: tr.Addr(), Run: filestore.NewRunID(), Started: time.Unix(int64(i+1), 0)}
		nodes[i] = &benchNode{tr: tr}
	}
	for i := range nodes {
		views[i] = cluster.NewStaticView(selves[i])
		views[i].Set(selves...)
		n, err := stowage.Open(context.Background(), stowage.Options{Config: cfg(),
			TestHooks: &testhook.Hooks{View: views[i], Transport: nodes[i].tr}, OpTimeout: longStop})
		if err != nil {
			b.Fatal(err)
		}
		nodes[i].node = n
		tr := nodes[i].tr
		b.Cleanup(func() { n.Close(); tr.Close() })
	}
	deadline := time.Now().Add(longStop)
	for {
		all := true
		for _, n := range nodes {
			all = all && n.node.Loaded()
		}
		if all {
			return nodes
		}
		if time.Now().After(deadline) {
			b.Fatal("cluster not loaded")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// benchPutsOn runs b.N puts from benchWriters writers over nodes and
// reports the costs per put.
func benchPutsOn(b *testing.B, nodes []*benchNode, name string) {
	ctx := context.Background()
	maps := make([]*stowage.Map[string, []byte], len(nodes))
	for i, n := range nodes {
		m, err := stowage.GetMap(ctx, n.node, name, serde.String(), serde.Bytes())
		if err != nil {
			b.Fatal(err)
		}
		maps[i] = m
	}
	val := make([]byte, 256)
	// One put per writer first: the map exists everywhere and every
	// connection is made.
	for w := range benchWriters {
		if err := maps[w%len(maps)].Put(ctx, fmt.Sprintf("warm-%d", w), val); err != nil {
			b.Fatal(err)
		}
	}
	before := benchStatsOf(nodes)
	b.SetBytes(256)
	b.ResetTimer()
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range benchWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := maps[w%len(maps)]
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				if err := m.Put(ctx, fmt.Sprintf("w%d-%d", w, i%4096), val); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	after := benchStatsOf(nodes)
	puts := float64(b.N)
	b.ReportMetric(float64(after.cpu-before.cpu)/float64(time.Microsecond)/puts, "cpu-µs/put")
	b.ReportMetric(float64(after.goroutines-before.goroutines)/puts, "goroutines/put")
	if len(nodes) > 1 {
		b.ReportMetric(float64(after.tr.Writes-before.tr.Writes)/puts, "writes/put")
		b.ReportMetric(float64(after.tr.Frames-before.tr.Frames)/puts, "frames/put")
		b.ReportMetric(float64(after.tr.Streams-before.tr.Streams)/puts, "streams/put")
	}
	if after.batches > before.batches {
		// Write-through: each group-commit batch is one fdatasync on local disk.
		b.ReportMetric(float64(after.batches-before.batches)/puts, "syncs/put")
	}
}

type benchStats struct {
	cpu        time.Duration
	goroutines uint64
	tr         cluster.TCPStats
	batches    uint64 // group-commit batches of the members' map stores
}

func benchStatsOf(nodes []*benchNode) benchStats {
	var s benchStats
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		s.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	sample := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() == metrics.KindUint64 {
		s.goroutines = sample[0].Value.Uint64()
	}
	for _, n := range nodes {
		batches, _ := bench.LogBatches(n.node)
		s.batches += batches
		if n.tr != nil {
			st := n.tr.Stats()
			s.tr.Writes += st.Writes
			s.tr.Frames += st.Frames
			s.tr.Streams += st.Streams
		}
	}
	return s
}
