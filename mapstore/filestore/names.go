package filestore

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/stowage/stowage/mapstore"
)

// Names below the map directory (see FORMAT.md):
//
//	META
//	g<gen>/log/<run-id>/<n>.log          n: 12 decimal digits
//	g<gen>/snap/<partition>/<epoch>-<seq>.snap   epoch, seq: 16 hex digits

func genDir(gen uint64) string { return "g" + strconv.FormatUint(gen, 10) }

func logName(gen uint64, run string, n int) string {
	return fmt.Sprintf("%s/log/%s/%012d.log", genDir(gen), run, n)
}

func snapName(gen uint64, p int, v mapstore.Version) string {
	return fmt.Sprintf("%s/snap/%d/%016x-%016x.snap", genDir(gen), p, v.Epoch, v.Seq)
}

func snapDir(gen uint64, p int) string {
	return fmt.Sprintf("%s/snap/%d", genDir(gen), p)
}

// runOf returns the run id of a log file name.
func runOf(name string) string {
	parts := strings.Split(name, "/")
	if len(parts) != 4 {
		return ""
	}
	return parts[2]
}

// logNumber returns the number n of a log file name (see logName).
func logNumber(name string) (uint64, bool) {
	i := strings.LastIndexByte(name, '/')
	n, err := strconv.ParseUint(strings.TrimSuffix(name[i+1:], ".log"), 10, 64)
	return n, err == nil && strings.HasSuffix(name, ".log")
}

const (
	kindLog  = "log"
	kindSnap = "snap"
)

// parseName returns the generation and kind of a data file name.
func parseName(name string) (gen uint64, kind string, ok bool) {
	parts := strings.Split(name, "/")
	if len(parts) != 4 || len(parts[0]) < 2 || parts[0][0] != 'g' {
		return 0, "", false
	}
	gen, err := strconv.ParseUint(parts[0][1:], 10, 64)
	if err != nil {
		return 0, "", false
	}
	switch {
	case parts[1] == kindLog && strings.HasSuffix(parts[3], ".log"):
		return gen, kindLog, true
	case parts[1] == kindSnap && strings.HasSuffix(parts[3], ".snap"):
		return gen, kindSnap, true
	}
	return 0, "", false
}

// parseSnapName returns the partition and version of a snapshot name.
func parseSnapName(name string) (p int, v mapstore.Version, ok bool) {
	parts := strings.Split(name, "/")
	if len(parts) != 4 {
		return 0, v, false
	}
	p, err := strconv.Atoi(parts[2])
	if err != nil || p < 0 {
		return 0, v, false
	}
	ep, sq, found := strings.Cut(strings.TrimSuffix(parts[3], ".snap"), "-")
	if !found {
		return 0, v, false
	}
	var e1, e2 error
	v.Epoch, e1 = strconv.ParseUint(ep, 16, 64)
	v.Seq, e2 = strconv.ParseUint(sq, 16, 64)
	return p, v, e1 == nil && e2 == nil
}
