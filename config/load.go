package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// File names in a configuration directory, as SeaTunnel names them.
const (
	SeatunnelFile = "seatunnel.yaml"
	HazelcastFile = "hazelcast.yaml"
)

// Load reads dir/seatunnel.yaml and dir/hazelcast.yaml and validates the
// result. A missing file means its defaults; a file that is present but
// does not parse is an error naming the file and line. Errors are *Error.
func Load(dir string) (*Config, error) {
	st, err := readOptional(filepath.Join(dir, SeatunnelFile))
	if err != nil {
		return nil, err
	}
	hz, err := readOptional(filepath.Join(dir, HazelcastFile))
	if err != nil {
		return nil, err
	}
	return parse(st, hz, filepath.Join(dir, SeatunnelFile), filepath.Join(dir, HazelcastFile))
}

func readOptional(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("stowage/config: %w", err)
	}
	return b, nil
}

// Parse reads the contents of seatunnel.yaml and hazelcast.yaml (either
// may be nil or empty: defaults) and validates the result, as Load does.
// Decoding errors wrap ErrSyntax, ErrUnknownKey or ErrType and stop at the
// first; Validate's errors wrap ErrInvalid and are all reported.
func Parse(seatunnelYAML, hazelcastYAML []byte) (*Config, error) {
	return parse(seatunnelYAML, hazelcastYAML, SeatunnelFile, HazelcastFile)
}

func parse(st, hz []byte, stFile, hzFile string) (*Config, error) {
	c := Default()
	c.origin = &origin{seatunnelFile: stFile, hazelcastFile: hzFile, lines: map[string]int{}}
	for _, f := range []struct {
		data []byte
		file string
		read func(*Config, node) error
	}{
		{st, stFile, parseSeatunnel},
		{hz, hzFile, parseHazelcast},
	} {
		root, err := parseRoot(f.data, f.file)
		if err != nil {
			return nil, err
		}
		if err := f.read(c, root); err != nil {
			return nil, err
		}
		for k, v := range root.src.lines {
			c.origin.lines[k] = v
		}
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}
