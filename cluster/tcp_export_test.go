package cluster

// WithMaxMessageSize returns opts with the transport's message limit
// lowered to n bytes, so that tests of the limit need not allocate
// MaxMessageSize bytes.
func WithMaxMessageSize(opts TCPOptions, n int) TCPOptions {
	opts.maxMessage = n
	return opts
}

// SetCertAddr makes a shared-secret transport present a certificate
// naming addr instead of its own address, while its frames still state
// its own: a member that writes one sender and proves another.
func SetCertAddr(t *TCPTransport, addr string) {
	t.tls.mu.Lock()
	t.tls.addr, t.tls.leaf = addr, nil
	t.tls.mu.Unlock()
}

// SetDirectOff makes t a member without direct pipes: its pipes run on
// session streams, and it takes a direct pipe's preamble for a session.
func SetDirectOff(t *TCPTransport) { t.directOff = true }
