package backup

import (
	"fmt"

	"github.com/stowage/stowage/internal/mpack"
	"github.com/vmihailenco/msgpack/v5"
)

// Record is the message of every replicated write, and codeAns its
// answer: their codec is written out (internal/mpack) rather than found
// by reflection. The bytes are the ones reflection makes of the msgpack
// tags (a map of the tagged names, omitempty fields left out), and
// decoding takes the keys in any order and skips unknown ones, so
// members that decode by reflection read them alike. cluster.Encode and
// cluster.Decode use AppendWire and ParseWire; the msgpack methods make
// and read the same bytes where a Record sits inside a message encoded
// by reflection.

var (
	_ msgpack.CustomEncoder = Record{}
	_ msgpack.CustomDecoder = (*Record)(nil)
)

// AppendWire appends the record's msgpack bytes to b.
func (r Record) AppendWire(b []byte) []byte {
	n := 5
	if r.PrevOK {
		n++
	}
	if r.Comp != 0 {
		n++
	}
	b = mpack.AppendMapLen(b, n)
	b = mpack.AppendString(mpack.AppendString(b, "m"), r.Map)
	b = mpack.AppendInt(mpack.AppendString(b, "p"), int64(r.P))
	b = mpack.AppendUint64(mpack.AppendString(b, "e"), r.Epoch)
	b = appendEntry(mpack.AppendString(b, "r"), &r.Rec)
	if r.PrevOK {
		b = mpack.AppendBool(mpack.AppendString(b, "po"), true)
	}
	b = appendEntry(mpack.AppendString(b, "pv"), &r.Prev)
	if r.Comp != 0 {
		b = mpack.AppendUint64(mpack.AppendString(b, "cp"), r.Comp)
	}
	return b
}

// WireSize is at least the length of the record's msgpack bytes.
func (r Record) WireSize() int {
	return 64 + len(r.Map) + 2*entryWireSize + len(r.Rec.K) + len(r.Rec.V) + len(r.Prev.K) + len(r.Prev.V)
}

// entryWireSize bounds an entry's bytes beside its key and value: the
// map header, keys, length prefixes, version, flag and expiry.
const entryWireSize = 1 + 2*5 + 5 + 5 + 1 + 2*9 + 4 + 1 + 9

// ParseWire reads a record's msgpack bytes (the whole of b).
func (r *Record) ParseWire(b []byte) error {
	rd := mpack.NewReader(b)
	r.parse(rd)
	return rd.Err()
}

func (r *Record) parse(rd *mpack.Reader) {
	*r = Record{}
	_ = rd.Fields(func(key []byte) {
		switch string(key) {
		case "m":
			r.Map = rd.String()
		case "p":
			r.P = int(rd.Int())
		case "e":
			r.Epoch = rd.Uint64()
		case "r":
			parseEntry(rd, &r.Rec)
		case "po":
			r.PrevOK = rd.Bool()
		case "pv":
			parseEntry(rd, &r.Prev)
		case "cp":
			r.Comp = rd.Uint64()
		default:
			rd.Skip()
		}
	})
}

// EncodeMsgpack implements msgpack.CustomEncoder.
func (r Record) EncodeMsgpack(e *msgpack.Encoder) error {
	_, err := e.Writer().Write(r.AppendWire(nil))
	return err
}

// DecodeMsgpack implements msgpack.CustomDecoder.
func (r *Record) DecodeMsgpack(d *msgpack.Decoder) error {
	raw, err := d.DecodeRaw()
	if err != nil {
		return err
	}
	if err := r.ParseWire(raw); err != nil {
		return fmt.Errorf("record: %w", err)
	}
	return nil
}

func appendEntry(b []byte, en *Entry) []byte {
	n := 2
	if len(en.V) > 0 {
		n++
	}
	if en.D {
		n++
	}
	if en.X != 0 {
		n++
	}
	b = mpack.AppendMapLen(b, n)
	b = mpack.AppendBytes(mpack.AppendString(b, "k"), en.K)
	if len(en.V) > 0 {
		b = mpack.AppendBytes(mpack.AppendString(b, "v"), en.V)
	}
	b = appendVer(mpack.AppendString(b, "r"), en.R)
	if en.D {
		b = mpack.AppendBool(mpack.AppendString(b, "d"), true)
	}
	if en.X != 0 {
		b = mpack.AppendInt64(mpack.AppendString(b, "x"), en.X)
	}
	return b
}

func parseEntry(rd *mpack.Reader, en *Entry) {
	*en = Entry{}
	_ = rd.Fields(func(key []byte) {
		switch string(key) {
		case "k":
			en.K = rd.Bytes()
		case "v":
			en.V = rd.Bytes()
		case "r":
			en.R = ParseVer(rd)
		case "d":
			en.D = rd.Bool()
		case "x":
			en.X = rd.Int()
		default:
			rd.Skip()
		}
	})
}

func appendVer(b []byte, v Ver) []byte {
	b = mpack.AppendMapLen(b, 2)
	b = mpack.AppendUint64(mpack.AppendString(b, "e"), v.E)
	return mpack.AppendUint64(mpack.AppendString(b, "s"), v.S)
}

// AppendWire appends the version's msgpack bytes to b.
func (v Ver) AppendWire(b []byte) []byte { return appendVer(b, v) }

// ParseVer reads a version's msgpack bytes.
func ParseVer(rd *mpack.Reader) Ver {
	var v Ver
	_ = rd.Fields(func(key []byte) {
		switch string(key) {
		case "e":
			v.E = rd.Uint64()
		case "s":
			v.S = rd.Uint64()
		default:
			rd.Skip()
		}
	})
	return v
}

// AppendWire appends the answer's msgpack bytes to b.
func (a codeAns) AppendWire(b []byte) []byte {
	n := 1
	if a.Msg != "" {
		n++
	}
	b = mpack.AppendMapLen(b, n)
	b = mpack.AppendInt(mpack.AppendString(b, "c"), int64(a.Code))
	if a.Msg != "" {
		b = mpack.AppendString(mpack.AppendString(b, "x"), a.Msg)
	}
	return b
}

// WireSize is at least the length of the answer's msgpack bytes.
func (a codeAns) WireSize() int { return 24 + len(a.Msg) }

// ParseWire reads an answer's msgpack bytes.
func (a *codeAns) ParseWire(b []byte) error {
	*a = codeAns{}
	rd := mpack.NewReader(b)
	return rd.Fields(func(key []byte) {
		switch string(key) {
		case "c":
			a.Code = int(rd.Int())
		case "x":
			a.Msg = rd.String()
		default:
			rd.Skip()
		}
	})
}
