package cluster

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/vmihailenco/msgpack/v5"
)

// Wire format of the TCP transport. Each Call is one yamux stream: the
// caller writes one request frame, the callee writes one answer frame,
// and each side then closes its end (the calls of CallAsync share the
// pipe instead, a stream opened with such a request frame:
// tcp_pipe_frame.go). A frame is
//
//	+------------+--------------------+------------+-------------+
//	| hlen (u32) | header (hlen bytes)| blen (u32) | body (blen) |
//	+------------+--------------------+------------+-------------+
//
// with lengths big-endian. The header is a msgpack map (frameHeader);
// unknown keys are ignored, so fields can be added. The body is raw bytes:
// the request or answer payload, or the error message of a failed call.
// hlen is at most maxHeaderSize and blen at most the message limit
// (MaxMessageSize); a reader refuses a larger length before allocating.
//
// The caller closes its end of the stream only once it has the answer or
// has given up; the callee takes an early close as the caller giving up
// and ends the handler's context.

// maxHeaderSize bounds a frame header: a method name, an address and a
// few integers.
const maxHeaderSize = 64 << 10

// Answer statuses.
const (
	statusOK       = 0 // body is the answer
	statusError    = 1 // body is the handler's error message
	statusTooLarge = 2 // the handler's answer was over the limit
)

// frameHeader is the msgpack header of a request (Method, From, Deadline)
// or of an answer (Status).
type frameHeader struct {
	Method   string `msgpack:"m,omitempty"`
	From     string `msgpack:"f,omitempty"` // the caller's transport address
	Deadline int64  `msgpack:"d,omitempty"` // the caller's deadline, Unix ns; 0 for none
	Status   uint8  `msgpack:"s,omitempty"`
}

// smallBody is the largest body copied behind the header so that a frame
// goes out in one write.
const smallBody = 32 << 10

// writeFrame writes h and body to w and returns how many bytes of the
// frame were written and how many it has in all.
func writeFrame(w io.Writer, h *frameHeader, body []byte) (sent, total int, err error) {
	hb, err := msgpack.Marshal(h)
	if err != nil {
		return 0, 0, fmt.Errorf("stowage/cluster: encode frame header: %w", err)
	}
	n := 4 + len(hb) + 4
	total = n + len(body)
	var buf []byte
	if len(body) <= smallBody {
		buf = make([]byte, 0, total)
	} else {
		buf = make([]byte, 0, n)
	}
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(hb)))
	buf = append(buf, hb...)
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(body)))
	if len(body) <= smallBody {
		buf = append(buf, body...)
		sent, err = w.Write(buf)
		return sent, total, err
	}
	sent, err = w.Write(buf)
	if err != nil {
		return sent, total, err
	}
	m, err := w.Write(body)
	return sent + m, total, err
}

// errFrameTooLarge reports a length prefix over the limit; it wraps
// ErrTooLarge.
type errFrameTooLarge struct {
	what        string
	size, limit int64
}

func (e *errFrameTooLarge) Error() string {
	return fmt.Sprintf("message too large: %s of %d bytes, limit %d", e.what, e.size, e.limit)
}

func (e *errFrameTooLarge) Unwrap() error { return ErrTooLarge }

// readHeader reads the length-prefixed header of a frame.
func readHeader(r io.Reader, h *frameHeader) error {
	var p [4]byte
	if _, err := io.ReadFull(r, p[:]); err != nil {
		return err
	}
	n := binary.BigEndian.Uint32(p[:])
	if n > maxHeaderSize {
		return &errFrameTooLarge{"frame header", int64(n), maxHeaderSize}
	}
	hb := make([]byte, n)
	if _, err := io.ReadFull(r, hb); err != nil {
		return noEOF(err)
	}
	if err := msgpack.Unmarshal(hb, h); err != nil {
		return fmt.Errorf("stowage/cluster: decode frame header: %w", err)
	}
	return nil
}

// readBody reads the length-prefixed body of a frame, refusing one over
// limit before allocating it.
func readBody(r io.Reader, limit int) ([]byte, error) {
	var p [4]byte
	if _, err := io.ReadFull(r, p[:]); err != nil {
		return nil, noEOF(err)
	}
	n := binary.BigEndian.Uint32(p[:])
	if int64(n) > int64(limit) {
		return nil, &errFrameTooLarge{"message", int64(n), int64(limit)}
	}
	return readSized(r, int(n))
}

// readSized reads a body of n bytes, whose size was checked against the
// limit.
func readSized(r io.Reader, n int) ([]byte, error) {
	// The buffer grows with what arrives (at most doubling), so a length
	// that no body follows costs no more memory than the bytes sent.
	b := make([]byte, 0, min(n, readChunk))
	for len(b) < n {
		k := min(n-len(b), max(len(b), readChunk))
		b = slices.Grow(b, k)
		m, err := io.ReadFull(r, b[len(b):len(b)+k])
		b = b[:len(b)+m]
		if err != nil {
			return nil, noEOF(err)
		}
	}
	return b, nil
}

// readChunk is the first read of a body, and the least it grows by.
const readChunk = 64 << 10

// noEOF turns an end of stream inside a frame into io.ErrUnexpectedEOF.
func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// yamuxLogger turns yamux's "[LEVEL] yamux: message" lines into slog
// records.
type yamuxLogger struct{ l *slog.Logger }

func (y yamuxLogger) Print(v ...any)                 { y.log(fmt.Sprint(v...)) }
func (y yamuxLogger) Printf(format string, v ...any) { y.log(fmt.Sprintf(format, v...)) }
func (y yamuxLogger) Println(v ...any)               { y.log(fmt.Sprintln(v...)) }

func (y yamuxLogger) log(line string) {
	line = strings.TrimSpace(line)
	level := slog.LevelInfo
	for _, l := range []struct {
		tag   string
		level slog.Level
	}{{"[DEBUG]", slog.LevelDebug}, {"[INFO]", slog.LevelInfo}, {"[WARN]", slog.LevelWarn}, {"[ERR]", slog.LevelError}} {
		if strings.HasPrefix(line, l.tag) {
			level = l.level
			line = strings.TrimSpace(line[len(l.tag):])
			break
		}
	}
	line = strings.TrimPrefix(line, "yamux: ")
	y.l.Log(context.Background(), level, line, "component", "yamux")
}
