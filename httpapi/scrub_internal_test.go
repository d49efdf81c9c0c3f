package httpapi

import "testing"

func TestScrubPaths(t *testing.T) {
	for in, want := range map[string]string{
		"open /var/lib/stowage/ns/c/m/META: file name too long": "open …/m/META: file name too long",
		`write "/a/b/c/d.log": no space`:                        `write "…/c/d.log": no space`,
		"no path here":                                          "no path here",
		"/x: broken":                                            "…/x: broken",
	} {
		if got := scrubPaths(in); got != want {
			t.Errorf("scrubPaths(%q) = %q, want %q", in, got, want)
		}
	}
}
