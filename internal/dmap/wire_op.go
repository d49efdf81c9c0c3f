package dmap

import (
	"github.com/stowage/stowage/backup"
	"github.com/stowage/stowage/internal/mpack"
)

// opReq and opAns carry every map operation forwarded to its owner:
// their codec is written out (internal/mpack) rather than found by
// reflection. The bytes are the ones reflection makes of the msgpack
// tags (a map of the tagged names, omitempty fields left out), and
// decoding takes the keys in any order and skips unknown ones, so
// members that decode by reflection read them alike.

// AppendWire appends the request's msgpack bytes to b.
func (q opReq) AppendWire(b []byte) []byte {
	n := 4
	for _, set := range [...]bool{len(q.Val) > 0, q.Del, q.ExpOK, q.Owner != "", q.TTL != 0, q.TTLSet} {
		if set {
			n++
		}
	}
	b = mpack.AppendMapLen(b, n)
	b = mpack.AppendString(mpack.AppendString(b, "m"), q.Map)
	b = mpack.AppendInt(mpack.AppendString(b, "o"), int64(q.Kind))
	b = mpack.AppendBytes(mpack.AppendString(b, "k"), q.Key)
	if len(q.Val) > 0 {
		b = mpack.AppendBytes(mpack.AppendString(b, "v"), q.Val)
	}
	if q.Del {
		b = mpack.AppendBool(mpack.AppendString(b, "d"), true)
	}
	if q.ExpOK {
		b = mpack.AppendBool(mpack.AppendString(b, "xo"), true)
	}
	b = q.ExpVer.AppendWire(mpack.AppendString(b, "xv"))
	if q.Owner != "" {
		b = mpack.AppendString(mpack.AppendString(b, "lo"), q.Owner)
	}
	if q.TTL != 0 {
		b = mpack.AppendInt64(mpack.AppendString(b, "t"), q.TTL)
	}
	if q.TTLSet {
		b = mpack.AppendBool(mpack.AppendString(b, "ts"), true)
	}
	return b
}

// WireSize is at least the length of the request's msgpack bytes.
func (q opReq) WireSize() int { return 96 + len(q.Map) + len(q.Key) + len(q.Val) + len(q.Owner) }

// ParseWire reads a request's msgpack bytes.
func (q *opReq) ParseWire(b []byte) error {
	*q = opReq{}
	rd := mpack.NewReader(b)
	return rd.Fields(func(key []byte) {
		switch string(key) {
		case "m":
			q.Map = rd.String()
		case "o":
			q.Kind = int(rd.Int())
		case "k":
			q.Key = rd.Bytes()
		case "v":
			q.Val = rd.Bytes()
		case "d":
			q.Del = rd.Bool()
		case "xo":
			q.ExpOK = rd.Bool()
		case "xv":
			q.ExpVer = backup.ParseVer(rd)
		case "lo":
			q.Owner = rd.String()
		case "t":
			q.TTL = rd.Int()
		case "ts":
			q.TTLSet = rd.Bool()
		default:
			rd.Skip()
		}
	})
}

// AppendWire appends the answer's msgpack bytes to b.
func (a opAns) AppendWire(b []byte) []byte {
	n := 2
	for _, set := range [...]bool{a.Msg != "", len(a.Old) > 0, a.Had, a.Wrote} {
		if set {
			n++
		}
	}
	b = mpack.AppendMapLen(b, n)
	b = mpack.AppendInt(mpack.AppendString(b, "c"), int64(a.Code))
	if a.Msg != "" {
		b = mpack.AppendString(mpack.AppendString(b, "x"), a.Msg)
	}
	if len(a.Old) > 0 {
		b = mpack.AppendBytes(mpack.AppendString(b, "o"), a.Old)
	}
	if a.Had {
		b = mpack.AppendBool(mpack.AppendString(b, "h"), true)
	}
	if a.Wrote {
		b = mpack.AppendBool(mpack.AppendString(b, "w"), true)
	}
	return a.Ver.AppendWire(mpack.AppendString(b, "r"))
}

// WireSize is at least the length of the answer's msgpack bytes.
func (a opAns) WireSize() int { return 64 + len(a.Msg) + len(a.Old) }

// ParseWire reads an answer's msgpack bytes.
func (a *opAns) ParseWire(b []byte) error {
	*a = opAns{}
	rd := mpack.NewReader(b)
	return rd.Fields(func(key []byte) {
		switch string(key) {
		case "c":
			a.Code = int(rd.Int())
		case "x":
			a.Msg = rd.String()
		case "o":
			a.Old = rd.Bytes()
		case "h":
			a.Had = rd.Bool()
		case "w":
			a.Wrote = rd.Bool()
		case "r":
			a.Ver = backup.ParseVer(rd)
		default:
			rd.Skip()
		}
	})
}
