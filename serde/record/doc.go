// Package record frames byte payloads so that damage can be found and
// contained. It has no dependencies beyond the standard library and its
// format constants are frozen: changing them is a format version change.
//
// A frame is a 12-byte header followed by the payload:
//
//	0       2       3       4               8               12
//	+-------+-------+-------+---------------+---------------+------------------+
//	| magic | ver   | type  | length uint32 | crc32c uint32 | payload (length) |
//	| F7 5A | 0x01  |       | little endian | little endian |                  |
//	+-------+-------+-------+---------------+---------------+------------------+
//
// The CRC-32C (Castagnoli) covers header bytes 0..8 (magic, version, type,
// length) and the payload, so a flipped length is detected like a flipped
// payload byte. The type byte belongs to the caller (the map store uses it
// for its record kinds). A payload is at most MaxPayload bytes.
//
// A Scanner reads a buffer of frames. A frame that does not check out is
// reported as a Damage and the scanner looks for the next offset at which a
// whole valid frame starts, so one bad record never hides the ones after it.
// Damage that runs to the end of the buffer is a torn tail: the writer died
// while writing, and the caller may cut it.
//
// A payload's layout belongs to its caller, built from these fields
// (frozen too), written by the Append functions and read by a Reader:
//
//	uvarint  1..10 bytes, 7 value bits each, low group first, the high
//	         bit set on every byte but the last (encoding/binary's)
//	varint   a signed value zig-zag mapped to a uvarint: 0, -1, 1, -2 ... as 0, 1, 2, 3 ...
//	uint32   4 bytes, little endian
//	bytes    a uvarint length n, then n bytes
//
//	300 as uvarint     AC 02
//	-3 as varint       05
//	"ab" as bytes      02 61 62
//
// A Reader fails, and stays failed, at the first field that is malformed
// or runs past the payload; it never reads outside the payload.
package record
