package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"

	"github.com/stowage/stowage/bench"
)

// imapResult is one write-through run of one system.
type imapResult struct {
	System  string  `json:"system"`
	Writers int     `json:"writers"`
	Puts    int     `json:"puts"`
	PerSec  float64 `json:"puts_per_sec"`
	P50MS   float64 `json:"p50_ms,omitempty"`
	// PerSync is stowage's records per sync or file.
	PerSync float64 `json:"records_per_batch,omitempty"`
}

// imapPuts is how many puts each writer makes, per system and writer
// count: SeaTunnel serializes its store, so 64 of its callers make fewer.
func imapPuts(system string, writers int, quick bool) int {
	n := map[bool]int{false: 1000, true: 200}[quick]
	if writers > 1 {
		n = 100
		if system != "stowage" {
			n = 20
		}
		if quick {
			n /= 5
		}
	}
	return n
}

// runImap runs write-through of 256-byte values with one writer and with
// 64, stowage's map store (through a node's Map.Put) against SeaTunnel's
// IMapFileStorage called directly (bench/peers ImapBench), and the EAGER
// load of the same entries on both sides (ImapLoadBench), interleaved on
// the same storage, and prints the runs and the ratios.
func (p *peersBench) runImap(ctx context.Context, stdout io.Writer, quick bool) error {
	jar, err := p.harness(ctx)
	if err != nil {
		return err
	}
	props, ns, peerFS, peerNS, err := p.storage()
	if err != nil {
		return err
	}
	where := "local disk under " + p.dir
	if p.fsURI != "" {
		where = p.fsURI
	}
	entries := imapLoadEntries(quick)
	fmt.Fprintf(stdout, "IMap write-through and EAGER load of %d entries vs SeaTunnel imap-storage-file 2.3.8 on %s, 256 B values, %d interleaved rounds\n", entries, where, p.rounds)
	var all []imapResult
	var loads []imapLoadRow
	for r := 1; r <= p.rounds; r++ {
		for _, w := range []int{1, 64} {
			runStowage := func() error {
				p.say("peers: round %d: stowage, %d writers ...", r, w)
				n := imapPuts("stowage", w, quick)
				t := bench.Target{Props: props, Namespace: fmt.Sprintf("%simap-%d-%d", ns, r, w)}
				res, err := bench.WriteThrough(ctx, t, w, n, 256)
				if err != nil {
					return err
				}
				all = append(all, imapResult{System: "stowage", Writers: w, Puts: w * n, PerSec: res.PutsPerSec, P50MS: float64(res.P50) / 1e6, PerSync: res.RecordsPerSync})
				return nil
			}
			runPeer := func() error {
				p.say("peers: round %d: SeaTunnel, %d writers ...", r, w)
				res, err := p.runImapPeer(ctx, jar, peerFS, fmt.Sprintf("%simap-%d-%d", peerNS, r, w), w, imapPuts("seatunnel", w, quick))
				all = append(all, res)
				return err
			}
			if err := alternate(r, runStowage, runPeer); err != nil {
				return err
			}
		}
		sub := fmt.Sprintf("imap-load-%d", r)
		runStowage := func() error {
			p.say("peers: round %d: stowage, EAGER load of %d entries ...", r, entries)
			row, err := runImapLoadStowage(ctx, bench.Target{Props: props, Namespace: ns + sub}, entries)
			if err != nil {
				return err
			}
			row.Round = r
			loads = append(loads, row)
			return nil
		}
		runPeer := func() error {
			p.say("peers: round %d: SeaTunnel, loadAll of %d entries ...", r, entries)
			row, err := p.runImapLoadPeer(ctx, jar, peerFS, peerNS+sub, entries)
			if err != nil {
				return err
			}
			row.Round = r
			loads = append(loads, row)
			return nil
		}
		if err := alternate(r, runStowage, runPeer); err != nil {
			return err
		}
	}
	printRows(stdout, all)
	for _, w := range []int{1, 64} {
		var st, sea []float64
		for _, res := range all {
			if res.Writers != w {
				continue
			}
			if res.System == "stowage" {
				st = append(st, res.PerSec)
			} else {
				sea = append(sea, res.PerSec)
			}
		}
		ms, mp := median(st), median(sea)
		if ms > 0 && mp > 0 {
			fmt.Fprintf(stdout, "  %d writers: stowage %.0f puts/s, SeaTunnel %.0f puts/s (median of rounds): stowage/SeaTunnel %.2f\n", w, ms, mp, ms/mp)
		}
	}
	printRows(stdout, loads)
	return printImapLoad(stdout, loads, entries)
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// runImapPeer runs ImapBench once and decodes its JSON line.
func (p *peersBench) runImapPeer(ctx context.Context, jar, fsURI, ns string, writers, puts int) (imapResult, error) {
	args := []string{"-Xmx1g", "-cp", jar, "stowage.peers.ImapBench", "--fs", fsURI, "--namespace", ns,
		"--writers", fmt.Sprint(writers), "--puts", fmt.Sprint(puts), "--value-size", "256"}
	if p.fsURI != "" {
		args = append(args, "--hadoop", "dfs.replication="+p.replication)
	}
	cmd := exec.CommandContext(ctx, "java", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return imapResult{}, fmt.Errorf("SeaTunnel IMap harness: %w\n%s", err, tail(stderr.String(), 4000))
	}
	for _, line := range strings.Split(string(out), "\n") {
		if line = strings.TrimSpace(line); !strings.HasPrefix(line, "{") {
			continue
		}
		var r imapResult
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return imapResult{}, fmt.Errorf("SeaTunnel IMap harness: line %q: %w", line, err)
		}
		r.System = "seatunnel"
		return r, nil
	}
	return imapResult{}, fmt.Errorf("SeaTunnel IMap harness printed no result\n%s", tail(stderr.String(), 4000))
}
