package record

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// Frozen format constants.
const (
	Magic0     = 0xF7
	Magic1     = 0x5A
	Version    = 1
	HeaderSize = 12
	// MaxPayload bounds one frame so that a damaged length can never make a
	// reader allocate or skip gigabytes.
	MaxPayload = 64 << 20
)

// Errors returned by Decode, grouped by what was wrong with the bytes.
var (
	// ErrShort means the buffer ends before the frame does.
	ErrShort = errors.New("stowage/record: frame runs past the end of the data")
	// ErrMagic means the bytes at the offset do not start a frame.
	ErrMagic = errors.New("stowage/record: bad magic")
	// ErrVersion means the frame was written by an unknown format version.
	ErrVersion = errors.New("stowage/record: unknown frame version")
	// ErrTooLarge means the length field exceeds MaxPayload.
	ErrTooLarge = errors.New("stowage/record: frame length exceeds the maximum")
	// ErrChecksum means the CRC-32C does not match the bytes.
	ErrChecksum = errors.New("stowage/record: checksum mismatch")
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Checksum returns the CRC-32C of b, the checksum used by every stowage file.
func Checksum(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// Size returns the framed size of a payload of n bytes.
func Size(n int) int { return HeaderSize + n }

// Append appends one frame holding payload to dst and returns the extended
// slice. It panics if payload is larger than MaxPayload, which is a
// programming error in the caller.
func Append(dst []byte, typ byte, payload []byte) []byte {
	return append(AppendHeader(dst, typ, payload), payload...)
}

// AppendHeader appends the 12-byte header of a frame holding payload to
// dst, without the payload: the header followed by payload is exactly what
// Append makes, for writers that send a large payload from where it lies
// instead of copying it. It panics as Append does.
func AppendHeader(dst []byte, typ byte, payload []byte) []byte {
	if len(payload) > MaxPayload {
		panic(fmt.Sprintf("stowage/record: payload of %d bytes exceeds %d", len(payload), MaxPayload))
	}
	start := len(dst)
	dst = append(dst, Magic0, Magic1, Version, typ, 0, 0, 0, 0, 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(dst[start+4:], uint32(len(payload)))
	crc := crc32.Update(0, castagnoli, dst[start:start+8])
	crc = crc32.Update(crc, castagnoli, payload)
	binary.LittleEndian.PutUint32(dst[start+8:], crc)
	return dst
}

// BeginFrame appends the header of a frame of type typ to dst with its
// length and checksum left blank, for a writer that appends the payload
// to dst right after it, where it is to stay, and then calls EndFrame
// with the header's offset: the same bytes Append makes, without building
// the payload elsewhere first.
func BeginFrame(dst []byte, typ byte) []byte {
	return append(dst, Magic0, Magic1, Version, typ, 0, 0, 0, 0, 0, 0, 0, 0)
}

// EndFrame fills in the length and checksum of the frame BeginFrame
// started at dst[start:], whose payload is the rest of dst. It panics as
// Append does if the payload is larger than MaxPayload.
func EndFrame(dst []byte, start int) []byte {
	payload := dst[start+HeaderSize:]
	if len(payload) > MaxPayload {
		panic(fmt.Sprintf("stowage/record: payload of %d bytes exceeds %d", len(payload), MaxPayload))
	}
	binary.LittleEndian.PutUint32(dst[start+4:], uint32(len(payload)))
	crc := crc32.Update(0, castagnoli, dst[start:start+8])
	crc = crc32.Update(crc, castagnoli, payload)
	binary.LittleEndian.PutUint32(dst[start+8:], crc)
	return dst
}

// Frame is one decoded frame. Payload aliases the scanned buffer: it is
// valid as long as that buffer is, and must not be modified.
type Frame struct {
	Type    byte
	Payload []byte
}

// Decode decodes the frame at the start of b and returns it with its framed
// size. On error the frame is zero and n is 0.
func Decode(b []byte) (f Frame, n int, err error) {
	if len(b) < HeaderSize {
		if len(b) >= 2 && (b[0] != Magic0 || b[1] != Magic1) {
			return Frame{}, 0, ErrMagic
		}
		return Frame{}, 0, ErrShort
	}
	if b[0] != Magic0 || b[1] != Magic1 {
		return Frame{}, 0, ErrMagic
	}
	if b[2] != Version {
		return Frame{}, 0, fmt.Errorf("%w %d", ErrVersion, b[2])
	}
	length := binary.LittleEndian.Uint32(b[4:8])
	if length > MaxPayload {
		return Frame{}, 0, ErrTooLarge
	}
	end := HeaderSize + int(length)
	if len(b) < end {
		return Frame{}, 0, ErrShort
	}
	crc := crc32.Update(0, castagnoli, b[:8])
	crc = crc32.Update(crc, castagnoli, b[HeaderSize:end])
	if crc != binary.LittleEndian.Uint32(b[8:12]) {
		return Frame{}, 0, ErrChecksum
	}
	return Frame{Type: b[3], Payload: b[HeaderSize:end:end]}, end, nil
}
