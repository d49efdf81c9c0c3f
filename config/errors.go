package config

import (
	"errors"
	"strconv"
	"strings"
)

// Kinds of configuration error. Every error returned by this package is
// an *Error whose Err wraps exactly one of them, so callers can tell a file
// that is not YAML (or not SeaTunnel's schema) from a value that breaks a
// rule: errors.Is(err, config.ErrUnknownKey).
var (
	// ErrSyntax: the file is not one YAML document (or expands beyond
	// the size limit through aliases).
	ErrSyntax = errors.New("not valid YAML")
	// ErrUnknownKey: a key that SeaTunnel's or Hazelcast's schema does
	// not have at that place.
	ErrUnknownKey = errors.New("unknown key")
	// ErrType: a value of the wrong kind, e.g. a word where a number or a
	// mapping belongs.
	ErrType = errors.New("wrong type")
	// ErrInvalid: a well-formed value that breaks a rule of Validate.
	ErrInvalid = errors.New("invalid value")
	// ErrUnsupported: a SeaTunnel or Hazelcast switch turned on that
	// stowage does not implement (TLS between members, Enterprise
	// security). The message says what to do instead.
	ErrUnsupported = errors.New("not supported")
)

// Error is one configuration error: where it is (file and line, when it
// came from a file) and which YAML key path it concerns, e.g.
// hazelcast.map.engine*.map-store.properties.clusterName. Its message never
// holds the value of a secret key.
type Error struct {
	File string // file name or path; "" for a configuration built in code
	Line int    // 1-based line of the key; 0 when unknown
	Key  string // YAML key path, dot-separated
	Err  error  // wraps ErrSyntax, ErrUnknownKey, ErrType, ErrInvalid or ErrUnsupported
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("stowage/config: ")
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(e.Line))
		}
		b.WriteString(": ")
	}
	if e.Key != "" {
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns the kind of error (ErrSyntax, ErrUnknownKey, ...).
func (e *Error) Unwrap() error { return e.Err }

// kindErr is a message of one kind: it prints only the message and
// unwraps to the kind.
type kindErr struct {
	kind error
	msg  string
}

func (k *kindErr) Error() string { return k.msg }
func (k *kindErr) Unwrap() error { return k.kind }

func kinded(kind error, msg string) error { return &kindErr{kind: kind, msg: msg} }

// suggest returns " (did you mean X?)" naming the known key nearest to
// key by edit distance (case aside), when it is near enough to be a
// misspelling: two edits, or one in four characters of a longer key.
// Otherwise it lists the known keys when there are few, or returns "".
func suggest(key string, known []string) string {
	var near []string
	best := -1
	for _, k := range known {
		d := editDistance(strings.ToLower(key), strings.ToLower(k))
		switch {
		case best < 0 || d < best:
			best, near = d, []string{k}
		case d == best:
			near = append(near, k)
		}
	}
	if best >= 0 && best < len(key) && best <= max(2, len(key)/4) {
		return " (did you mean " + strings.Join(near, " or ") + "?)"
	}
	if len(known) <= 12 {
		return " (known: " + strings.Join(known, ", ") + ")"
	}
	return ""
}

func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 100
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
