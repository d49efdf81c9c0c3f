package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"

	"github.com/stowage/stowage/bench"
)

// The EAGER-load row of `stowage bench --peers --peers-imap`: SeaTunnel's
// IMapFileStorage loading on its own (bench/peers ImapLoadBench: written
// with storeAll, then loadAll of a fresh storage instance, the call its
// FileMapStore makes on start) beside a fresh stowage node's EAGER load of
// the same keys and values, in interleaved rounds.

// imapLoadBatch is the entries per write call on both sides: SeaTunnel's
// storeAll and stowage's StoreAll (one file per call on HDFS).
const imapLoadBatch = 1000

// imapLoadEntries is how many entries each side writes and loads.
func imapLoadEntries(quick bool) int {
	if quick {
		return 5_000
	}
	return 50_000
}

// imapLoadRow is one EAGER load of one system.
type imapLoadRow struct {
	System  string `json:"system"` // "stowage" or "seatunnel"
	Round   int    `json:"round"`
	Entries int    `json:"entries"` // written
	// Loaded is how many of the written keys the load held, with a value
	// of the written size; Returned is what it held in all.
	Loaded   int     `json:"loaded"`
	Returned int     `json:"returned"`
	PerSec   float64 `json:"entries_per_sec"` // Loaded per second of the load
	LoadMS   float64 `json:"load_ms"`
	// LoadAllMS is SeaTunnel's loadAll alone, without creating the
	// storage instance.
	LoadAllMS float64 `json:"loadall_ms,omitempty"`
	// RawMS is, for stowage, a raw sequential read + CRC of the same
	// files through the same client (bench.Load), before the load.
	RawMS float64 `json:"raw_read_ms,omitempty"`
	// RawParMS is the same read with bench.RawFilesAtOnce files at once.
	RawParMS float64 `json:"raw_parallel_read_ms,omitempty"`
	// StoreFailures is how many writes SeaTunnel's storeAll said it could
	// not make.
	StoreFailures int   `json:"store_failures,omitempty"`
	Files         int   `json:"files,omitempty"`
	Bytes         int64 `json:"bytes,omitempty"`
}

// imapLoadArgs is the java command line of one ImapLoadBench run.
func imapLoadArgs(jar, fsURI, ns string, hadoop []string, entries int) []string {
	args := []string{"-Xmx1g", "-cp", jar, "stowage.peers.ImapLoadBench", "--fs", fsURI, "--namespace", ns,
		"--entries", strconv.Itoa(entries), "--value-size", "256"}
	if len(hadoop) > 0 {
		args = append(args, "--hadoop", strings.Join(hadoop, ","))
	}
	return args
}

// parseImapLoad decodes ImapLoadBench's JSON line into a row.
func parseImapLoad(out []byte) (imapLoadRow, error) {
	for _, line := range strings.Split(string(out), "\n") {
		if line = strings.TrimSpace(line); !strings.HasPrefix(line, "{") {
			continue
		}
		var r struct {
			Workload   string  `json:"workload"`
			Entries    int     `json:"entries"`
			Loaded     *int    `json:"loaded"`
			Returned   int     `json:"returned"`
			Failures   int     `json:"store_failures"`
			LoadMS     float64 `json:"load_ms"`
			LoadAllMS  float64 `json:"loadall_ms"`
			EntriesSec float64 `json:"entries_per_sec"`
			Files      int     `json:"files"`
			FileBytes  int64   `json:"file_bytes"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return imapLoadRow{}, fmt.Errorf("SeaTunnel IMap load harness: line %q: %w", line, err)
		}
		if r.Workload != "imap-load" || r.Entries <= 0 || r.Loaded == nil || r.LoadMS <= 0 {
			return imapLoadRow{}, fmt.Errorf("SeaTunnel IMap load harness: line %q: want workload imap-load with entries, loaded and load_ms", line)
		}
		return imapLoadRow{System: "seatunnel", Entries: r.Entries, Loaded: *r.Loaded, Returned: r.Returned, PerSec: r.EntriesSec,
			LoadMS: r.LoadMS, LoadAllMS: r.LoadAllMS, StoreFailures: r.Failures, Files: r.Files, Bytes: r.FileBytes}, nil
	}
	return imapLoadRow{}, errors.New("SeaTunnel IMap load harness printed no result")
}

// runImapLoadPeer runs ImapLoadBench once.
func (p *peersBench) runImapLoadPeer(ctx context.Context, jar, fsURI, ns string, entries int) (imapLoadRow, error) {
	var hadoop []string
	if p.fsURI != "" {
		hadoop = append(hadoop, "dfs.replication="+p.replication)
	}
	cmd := exec.CommandContext(ctx, "java", imapLoadArgs(jar, fsURI, ns, hadoop, entries)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return imapLoadRow{}, fmt.Errorf("SeaTunnel IMap load harness: %w\n%s", err, tail(stderr.String(), 4000))
	}
	r, err := parseImapLoad(out)
	if err != nil {
		return r, fmt.Errorf("%w\n%s", err, tail(stderr.String(), 4000))
	}
	return r, nil
}

// runImapLoadStowage writes entries entries in StoreAll calls of
// imapLoadBatch (bench.Load) and times a fresh node's EAGER load of them;
// bench.Load fails unless the node holds exactly entries entries.
func runImapLoadStowage(ctx context.Context, t bench.Target, entries int) (imapLoadRow, error) {
	res, err := bench.Load(ctx, t, entries, 256, imapLoadBatch)
	if err != nil {
		return imapLoadRow{}, fmt.Errorf("stowage's EAGER load of %d entries: %w", entries, err)
	}
	return imapLoadRow{System: "stowage", Entries: entries, Loaded: entries, Returned: entries, PerSec: res.EntriesPerSec,
		LoadMS: float64(res.Load) / 1e6, RawMS: float64(res.Raw) / 1e6, RawParMS: float64(res.RawParallel) / 1e6, Bytes: res.Bytes}, nil
}

// printImapLoad prints the medians and the ratio of the EAGER-load rows,
// and an error line for every load that held other than the entries
// written; it returns an error if there was one.
func printImapLoad(w io.Writer, rows []imapLoadRow, entries int) error {
	var st, sea []float64
	var short []string
	for _, r := range rows {
		if r.System == "stowage" {
			st = append(st, r.PerSec)
		} else {
			sea = append(sea, r.PerSec)
		}
		if r.Loaded != r.Entries || r.Returned != r.Entries {
			name := map[string]string{"stowage": "stowage's EAGER load", "seatunnel": "SeaTunnel's loadAll"}[r.System]
			msg := fmt.Sprintf("round %d: %s held %d of the %d entries written (%d missing, %d returned in all",
				r.Round, name, r.Loaded, r.Entries, r.Entries-r.Loaded, r.Returned)
			if r.System == "seatunnel" {
				msg += fmt.Sprintf("; storeAll reported %d writes it could not make", r.StoreFailures)
			}
			short = append(short, msg+")")
		}
	}
	ms, mp := midMedian(st), midMedian(sea)
	if ms > 0 && mp > 0 {
		fmt.Fprintf(w, "  EAGER load of %d entries: stowage %.0f entries/s, SeaTunnel's loadAll %.0f entries/s (median of rounds; of two, their mean): stowage/SeaTunnel %.2f\n",
			entries, ms, mp, ms/mp)
	}
	for _, s := range short {
		fmt.Fprintf(w, "  ERROR: %s\n", s)
	}
	if len(short) > 0 {
		return fmt.Errorf("EAGER load: %d load(s) held other than the %d entries written: %s", len(short), entries, strings.Join(short, "; "))
	}
	return nil
}
