package mutation

// Iterator walks entries in engine-key order within half-open bounds
// [lower, upper) fixed at creation. Each move returns the entry at the new
// position, or nil when exhausted or failed; Error tells which. The entry
// and the bytes it points to are valid until the next move or Close.
// Iterators are not safe for concurrent use.
//
// Every ordered source (memtable, SSTable, the merging iterator of a read)
// implements it, so one read path serves them all.
type Iterator interface {
	// SeekGE moves to the first entry whose key is >= key.
	SeekGE(key []byte) *Entry
	// First moves to the first entry.
	First() *Entry
	// Next moves forward by one entry.
	Next() *Entry
	// SeekLT moves to the last entry whose key is < key.
	SeekLT(key []byte) *Entry
	// Last moves to the last entry.
	Last() *Entry
	// Prev moves backward by one entry.
	Prev() *Entry
	// Error returns the error that ended iteration, if any.
	Error() error
	// Close releases the iterator's resources.
	Close() error
}
