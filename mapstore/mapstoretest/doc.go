// Package mapstoretest is the MapStore contract suite both map stores
// pass (and later ones reuse). open may be called several times on one
// directory within a subtest to simulate a restart; the suite closes the
// previous store first.
package mapstoretest
