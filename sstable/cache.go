package sstable

import (
	"github.com/cockroachdb/pebble"
)

// Cache is the block cache shared by every SSTable of an engine.
type Cache struct {
	c *pebble.Cache
}

// NewCache returns a block cache holding up to size bytes.
func NewCache(size int64) *Cache {
	// pebble v1 has no public cache package; its root package builds the cache.
	return &Cache{c: pebble.NewCache(size)}
}

// Close releases the cache's memory once no reader uses it.
func (c *Cache) Close() { c.c.Unref() }

// CacheStats are the block cache's figures.
type CacheStats struct {
	Capacity, Size int64 // bytes
	Entries        int64 // blocks held
	Hits, Misses   int64 // lookups since the start
}

// Stats reads the cache's figures.
func (c *Cache) Stats() CacheStats {
	m := c.c.Metrics()
	return CacheStats{Capacity: c.c.MaxSize(), Size: m.Size, Entries: m.Count, Hits: m.Hits, Misses: m.Misses}
}
