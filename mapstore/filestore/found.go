package filestore

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"runtime"
	"slices"
	"sort"
	"sync"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/serde/record"
)

// A read of log files sorts their records by partition as it checks
// them: each file gives every partition one segment, into which the
// versions and keys of the partition's records are copied back to back,
// compactly encoded, while the file's bytes are in the cache (values stay
// in the file's bytes, found by offset). Loading a partition later walks
// a few small arrays in order instead of frames scattered over whole
// files, and a segment holds a few pointers whatever its size, so
// millions of records cost the garbage collector nothing.

// segment is what one log file holds of one partition.
type segment struct {
	buf []byte // the file's bytes
	// recs holds the partition's puts and deletes, in file order, each
	// as: the type byte, then record fields: epoch, seq (uvarints), key
	// (bytes), then for a put the value's offset in buf after the
	// previous put's value, its length and its expiry deadline (0:
	// none) (uvarints).
	recs   []byte
	n      int          // records in recs
	starts []epochStart // the partition's epoch starts
	// Of the puts and deletes: the first and the last version, and
	// whether the versions never go down.
	first, last mapstore.Version
	sorted      bool
	max         mapstore.Version // the highest version, epoch starts included
	// above is the log bytes of the records above version aboveOf, as
	// compaction counts them, if known (aboveSet).
	above    int64
	aboveOf  mapstore.Version
	aboveSet bool
	prevVal  int64 // while reading: the end of the last put's value in buf
	// src is the log file the segment is from; link, if not nil, the
	// partition's entry in the file's L frame (see found.broken).
	src  *logSource
	link *link
}

// logSource names the log file segments come from, for links to find.
type logSource struct {
	run string
	n   uint64
	// damaged: the file has damage other than a torn tail, so a record a
	// link names may be unreadable in it although the batch was whole.
	damaged bool
}

// empty reports whether the segment holds no record.
func (g *segment) empty() bool { return g.n == 0 && len(g.starts) == 0 }

// add notes a record whose value starts at offset voff in the file; upto
// is the version above which its bytes count for compaction (if
// countAbove). est is the bytes recs is first made for.
func (g *segment) add(e *logEntry, voff int64, est int, upto mapstore.Version, countAbove bool) {
	if g.empty() || g.max.Less(e.ver) {
		g.max = e.ver
	}
	if countAbove && upto.Less(e.ver) {
		g.above += int64(len(e.key) + len(e.value) + 16)
	}
	if e.typ == typeEpoch {
		g.starts = append(g.starts, epochStart{e.ver.Epoch, e.ver.Seq})
		return
	}
	switch {
	case g.n == 0:
		if est > 0 && g.recs == nil {
			g.recs = make([]byte, 0, est)
		}
		g.first, g.last, g.sorted = e.ver, e.ver, true
	case e.ver.Less(g.last):
		g.sorted = false
	default:
		g.last = e.ver
	}
	g.n++
	b := append(g.recs, e.typ)
	b = record.AppendUvarint(b, e.ver.Epoch)
	b = record.AppendUvarint(b, e.ver.Seq)
	b = record.AppendBytes(b, e.key)
	if e.typ == typePut {
		b = record.AppendUvarint(b, uint64(voff-g.prevVal))
		b = record.AppendUvarint(b, uint64(len(e.value)))
		b = record.AppendUvarint(b, uint64(e.exp))
		g.prevVal = voff + int64(len(e.value))
	}
	g.recs = b
}

// cursor walks a segment's records in order.
type cursor struct {
	g   *segment
	pos int   // in g.recs
	val int64 // end of the last put's value in g.buf
}

// next decodes the next record into e; it reports false at the end.
func (c *cursor) next(e *logEntry) bool {
	b := c.g.recs[c.pos:]
	if len(b) == 0 {
		return false
	}
	e.typ = b[0]
	r := record.NewReader(b[1:]) // written by add: every field reads
	e.ver.Epoch, e.ver.Seq = r.Uvarint(), r.Uvarint()
	e.key = r.Bytes()
	e.value, e.exp = nil, 0
	if e.typ == typePut {
		d, n := r.Uvarint(), r.Uvarint()
		e.exp = int64(r.Uvarint())
		start := c.val + int64(d)
		c.val = start + int64(n)
		e.value = c.g.buf[start:c.val:c.val]
	}
	c.pos += len(b) - r.Len()
	return true
}

// found is what reads of log files found of one partition: a segment per
// file, in the order of the file names (oldest first within a run).
type found []segment

// count returns the number of records found.
func (f found) count() int {
	n := 0
	for i := range f {
		n += f[i].n + len(f[i].starts)
	}
	return n
}

// maxVer returns the highest version found, epoch starts included.
func (f found) maxVer() (mapstore.Version, bool) {
	var max mapstore.Version
	some := false
	for i := range f {
		if g := &f[i]; !g.empty() && (!some || max.Less(g.max)) {
			max, some = g.max, true
		}
	}
	return max, some
}

// bytesAbove returns the log bytes of the records above version upto, as
// compaction counts them.
func (f found) bytesAbove(upto mapstore.Version) int64 {
	var n int64
	for i := range f {
		g := &f[i]
		if g.aboveSet && g.aboveOf == upto {
			n += g.above
			continue
		}
		c := cursor{g: g}
		var e logEntry
		for c.next(&e) {
			if upto.Less(e.ver) {
				n += int64(len(e.key) + len(e.value) + 16)
			}
		}
		for _, st := range g.starts {
			if upto.Less(mapstore.Version{Epoch: st.epoch, Seq: st.from}) {
				n += 16
			}
		}
	}
	return n
}

// epochStart is an E record: epoch started, having taken over up to seq from.
type epochStart struct {
	epoch, from uint64
}

// replay calls fn, in version order, with every put and delete that
// recovery applies over a snapshot as of upto: above upto, and not of an
// older epoch beyond the point a later epoch started from. Records of
// equal versions keep the order of the files. The key aliases its
// segment's recs, the value its file's bytes.
func (f found) replay(upto mapstore.Version, fn func(e *logEntry) error) error {
	var starts []epochStart
	ordered := true
	var prev mapstore.Version
	havePrev := false
	skip := f.broken(upto)
	for i := range f {
		g := &f[i]
		starts = append(starts, g.starts...)
		if g.n == 0 || skip[i] {
			continue
		}
		if !g.sorted || (havePrev && g.first.Less(prev)) {
			ordered = false
		}
		prev, havePrev = g.last, true
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i].epoch > starts[j].epoch })
	keep := func(e *logEntry) bool {
		return upto.Less(e.ver) && (len(starts) == 0 || !cut(starts, e.ver))
	}
	var e logEntry
	if ordered {
		for i := range f {
			g := &f[i]
			if g.n == 0 || !upto.Less(g.last) || skip[i] {
				continue // all at or below the snapshot, or after a gap
			}
			c := cursor{g: g}
			for c.next(&e) {
				if keep(&e) {
					if err := fn(&e); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	// Out of order: decode what is kept, order it, apply it.
	kept := make([]logEntry, 0, f.count())
	for i := range f {
		if skip[i] {
			continue
		}
		c := cursor{g: &f[i]}
		for c.next(&e) {
			if keep(&e) {
				kept = append(kept, e)
			}
		}
	}
	order := make([]int32, len(kept))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		va, vb := kept[a].ver, kept[b].ver
		if c := cmp.Compare(va.Epoch, vb.Epoch); c != 0 {
			return c
		}
		if c := cmp.Compare(va.Seq, vb.Seq); c != 0 {
			return c
		}
		return cmp.Compare(a, b) // equal versions: in the order of the files
	})
	for _, i := range order {
		if err := fn(&kept[i]); err != nil {
			return err
		}
	}
	return nil
}

// broken returns, for each segment, whether recovery must leave out its
// puts and deletes because a batch written before it is missing (all
// false if no segment has a link, the usual case). A pipelined writer has several
// batch files in flight at once and acknowledges a batch only once every
// earlier batch of its partitions is durable; when a later file was
// finished but an earlier one was not (a crash), the later file's records
// of those partitions were never acknowledged, and applying them would
// skip the missing ones. So a segment stands only if its link is
// satisfied: the linked version is at or below upto (the snapshot covers
// that batch, whose file compaction may have deleted), or the linked
// file of the same run is here with that version as the partition's
// highest (or with damage at rest, which may have taken the record; the
// file itself was whole), and that segment stands too. A file of an
// unfinished batch is absent (object stores) or ends short of the linked
// version (a torn HDFS file). Epoch starts are kept whatever: they only
// drop records.
func (f found) broken(upto mapstore.Version) []bool {
	linked := false
	for i := range f {
		if f[i].link != nil {
			linked = true
			break
		}
	}
	if !linked {
		return make([]bool, len(f))
	}
	type fileKey struct {
		run string
		n   uint64
	}
	at := make(map[fileKey]int, len(f))
	for i := range f {
		if src := f[i].src; src != nil {
			at[fileKey{src.run, src.n}] = i
		}
	}
	const (
		unknown = iota
		checking
		stands
		falls
	)
	state := make([]uint8, len(f))
	skip := make([]bool, len(f))
	var check func(i int) bool
	check = func(i int) bool {
		switch state[i] {
		case stands, checking: // a cycle cannot come from a writer: let it stand
			return true
		case falls:
			return false
		}
		state[i] = checking
		ok := true
		if l, src := f[i].link, f[i].src; l != nil && src != nil && upto.Less(l.ver) {
			j, found := -1, false
			if l.back <= src.n {
				j, found = at[fileKey{src.run, src.n - l.back}]
			}
			ok = found && (f[j].max == l.ver || f[j].src.damaged) && check(j)
		}
		if ok {
			state[i] = stands
		} else {
			state[i], skip[i] = falls, true
		}
		return ok
	}
	for i := range f {
		check(i)
	}
	return skip
}

// cut reports whether a record of version v is dropped by a later epoch's
// start; starts are sorted by epoch, newest first.
func cut(starts []epochStart, v mapstore.Version) bool {
	for _, st := range starts {
		if st.epoch <= v.Epoch {
			return false
		}
		if v.Seq > st.from {
			return true
		}
	}
	return false
}

// logRead is what reading one log file gave.
type logRead struct {
	size   int64     // -1: the file is gone
	parts  []segment // by partition; only the partitions wanted
	maxVer map[int]mapstore.Version
	// outside lists the partitions out of range that records named.
	outside []int
}

// readLogs reads log files in parallel, the largest first, keeping only
// partitions for which want returns true (all if want is nil). If upto is
// not nil, each segment also counts its log bytes above upto[p] (the
// version of partition p's newest snapshot).
func (s *Store) readLogs(ctx context.Context, logs []fsbackend.FileInfo, want func(int) bool, upto []mapstore.Version) ([]logRead, error) {
	results := make([]logRead, len(logs))
	errs := make([]error, len(logs))
	order := make([]int, len(logs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(logs[b].Size, logs[a].Size) })
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(2, runtime.GOMAXPROCS(0)))
	prog := progressOf(ctx)
	prog.expect(len(logs))
	for _, i := range order {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer func() { <-sem; wg.Done() }()
			results[i], errs[i] = s.readLog(ctx, logs[i].Name, want, upto)
			prog.tick()
		}(i)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("stowage/mapstore/filestore: read %s: %w", logs[i].Name, err)
		}
	}
	return results, nil
}

// readLog reads one log file and sorts its records by partition (see
// readLogs).
func (s *Store) readLog(ctx context.Context, name string, want func(int) bool, upto []mapstore.Version) (logRead, error) {
	res := logRead{maxVer: map[int]mapstore.Version{}}
	first := true
	n, est := 0, 0
	var arena int
	var e logEntry
	var size int64
	var links []link
	buf, damages, err := s.readFrames(ctx, name, func(f record.Frame, off int64) bool {
		if first {
			first = false
			if f.Type == typeLogHeader {
				r := record.NewReader(f.Payload)
				h := decodeHeader(&r)
				if r.Err() == nil && (h.Partitions != uint64(s.parts) || h.Gen != s.gen) {
					s.damage(Damage{File: name, Reason: fmt.Sprintf("header says %d partitions, generation %d; expected %d, %d", h.Partitions, h.Gen, s.parts, s.gen)})
					res.parts = nil
					return false
				}
				return true
			}
		}
		if f.Type == typeLink {
			ls, err := decodeLinks(f.Payload)
			if err != nil {
				s.damage(Damage{File: name, Offset: off, Length: int64(len(f.Payload) + record.HeaderSize), Reason: err.Error()})
			}
			links = append(links, ls...)
			return true
		}
		if err := e.decode(f); err != nil {
			s.damage(Damage{File: name, Offset: off, Length: int64(len(f.Payload) + record.HeaderSize), Reason: err.Error()})
			return true
		}
		if e.part < 0 || e.part >= s.parts {
			res.outside = append(res.outside, e.part)
			return true
		}
		if want != nil && !want(e.part) {
			return true
		}
		g := &res.parts[e.part]
		if n++; n == 64 && want == nil {
			// Size each partition's records once from those seen so
			// far; those started before grow as they need.
			recs := int(size * int64(n) / max(1, off))
			perPart := recs/s.parts + recs/s.parts/8 + 4
			est = perPart * (arena/n + 1)
		}
		voff := off + record.HeaderSize + int64(len(f.Payload)-len(e.value))
		before := len(g.recs)
		if upto != nil {
			g.add(&e, voff, est, upto[e.part], true)
		} else {
			g.add(&e, voff, est, mapstore.Version{}, false)
		}
		arena += len(g.recs) - before
		return true
	}, func(n int64) {
		size = n
		res.parts = make([]segment, s.parts)
	})
	if err != nil {
		if errors.Is(err, fsbackend.ErrNotExist) {
			res.size = -1 // removed by compaction meanwhile
			return res, nil
		}
		return res, err
	}
	res.size = int64(len(buf))
	var src *logSource
	if n, ok := logNumber(name); ok {
		src = &logSource{run: runOf(name), n: n}
		for _, d := range damages {
			src.damaged = src.damaged || !d.Tail
		}
	}
	for i := range links {
		if l := &links[i]; l.part >= 0 && l.part < len(res.parts) {
			res.parts[l.part].link = l
		}
	}
	for p := range res.parts {
		g := &res.parts[p]
		if g.empty() {
			continue
		}
		g.buf, g.src = buf, src
		if upto != nil {
			g.aboveOf, g.aboveSet = upto[p], true
		}
		res.maxVer[p] = g.max
	}
	s.mu.Lock()
	lf := s.files[name]
	active := lf != nil && lf.active
	s.mu.Unlock()
	for _, d := range damages {
		if d.Tail && (active || s.writtenNow(name)) {
			continue // a batch being written right now
		}
		s.damage(Damage{File: name, Offset: d.Offset, Length: d.Length, Reason: d.Err.Error(), Tail: d.Tail})
	}
	return res, nil
}

// readChunk is how much of a file readFrames reads at a time on back
// ends with durable append (local disk), where a read is a system call:
// the frames of a chunk are checked and decoded while it is still in the
// processor's cache. Elsewhere a file is read with one call.
const readChunk = 1 << 20

// readFrames reads the named file and calls fn with each valid frame and
// its offset, in file order, until fn returns false; opened is called
// first with the file's size. It returns the file's bytes (which frames
// alias) and the damage found, exactly as record.Scanner finds them (none
// once fn returned false).
func (s *Store) readFrames(ctx context.Context, name string, fn func(f record.Frame, off int64) bool, opened func(size int64)) ([]byte, []record.Damage, error) {
	r, err := s.fs.Open(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	size := r.Size()
	opened(size)
	buf := make([]byte, size)
	chunk := size
	if s.fs.Capabilities().DurableAppend {
		chunk = readChunk
	}
	var filled int64
	// fill reads at least up to to (within the file), a chunk at a time.
	fill := func(to int64) error {
		to = min(size, max(to, filled+chunk))
		n, err := r.ReadAt(buf[filled:to], filled)
		if err != nil && !(errors.Is(err, io.EOF) && int64(n) == to-filled) {
			return &fs.PathError{Op: "read", Path: name, Err: err}
		}
		filled = to
		return nil
	}
	var off int64
	for off < size {
		if filled-off < record.HeaderSize && filled < size {
			if err := fill(off + record.HeaderSize); err != nil {
				return nil, nil, err
			}
		}
		f, n, err := record.Decode(buf[off:filled])
		if err != nil && filled < size && errors.Is(err, record.ErrShort) {
			// The frame goes on past what was read: read it whole.
			need := off + record.HeaderSize
			if filled >= need {
				need += int64(binary.LittleEndian.Uint32(buf[off+4 : off+8]))
			}
			if err := fill(need); err != nil {
				return nil, nil, err
			}
			continue
		}
		if err != nil {
			// Damage: read the rest and leave it to the scanner, whose
			// rules (resynchronising, cutting a torn tail) then apply.
			if err := fill(size); err != nil {
				return nil, nil, err
			}
			sc := record.NewScanner(buf[off:])
			for sc.Next() {
				if !fn(sc.Frame(), off+sc.Offset()) {
					return buf, nil, nil
				}
			}
			damages := sc.Damages()
			for i := range damages {
				damages[i].Offset += off
			}
			return buf, damages, nil
		}
		if !fn(f, off) {
			break
		}
		off += int64(n)
	}
	return buf, nil, nil
}

// gather returns, for every partition, its segments of the reads, in the
// order of the reads.
func gather(reads []logRead, parts int) []found {
	out := make([]found, parts)
	for p := range out {
		n := 0
		for i := range reads {
			if reads[i].parts != nil && !reads[i].parts[p].empty() {
				n++
			}
		}
		if n == 0 {
			continue
		}
		out[p] = make(found, 0, n)
		for i := range reads {
			if reads[i].parts != nil && !reads[i].parts[p].empty() {
				out[p] = append(out[p], reads[i].parts[p])
			}
		}
	}
	return out
}
