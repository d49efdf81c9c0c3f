package main

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/stowage/stowage/bench"
)

// printWriteRounds prints the interleaved write-through rounds and the
// median ratio of stowage's Map.Put to the raw group commit.
func printWriteRounds(stdout io.Writer, wr []bench.WriteRound, writers, valueSize int) {
	fmt.Fprintf(stdout, "write-through, %d writers, %d B values, fdatasync'd, %d interleaved rounds\n", writers, valueSize, len(wr))
	fmt.Fprintf(stdout, "  raw group commit (a) appending to its file, (b) into zeros written %d KiB ahead (a sync then grows no file)\n", bench.RawZeroAhead>>10)
	fmt.Fprintf(stdout, "  %-6s %11s %11s %14s %8s %8s %36s %12s\n", "round", "(a) puts/s", "(b) puts/s", "stowage puts/s", "to (a)", "to (b)", "records per sync, (a) / (b) / stowage", "stowage p50")
	ratios, zeroed := make([]float64, len(wr)), make([]float64, len(wr))
	for i, r := range wr {
		ratios[i], zeroed[i] = r.Ratio(), r.ZeroedRatio()
		fmt.Fprintf(stdout, "  %-6d %11.0f %11.0f %14.0f %8.2f %8.2f %22.1f / %4.1f / %4.1f %12v\n", i+1, r.Raw, r.RawZeroed, r.Stowage.PutsPerSec, r.Ratio(), r.ZeroedRatio(),
			r.RawPerSync, r.RawZeroedPerSync, r.Stowage.RecordsPerSync, r.Stowage.P50.Round(10*time.Microsecond))
	}
	fmt.Fprintf(stdout, "  write-through / raw group commit: %.2fx of (a), %.2fx of (b) (medians of %d rounds)\n", bench.Median(ratios), bench.Median(zeroed), len(wr))
}

// medianRound is the round whose ratio is the median.
func medianRound(wr []bench.WriteRound) bench.WriteRound {
	s := slices.Clone(wr)
	slices.SortFunc(s, func(a, b bench.WriteRound) int {
		switch {
		case a.Ratio() < b.Ratio():
			return -1
		case a.Ratio() > b.Ratio():
			return 1
		}
		return 0
	})
	return s[(len(s)-1)/2]
}

// printLoadRounds prints the interleaved EAGER load rounds and the median
// ratios of the raw reads + CRC to the load.
func printLoadRounds(stdout io.Writer, lr []bench.LoadRound, entries, valueSize int) {
	ms := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	fmt.Fprintf(stdout, "EAGER load, %d entries of %d B (%d MiB of files, page cache warm), %d interleaved rounds\n", entries, valueSize, lr[0].Bytes>>20, len(lr))
	fmt.Fprintf(stdout, "  raw read + CRC-32C of the same files: (a) one goroutine, bytes kept in memory as a load keeps them; (b) the same dropping each file's bytes once checked;\n")
	fmt.Fprintf(stdout, "  (c) as (a) on every core. Ratios: raw time / load time. Of the load: read = the store's read of the files (the node's Open),\n")
	fmt.Fprintf(stdout, "  build = the partitions' maps built from it.\n")
	fmt.Fprintf(stdout, "  %-6s %10s %10s %10s %12s %8s %8s %12s %8s %8s %8s\n", "round", "(a)", "(b)", "(c)", "EAGER load", "read", "build", "MiB/s", "to (a)", "to (b)", "to (c)")
	ratios, dropped, par := make([]float64, len(lr)), make([]float64, len(lr)), make([]float64, len(lr))
	for i, r := range lr {
		ratios[i], dropped[i], par[i] = r.Ratio(), r.DroppedRatio(), r.ParallelRatio()
		fmt.Fprintf(stdout, "  %-6d %10v %10v %10v %12v %8v %8v %12.0f %8.2f %8.2f %8.2f\n", i+1, ms(r.RawKept), ms(r.Raw), ms(r.RawParallel), ms(r.Load),
			ms(r.LoadOpen), ms(r.Load-r.LoadOpen), float64(r.Bytes)/(1<<20)/r.Load.Seconds(), r.Ratio(), r.DroppedRatio(), r.ParallelRatio())
	}
	fmt.Fprintf(stdout, "  EAGER load / raw read + CRC: %.2fx (median of %d rounds; %.2fx of (b), %.2fx of (c))\n\n", bench.Median(ratios), len(lr), bench.Median(dropped), bench.Median(par))
}

// startCPUProfile starts a CPU profile written to path; the function it
// returns stops it and closes the file.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile %s: %w", path, err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
