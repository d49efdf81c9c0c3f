package fsbackend

import (
	"fmt"
	"strings"
)

// ValidName reports an error wrapping ErrInvalidName unless name is a clean
// relative slash-separated path: not empty, no leading or trailing slash,
// no empty, "." or ".." element, no NUL or backslash.
func ValidName(name string) error {
	if name == "" || strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") ||
		strings.ContainsAny(name, "\x00\\") {
		return fmt.Errorf("%w: %q", ErrInvalidName, name)
	}
	for _, el := range strings.Split(name, "/") {
		if el == "" || el == "." || el == ".." {
			return fmt.Errorf("%w: %q", ErrInvalidName, name)
		}
	}
	return nil
}

// ValidDir is ValidName, except that "" (the root) is allowed.
func ValidDir(dir string) error {
	if dir == "" {
		return nil
	}
	return ValidName(dir)
}

// Join joins name elements with "/", skipping empty ones.
func Join(elem ...string) string {
	var b strings.Builder
	for _, e := range elem {
		e = strings.Trim(e, "/")
		if e == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('/')
		}
		b.WriteString(e)
	}
	return b.String()
}
