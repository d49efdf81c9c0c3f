package record

import "bytes"

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
// damage. A Scanner is not safe for concurrent use.
type Scanner struct {
	buf     []byte
	off     int
	frame   Frame
	start   int
	damages []Damage
}

// NewScanner returns a scanner over buf. The frames it returns alias buf.
func NewScanner(buf []byte) *Scanner { return &Scanner{buf: buf} }

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

// End returns the offset just past the last valid frame seen so far.
func (s *Scanner) End() int64 {
	if len(s.damages) > 0 && s.damages[len(s.damages)-1].Tail {
		return s.damages[len(s.damages)-1].Offset
	}
	return int64(s.off)
}

// Damages returns the damage found so far, in offset order.
func (s *Scanner) Damages() []Damage { return s.damages }
