package cluster

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"testing"
)

// A body length with few bytes behind it costs memory for those bytes,
// not for the length: a peer cannot make a member allocate a gigabyte
// with a 4-byte prefix.
func TestReadBodyAllocatesWhatArrives(t *testing.T) {
	var frame bytes.Buffer
	binary.Write(&frame, binary.BigEndian, uint32(MaxMessageSize))
	frame.Write(make([]byte, 100))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := readBody(bytes.NewReader(frame.Bytes()), MaxMessageSize)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("truncated body: %v, want io.ErrUnexpectedEOF", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
		t.Fatalf("reading 100 bytes of a body announced as %d allocated %d bytes", MaxMessageSize, got)
	}
}

func TestReadBodyWhole(t *testing.T) {
	body := make([]byte, 5<<20+17)
	for i := range body {
		body[i] = byte(i * 7)
	}
	var frame bytes.Buffer
	binary.Write(&frame, binary.BigEndian, uint32(len(body)))
	frame.Write(body)
	got, err := readBody(iotestHalf{bytes.NewReader(frame.Bytes())}, MaxMessageSize)
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("read %d bytes, err %v; want the %d sent", len(got), err, len(body))
	}
	var over bytes.Buffer
	binary.Write(&over, binary.BigEndian, uint32(1000))
	if _, err := readBody(&over, 999); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("body over the limit: %v, want ErrTooLarge", err)
	}
}

// iotestHalf returns at most half of what a read asks for, as a slow
// network would.
type iotestHalf struct{ r io.Reader }

func (h iotestHalf) Read(p []byte) (int, error) {
	if len(p) > 1 {
		p = p[:len(p)/2]
	}
	return h.r.Read(p)
}
