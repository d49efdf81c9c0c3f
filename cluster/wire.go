package cluster

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// WireAppender is a message whose msgpack codec is written out rather
// than found by reflection (the hot messages): AppendWire appends the
// bytes reflection would make of it.
type WireAppender interface {
	AppendWire(b []byte) []byte
}

// WireParser reads the bytes a WireAppender makes, and those reflection
// makes, into a message.
type WireParser interface {
	ParseWire(b []byte) error
}

// wireSizer is a WireAppender that knows how many bytes it appends at
// most, so that Encode allocates them once.
type wireSizer interface {
	WireSize() int
}

// Encode encodes a member-protocol message (msgpack). Every message type
// encodes; a failure is a programming error.
func Encode(v any) []byte {
	if a, ok := v.(WireAppender); ok {
		var b []byte
		if s, ok := v.(wireSizer); ok {
			b = make([]byte, 0, s.WireSize())
		}
		return a.AppendWire(b)
	}
	b, err := msgpack.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("stowage/cluster: encode %T: %v", v, err))
	}
	return b
}

// ErrBadMessage: a member sent bytes that are not the message expected.
var ErrBadMessage = errors.New("stowage: malformed message from a member")

// Malformed is err, a WireParser's failure to parse a member's message,
// as Decode returns it (nil for nil). The hot paths call a message's
// ParseWire and AppendWire themselves: through Decode and Encode, whose
// argument is an interface, the message would be allocated.
func Malformed(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrBadMessage, err)
}

// Decode decodes a member-protocol message.
func Decode(b []byte, v any) error {
	if p, ok := v.(WireParser); ok {
		return Malformed(p.ParseWire(b))
	}
	if err := msgpack.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%w: %w", ErrBadMessage, err)
	}
	return nil
}

// The request header: every call's body starts with it, and the
// dispatcher reads it before the method's handler sees the rest.
//
//	+---------+------------------------------+---------------+
//	| version | sender's table version       | the request   |
//	| 1 byte  | signed varint                | (msgpack)     |
//	+---------+------------------------------+---------------+
const headerVersion = 1

// header is what a call says of its sender beside the request.
type header struct {
	tableVersion int64
}

// frame prepends this member's header to a request body.
func (pr *Protocol) frame(body []byte) []byte {
	return append(pr.appendHeader(make([]byte, 0, 1+binary.MaxVarintLen64+len(body))), body...)
}

// appendHeader appends this member's request header to b.
func (pr *Protocol) appendHeader(b []byte) []byte {
	b = append(b, headerVersion)
	return binary.AppendVarint(b, pr.TableVersion())
}

// unframe splits a call's body into its header and the request.
func unframe(b []byte) (header, []byte, error) {
	if len(b) < 2 || b[0] != headerVersion {
		return header{}, nil, fmt.Errorf("%w: no request header", ErrBadMessage)
	}
	tv, n := binary.Varint(b[1:])
	if n <= 0 || tv < 0 {
		return header{}, nil, fmt.Errorf("%w: bad request header", ErrBadMessage)
	}
	return header{tableVersion: tv}, b[1+n:], nil
}
