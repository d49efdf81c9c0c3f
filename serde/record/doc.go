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
package record
