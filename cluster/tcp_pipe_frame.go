package cluster

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"time"
)

// The pipe: one long-lived stream per connection that carries many calls
// at once, each by a request id, so that a call costs no stream, no
// goroutine on the caller's side, and shares its write with every other
// call and answer queued meanwhile. It is opened with an ordinary request
// frame (tcp_frame.go) of method pipeMethod; from then on both ends write
// pipe frames:
//
//	+-----------+-----------+------------+--------------------+
//	| kind (u8) | id (u64)  | plen (u32) | payload (plen)     |
//	+-----------+-----------+------------+--------------------+
//
// kind pipeRequest: payload is deadline (i64, Unix ns, 0 for none),
// method length (u8), method, then the body. kind pipeAnswer: payload is
// the status (u8, as an answer frame's) then the body. kind pipeCancel:
// no payload; the caller gave up on call id. A reader refuses a plen
// over its bound (pipeMaxRequest for requests, the message limit for
// answers) before reading the payload.

// pipeMethod opens a pipe; no handler has this name (methods are
// printable).
const pipeMethod = "\x00pipe"

// Pipe frame kinds.
const (
	pipeRequest = 1
	pipeAnswer  = 2
	pipeCancel  = 3
)

// pipeHeaderSize is the fixed part of a pipe frame.
const pipeHeaderSize = 1 + 8 + 4

// pipeMaxBody is the largest request body sent on the pipe; larger
// requests go on a stream of their own, so that one does not hold up the
// calls behind it.
const pipeMaxBody = 64 << 10

// pipeMaxRequest bounds the payload of a request frame.
const pipeMaxRequest = 8 + 1 + 255 + pipeMaxBody

// pipeMaxQueued is how many bytes of frames may wait for the writer; a
// caller waits while more do (the peer reads too slowly).
const pipeMaxQueued = 4 << 20

// appendPipeRequest appends a request frame to b, its body head then
// body.
func appendPipeRequest(b []byte, id uint64, deadline int64, method string, head, body []byte) []byte {
	b = append(b, pipeRequest)
	b = binary.BigEndian.AppendUint64(b, id)
	b = binary.BigEndian.AppendUint32(b, uint32(8+1+len(method)+len(head)+len(body)))
	b = binary.BigEndian.AppendUint64(b, uint64(deadline))
	b = append(b, byte(len(method)))
	b = append(b, method...)
	b = append(b, head...)
	return append(b, body...)
}

// appendPipeAnswer appends an answer frame to b.
func appendPipeAnswer(b []byte, id uint64, status uint8, body []byte) []byte {
	b = append(b, pipeAnswer)
	b = binary.BigEndian.AppendUint64(b, id)
	b = binary.BigEndian.AppendUint32(b, uint32(1+len(body)))
	b = append(b, status)
	return append(b, body...)
}

// appendPipeCancel appends a cancel frame to b.
func appendPipeCancel(b []byte, id uint64) []byte {
	b = append(b, pipeCancel)
	b = binary.BigEndian.AppendUint64(b, id)
	return binary.BigEndian.AppendUint32(b, 0)
}

// pipeOut is a frame to queue: a request (id, deadline, method, then
// head and body as its body), an answer (id, status, body) or a cancel
// (id).
type pipeOut struct {
	kind       byte
	status     uint8
	id         uint64
	deadline   int64
	method     string
	head, body []byte
}

// appendTo appends the frame to b.
func (o *pipeOut) appendTo(b []byte) []byte {
	switch o.kind {
	case pipeRequest:
		return appendPipeRequest(b, o.id, o.deadline, o.method, o.head, o.body)
	case pipeAnswer:
		return appendPipeAnswer(b, o.id, o.status, o.body)
	default:
		return appendPipeCancel(b, o.id)
	}
}

// pipeFrame is a pipe frame's fixed part.
type pipeFrame struct {
	kind byte
	id   uint64
	plen uint32
}

// readPipeFrame reads the fixed part of the next frame.
func readPipeFrame(r io.Reader, hdr *[pipeHeaderSize]byte) (pipeFrame, error) {
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return pipeFrame{}, err
	}
	return pipeFrame{kind: hdr[0], id: binary.BigEndian.Uint64(hdr[1:9]), plen: binary.BigEndian.Uint32(hdr[9:13])}, nil
}

// pipeReq is a request frame's payload, parsed.
type pipeReq struct {
	deadline int64
	method   string
	body     []byte
}

var errBadPipeFrame = errors.New("stowage/cluster: malformed pipe frame")

func parsePipeRequest(p []byte) (pipeReq, error) {
	if len(p) < 9 {
		return pipeReq{}, errBadPipeFrame
	}
	dl := int64(binary.BigEndian.Uint64(p))
	ml := int(p[8])
	if len(p) < 9+ml {
		return pipeReq{}, errBadPipeFrame
	}
	return pipeReq{deadline: dl, method: string(p[9 : 9+ml]), body: p[9+ml:]}, nil
}

// frameWriter queues the frames of one pipe and writes them: everything
// queued while a write is on its way goes in the next write, and a frame
// queued while the writer is idle goes at once. It never waits for
// company.
type frameWriter struct {
	mu     sync.Mutex
	buf    []byte // frames queued, not yet taken by the writer
	spare  []byte
	gen    uint64        // how many times the writer took buf
	frames int           // frames in buf
	wake   chan struct{} // a token when buf is not empty
	room   chan struct{} // closed when the writer takes buf, if roomed
	roomed bool          // a caller waits on room
	err    error         // set once the pipe broke: nothing more is queued
}

func newFrameWriter() *frameWriter {
	return &frameWriter{wake: make(chan struct{}, 1), room: make(chan struct{})}
}

// queue appends frame o, waiting while too much is queued (until stop
// is closed: then errPipeFull). It returns the generation the frame went
// into: while w.gen equals it, the frame was not handed to a write.
func (w *frameWriter) queue(stop <-chan struct{}, o pipeOut) (gen uint64, err error) {
	w.mu.Lock()
	for w.err == nil && len(w.buf) > pipeMaxQueued {
		room := w.room
		w.roomed = true
		w.mu.Unlock()
		select {
		case <-room:
		case <-stop:
			return 0, errPipeFull
		}
		w.mu.Lock()
	}
	if w.err != nil {
		err := w.err
		w.mu.Unlock()
		return 0, err
	}
	w.buf = o.appendTo(w.buf)
	w.frames++
	gen = w.gen
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	return gen, nil
}

var errPipeFull = errors.New("stowage/cluster: gave up waiting to queue a call")

// take hands the queued frames to the writer.
func (w *frameWriter) take() (out []byte, frames int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) == 0 {
		// Taken already (the wake-up of a frame the last write carried):
		// buf keeps its room and spare is kept.
		return nil, 0
	}
	out, frames = w.buf, w.frames
	w.buf, w.spare, w.frames = w.spare[:0], nil, 0
	if len(out) > 0 {
		w.gen++
		if w.roomed { // a new channel only when someone waited on the old
			close(w.room)
			w.room, w.roomed = make(chan struct{}), false
		}
	}
	return out, frames
}

// done gives back a written buffer for reuse.
func (w *frameWriter) done(b []byte) {
	if cap(b) > 2*pipeMaxQueued {
		return // a large answer went out: do not keep its buffer
	}
	w.mu.Lock()
	w.spare = b[:0]
	w.mu.Unlock()
}

// fail stops queueing: frames queued afterwards fail with err.
func (w *frameWriter) fail(err error) {
	w.mu.Lock()
	if w.err == nil {
		w.err = err
		close(w.room)
		w.room = make(chan struct{})
	}
	w.mu.Unlock()
}

// taken reports whether the frames of generation gen were handed to a
// write.
func (w *frameWriter) taken(gen uint64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.gen > gen
}

// loop writes what is queued to dst until quit is closed or a write
// fails; count receives the frames of every write.
func (w *frameWriter) loop(dst io.Writer, stall time.Duration, quit <-chan struct{}, count func(frames int)) error {
	for {
		select {
		case <-w.wake:
		case <-quit:
			return nil
		}
		// Let the goroutines that are ready to run queue their frames
		// too: this waits for no one (it returns at once when nobody else
		// is ready), it only lets the frames made in the same instant go
		// in one write.
		runtime.Gosched()
		out, n := w.take()
		if len(out) == 0 {
			continue
		}
		count(n)
		if err := writeProgressing(dst, out, stall); err != nil {
			return fmt.Errorf("pipe write: %w", err)
		}
		w.done(out)
	}
}

// writeChunk is how much of a write must go out within the stall
// timeout: a large answer (a partition's data) takes as long as the
// network needs, but every chunk of it must make progress.
const writeChunk = 256 << 10

// writeProgressing writes b to dst, failing once a chunk of it made no
// way for stall (ConnectionWriteTimeout, as the session's writes): a
// peer that stops reading does not hold the writer, and with it the
// pipe's handlers, for as long as TCP keeps retrying. A dst without
// write deadlines, or stall 0, is written as it is.
func writeProgressing(dst io.Writer, b []byte, stall time.Duration) error {
	dl, ok := dst.(interface{ SetWriteDeadline(time.Time) error })
	if !ok || stall <= 0 {
		_, err := dst.Write(b)
		return err
	}
	for len(b) > 0 {
		n := min(len(b), writeChunk)
		if err := dl.SetWriteDeadline(time.Now().Add(stall)); err != nil {
			return err
		}
		if _, err := dst.Write(b[:n]); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}
