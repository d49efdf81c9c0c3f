package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/stowage/stowage/bench"
	"github.com/stowage/stowage/bench/writeamp"
	"github.com/stowage/stowage/fsbackend"
)

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fl := flag.NewFlagSet("bench", flag.ContinueOnError)
	fl.SetOutput(stderr)
	dir := fl.String("dir", "", "directory on the disk to measure (default: a temporary directory)")
	quick := fl.Bool("quick", false, "small sizes, for a smoke run")
	writers := fl.Int("writers", 64, "concurrent writers")
	valueSize := fl.Int("value-size", 256, "value size in bytes")
	entries := fl.Int("load-entries", 1_000_000, "entries for the EAGER load benchmark")
	checkpointSize := fl.Int("checkpoint-size", 1<<20, "state bytes of each checkpoint in the checkpoint store benchmark")
	checkpointCount := fl.Int("checkpoints", 10_000, "checkpoints of one pipeline among which the latest is looked up")
	deleteCount := fl.Int("delete-checkpoints", 1_000, "checkpoints of the job deleted in the checkpoint delete benchmark")
	checkpointOnly := fl.Bool("checkpoint-only", false, "run only the checkpoint storage measurements")
	fsURI := fl.String("fs", "", "also run write-through and EAGER load on this storage (e.g. hdfs://127.0.0.1:9000), beside local disk; on an object store (s3a, oss, cosn, gs) also bytes uploaded per byte of new data")
	var props propFlags
	fl.Var(&props, "property", "extra storage property KEY=VALUE for --fs (repeatable)")
	fsLatency := fl.Duration("fs-latency", 0, "with --fs on an object store (endpoint given by --property): put a proxy on 127.0.0.1 in front of it that delays every request by this much (e.g. 20ms, as a real object store answers), and report the listings and reads in flight at once of the EAGER load")
	loadBatch := fl.Int("load-batch", bench.DefaultLoadBatch, "records per batch the EAGER load's map is written with; on HDFS and object stores each batch is one file, so a small batch makes many small files, as write-through with few writers does")
	loadOnly := fl.Bool("load-only", false, "run only the EAGER load measurements (local disk, and --fs if given)")
	fsWriteOnly := fl.Bool("fs-write-only", false, "with --fs: run only write-through on that storage, with --writers writers (1 for a lone writer), and nothing on local disk")
	fsPuts := fl.Int("fs-puts", 0, "with --fs-write-only: puts per writer (default 100, or 2000 with one writer)")
	behindOnly := fl.Bool("write-behind-only", false, "run only the write-behind against write-through measurement")
	clusterOn := fl.Bool("cluster", true, "also measure a 3-member cluster of member processes on 127.0.0.1: puts/s against one member, and fail-over time (default false with --quick)")
	clusterOnly := fl.Bool("cluster-only", false, "run only the cluster measurements")
	failovers := fl.Int("failovers", 3, "fail-over runs of the cluster measurements, each on a fresh cluster")
	killMaster := fl.Bool("kill-master", false, "in the fail-over runs, SIGKILL the master rather than another member")
	memberTLS := fl.Bool("member-tls", false, "run the cluster measurements twice, the second time with member TLS (hazelcast.network.ssl with a cluster secret) on every member, and print the ratio of the two")
	freeze := fl.Bool("freeze", false, "in the fail-over runs, SIGSTOP the member instead of SIGKILL: it stops answering but its connections stay open, as when its host or the network fails")
	peers := fl.Bool("peers", false, "run only the side-by-side checkpoint workloads against SeaTunnel's checkpoint-storage-hdfs 2.3.8 (needs java and mvn; on the local disk, or on HDFS with --fs hdfs://host:port/path)")
	peersSrc := fl.String("peers-src", "", "the SeaTunnel harness's Maven project (default: bench/peers found from the working directory or the executable)")
	peersRounds := fl.Int("peers-rounds", 3, "interleaved rounds of the --peers workloads")
	peersReplication := fl.Int("peers-replication", 1, "dfs.replication of SeaTunnel's plugin in --peers on HDFS (the Java client's own default is 3)")
	peersImap := fl.Bool("peers-imap", false, "with --peers: run the IMap write-through workloads (one writer and 64, 256 B values) and the EAGER load of 50,000 entries (5,000 with --quick) against SeaTunnel's imap-storage-file 2.3.8 called directly (its storeAll, then loadAll of a fresh instance), instead of the checkpoint workloads")
	writeOnly := fl.Bool("write-only", false, "run only the local write-through measurements (raw group commit appending and into zeros written ahead, stowage, interleaved --rounds times)")
	rounds := fl.Int("rounds", 3, "interleaved rounds of write-through against the raw group commit and of the EAGER load against the raw read + CRC on local disk; the ratio printed is the median of the rounds")
	cpuProfile := fl.String("cpuprofile", "", "write a CPU profile of the whole run to this file (go tool pprof)")
	peersCluster := fl.Bool("peers-cluster", false, "with --peers: run the cluster ceiling instead, Hazelcast 5.7.0 (no map store, backup-count 1, 1 and 3 member JVMs, its Java client with 64 writers) beside stowage's embedded members (in memory and write-through) and 3 member processes over HTTP (write-through and in memory), puts/s and CPU per put")
	peersMapStore := fl.Bool("peers-mapstore", false, "with --peers: run Hazelcast 5.7.0 with a MapStore over SeaTunnel's imap-storage-file 2.3.8 (as SeaTunnel's FileMapStore, write-through, EAGER) instead: one writer and 64, EAGER load, disk/live after 10 overwrites, beside stowage and that storage called directly")
	peersPuts := fl.Int("peers-puts", 100_000, "with --peers-cluster: timed puts of each row (default 10,000 with --quick)")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *rounds < 1 {
		return fmt.Errorf("--rounds %d: want at least 1", *rounds)
	}
	if *cpuProfile != "" {
		stopProfile, err := startCPUProfile(*cpuProfile)
		if err != nil {
			return err
		}
		defer stopProfile()
	}
	if *peersRounds < 1 {
		return fmt.Errorf("--peers-rounds %d: want at least 1", *peersRounds)
	}
	explicit := map[string]bool{}
	fl.Visit(func(f *flag.Flag) { explicit[f.Name] = true })
	perWriter, keys, metricsRounds, checkpointStores, deleteRounds := 400, 20_000, 400, 100, 5
	if *quick {
		perWriter, keys, metricsRounds, *entries, checkpointStores, deleteRounds = 40, 2_000, 40, 20_000, 10, 2
		if !explicit["checkpoints"] {
			*checkpointCount = 1_000
		}
		if !explicit["delete-checkpoints"] {
			*deleteCount = 200
		}
		if !explicit["cluster"] && !*clusterOnly {
			*clusterOn = false
		}
		if !explicit["failovers"] {
			*failovers = 1
		}
	}
	if *dir == "" {
		d, err := os.MkdirTemp("", "stowage-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		*dir = d
	}
	sub := func(name string) string { p := filepath.Join(*dir, name); _ = os.MkdirAll(p, 0o755); return p }
	host, _ := os.Hostname()
	fmt.Fprintf(stdout, "stowage bench: %s, %d CPUs, %s/%s, %s, dir %s\n\n", host, runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version(), *dir)
	say := func(f string, a ...any) { fmt.Fprintf(stderr, f+"\n", a...) }
	runCluster := func() error {
		cb := &clusterBench{dir: sub("cluster"), writers: *writers, perWriter: perWriter, valueSize: *valueSize, failovers: *failovers, killMaster: *killMaster, freeze: *freeze, say: say}
		off, err := cb.run(ctx, stdout)
		if err != nil || !*memberTLS {
			return err
		}
		fmt.Fprintf(stdout, "\nthe same with member TLS on (hazelcast.network.ssl, cluster secret):\n")
		cbTLS := &clusterBench{dir: sub("cluster-tls"), writers: *writers, perWriter: perWriter, valueSize: *valueSize, failovers: *failovers, killMaster: *killMaster, freeze: *freeze, say: say, tls: true}
		on, err := cbTLS.run(ctx, stdout)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "member TLS on / off: 3-member puts/s %.2f, one-member puts/s %.2f, mean fail-over %s / %s\n",
			on.ThreeMembers/off.ThreeMembers, on.OneMember/off.OneMember, meanFailover(on.Failovers), meanFailover(off.Failovers))
		return nil
	}
	if *clusterOnly {
		return runCluster()
	}
	if *peers {
		pb := &peersBench{src: *peersSrc, fsURI: *fsURI, dir: sub("peers"), rounds: *peersRounds, replication: fmt.Sprint(*peersReplication), say: say, lookPath: exec.LookPath,
			opts: bench.PeerOptions{Sizes: []int{1 << 20, 16 << 10}, Stores: 100, Checkpoints: 1000, Lookups: 21}}
		if pb.src == "" {
			pb.src = findPeersSrc()
		}
		if *quick {
			pb.opts.Stores, pb.opts.Checkpoints, pb.opts.Lookups = 10, 100, 5
		}
		var err error
		switch {
		case *peersCluster:
			n := *peersPuts
			if *quick && !explicit["peers-puts"] {
				n = 10_000
			}
			if n < 64 {
				return fmt.Errorf("--peers-puts %d: want at least 64, one per writer", n)
			}
			err = pb.runCluster(ctx, stdout, n)
		case *peersMapStore:
			err = pb.runMapStore(ctx, stdout, *quick)
		case *peersImap:
			err = pb.runImap(ctx, stdout, *quick)
		default:
			err = pb.run(ctx, stdout)
		}
		if errors.Is(err, errPeersSkipped) {
			fmt.Fprintf(stdout, "%v\n", err)
			return nil
		}
		return err
	}
	runCheckpoint := func() error {
		say("checkpoint storage ...")
		cp, err := bench.Checkpoints(ctx, sub("checkpoint"), *checkpointSize, checkpointStores, *checkpointCount)
		if err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
		say("checkpoint storage: deleting jobs ...")
		del, err := bench.CheckpointDelete(ctx, sub("checkpoint-delete"), *deleteCount, deleteRounds)
		if err != nil {
			return fmt.Errorf("checkpoint delete: %w", err)
		}
		us := func(d time.Duration) time.Duration { return d.Round(10 * time.Microsecond) }
		fmt.Fprintf(stdout, "checkpoint storage on local disk\n")
		fmt.Fprintf(stdout, "  store of a %d KiB state, %d stores, max-retained %d: median %v, p90 %v\n", cp.StateSize>>10, cp.Stores, cp.MaxRetained, us(cp.Store), us(cp.StoreP90))
		fmt.Fprintf(stdout, "    against write+fdatasync+rename+directory fsync of the same bytes: median %v, ratio %.2f\n", us(cp.RawFloor), float64(cp.RawFloor)/float64(cp.Store))
		if cp.RawFloorRetire > 0 {
			fmt.Fprintf(stdout, "    against the same that also removes the file %d writes back: median %v, ratio %.2f\n", cp.MaxRetained, us(cp.RawFloorRetire), float64(cp.RawFloorRetire)/float64(cp.Store))
		}
		fmt.Fprintf(stdout, "    against fsbackend.WriteFileAtomic of the same bytes: median %v, ratio %.2f\n", us(cp.Raw), float64(cp.Raw)/float64(cp.Store))
		fmt.Fprintf(stdout, "  store with every checkpoint kept: median %v, ratio %.2f to write+fdatasync+rename+directory fsync\n", us(cp.StoreAll), float64(cp.RawFloor)/float64(cp.StoreAll))
		fmt.Fprintf(stdout, "  latest of one pipeline among %d checkpoints: median %v, %.0f file(s) opened per lookup (and %.0f List, %.0f Stat); listing the job's directory alone: %v\n",
			cp.Checkpoints, us(cp.Latest), cp.FilesOpened, cp.Lists, cp.Stats, us(cp.List))
		fmt.Fprintf(stdout, "  delete a job of %d checkpoints: median %v of %d (files gone after %v); removing the same files and fsyncing their directories once: %v, ratio %.2f (%.2f until the files are gone)\n\n",
			del.Checkpoints, us(del.Delete), del.Rounds, us(del.Gone), us(del.Raw), float64(del.Raw)/float64(del.Delete), float64(del.Raw)/float64(del.Gone))
		return nil
	}
	if *checkpointOnly {
		return runCheckpoint()
	}
	runLoad := func() error {
		say("EAGER load of %d entries, %d interleaved rounds ...", *entries, *rounds)
		lr, err := bench.LoadRounds(ctx, sub("load"), *rounds, *entries, *valueSize, *loadBatch)
		if err != nil {
			return err
		}
		printLoadRounds(stdout, lr, *entries, *valueSize)
		return nil
	}
	if *fsWriteOnly {
		if *fsURI == "" {
			return errors.New("--fs-write-only needs --fs")
		}
		return fsWriteThrough(ctx, stdout, say, *fsURI, props, *fsLatency, *writers, *fsPuts, *valueSize)
	}
	if *loadOnly {
		if err := runLoad(); err != nil {
			return err
		}
		if *fsURI == "" {
			return nil
		}
		target, stop, err := benchTarget(*fsURI, props, *fsLatency)
		if err != nil {
			return err
		}
		defer stop()
		return remoteLoad(ctx, stdout, say, *fsURI, target, max(1000, *entries/10), *valueSize, *loadBatch)
	}

	runBehind := func() error {
		say("write-behind against write-through ...")
		wb, err := bench.WriteBehind(ctx, bench.LocalTarget(sub("writebehind")), time.Second, *writers, perWriter, *valueSize)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "write-behind (write-delay-seconds %d) against write-through, one member, %d writers, %d B values\n", int(wb.Delay/time.Second), *writers, *valueSize)
		fmt.Fprintf(stdout, "  %-36s %12s %10s\n", "", "puts/s", "ratio")
		fmt.Fprintf(stdout, "  %-36s %12.0f %10s\n", "write-through Map.Put", wb.Through, "1.00")
		fmt.Fprintf(stdout, "  %-36s %12.0f %10.2f\n", "write-behind Map.Put", wb.Behind, wb.Behind/wb.Through)
		fmt.Fprintf(stdout, "  %-36s %12.0f %10.2f   (Flush %v)\n\n", "write-behind Map.Put, then Flush", wb.BehindAndFlush, wb.BehindAndFlush/wb.Through, wb.Flush.Round(time.Millisecond))
		return nil
	}
	if *behindOnly {
		return runBehind()
	}
	runWrite := func() (bench.WriteResult, error) {
		say("write-through: raw group commit (appending, and into zeros written ahead) and stowage, %d interleaved rounds ...", *rounds)
		wr, err := bench.WriteRounds(ctx, sub("write"), *rounds, *writers, perWriter, *valueSize)
		if err != nil {
			return bench.WriteResult{}, err
		}
		printWriteRounds(stdout, wr, *writers, *valueSize)
		return medianRound(wr).Stowage, nil
	}
	if *writeOnly {
		_, err := runWrite()
		return err
	}
	st, err := runWrite()
	if err != nil {
		return err
	}
	say("write-through: bbolt Batch ...")
	bb, err := bench.BoltPuts(ctx, filepath.Join(sub("bolt"), "batch.db"), *writers, perWriter, *valueSize, true)
	if err != nil {
		return err
	}
	say("write-through: bbolt one put per transaction ...")
	b1, err := bench.BoltPuts(ctx, filepath.Join(sub("bolt"), "single.db"), *writers, max(1, perWriter/8), *valueSize, false)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "  %-36s %12.0f   (%.2fx stowage's median round)\n", "bbolt Batch", bb, bb/st.PutsPerSec)
	fmt.Fprintf(stdout, "  %-36s %12.0f   (%.2fx)\n", "bbolt one put per Update", b1, b1/st.PutsPerSec)
	fmt.Fprintf(stdout, "  stowage / bbolt Batch: %.2fx\n\n", st.PutsPerSec/bb)

	say("bulk: PutAll against single puts ...")
	bk, err := bench.Bulk(ctx, bench.LocalTarget(sub("bulk")), 1000, *valueSize, 5)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "bulk, %d entries of %d B, median of %d\n", bk.Entries, *valueSize, bk.Rounds)
	fmt.Fprintf(stdout, "  one PutAll %v, %d Puts one after the other %v, ratio %.1f\n\n",
		bk.PutAll.Round(100*time.Microsecond), bk.Entries, bk.Puts.Round(100*time.Microsecond), float64(bk.Puts)/float64(bk.PutAll))

	if err := runBehind(); err != nil {
		return err
	}

	if err := runLoad(); err != nil {
		return err
	}

	say("overwrite run ...")
	dr, err := bench.Overwrite(ctx, sub("overwrite"), keys, 10, *writers, *valueSize)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "disk use after %d overwrites of each of %d keys of %d B (default settings)\n", dr.Rounds, dr.Keys, *valueSize)
	printDisk(stdout, dr)
	say("metrics-style overwrite run ...")
	mr, err := bench.Overwrite(ctx, sub("metrics"), 50, metricsRounds, *writers, 2000)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "disk use of a metrics-style map: %d overwrites of each of %d keys of 2000 B (default settings)\n", mr.Rounds, mr.Keys)
	printDisk(stdout, mr)
	if err := runCheckpoint(); err != nil {
		return err
	}
	if *clusterOn {
		if err := runCluster(); err != nil {
			return fmt.Errorf("cluster: %w", err)
		}
	}
	if *fsURI == "" {
		return nil
	}
	target, stop, err := benchTarget(*fsURI, props, *fsLatency)
	if err != nil {
		return err
	}
	defer stop()
	p := target.Props
	say("write-through on %s ...", *fsURI)
	remote, err := bench.WriteThrough(ctx, target, *writers, max(1, perWriter/4), *valueSize)
	if err != nil {
		return err
	}
	say("EAGER load on %s ...", *fsURI)
	rl, err := bench.Load(ctx, target, max(1000, *entries/10), *valueSize, *loadBatch)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "on %s (namespace %s), beside local disk from this run\n", *fsURI, target.Namespace)
	fmt.Fprintf(stdout, "  write-through: %.0f puts/s (%.1f records per batch file); local %.0f puts/s (%.1f per fdatasync)\n", remote.PutsPerSec, remote.RecordsPerSync, st.PutsPerSec, st.RecordsPerSync)
	printRemoteLoad(stdout, rl, *fsLatency)
	if kind, _ := fsbackend.BackendName(p); kind == "s3" || kind == "cos" || kind == "oss" || kind == "gcs" {
		o := writeamp.Options{}
		if *quick {
			o = writeamp.Options{Partitions: 4, Windows: 2}
		}
		say("bytes uploaded per byte of new data on %s ...", *fsURI)
		wa, err := bench.UploadsPerNewByte(ctx, target, o)
		if err != nil {
			return err
		}
		first, last := wa.Windows[0], wa.Windows[len(wa.Windows)-1]
		fmt.Fprintf(stdout, "  bytes uploaded per byte of new data (new records, %d per batch, %d partitions, compaction on): %.2f (log %.3f, snapshots %.2f);\n",
			wa.Options.BatchRecords, wa.Options.Partitions, wa.Total.Ratio(), wa.Total.LogRatio(), wa.Total.SnapshotRatio())
		fmt.Fprintf(stdout, "    first window %.2f after %d KiB, last %.2f after %d KiB written; %d KiB stored for %d KiB live\n",
			first.Ratio(), first.Before>>10, last.Ratio(), last.Before>>10, wa.Stored>>10, wa.Live>>10)
	}
	return nil
}

// printDisk prints the disk use of an overwrite run: after the idle
// period, at its most while writing, and how soon after the last write it
// was back within max(2x live, live + 4 MiB) and within twice the live
// bytes.
func printDisk(stdout io.Writer, dr bench.DiskResult) {
	within := func(d time.Duration) string {
		if d == 0 {
			return fmt.Sprintf("not within %v", dr.Idle)
		}
		return d.Round(10 * time.Millisecond).String()
	}
	fmt.Fprintf(stdout, "  live %d B, on disk %d B after %v idle, disk/live %.2f; at most %d B while writing (%.2f, live + %.1f MiB)\n",
		dr.LiveBytes, dr.DiskBytes, dr.Idle, dr.Ratio, dr.PeakBytes, float64(dr.PeakBytes)/float64(max(1, dr.LiveBytes)), float64(dr.PeakBytes-dr.LiveBytes)/(1<<20))
	fmt.Fprintf(stdout, "  after the last write: within max(2x live, live + 4 MiB) %s, within 2x live %s\n\n", within(dr.InBound), within(dr.InTwice))
}

// benchTarget is the --fs storage with its --property settings, behind a
// latency proxy if latency is set; stop stops the proxy.
func benchTarget(fsURI string, props propFlags, lat time.Duration) (bench.Target, func(), error) {
	p, err := propsFromURI(fsURI)
	if err != nil {
		return bench.Target{}, nil, err
	}
	for _, kv := range props {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return bench.Target{}, nil, fmt.Errorf("--property %q: want KEY=VALUE", kv)
		}
		p[k] = v
	}
	target := bench.Target{Props: p, Namespace: fmt.Sprintf("/stowage-bench/%d", time.Now().UnixNano())}
	if lat <= 0 {
		return target, func() {}, nil
	}
	m, stop, err := latencyProxy(p, lat)
	if err != nil {
		return bench.Target{}, nil, err
	}
	target.Latency = m
	return target, stop, nil
}

// fsWriteThrough measures write-through alone on the --fs storage.
func fsWriteThrough(ctx context.Context, stdout io.Writer, say func(string, ...any), fsURI string, props propFlags, lat time.Duration, writers, puts, valueSize int) error {
	if writers < 1 {
		return fmt.Errorf("--writers %d: want at least 1", writers)
	}
	if puts <= 0 {
		puts = 100
		if writers == 1 {
			puts = 2000
		}
	}
	target, stop, err := benchTarget(fsURI, props, lat)
	if err != nil {
		return err
	}
	defer stop()
	say("write-through on %s, %d writers ...", fsURI, writers)
	r, err := bench.WriteThrough(ctx, target, writers, puts, valueSize)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "write-through on %s, %d writers x %d puts of %d B: %.0f puts/s (%.1f records per batch), put latency p50 %v, p90 %v\n", fsURI, writers, puts, valueSize, r.PutsPerSec, r.RecordsPerSync, r.P50.Round(10*time.Microsecond), r.P90.Round(10*time.Microsecond))
	return nil
}

// remoteLoad measures the EAGER load alone on the --fs storage.
func remoteLoad(ctx context.Context, stdout io.Writer, say func(string, ...any), fsURI string, target bench.Target, entries, valueSize, batch int) error {
	say("EAGER load on %s ...", fsURI)
	rl, err := bench.Load(ctx, target, entries, valueSize, batch)
	if err != nil {
		return err
	}
	var lat time.Duration
	if target.Latency != nil {
		lat = target.Latency.Delay()
	}
	fmt.Fprintf(stdout, "on %s (namespace %s)\n", fsURI, target.Namespace)
	printRemoteLoad(stdout, rl, lat)
	return nil
}

func printRemoteLoad(stdout io.Writer, rl bench.LoadResult, lat time.Duration) {
	fmt.Fprintf(stdout, "  EAGER load of %d entries: %v (%.0f entries/s), raw read+CRC %v, ratio %.2f; %d files at once %v, ratio %.2f\n", rl.Entries, rl.Load.Round(time.Millisecond), rl.EntriesPerSec, rl.Raw.Round(time.Millisecond), rl.BytesPerSec/rl.RawBytesPerSec,
		bench.RawFilesAtOnce, rl.RawParallel.Round(time.Millisecond), float64(rl.RawParallel)/float64(max(1, rl.Load)))
	if lat > 0 {
		fmt.Fprintf(stdout, "    with %v added to every request; requests of the load (the node's namespace lease included): %d listings, %d reads, at most %d reads in flight at once\n", lat, rl.Lists, rl.Reads, rl.MaxReads)
	}
}
