package local

// OnDirSync makes syncDir report every directory it syncs to fn, until
// the returned function is called. Tests that use it must not run in
// parallel.
func OnDirSync(fn func(dir string)) (restore func()) {
	onDirSync = fn
	return func() { onDirSync = nil }
}
