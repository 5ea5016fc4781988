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
