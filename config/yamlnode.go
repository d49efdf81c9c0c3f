package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/stowage/stowage/fsbackend"
)

// maxNodes bounds how many YAML nodes one file may expand to through
// aliases, so that a small file cannot make the parser walk forever.
const maxNodes = 1 << 16

// source is one file being read: its name, the expansion budget, the
// line of every key path seen (for errors found later by Validate), and
// the keys present that stowage does not act on, in file order.
type source struct {
	file     string
	nodes    int
	lines    map[string]int
	cache    map[cacheKey][]entry
	noEffect []string
}

type cacheKey struct {
	n    *yaml.Node
	path string
}

// maxDepth bounds how deeply mappings may nest.
const maxDepth = 64

// node is a YAML value at a key path. n is nil for a key that is absent;
// aliases are always resolved.
type node struct {
	src   *source
	path  string
	line  int
	depth int
	n     *yaml.Node
}

func (n node) fail(kind error, format string, a ...any) error {
	return &Error{File: n.src.file, Line: n.line, Key: n.path, Err: kinded(kind, fmt.Sprintf(format, a...))}
}

// resolve follows aliases and charges the expansion budget.
func (s *source) resolve(y *yaml.Node, at node) (*yaml.Node, error) {
	for hops := 0; y != nil && y.Kind == yaml.AliasNode; hops++ {
		if hops > 64 {
			return nil, at.fail(ErrSyntax, "alias chain too long")
		}
		y = y.Alias
	}
	s.nodes++
	if s.nodes > maxNodes {
		return nil, at.fail(ErrSyntax, "more than %d values after alias expansion", maxNodes)
	}
	return y, nil
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// parseRoot decodes one file into its root node. Empty data, or a file of
// comments only, gives an absent root.
func parseRoot(data []byte, file string) (node, error) {
	src := &source{file: file, lines: map[string]int{}, cache: map[cacheKey][]entry{}}
	root := node{src: src}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return root, nil
		}
		return root, syntaxErr(file, err)
	}
	var more yaml.Node
	switch err := dec.Decode(&more); {
	case err == nil:
		return root, &Error{File: file, Line: more.Line, Err: kinded(ErrSyntax, "holds more than one YAML document")}
	case !errors.Is(err, io.EOF):
		return root, syntaxErr(file, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return root, nil
	}
	y, err := src.resolve(doc.Content[0], root)
	if err != nil {
		return root, err
	}
	root.n, root.line = y, y.Line
	return root, nil
}

func syntaxErr(file string, err error) error {
	msg := err.Error()
	line := 0
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = msg[len(m[0]):]
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	return &Error{File: file, Line: line, Err: kinded(ErrSyntax, "not valid YAML: "+msg)}
}

// null reports whether the value is absent or empty (`key:` or `key: ~`).
// A quoted "" is a value, not null.
func (n node) null() bool {
	return n.n == nil || (n.n.Kind == yaml.ScalarNode && n.n.ShortTag() == "!!null")
}

func (n node) isMapping() bool { return n.n != nil && n.n.Kind == yaml.MappingNode }

func (n node) kindName() string {
	switch {
	case n.n == nil:
		return "nothing"
	case n.n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.n.Kind == yaml.SequenceNode:
		return "a list"
	default:
		return "a single value"
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

type entry struct {
	key string
	val node
}

// entries returns the pairs of a mapping in file order, with YAML merge
// keys (<<: *anchor) expanded: keys given in the mapping itself win over
// merged ones. A key given twice is an error. A null value has no entries.
func (n node) entries() ([]entry, error) {
	if n.null() {
		return nil, nil
	}
	if n.n.Kind != yaml.MappingNode {
		return nil, n.fail(ErrType, "want a mapping, got %s", n.kindName())
	}
	ck := cacheKey{n.n, n.path}
	if es, ok := n.src.cache[ck]; ok {
		return es, nil
	}
	if n.depth >= maxDepth {
		return nil, n.fail(ErrSyntax, "nested more than %d levels deep", maxDepth)
	}
	var out []entry
	seen := map[string]int{}
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.n.Content); i += 2 {
		kn, err := n.src.resolve(n.n.Content[i], n)
		if err != nil {
			return nil, err
		}
		if kn.Kind != yaml.ScalarNode {
			return nil, node{src: n.src, path: n.path, line: kn.Line}.fail(ErrType, "a key must be a single value")
		}
		if kn.ShortTag() == "!!merge" {
			merges = append(merges, n.n.Content[i+1])
			continue
		}
		at := node{src: n.src, path: join(n.path, kn.Value), line: kn.Line, depth: n.depth + 1}
		if first, dup := seen[kn.Value]; dup {
			return nil, at.fail(ErrSyntax, "key given twice (first at line %d)", first)
		}
		seen[kn.Value] = kn.Line
		vn, err := n.src.resolve(n.n.Content[i+1], at)
		if err != nil {
			return nil, err
		}
		at.n = vn
		if _, ok := n.src.lines[at.path]; !ok {
			n.src.lines[at.path] = kn.Line
		}
		out = append(out, entry{key: kn.Value, val: at})
	}
	for _, m := range merges {
		mn, err := n.src.resolve(m, n)
		if err != nil {
			return nil, err
		}
		srcs := []*yaml.Node{mn}
		if mn.Kind == yaml.SequenceNode {
			srcs = mn.Content
		}
		for _, s := range srcs {
			sn, err := n.src.resolve(s, n)
			if err != nil {
				return nil, err
			}
			if sn.Kind != yaml.MappingNode {
				return nil, node{src: n.src, path: n.path, line: sn.Line}.fail(ErrType, "a merge key (<<) takes a mapping")
			}
			sub, err := node{src: n.src, path: n.path, line: sn.Line, depth: n.depth + 1, n: sn}.entries()
			if err != nil {
				return nil, err
			}
			for _, e := range sub {
				if _, ok := seen[e.key]; ok {
					continue
				}
				seen[e.key] = e.val.line
				out = append(out, e)
			}
		}
	}
	n.src.cache[ck] = out
	return out, nil
}

// child returns the value under key, or an absent node with the key's path.
func (n node) child(key string) node {
	es, _ := n.entries()
	for _, e := range es {
		if e.key == key {
			return e.val
		}
	}
	return node{src: n.src, path: join(n.path, key), line: n.line, depth: n.depth + 1}
}

// str returns a single value as written ("" when null).
func (n node) str() (string, error) {
	if n.null() {
		return "", nil
	}
	if n.n.Kind != yaml.ScalarNode {
		return "", n.fail(ErrType, "want a single value, got %s", n.kindName())
	}
	return n.n.Value, nil
}

func (n node) integer() (int, error) {
	s, err := n.str()
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
	if err != nil {
		return 0, n.fail(ErrType, "%q is not a whole number", s)
	}
	return int(v), nil
}

// boolean accepts true/false and YAML 1.1's yes/no/on/off, in any case.
func (n node) boolean() (bool, error) {
	s, err := n.str()
	if err != nil {
		return false, err
	}
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "yes", "on":
		return true, nil
	case "false", "no", "off":
		return false, nil
	}
	return false, n.fail(ErrType, "%q is not true or false", s)
}

// list returns a list of single values; one comma-separated value is a
// list too, as Hazelcast reads member-list.
func (n node) list() ([]string, error) {
	if n.null() {
		return nil, nil
	}
	var items []string
	switch n.n.Kind {
	case yaml.ScalarNode:
		items = strings.Split(n.n.Value, ",")
	case yaml.SequenceNode:
		for _, c := range n.n.Content {
			cn, err := n.src.resolve(c, n)
			if err != nil {
				return nil, err
			}
			if cn.Kind != yaml.ScalarNode {
				return nil, node{src: n.src, path: n.path, line: cn.Line}.fail(ErrType, "want a list of single values")
			}
			items = append(items, strings.Split(cn.Value, ",")...)
		}
	default:
		return nil, n.fail(ErrType, "want a list, got %s", n.kindName())
	}
	var out []string
	for _, s := range items {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out, nil
}

// props flattens a block of storage or Hazelcast properties into strings:
// nested mappings join their keys with dots (fs: {defaultFS: x} is
// fs.defaultFS), a list of single values becomes one comma-separated
// value (as Hadoop writes lists), and a key with no value is left out so
// that it keeps its default (`namespace:` in SeaTunnel's templates).
func (n node) props(into fsbackend.Properties, prefix string) error {
	es, err := n.entries()
	if err != nil {
		return err
	}
	for _, e := range es {
		full := e.key
		if prefix != "" {
			full = prefix + "." + e.key
		}
		v := e.val
		switch {
		case v.null():
			continue
		case v.n.Kind == yaml.MappingNode:
			if err := v.props(into, full); err != nil {
				return err
			}
			continue
		}
		var s string
		if v.n.Kind == yaml.SequenceNode {
			l, err := v.list()
			if err != nil {
				return err
			}
			s = strings.Join(l, ",")
		} else {
			s = v.n.Value
		}
		if _, dup := into[full]; dup {
			return v.fail(ErrSyntax, "property %s given twice", full)
		}
		into[full] = s
	}
	return nil
}

// reader decodes typed values into fields, keeping the first error. An
// absent or null value leaves the field at its default.
type reader struct{ err error }

func (r *reader) int(dst *int, n node) {
	if r.err == nil && !n.null() {
		v, err := n.integer()
		r.err = err
		if err == nil {
			*dst = v
		}
	}
}

func (r *reader) bool(dst *bool, n node) {
	if r.err == nil && !n.null() {
		v, err := n.boolean()
		r.err = err
		if err == nil {
			*dst = v
		}
	}
}

func (r *reader) str(dst *string, n node) {
	if r.err == nil && !n.null() {
		v, err := n.str()
		r.err = err
		if err == nil {
			*dst = v
		}
	}
}

func (r *reader) millis(dst *time.Duration, n node) {
	var ms int
	set := !n.null()
	r.int(&ms, n)
	if r.err == nil && set {
		*dst = time.Duration(ms) * time.Millisecond
	}
}
