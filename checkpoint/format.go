package checkpoint

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/stowage/stowage/serde/record"
)

// Frame types of a checkpoint file (the record type byte). Frozen; see
// FORMAT.md.
const (
	typeHeader  = 'H'
	typeChunk   = 'S'
	typeTrailer = 'E'
)

// FormatVersion is the version of the checkpoint file payloads.
const FormatVersion = 1

// MaxPipelineID is the highest pipeline id (Java's int range, as in
// SeaTunnel); ids are never negative.
const MaxPipelineID = math.MaxInt32

// chunkSize is how many state bytes go in one frame. A variable so that
// tests can exercise multi-frame files with small states; readers accept
// any chunk up to record.MaxPayload.
var chunkSize = 16 << 20

const (
	nameSuffix = ".ckpt"
	tmpMarker  = ".tmp-"
	// retiredSuffix marks a checkpoint file retention retired (renamed,
	// to be deleted in the background): no longer a checkpoint.
	retiredSuffix = ".retired"
	// len("p") + 10 + len("-c") + 19 + len(".ckpt")
	nameLen = 1 + 10 + 2 + 19 + len(nameSuffix)
)

// FileName returns the file name (inside the job's directory) of a
// checkpoint: "p" + 10-digit pipeline id + "-c" + 19-digit checkpoint id +
// ".ckpt", so that names sort by pipeline, then checkpoint id.
func FileName(pipelineID int, checkpointID int64) string {
	return fmt.Sprintf("p%010d-c%019d%s", pipelineID, checkpointID, nameSuffix)
}

// ParseFileName is the inverse of FileName. It accepts exactly the names
// FileName makes.
func ParseFileName(name string) (pipelineID int, checkpointID int64, ok bool) {
	if len(name) != nameLen || name[0] != 'p' || name[11] != '-' || name[12] != 'c' || !strings.HasSuffix(name, nameSuffix) {
		return 0, 0, false
	}
	p, err := strconv.ParseUint(name[1:11], 10, 31)
	if err != nil || !allDigits(name[1:11]) {
		return 0, 0, false
	}
	c, err := strconv.ParseUint(name[13:32], 10, 63)
	if err != nil || !allDigits(name[13:32]) {
		return 0, 0, false
	}
	return int(p), int64(c), true
}

// parseTempName recognises the temporary name WriteFileAtomic uses for a
// checkpoint file: FileName + ".tmp-" + suffix.
func parseTempName(name string) (pipelineID int, checkpointID int64, ok bool) {
	if len(name) <= nameLen+len(tmpMarker) || name[nameLen:nameLen+len(tmpMarker)] != tmpMarker {
		return 0, 0, false
	}
	return ParseFileName(name[:nameLen])
}

// parseRetiredName recognises a retired checkpoint file: FileName +
// ".retired".
func parseRetiredName(name string) (pipelineID int, checkpointID int64, ok bool) {
	if len(name) != nameLen+len(retiredSuffix) || name[nameLen:] != retiredSuffix {
		return 0, 0, false
	}
	return ParseFileName(name[:nameLen])
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// ValidJobID reports an error wrapping ErrInvalidJobID unless id can name
// a directory: not empty, at most 255 bytes, no "/", "\", NUL or "..".
func ValidJobID(id string) error {
	var why string
	switch {
	case id == "":
		why = "empty"
	case len(id) > 255:
		why = "longer than 255 bytes"
	case strings.ContainsAny(id, "/\\"):
		why = `contains "/" or "\"`
	case strings.ContainsRune(id, 0):
		why = "contains NUL"
	case strings.Contains(id, ".."):
		why = `contains ".."`
	case id == ".":
		why = `is "."`
	default:
		return nil
	}
	return fmt.Errorf("%w %q: %s", ErrInvalidJobID, id, why)
}

func validIDs(pipelineID int, checkpointID int64) error {
	if pipelineID < 0 || pipelineID > MaxPipelineID {
		return fmt.Errorf("%w: pipeline id %d is outside 0..%d", ErrInvalidID, pipelineID, MaxPipelineID)
	}
	if checkpointID < 0 {
		return fmt.Errorf("%w: checkpoint id %d is negative", ErrInvalidID, checkpointID)
	}
	return nil
}

// decodeError locates the first problem found in a checkpoint file.
type decodeError struct {
	Offset int64
	Reason string
	Err    error // record.Err* or nil
}

func (e *decodeError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("at offset %d: %s: %v", e.Offset, e.Reason, e.Err)
	}
	return fmt.Sprintf("at offset %d: %s", e.Offset, e.Reason)
}

func (e *decodeError) Unwrap() error { return e.Err }

var errPayload = errors.New("malformed payload")

// decode parses a whole checkpoint file strictly: header, exactly the
// announced chunks, trailer, and nothing after it. A state of one chunk is
// returned in place: States then aliases b (whose owner is the caller, who
// read the file into it); a longer state is copied out of its chunks.
func decode(b []byte) (PipelineState, *decodeError) {
	var st PipelineState
	off := 0
	next := func(want byte, what string) (record.Frame, *decodeError) {
		f, n, err := record.Decode(b[off:])
		if err != nil {
			reason := "bad " + what + " frame"
			if errors.Is(err, record.ErrShort) {
				reason = "file ends inside the " + what + " frame (truncated)"
			}
			return record.Frame{}, &decodeError{Offset: int64(off), Reason: reason, Err: err}
		}
		if f.Type != want {
			return record.Frame{}, &decodeError{Offset: int64(off), Reason: fmt.Sprintf("expected %s frame %q, found type %q", what, want, f.Type)}
		}
		off += n
		return f, nil
	}
	if len(b) == 0 {
		return st, &decodeError{Reason: "empty file"}
	}
	hf, derr := next(typeHeader, "header")
	if derr != nil {
		return st, derr
	}
	h := record.NewReader(hf.Payload)
	ver := h.Uvarint()
	job := h.Bytes()
	pipe := h.Uvarint()
	cid := h.Uvarint()
	n := h.Uvarint()
	chunks := h.Uvarint()
	created := h.Varint()
	if h.Err() != nil {
		return st, &decodeError{Offset: 0, Reason: "malformed header", Err: errPayload}
	}
	if ver != FormatVersion {
		return st, &decodeError{Offset: 0, Reason: fmt.Sprintf("unknown format version %d", ver)}
	}
	if pipe > MaxPipelineID || cid > math.MaxInt64 || n > uint64(len(b)) || chunks > uint64(len(b)) {
		return st, &decodeError{Offset: 0, Reason: "header values out of range"}
	}
	st.JobID, st.PipelineID, st.CheckpointID = string(job), int(pipe), int64(cid)
	st.Created = time.Unix(0, created)
	if chunks != 1 {
		st.States = make([]byte, 0, n)
	}
	for i := uint64(0); i < chunks; i++ {
		cf, derr := next(typeChunk, "state chunk")
		if derr != nil {
			return st, derr
		}
		if uint64(len(st.States))+uint64(len(cf.Payload)) > n {
			return st, &decodeError{Offset: int64(off - record.Size(len(cf.Payload))), Reason: "state chunks exceed the announced state length"}
		}
		if chunks == 1 {
			st.States = cf.Payload // capacity ends with it: appends cannot reach the trailer
		} else {
			st.States = append(st.States, cf.Payload...)
		}
	}
	tf, derr := next(typeTrailer, "trailer")
	if derr != nil {
		return st, derr
	}
	t := record.NewReader(tf.Payload)
	tn := t.Uvarint()
	crc := t.Uint32()
	tchunks := t.Uvarint()
	if t.Err() != nil {
		return st, &decodeError{Offset: int64(off - record.Size(len(tf.Payload))), Reason: "malformed trailer", Err: errPayload}
	}
	if tn != n || tchunks != chunks || uint64(len(st.States)) != n {
		return st, &decodeError{Offset: int64(off - record.Size(len(tf.Payload))), Reason: fmt.Sprintf("trailer says %d bytes in %d chunks, header %d in %d, read %d", tn, tchunks, n, chunks, len(st.States))}
	}
	if record.Checksum(st.States) != crc {
		return st, &decodeError{Offset: int64(off - record.Size(len(tf.Payload))), Reason: "state checksum mismatch", Err: record.ErrChecksum}
	}
	if off != len(b) {
		return st, &decodeError{Offset: int64(off), Reason: fmt.Sprintf("%d unexpected bytes after the trailer", len(b)-off)}
	}
	return st, nil
}
