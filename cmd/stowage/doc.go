// Command stowage runs a member (node), shows persistence end to end
// (demo), inspects and repairs persisted state with no cluster running
// (inspect), and measures performance (bench).
package main
