package filestore

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"sync"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/internal/prefault"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/serde/record"
)

// A large log file on local disk (a segment holds up to SegmentSize) is
// read a chunk at a time by one goroutine, which only walks the frame
// headers to cut the file into ranges of whole frames; other goroutines
// check and sort the ranges as they come, so that checking (CRC) and
// decoding run beside the reads and on every processor, not one file per
// processor. Each range sorts into segments of its own, which follow
// each other in file order. Anything unexpected — a frame that does not
// check, a header that does not match, a torn tail — and the file is read
// again the ordinary way (readLog), whose rules for damage then apply:
// ranged reading only ever gives what readLog would.

// rangeBytes is the size of the ranges of a file checked in parallel;
// files smaller than twice that are read by readLog. Each range sorts its
// records into segments of its own, one per partition, which the load
// then walks: a 64 MiB segment in 8 ranges keeps the cores busy, while
// ranges of 1 MiB took a fifth more of the read's processor time.
const rangeBytes = 8 << 20

// errRanged says that a file must be read by readLog.
var errRanged = errors.New("read the file in order")

// readLogRanged reads a large local log file as described above. It
// returns errRanged when the file must be read by readLog instead.
func (s *Store) readLogRanged(ctx context.Context, name string, want func(int) bool, upto []mapstore.Version) (logRead, error) {
	r, err := s.fs.Open(ctx, name)
	if err != nil {
		if errors.Is(err, fsbackend.ErrNotExist) {
			return logRead{size: -1, maxVer: map[int]mapstore.Version{}}, nil
		}
		return logRead{}, err
	}
	defer r.Close()
	size := r.Size()
	buf := make([]byte, size)
	prefault.Bytes(buf) // the pages in one call, not a fault each
	var filled int64
	fill := func() error {
		to := min(size, filled+readChunk)
		n, err := r.ReadAt(buf[filled:to], filled)
		if err != nil && !(errors.Is(err, io.EOF) && int64(n) == to-filled) {
			return err
		}
		filled = to
		return nil
	}

	type part struct {
		start, end int64
		st         *sorter
		bad        bool
	}
	var parts []*part
	// The reader never waits for the checkers: it goes on reading while
	// they check what it sent (every range fits in the queue).
	work := make(chan *part, size/rangeBytes+1)
	var wg sync.WaitGroup
	for w := 0; w < max(1, runtime.GOMAXPROCS(0)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for pt := range work {
				for off := pt.start; off < pt.end; {
					f, n, err := record.Decode(buf[off:pt.end])
					if err == nil {
						err = pt.st.frame(f, off)
					}
					if err != nil {
						pt.bad = true
						break
					}
					off += int64(n)
				}
			}
		}()
	}
	dispatch := func(start, end int64) {
		pt := &part{start: start, end: end, st: s.newSorter(want, upto, start, end-start)}
		parts = append(parts, pt)
		work <- pt
	}
	// walk cuts the file into ranges; not ok: it must be read in order;
	// zeros: its frames end in zeros written ahead.
	walk := func() (ok, zeros bool, err error) {
		var off, start int64 // the end of the frames walked; of those sent
		for {
			if filled < size {
				if err := fill(); err != nil {
					return false, false, err
				}
			}
			if off == 0 {
				// The header comes first, and must be this store's.
				f, n, err := record.Decode(buf[:filled])
				if err != nil {
					return false, false, nil
				}
				if ok, _ := s.checkHeader(name, f); !ok {
					return false, false, nil
				}
				off, start = int64(n), int64(n)
			}
			for off+record.HeaderSize <= filled {
				if buf[off] != record.Magic0 || buf[off+1] != record.Magic1 {
					// Zeros to the end are space written ahead of the
					// frames (fsbackend.ZeroAheader): the end.
					if buf[off] != 0 {
						return false, false, nil
					}
					for filled < size {
						if err := fill(); err != nil {
							return false, false, err
						}
					}
					if !record.IsZero(buf[off:]) {
						return false, false, nil
					}
					if off > start {
						dispatch(start, off)
					}
					return true, true, nil
				}
				l := int64(binary.LittleEndian.Uint32(buf[off+4 : off+8]))
				if l > record.MaxPayload || off+record.HeaderSize+l > size {
					return false, false, nil
				}
				if off+record.HeaderSize+l > filled {
					break
				}
				off += record.HeaderSize + l
				if off-start >= rangeBytes {
					dispatch(start, off)
					start = off
				}
			}
			if filled == size {
				if off < size {
					return false, false, nil // a torn tail
				}
				if off > start {
					dispatch(start, off)
				}
				return true, false, nil
			}
		}
	}
	ok, zeros, err := walk()
	close(work)
	wg.Wait()
	if err != nil {
		return logRead{}, err
	}
	for _, pt := range parts {
		ok = ok && !pt.bad
	}
	if !ok {
		return logRead{}, errRanged
	}
	// A link frame is not a record: a file that holds one is read in
	// order (readLog) instead.
	res := logRead{size: size, maxVer: map[int]mapstore.Version{}, unfinished: zeros}
	src := sourceOf(name, nil)
	for _, pt := range parts {
		pt.st.finish(buf)
		for i := range pt.st.res.segs {
			pt.st.res.segs[i].src = src
		}
		res.segs = append(res.segs, pt.st.res.segs...)
		res.outside = append(res.outside, pt.st.res.outside...)
		for p, v := range pt.st.res.maxVer {
			if have, ok := res.maxVer[p]; !ok || have.Less(v) {
				res.maxVer[p] = v
			}
		}
	}
	return res, nil
}
