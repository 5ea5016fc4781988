//go:build !invariants && !race

package invariants

// Enabled is true in builds with the invariants tag (or -race): expensive
// checks run there.
const Enabled = false
