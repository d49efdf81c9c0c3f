package checkpoint

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/serde/record"
)

// frames is a checkpoint file as the pieces that make it up, in order:
// framing bytes built here and slices of the caller's state, which is
// neither copied nor modified. Writing the pieces one after the other
// writes the file.
type frames struct {
	pieces [][]byte
	size   int64
}

// frame lays st out as a checkpoint file (FORMAT.md).
func frame(st PipelineState) frames {
	n := len(st.States)
	chunks := (n + chunkSize - 1) / chunkSize
	created := st.Created
	if created.IsZero() {
		created = time.Now()
	}
	h := make([]byte, 0, 64+len(st.JobID))
	h = record.AppendUvarint(h, FormatVersion)
	h = record.AppendBytes(h, []byte(st.JobID))
	h = record.AppendUvarint(h, uint64(st.PipelineID))
	h = record.AppendUvarint(h, uint64(st.CheckpointID))
	h = record.AppendUvarint(h, uint64(n))
	h = record.AppendUvarint(h, uint64(chunks))
	h = record.AppendVarint(h, created.UnixNano())

	// One buffer for every piece that is not state: the header frame,
	// each chunk's frame header and the trailer frame.
	buf := make([]byte, 0, record.Size(len(h))+chunks*record.HeaderSize+record.Size(32))
	f := frames{pieces: make([][]byte, 0, 2*chunks+2)}
	buf = record.Append(buf, typeHeader, h)
	start := 0
	for off := 0; off < n; off += chunkSize {
		chunk := st.States[off:min(off+chunkSize, n)]
		buf = record.AppendHeader(buf, typeChunk, chunk)
		f.pieces = append(f.pieces, buf[start:len(buf):len(buf)], chunk)
		start = len(buf)
	}
	t := make([]byte, 0, 32)
	t = record.AppendUvarint(t, uint64(n))
	t = record.AppendUint32(t, record.Checksum(st.States))
	t = record.AppendUvarint(t, uint64(chunks))
	buf = record.Append(buf, typeTrailer, t)
	f.pieces = append(f.pieces, buf[start:])
	for _, p := range f.pieces {
		f.size += int64(len(p))
	}
	return f
}

// encode returns st's checkpoint file in one slice.
func encode(st PipelineState) []byte {
	f := frame(st)
	out := make([]byte, 0, f.size)
	for _, p := range f.pieces {
		out = append(out, p...)
	}
	return out
}

// writeTo writes the file to w.
func (f frames) writeTo(w io.Writer) error {
	for _, p := range f.pieces {
		if len(p) == 0 {
			continue
		}
		if _, err := w.Write(p); err != nil {
			return err
		}
	}
	return nil
}

// readBack checks that name holds these frames as far as its size, its
// first piece (the header frame, which names the job, pipeline and
// checkpoint) and its last (the trailer frame, with the state's length and
// CRC-32C) tell: a file that is torn, short, long or someone else's fails.
// It does not read the state again, which would copy the whole state once
// more (and on an object store download it).
func (f frames) readBack(ctx context.Context, fsys fsbackend.FS, name string) (bool, error) {
	r, err := fsys.Open(ctx, name)
	if err != nil {
		return false, err
	}
	defer r.Close()
	if r.Size() != f.size {
		return false, nil
	}
	check := func(want []byte, off int64) (bool, error) {
		got := make([]byte, len(want))
		n, err := r.ReadAt(got, off)
		if n < len(got) {
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return false, fmt.Errorf("read back at offset %d: %w", off, err)
		}
		return bytes.Equal(got, want), nil
	}
	first, last := f.pieces[0], f.pieces[len(f.pieces)-1]
	if ok, err := check(first, 0); !ok || err != nil {
		return false, err
	}
	return check(last, f.size-int64(len(last)))
}
