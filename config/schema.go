package config

import (
	"sort"

	"go.yaml.in/yaml/v3"
)

// schema describes which keys may appear at one place of a file and
// whether stowage acts on them. The tables of keys are in
// schema_seatunnel.go, schema_hazelcast.go and schema_client.go.
//
// A key the schema does not have is an error (ErrUnknownKey) with the
// nearest known key as a suggestion. A key it has but stowage does not act
// on is accepted and recorded, so that a node can say once which keys of
// its files have no effect. A security switch stowage does not implement
// is refused when turned on (ErrUnsupported).
type schema struct {
	keys   map[string]*schema // a mapping of these keys
	each   *schema            // a mapping of any keys (map names), each with this schema
	leaf   bool               // a single value or a list of them
	free   bool               // anything may appear below (plugin-config, headers, ...)
	scalar bool               // a mapping that may also be written as a single value (network.port)
	effect bool               // leaf or free: stowage acts on the value
	props  *propertySet       // Hazelcast properties: checked by name, each name in effect or not
	scan   bool               // free, but searched for TLS and encryption switches (advanced-network)
	refuse string             // leaf: a switch refused when true; says what to do instead
}

// Schema building blocks.
var (
	noEffect     = &schema{leaf: true}               // accepted, stowage does not act on it
	inEffect     = &schema{leaf: true, effect: true} // stowage reads and acts on it
	freeNoEffect = &schema{free: true}               // anything below, no effect
	freeInEffect = &schema{free: true, effect: true} // anything below, read as strings
)

func block(keys map[string]*schema) *schema { return &schema{keys: keys} }

// eachOf is a mapping whose keys are names (map names, endpoint groups).
func eachOf(s *schema) *schema { return &schema{each: s} }

// refused is a switch stowage does not implement: true is an error saying
// why and what to use instead.
func refused(why string) *schema { return &schema{leaf: true, refuse: why} }

// keysNoEffect is a block of known keys, none of which stowage acts on.
func keysNoEffect(names ...string) *schema {
	keys := make(map[string]*schema, len(names))
	for _, n := range names {
		keys[n] = noEffect
	}
	return block(keys)
}

// hasEffect reports whether stowage acts on anything the schema allows.
func (s *schema) hasEffect() bool {
	switch {
	case s == nil:
		return false
	case s.effect:
		return true
	case s.props != nil:
		return len(s.props.effective) > 0
	case s.each != nil:
		return s.each.hasEffect()
	}
	for _, sub := range s.keys {
		if sub.hasEffect() {
			return true
		}
	}
	return false
}

// check reports the first key or shape that the schema does not allow, or
// the first refused switch that is on. With record set, it notes in the
// source every key present whose subtree has no effect (the key itself,
// not each key below it).
func (n node) check(s *schema, record bool) error {
	if n.null() {
		return nil
	}
	if s == nil {
		s = noEffect
	}
	if record && !s.hasEffect() {
		n.src.noEffect = append(n.src.noEffect, n.path)
		record = false
	}
	switch {
	case s.leaf:
		if n.n.Kind == yaml.MappingNode {
			return n.fail(ErrType, "want a single value, got a mapping")
		}
		if s.refuse != "" {
			return n.refuseIfOn(s.refuse)
		}
		return nil
	case s.props != nil:
		return n.checkProperties(s.props, record)
	case s.scan:
		return n.scanSecurity()
	case s.free:
		return nil
	case s.scalar && n.n.Kind == yaml.ScalarNode:
		return nil
	}
	es, err := n.entries()
	if err != nil {
		return err
	}
	for _, e := range es {
		sub := s.each
		if s.keys != nil {
			var ok bool
			if sub, ok = s.keys[e.key]; !ok {
				return e.val.fail(ErrUnknownKey, "unknown key%s", suggest(e.key, sortedKeys(s.keys)))
			}
		}
		if err := e.val.check(sub, record); err != nil {
			return err
		}
	}
	return nil
}

// refuseIfOn fails when a refused switch is true; false is accepted.
func (n node) refuseIfOn(why string) error {
	on, err := n.boolean()
	if err != nil {
		return err
	}
	if on {
		return n.fail(ErrUnsupported, "true is not supported yet: %s", why)
	}
	return nil
}

// checkProperties checks a properties block. Hazelcast accepts any
// property name, and so does stowage, except a name one or two edits from
// a known one: a misspelt property would silently keep its default. Names
// stowage does not act on are recorded one by one.
func (n node) checkProperties(set *propertySet, record bool) error {
	var flat []entry
	if err := n.flatten("", &flat); err != nil {
		return err
	}
	for _, p := range flat {
		if set.effective[p.key] {
			continue
		}
		if !set.known[p.key] {
			if near := set.near(p.key); near != "" {
				return p.val.fail(ErrUnknownKey, "unknown property (did you mean %s?)", near)
			}
		}
		if record && !p.val.null() {
			n.src.noEffect = append(n.src.noEffect, p.val.path)
		}
	}
	return nil
}

// flatten lists the leaves below a properties block with their dotted
// names, as props reads them.
func (n node) flatten(prefix string, out *[]entry) error {
	es, err := n.entries()
	if err != nil {
		return err
	}
	for _, e := range es {
		name := e.key
		if prefix != "" {
			name = prefix + "." + e.key
		}
		if e.val.isMapping() {
			if err := e.val.flatten(name, out); err != nil {
				return err
			}
			continue
		}
		*out = append(*out, entry{key: name, val: e.val})
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
