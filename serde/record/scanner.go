package record

import (
	"bytes"
	"encoding/binary"
)

// Damage describes a run of bytes that held no valid frame.
type Damage struct {
	// Offset and Length locate the bad bytes in the scanned buffer.
	Offset, Length int64
	// Err is the reason the first frame at Offset was rejected.
	Err error
	// Tail is true when the damage runs to the end of the buffer: a torn
	// write that the caller may cut off.
	Tail bool
}

// Scanner iterates over the frames in a buffer, skipping and reporting
// damage. Zero bytes that run from the end of the last frame to the end of
// the buffer are not damage: a writer may write zeros ahead of its frames
// (fsbackend.ZeroAheader) and die before it cuts them. A Scanner is not
// safe for concurrent use.
type Scanner struct {
	buf     []byte
	off     int
	frame   Frame
	start   int
	damages []Damage
	// zerosAt is where the zeros that end the buffer start (-1: none
	// found).
	zerosAt int
}

// NewScanner returns a scanner over buf. The frames it returns alias buf.
func NewScanner(buf []byte) *Scanner { return &Scanner{buf: buf, zerosAt: -1} }

// Next advances to the next valid frame and reports whether there is one.
func (s *Scanner) Next() bool {
	for s.off < len(s.buf) {
		f, n, err := Decode(s.buf[s.off:])
		if err == nil {
			s.frame, s.start = f, s.off
			s.off += n
			return true
		}
		bad := s.off
		if IsZero(s.buf[bad:]) {
			s.zerosAt, s.off = bad, len(s.buf)
			return false
		}
		next := s.resync(bad + 1)
		d := Damage{Offset: int64(bad), Length: int64(next - bad), Err: err, Tail: next == len(s.buf)}
		s.damages = append(s.damages, d)
		s.off = next
	}
	return false
}

// resync returns the first offset at or after from at which a valid frame
// starts, or len(buf) if there is none.
func (s *Scanner) resync(from int) int {
	for from < len(s.buf) {
		i := bytes.IndexByte(s.buf[from:], Magic0)
		if i < 0 {
			return len(s.buf)
		}
		from += i
		if _, _, err := Decode(s.buf[from:]); err == nil {
			return from
		}
		from++
	}
	return len(s.buf)
}

// Frame returns the frame found by the last successful Next.
func (s *Scanner) Frame() Frame { return s.frame }

// Offset returns the offset in the buffer of the frame returned by Frame.
func (s *Scanner) Offset() int64 { return int64(s.start) }

// End returns the offset just past the last valid frame seen so far (or
// past the damage after it, unless that runs to the end of the buffer).
func (s *Scanner) End() int64 {
	if s.zerosAt >= 0 {
		return int64(s.zerosAt)
	}
	if len(s.damages) > 0 && s.damages[len(s.damages)-1].Tail {
		return s.damages[len(s.damages)-1].Offset
	}
	return int64(s.off)
}

// ZeroTail returns how many zero bytes end the buffer after the last
// frame: space written ahead that no frame took (0 if none was found).
func (s *Scanner) ZeroTail() int64 {
	if s.zerosAt < 0 {
		return 0
	}
	return int64(len(s.buf) - s.zerosAt)
}

// IsZero reports whether b holds only zero bytes.
func IsZero(b []byte) bool {
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b) != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// Damages returns the damage found so far, in offset order.
func (s *Scanner) Damages() []Damage { return s.damages }
