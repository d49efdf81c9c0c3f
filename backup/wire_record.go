package backup

import (
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// Record is the message of every replicated write: its codec is written
// out rather than found by reflection. The bytes are the ones reflection
// makes of the msgpack tags (a map of the tagged names, omitempty fields
// left out), and decoding takes the keys in any order and skips unknown
// ones, so members that decode by reflection read them alike.

var (
	_ msgpack.CustomEncoder = Record{}
	_ msgpack.CustomDecoder = (*Record)(nil)
)

// EncodeMsgpack implements msgpack.CustomEncoder.
func (r Record) EncodeMsgpack(e *msgpack.Encoder) error {
	n := 5
	if r.PrevOK {
		n++
	}
	if r.Comp != 0 {
		n++
	}
	var x firstErr
	x.do(e.EncodeMapLen(n))
	x.do(e.EncodeString("m"), e.EncodeString(r.Map))
	x.do(e.EncodeString("p"), e.EncodeInt(int64(r.P)))
	x.do(e.EncodeString("e"), e.EncodeUint64(r.Epoch))
	x.do(e.EncodeString("r"), encodeEntry(e, &r.Rec))
	if r.PrevOK {
		x.do(e.EncodeString("po"), e.EncodeBool(true))
	}
	x.do(e.EncodeString("pv"), encodeEntry(e, &r.Prev))
	if r.Comp != 0 {
		x.do(e.EncodeString("cp"), e.EncodeUint64(r.Comp))
	}
	return x.err
}

// DecodeMsgpack implements msgpack.CustomDecoder.
func (r *Record) DecodeMsgpack(d *msgpack.Decoder) error {
	*r = Record{}
	n, err := d.DecodeMapLen()
	if err != nil || n < 0 {
		return err
	}
	for range n {
		key, err := d.DecodeString()
		if err != nil {
			return err
		}
		switch key {
		case "m":
			r.Map, err = d.DecodeString()
		case "p":
			r.P, err = d.DecodeInt()
		case "e":
			r.Epoch, err = d.DecodeUint64()
		case "r":
			err = decodeEntry(d, &r.Rec)
		case "po":
			r.PrevOK, err = d.DecodeBool()
		case "pv":
			err = decodeEntry(d, &r.Prev)
		case "cp":
			r.Comp, err = d.DecodeUint64()
		default:
			err = d.Skip()
		}
		if err != nil {
			return fmt.Errorf("record field %q: %w", key, err)
		}
	}
	return nil
}

func encodeEntry(e *msgpack.Encoder, en *Entry) error {
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
	var x firstErr
	x.do(e.EncodeMapLen(n))
	x.do(e.EncodeString("k"), e.EncodeBytes(en.K))
	if len(en.V) > 0 {
		x.do(e.EncodeString("v"), e.EncodeBytes(en.V))
	}
	x.do(e.EncodeString("r"), e.EncodeMapLen(2))
	x.do(e.EncodeString("e"), e.EncodeUint64(en.R.E))
	x.do(e.EncodeString("s"), e.EncodeUint64(en.R.S))
	if en.D {
		x.do(e.EncodeString("d"), e.EncodeBool(true))
	}
	if en.X != 0 {
		x.do(e.EncodeString("x"), e.EncodeInt64(en.X))
	}
	return x.err
}

func decodeEntry(d *msgpack.Decoder, en *Entry) error {
	*en = Entry{}
	n, err := d.DecodeMapLen()
	if err != nil || n < 0 {
		return err
	}
	for range n {
		key, err := d.DecodeString()
		if err != nil {
			return err
		}
		switch key {
		case "k":
			en.K, err = d.DecodeBytes()
		case "v":
			en.V, err = d.DecodeBytes()
		case "r":
			err = decodeVer(d, &en.R)
		case "d":
			en.D, err = d.DecodeBool()
		case "x":
			en.X, err = d.DecodeInt64()
		default:
			err = d.Skip()
		}
		if err != nil {
			return fmt.Errorf("entry field %q: %w", key, err)
		}
	}
	return nil
}

func decodeVer(d *msgpack.Decoder, v *Ver) error {
	*v = Ver{}
	n, err := d.DecodeMapLen()
	if err != nil || n < 0 {
		return err
	}
	for range n {
		key, err := d.DecodeString()
		if err != nil {
			return err
		}
		switch key {
		case "e":
			v.E, err = d.DecodeUint64()
		case "s":
			v.S, err = d.DecodeUint64()
		default:
			err = d.Skip()
		}
		if err != nil {
			return fmt.Errorf("version field %q: %w", key, err)
		}
	}
	return nil
}

// firstErr keeps the first error of a sequence of encoder calls (each
// fails only when the output does, which a bytes buffer never does).
type firstErr struct{ err error }

func (f *firstErr) do(errs ...error) {
	for _, err := range errs {
		if err != nil && f.err == nil {
			f.err = err
		}
	}
}
