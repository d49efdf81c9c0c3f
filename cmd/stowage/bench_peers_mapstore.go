package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/stowage/stowage/bench"
)

// The IMap + MapStore rows of `stowage bench --peers --peers-mapstore`:
// Hazelcast 5.7 with a MapStore delegating to SeaTunnel's IMapFileStorage
// as the engine's FileMapStore does (bench/peers HzMapStoreBench), beside
// stowage's own figures for the same workloads and SeaTunnel's storage
// called directly where that workload exists, in interleaved rounds.

// mapStoreRow is one measured figure of one system.
type mapStoreRow struct {
	System   string `json:"system"`   // "stowage", "hazelcast+filemapstore", "seatunnel"
	Workload string `json:"workload"` // "write", "load", "overwrite"
	Writers  int    `json:"writers,omitempty"`
	Round    int    `json:"round"`
	// Value is puts/s (write), entries/s (load) or disk bytes per live
	// byte (overwrite).
	Value float64 `json:"value"`
	// Lost is how many entries an EAGER load lacked of those written.
	Lost int `json:"lost,omitempty"`
	// StoreFailures is how many writes SeaTunnel's storage said it could
	// not make, which its FileMapStore ignores (Hazelcast's put succeeded).
	StoreFailures int `json:"store_failures,omitempty"`
}

// hzMapStore is what HzMapStoreBench prints.
type hzMapStore struct {
	System      string  `json:"system"`
	Workload    string  `json:"workload"`
	Writers     int     `json:"writers"`
	PutsPerSec  float64 `json:"puts_per_sec"`
	EntriesSec  float64 `json:"entries_per_sec"`
	Entries     int     `json:"entries"`
	Loaded      int     `json:"loaded"`
	Failures    int     `json:"store_failures"`
	DiskPerLive float64 `json:"disk_per_live"`
}

// mapStoreSizes are the sizes of the workloads.
type mapStoreSizes struct {
	Entries int // of the EAGER load
	Keys    int // of the overwrite, 10 rounds
}

func newMapStoreSizes(quick bool) mapStoreSizes {
	if quick {
		return mapStoreSizes{Entries: 2_000, Keys: 100}
	}
	return mapStoreSizes{Entries: 10_000, Keys: 500}
}

// hzMapStoreArgs is the java command line of one HzMapStoreBench run.
func hzMapStoreArgs(jar, fsURI, ns string, hadoop []string, workload string, writers, n int) []string {
	args := []string{"-Xmx1g"}
	args = append(args, hzJVMFlags...)
	args = append(args, "-cp", jar, "stowage.peers.HzMapStoreBench", "--mode", workload, "--fs", fsURI, "--namespace", ns, "--value-size", "256")
	switch workload {
	case "write":
		args = append(args, "--writers", strconv.Itoa(writers), "--puts", strconv.Itoa(n))
	case "load":
		args = append(args, "--entries", strconv.Itoa(n))
	case "overwrite":
		args = append(args, "--writers", strconv.Itoa(writers), "--keys", strconv.Itoa(n), "--rounds", "10")
	}
	if len(hadoop) > 0 {
		args = append(args, "--hadoop", strings.Join(hadoop, ","))
	}
	return args
}

// parseHzMapStore decodes HzMapStoreBench's JSON line into a row.
func parseHzMapStore(out []byte) (mapStoreRow, error) {
	for _, line := range strings.Split(string(out), "\n") {
		if line = strings.TrimSpace(line); !strings.HasPrefix(line, "{") {
			continue
		}
		var r hzMapStore
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return mapStoreRow{}, fmt.Errorf("Hazelcast map store harness: line %q: %w", line, err)
		}
		row := mapStoreRow{System: "hazelcast+filemapstore", Workload: r.Workload, Writers: r.Writers, StoreFailures: r.Failures}
		switch r.Workload {
		case "write":
			row.Value = r.PutsPerSec
		case "load":
			row.Value = r.EntriesSec
			row.Lost = r.Entries - r.Loaded
		case "overwrite":
			row.Value = r.DiskPerLive
		default:
			return row, fmt.Errorf("Hazelcast map store harness: line %q: unknown workload", line)
		}
		if row.Value <= 0 {
			return row, fmt.Errorf("Hazelcast map store harness: line %q: no figure", line)
		}
		return row, nil
	}
	return mapStoreRow{}, fmt.Errorf("Hazelcast map store harness printed no result")
}

// runHzMapStore runs HzMapStoreBench once.
func (p *peersBench) runHzMapStore(ctx context.Context, jar, fsURI, ns, workload string, writers, n int) (mapStoreRow, error) {
	var hadoop []string
	if p.fsURI != "" {
		hadoop = append(hadoop, "dfs.replication="+p.replication)
	}
	cmd := exec.CommandContext(ctx, "java", hzMapStoreArgs(jar, fsURI, ns, hadoop, workload, writers, n)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return mapStoreRow{}, fmt.Errorf("Hazelcast map store harness (%s): %w\n%s", workload, err, tail(stderr.String(), 4000))
	}
	r, err := parseHzMapStore(out)
	if err != nil {
		return r, fmt.Errorf("%w\n%s", err, tail(stderr.String(), 4000))
	}
	return r, nil
}

// runMapStore measures every workload in p.rounds interleaved rounds and
// prints the rows and the ratios.
func (p *peersBench) runMapStore(ctx context.Context, stdout io.Writer, quick bool) error {
	jar, err := p.harness(ctx)
	if err != nil {
		return err
	}
	props, ns, peerFS, peerNS, err := p.storage()
	if err != nil {
		return err
	}
	sz := newMapStoreSizes(quick)
	where := "local disk under " + p.dir
	if p.fsURI != "" {
		where = p.fsURI
	}
	fmt.Fprintf(stdout, "IMap + map store vs Hazelcast 5.7.0 + SeaTunnel's FileMapStore over imap-storage-file 2.3.8 (and that storage called directly) on %s, 256 B values, %d interleaved rounds\n", where, p.rounds)
	var all []mapStoreRow
	add := func(r mapStoreRow, round int) { r.Round = round; all = append(all, r) }
	for r := 1; r <= p.rounds; r++ {
		for _, w := range []int{1, 64} {
			sub := fmt.Sprintf("ms-write-%d-%d", r, w)
			runStowage := func() error {
				p.say("peers: round %d: stowage, write-through, %d writers ...", r, w)
				res, err := bench.WriteThrough(ctx, bench.Target{Props: props, Namespace: ns + sub}, w, imapPuts("stowage", w, quick), 256)
				if err != nil {
					return err
				}
				add(mapStoreRow{System: "stowage", Workload: "write", Writers: w, Value: res.PutsPerSec}, r)
				return nil
			}
			runPeers := func() error {
				p.say("peers: round %d: Hazelcast + FileMapStore, %d writers ...", r, w)
				row, err := p.runHzMapStore(ctx, jar, peerFS, peerNS+sub+"-hz", "write", w, imapPuts("hazelcast", w, quick))
				if err != nil {
					return err
				}
				add(row, r)
				p.say("peers: round %d: SeaTunnel's storage called directly, %d writers ...", r, w)
				st, err := p.runImapPeer(ctx, jar, peerFS, peerNS+sub+"-direct", w, imapPuts("seatunnel", w, quick))
				if err != nil {
					return err
				}
				add(mapStoreRow{System: "seatunnel", Workload: "write", Writers: w, Value: st.PerSec}, r)
				return nil
			}
			if err := alternate(r, runStowage, runPeers); err != nil {
				return err
			}
		}
		sub := fmt.Sprintf("ms-load-%d", r)
		runStowage := func() error {
			p.say("peers: round %d: stowage, EAGER load of %d entries ...", r, sz.Entries)
			res, err := bench.Load(ctx, bench.Target{Props: props, Namespace: ns + sub}, sz.Entries, 256, 0)
			if err != nil {
				return err
			}
			add(mapStoreRow{System: "stowage", Workload: "load", Value: res.EntriesPerSec}, r)
			if p.fsURI != "" {
				return nil // Overwrite measures the local disk only
			}
			p.say("peers: round %d: stowage, %d keys overwritten 10 times ...", r, sz.Keys)
			dr, err := bench.Overwrite(ctx, filepath.Join(p.dir, fmt.Sprintf("ms-overwrite-%d", r)), sz.Keys, 10, 64, 256)
			if err != nil {
				return err
			}
			add(mapStoreRow{System: "stowage", Workload: "overwrite", Writers: 64, Value: dr.Ratio}, r)
			return nil
		}
		runPeer := func() error {
			p.say("peers: round %d: Hazelcast + FileMapStore, EAGER load of %d entries ...", r, sz.Entries)
			row, err := p.runHzMapStore(ctx, jar, peerFS, peerNS+sub+"-hz", "load", 0, sz.Entries)
			if err != nil {
				return err
			}
			add(row, r)
			p.say("peers: round %d: Hazelcast + FileMapStore, %d keys overwritten 10 times ...", r, sz.Keys)
			row, err = p.runHzMapStore(ctx, jar, peerFS, peerNS+fmt.Sprintf("ms-overwrite-%d-hz", r), "overwrite", 64, sz.Keys)
			if err != nil {
				return err
			}
			add(row, r)
			return nil
		}
		if err := alternate(r, runStowage, runPeer); err != nil {
			return err
		}
	}
	printRows(stdout, all)
	printMapStoreRatios(stdout, all, sz, p.fsURI != "")
	return nil
}

// mapStoreLine is one workload's medians over rounds per system.
type mapStoreLine struct {
	Workload string
	Writers  int
	// Stowage, Hz and Direct are the medians (0: not measured).
	Stowage, Hz, Direct float64
}

// mapStoreLines groups the rows by workload and writers, in the order
// they first came, with each system's median over rounds.
func mapStoreLines(all []mapStoreRow) []mapStoreLine {
	type key struct {
		workload string
		writers  int
	}
	var order []key
	vals := map[key]map[string][]float64{}
	for _, r := range all {
		k := key{r.Workload, r.Writers}
		if r.Workload != "write" {
			k.writers = 0
		}
		if vals[k] == nil {
			vals[k] = map[string][]float64{}
			order = append(order, k)
		}
		vals[k][r.System] = append(vals[k][r.System], r.Value)
	}
	var out []mapStoreLine
	for _, k := range order {
		v := vals[k]
		out = append(out, mapStoreLine{Workload: k.workload, Writers: k.writers,
			Stowage: midMedian(v["stowage"]), Hz: midMedian(v["hazelcast+filemapstore"]), Direct: midMedian(v["seatunnel"])})
	}
	return out
}

// ratio is a/b formatted, "-" when either is unknown; for disk/live the
// lower is better, so the ratio is taken the other way round (above 1:
// stowage better, as for speeds).
func ratio(workload string, st, peer float64) string {
	if st <= 0 || peer <= 0 {
		return "-"
	}
	if workload == "overwrite" {
		return fmt.Sprintf("%.2f", peer/st)
	}
	return fmt.Sprintf("%.2f", st/peer)
}

// printMapStoreRatios prints the medians, the ratios and what each system
// made durable.
func printMapStoreRatios(w io.Writer, all []mapStoreRow, sz mapStoreSizes, hdfs bool) {
	fmt.Fprintf(w, "  %-34s %12s %14s %12s %10s %10s\n", "workload (median of rounds)", "stowage", "Hz+FileMapSt.", "ST direct", "st/Hz+FMS", "st/direct")
	for _, l := range mapStoreLines(all) {
		label := ""
		switch l.Workload {
		case "write":
			label = fmt.Sprintf("write-through, %d writer(s), puts/s", l.Writers)
		case "load":
			label = fmt.Sprintf("EAGER load of %d, entries/s", sz.Entries)
		case "overwrite":
			label = fmt.Sprintf("disk/live, %d keys x 10", sz.Keys)
		}
		num := func(v float64) string {
			switch {
			case v <= 0:
				return "-"
			case l.Workload == "overwrite":
				return fmt.Sprintf("%.2f", v)
			default:
				return fmt.Sprintf("%.0f", v)
			}
		}
		fmt.Fprintf(w, "  %-34s %12s %14s %12s %10s %10s\n", label, num(l.Stowage), num(l.Hz), num(l.Direct),
			ratio(l.Workload, l.Stowage, l.Hz), ratio(l.Workload, l.Stowage, l.Direct))
	}
	fmt.Fprintf(w, "  (medians: of two rounds, their mean; ratios above 1: stowage better; for disk/live it is Hazelcast's bytes over stowage's)\n")
	for _, r := range all {
		if r.Lost > 0 {
			fmt.Fprintf(w, "  round %d: %s's EAGER load held %d entries fewer than the %d written\n", r.Round, r.System, r.Lost, sz.Entries)
		}
		if r.StoreFailures > 0 {
			fmt.Fprintf(w, "  round %d, %s: SeaTunnel's storage reported %d writes it could not make, which FileMapStore ignores (the puts succeeded)\n", r.Round, r.Workload, r.StoreFailures)
		}
	}
	if hdfs {
		fmt.Fprintf(w, "  durability: stowage acknowledges a put after hsync of its batch on a log file (every DataNode of the pipeline synced);\n")
		fmt.Fprintf(w, "  SeaTunnel's WAL writer (Hazelcast + FileMapStore and direct alike) writes each record and hsyncs it before store returns, one record per sync.\n")
		fmt.Fprintf(w, "  stowage's disk/live is measured on local disk only (bench.Overwrite).\n")
	} else {
		fmt.Fprintf(w, "  durability: stowage acknowledges a put after fdatasync of its batch; SeaTunnel's WAL writer (Hazelcast + FileMapStore and direct alike)\n")
		fmt.Fprintf(w, "  calls hsync per record, which its checksum-less local file system turns into an fsync: one fsync per record before store returns.\n")
	}
}
