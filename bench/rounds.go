package bench

import (
	"context"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"time"
)

// WriteRound is one interleaved round of write-through: the raw group
// commit, appending and into zeros written ahead, and stowage's Map.Put,
// one right after the other.
type WriteRound struct {
	Raw        float64 // records/s of RawGroupCommit, appending
	RawPerSync float64 // records per fdatasync of RawGroupCommit, appending
	// RawZeroed and RawZeroedPerSync are the same with the file kept
	// written with zeros ahead (RawZeroAhead): a log prepared that way.
	RawZeroed, RawZeroedPerSync float64
	Stowage                     WriteResult
}

// RawZeroAhead is how far ahead of its records the raw group commit's
// zeroed variant keeps its file written with zeros.
const RawZeroAhead = 1 << 20

// Ratio is stowage's puts/s over the appending raw group commit's.
func (r WriteRound) Ratio() float64 { return r.Stowage.PutsPerSec / r.Raw }

// ZeroedRatio is stowage's puts/s over the raw group commit's into zeros
// written ahead.
func (r WriteRound) ZeroedRatio() float64 { return r.Stowage.PutsPerSec / r.RawZeroed }

// WriteRounds runs rounds rounds of RawGroupCommit (appending, then into
// zeros written ahead) and WriteThrough with the same writers, puts and
// value size, rotating which goes first,
// each in a fresh directory under dir, so that a noisy minute on a shared
// machine falls on both sides alike.
func WriteRounds(ctx context.Context, dir string, rounds, writers, n, valueSize int) ([]WriteRound, error) {
	out := make([]WriteRound, 0, rounds)
	for i := 0; i < rounds; i++ {
		rd := filepath.Join(dir, "round-"+strconv.Itoa(i))
		var r WriteRound
		raw := func(sub string, ahead int64, perSec, perSync *float64) func() error {
			return func() (err error) {
				p := filepath.Join(rd, sub)
				if err = os.MkdirAll(p, 0o755); err == nil {
					*perSec, *perSync, err = RawGroupCommit(ctx, p, writers, n, valueSize, ahead)
				}
				return err
			}
		}
		st := func() (err error) {
			r.Stowage, err = WriteThrough(ctx, LocalTarget(filepath.Join(rd, "stowage")), writers, n, valueSize)
			return err
		}
		runs := []func() error{raw("raw", 0, &r.Raw, &r.RawPerSync), raw("raw-zeroed", RawZeroAhead, &r.RawZeroed, &r.RawZeroedPerSync), st}
		for j := range runs {
			if err := runs[(i+j)%len(runs)](); err != nil {
				return out, err
			}
		}
		out = append(out, r)
		_ = os.RemoveAll(rd)
	}
	return out, nil
}

// LoadRound is one interleaved round of the EAGER load: a raw read + CRC
// of the files and a node's EAGER load of the same files.
type LoadRound struct {
	Bytes int64
	// Raw is the sequential read + CRC-32C of every file by one
	// goroutine, each file's buffer dropped once checksummed (RawReadCRC);
	// RawKept the same keeping every buffer until all are read, as the
	// load keeps them (RawReadCRCKept); RawParallel that split among
	// GOMAXPROCS goroutines (the floor for a load that uses every core).
	Raw, RawKept, RawParallel time.Duration
	Load                      time.Duration
	// LoadOpen is the part of Load spent opening the node: the map
	// store's read of the log files (EagerLoadPhases).
	LoadOpen time.Duration
}

// Ratio is the time of the raw sequential read that keeps the bytes over
// the load's.
func (r LoadRound) Ratio() float64 { return float64(r.RawKept) / float64(r.Load) }

// DroppedRatio is the time of the raw sequential read that drops each
// file's bytes over the load's (the reference of earlier runs).
func (r LoadRound) DroppedRatio() float64 { return float64(r.Raw) / float64(r.Load) }

// ParallelRatio is the parallel raw read's time over the load's.
func (r LoadRound) ParallelRatio() float64 { return float64(r.RawParallel) / float64(r.Load) }

// LoadRounds writes entries entries of valueSize bytes once (as Load
// does), then runs rounds rounds each of which makes a fresh copy of the
// files (hard links, so that what a load writes, epoch starts and
// snapshots, never reaches the next round) and times, alternating their
// order, raw reads + CRC of the copy's files (sequential dropping each
// file's bytes, sequential keeping them, split among GOMAXPROCS
// goroutines keeping them) and a node's EAGER load of them. Local disk
// only.
func LoadRounds(ctx context.Context, dir string, rounds, entries, valueSize, batch int) ([]LoadRound, error) {
	golden := filepath.Join(dir, "golden")
	// Files of an earlier run in the same directory would be loaded
	// too: the same keys written again, twice the bytes.
	if err := os.RemoveAll(golden); err != nil {
		return nil, err
	}
	if err := writeLoadFiles(ctx, LocalTarget(golden), entries, valueSize, batch); err != nil {
		return nil, err
	}
	out := make([]LoadRound, 0, rounds)
	for i := 0; i < rounds; i++ {
		ns := filepath.Join(dir, "round-"+strconv.Itoa(i))
		if err := LinkTree(golden, ns); err != nil {
			return out, err
		}
		files := filepath.Join(ns, "bench", loadMap)
		var r LoadRound
		raw := func() (err error) {
			if r.Bytes, r.Raw, err = RawReadCRC(files); err != nil {
				return err
			}
			debug.FreeOSMemory() // each read and the load start with the memory of the one before given back
			if _, r.RawKept, err = RawReadCRCKept(files); err != nil {
				return err
			}
			debug.FreeOSMemory()
			_, r.RawParallel, err = RawReadCRCParallel(files)
			debug.FreeOSMemory()
			return err
		}
		load := func() (err error) {
			r.Load, r.LoadOpen, err = EagerLoadPhases(ctx, LocalTarget(ns), entries)
			debug.FreeOSMemory()
			return err
		}
		debug.FreeOSMemory()
		first, second := raw, load
		if i%2 == 1 {
			first, second = load, raw
		}
		if err := first(); err != nil {
			return out, err
		}
		if err := second(); err != nil {
			return out, err
		}
		out = append(out, r)
		_ = os.RemoveAll(ns)
	}
	return out, nil
}

// Median is the median of xs (the lower middle for an even count).
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

// LinkTree makes dst a copy of the tree at src whose files are hard links.
func LinkTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		return os.Link(p, to)
	})
}
