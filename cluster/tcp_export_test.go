package cluster

// WithMaxMessageSize returns opts with the transport's message limit
// lowered to n bytes, so that tests of the limit need not allocate
// MaxMessageSize bytes.
func WithMaxMessageSize(opts TCPOptions, n int) TCPOptions {
	opts.maxMessage = n
	return opts
}
