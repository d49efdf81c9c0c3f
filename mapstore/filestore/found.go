package filestore

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"sort"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/internal/prefault"
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
	part int    // the partition
	buf  []byte // the file's bytes
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
	size int64 // -1: the file is gone
	// segs holds a segment per partition with records in the file (only
	// the partitions wanted), in the order of their first records; a
	// small file of a map of many partitions costs what it holds.
	segs   []segment
	maxVer map[int]mapstore.Version
	// outside lists the partitions out of range that records named.
	outside []int
	// unfinished: the file's frames end before the file does, in zeros
	// written ahead of them (fsbackend.ZeroAheader) or in a batch being
	// written, so the file may take more records without its size
	// changing. Its size then does not show that it is unchanged.
	unfinished bool
}

// sorter sorts the records of one log file, or of a range of it, by
// partition as they are read (see readLogs).
type sorter struct {
	s    *Store
	want func(int) bool
	upto []mapstore.Version
	res  logRead
	at   []int32 // by partition: its index in res.segs + 1 (0: none yet)
	// base and span are where the bytes sorted start and how many there
	// are, for the estimate of each partition's records.
	base, span   int64
	n, est, used int
	e            logEntry
}

func (s *Store) newSorter(want func(int) bool, upto []mapstore.Version, base, span int64) *sorter {
	return &sorter{s: s, want: want, upto: upto, res: logRead{maxVer: map[int]mapstore.Version{}}, at: make([]int32, s.parts), base: base, span: span}
}

// frame sorts the record frame f, at offset off of the file, into its
// partition's segment. It returns the error of a frame that is not a
// record.
func (st *sorter) frame(f record.Frame, off int64) error {
	e := &st.e
	if err := e.decode(f); err != nil {
		return err
	}
	if e.part < 0 || e.part >= st.s.parts {
		st.res.outside = append(st.res.outside, e.part)
		return nil
	}
	if st.want != nil && !st.want(e.part) {
		return nil
	}
	if st.at[e.part] == 0 {
		st.res.segs = append(st.res.segs, segment{part: e.part})
		st.at[e.part] = int32(len(st.res.segs))
	}
	g := &st.res.segs[st.at[e.part]-1]
	if st.n++; st.n == 64 && st.want == nil {
		// Size each partition's records once from those seen so far,
		// those started before included: grown by doubling instead,
		// they would be copied several times over.
		recs := int(st.span * int64(st.n) / max(1, off-st.base))
		perPart := recs/st.s.parts + recs/st.s.parts/8 + 4
		st.est = perPart * (st.used/st.n + 1)
		for i := range st.res.segs {
			if sg := &st.res.segs[i]; cap(sg.recs) < st.est {
				sg.recs = append(make([]byte, 0, st.est), sg.recs...)
			}
		}
	}
	voff := off + record.HeaderSize + int64(len(f.Payload)-len(e.value))
	before := len(g.recs)
	if st.upto != nil {
		g.add(e, voff, st.est, st.upto[e.part], true)
	} else {
		g.add(e, voff, st.est, mapstore.Version{}, false)
	}
	st.used += len(g.recs) - before
	return nil
}

// checkHeader reports whether f, a file's first frame, is a log header
// of this store's partition count and generation (ok), and the damage to
// report if it is a header that is not (nil if it is none).
func (s *Store) checkHeader(name string, f record.Frame) (ok bool, bad *Damage) {
	if f.Type != typeLogHeader {
		return false, nil
	}
	r := record.NewReader(f.Payload)
	h := decodeHeader(&r)
	if r.Err() == nil && (h.Partitions != uint64(s.parts) || h.Gen != s.gen) {
		return false, &Damage{File: name, Reason: fmt.Sprintf("header says %d partitions, generation %d; expected %d, %d", h.Partitions, h.Gen, s.parts, s.gen)}
	}
	return r.Err() == nil, nil
}

// finish points the segments sorted at the file's bytes.
func (st *sorter) finish(buf []byte) {
	for i := range st.res.segs {
		g := &st.res.segs[i]
		g.buf = buf
		if st.upto != nil {
			g.aboveOf, g.aboveSet = st.upto[g.part], true
		}
		if v, ok := st.res.maxVer[g.part]; !ok || v.Less(g.max) {
			st.res.maxVer[g.part] = g.max
		}
	}
}

// sourceOf names the log file name for the links of other files to find
// (nil for a name that is not a log file's), with whether it has damage
// other than a torn tail.
func sourceOf(name string, damages []record.Damage) *logSource {
	n, ok := logNumber(name)
	if !ok {
		return nil
	}
	src := &logSource{run: runOf(name), n: n}
	for _, d := range damages {
		src.damaged = src.damaged || !d.Tail
	}
	return src
}

// readLog reads one log file and sorts its records by partition (see
// readLogs).
func (s *Store) readLog(ctx context.Context, name string, want func(int) bool, upto []mapstore.Version) (logRead, error) {
	var st *sorter
	rejected := false
	first := true
	var links []link
	var end int64 // past the last valid frame
	// This run's segment is being written while it is active, and from
	// before the writer records it as such.
	s.mu.Lock()
	lf := s.files[name]
	written := runOf(name) == s.run && (lf == nil || lf.active)
	s.mu.Unlock()
	written = written || s.writtenNow(name)
	buf, damages, err := s.readFrames(ctx, name, written, func(f record.Frame, off int64) bool {
		end = off + int64(record.HeaderSize+len(f.Payload))
		if first {
			first = false
			if f.Type == typeLogHeader {
				if _, bad := s.checkHeader(name, f); bad != nil {
					s.damage(*bad)
					rejected = true
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
		if err := st.frame(f, off); err != nil {
			s.damage(Damage{File: name, Offset: off, Length: int64(len(f.Payload) + record.HeaderSize), Reason: err.Error()})
		}
		return true
	}, func(n int64) {
		st = s.newSorter(want, upto, 0, n)
	})
	if err != nil {
		if errors.Is(err, fsbackend.ErrNotExist) {
			return logRead{size: -1, maxVer: map[int]mapstore.Version{}}, nil // removed by compaction meanwhile
		}
		return logRead{}, err
	}
	res := &st.res
	res.size = int64(len(buf))
	res.unfinished = end < res.size
	if rejected {
		res.segs = nil
	}
	st.finish(buf)
	src := sourceOf(name, damages)
	for i := range res.segs {
		res.segs[i].src = src
	}
	for i := range links {
		if l := &links[i]; l.part >= 0 && l.part < s.parts && st.at[l.part] > 0 && !rejected {
			res.segs[st.at[l.part]-1].link = l
		}
	}
	for _, d := range damages {
		if d.Tail && written {
			continue // a batch being written right now
		}
		s.damage(Damage{File: name, Offset: d.Offset, Length: d.Length, Reason: d.Err.Error(), Tail: d.Tail})
	}
	return *res, nil
}

// readChunk is how much of a file readFrames reads at a time on back
// ends with durable append (local disk), where a read is a system call:
// the frames of a chunk are checked and decoded while it is still in the
// processor's cache (a walk over the frame headers of a 55 MiB file took
// 1 ms after reads of 256 KiB, 5-9 ms after reads of 1 MiB). Elsewhere a
// file is read with one call.
const readChunk = 256 << 10

// readFrames reads the named file and calls fn with each valid frame and
// its offset, in file order, until fn returns false; opened is called
// first with the file's size. It returns the file's bytes (which frames
// alias) and the damage found, exactly as record.Scanner finds them (none
// once fn returned false).
//
// written says that a writer may be writing the file as it is read. Its
// first bad frame then ends it, as a tail: it is where the writer was when
// the read got there, whether past the end of the file or in the zeros
// written ahead of its frames (fsbackend.ZeroAheader), which a batch may
// be filling while they are read. Bytes read after it may be a later
// batch's, written once the read had passed its start.
func (s *Store) readFrames(ctx context.Context, name string, written bool, fn func(f record.Frame, off int64) bool, opened func(size int64)) ([]byte, []record.Damage, error) {
	r, err := s.fs.Open(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	if s.recoverIfLeftOpen(r, name) {
		r.Close()
		if err := fsbackend.Recover(ctx, s.fs, name); err != nil {
			return nil, nil, fmt.Errorf("stowage/mapstore/filestore: recover %s, left open by its run: %w", name, err)
		}
		if r, err = s.fs.Open(ctx, name); err != nil {
			return nil, nil, err
		}
	}
	defer r.Close()
	size := r.Size()
	opened(size)
	buf := make([]byte, size)
	prefault.Bytes(buf) // the pages in one call, not a fault each
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
		if err != nil && written {
			return buf, []record.Damage{{Offset: off, Length: size - off, Err: err, Tail: true}}, nil
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

// gather returns, for every partition for which want returns true (all
// if want is nil), its segments of the reads, in the order of the reads.
func gather(reads []logRead, parts int, want func(int) bool) []found {
	counts := make([]int, parts)
	for i := range reads {
		for j := range reads[i].segs {
			counts[reads[i].segs[j].part]++
		}
	}
	out := make([]found, parts)
	for p, n := range counts {
		if n > 0 && (want == nil || want(p)) {
			out[p] = make(found, 0, n)
		}
	}
	for i := range reads {
		for j := range reads[i].segs {
			if g := &reads[i].segs[j]; out[g.part] != nil {
				out[g.part] = append(out[g.part], *g)
			}
		}
	}
	return out
}
