package storage

import (
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"time"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/rs/zerolog"
	"github.com/sibyldb/sibyl/commitlog"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/sstable"
)

// Options configure an Engine. The zero value of a field means its default.
type Options struct {
	// FS is the filesystem; default vfs.Default.
	FS vfs.FS
	// DataDir holds one directory per keyspace (data_file_directories).
	// Default "data/data".
	DataDir string
	// CommitLog configures the commit log; its Dir defaults to "data/commitlog".
	CommitLog commitlog.Options
	// Partitioner computes tokens; default Murmur3.
	Partitioner partitioner.Partitioner
	// SSTable configures written SSTables; TokenLen is set from Partitioner.
	SSTable sstable.WriterOptions
	// MemtableSize flushes a table's memtable once it holds this many bytes.
	// Default 128 MiB: the memory 64 MiB of the estimate before memtables
	// held their entries as arena bytes stood for. At 64 MiB of arena, one
	// node under B2 flushed and compacted so often that its reads fell by a
	// fifth and its memory under load rose by 140 MiB.
	MemtableSize int64
	// MemtableTotalSpace is the memory all memtables together may hold
	// (memtable_heap_space): past a third of it the largest table is
	// flushed, and once it is all taken writes wait for flushes. Default a
	// quarter of the Go memory limit (GOMEMLIMIT), or 1 GiB without one.
	MemtableTotalSpace int64
	// CommitLogTotalSpace flushes the tables holding the oldest segment when
	// the commit log grows past it (commitlog_total_space). Default 8 GiB.
	CommitLogTotalSpace int64
	// BlockCacheSize is the shared block cache in bytes (file_cache_size).
	// Default, as Cassandra's: the smaller of 512 MiB and a quarter of the
	// Go memory limit (GOMEMLIMIT).
	BlockCacheSize int64
	// CompactionThroughput limits compaction writes in MiB/s
	// (compaction_throughput); 0 means unlimited. Default 64.
	CompactionThroughput int
	// DisableAutoCompaction stops background compactions (tests, nodetool
	// disableautocompaction); explicit ones still run.
	DisableAutoCompaction bool
	// IgnoreReplayErrors sets aside, in a quarantine file of the commit log
	// directory, each replayed record whose frame checks but whose mutation
	// does not decode, where replay would otherwise stop at it (sibyl
	// server --commitlog-ignore-replay-errors, Cassandra's
	// cassandra.commitlog.ignorereplayerrors).
	IgnoreReplayErrors bool
	// OnFailure hears of the failures a node's failure policies decide on
	// (see FailureKind): the commit log's, once, and each disk failure or
	// corruption a flush, a compaction or a read meets. It must not block.
	OnFailure func(kind FailureKind, err error)
	// RepairHistory says which token ranges of a table repair has
	// brought to agree on every replica, and when: the tables whose
	// TombstoneGC waits for repair purge only there. Default: none
	// repaired.
	RepairHistory RepairHistory
	// TombstoneWarnThreshold and TombstoneFailureThreshold bound the
	// tombstones one read may meet, counted as Cassandra counts them:
	// past the first (tombstone_warn_threshold, default 1,000) the read
	// warns the client and the log, past the second
	// (tombstone_failure_threshold, default 100,000) it is given up with
	// a request.TombstoneOverwhelming. Reads of system, system_schema and
	// system_traces have neither (Table.tombstoneThresholds).
	TombstoneWarnThreshold, TombstoneFailureThreshold int
	// DescribeRead renders a partition read of a table as CQL, and
	// DescribeKey a partition key, for the tombstone messages; by default
	// the key is shown in hex.
	DescribeRead func(table mutation.TableID, key []byte, q ReadQuery) string
	DescribeKey  func(table mutation.TableID, key []byte) string
	// Logger receives the engine's events; default none.
	Logger *zerolog.Logger
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// EnsureDefaults fills unset fields with their defaults.
func (o *Options) EnsureDefaults() {
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.DataDir == "" {
		o.DataDir = "data/data"
	}
	if o.CommitLog.Dir == "" {
		o.CommitLog.Dir = "data/commitlog"
	}
	if o.CommitLog.FS == nil {
		o.CommitLog.FS = o.FS
	}
	if o.Partitioner == nil {
		o.Partitioner = partitioner.Murmur3()
	}
	o.SSTable.TokenLen = o.Partitioner.TokenBytesLen()
	o.SSTable.EnsureDefaults()
	if o.MemtableSize == 0 {
		o.MemtableSize = 128 << 20
	}
	quarter, limited := quarterOfMemoryLimit()
	if o.MemtableTotalSpace == 0 {
		o.MemtableTotalSpace = 1 << 30
		if limited {
			o.MemtableTotalSpace = quarter
		}
	}
	if o.CommitLogTotalSpace == 0 {
		o.CommitLogTotalSpace = 8 << 30
	}
	if o.BlockCacheSize == 0 {
		o.BlockCacheSize = min(512<<20, quarter)
	}
	if o.CompactionThroughput == 0 {
		o.CompactionThroughput = 64
	}
	if o.TombstoneWarnThreshold == 0 {
		o.TombstoneWarnThreshold = 1000
	}
	if o.TombstoneFailureThreshold == 0 {
		o.TombstoneFailureThreshold = 100000
	}
	if o.Logger == nil {
		nop := zerolog.Nop()
		o.Logger = &nop
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.RepairHistory == nil {
		o.RepairHistory = noRepairs{}
	}
	if o.CommitLog.Logger == nil {
		o.CommitLog.Logger = o.Logger
	}
	if o.CommitLog.Now == nil {
		o.CommitLog.Now = o.Now
	}
	if o.OnFailure != nil && o.CommitLog.OnFailure == nil {
		report := o.OnFailure
		o.CommitLog.OnFailure = func(err error) { report(CommitLogFailure, err) }
	}
}

// Validate reports every problem with the options at once; it changes nothing.
func (o *Options) Validate() error {
	var errs []error
	if o.MemtableSize < 0 {
		errs = append(errs, fmt.Errorf("memtable size: %d is negative", o.MemtableSize))
	}
	if o.MemtableTotalSpace < 0 {
		errs = append(errs, fmt.Errorf("memtable_heap_space: %d is negative", o.MemtableTotalSpace))
	}
	if o.CommitLogTotalSpace < 0 {
		errs = append(errs, fmt.Errorf("commitlog_total_space: %d is negative", o.CommitLogTotalSpace))
	}
	if o.BlockCacheSize < 0 {
		errs = append(errs, fmt.Errorf("block cache size: %d is negative", o.BlockCacheSize))
	}
	if o.CompactionThroughput < 0 {
		errs = append(errs, fmt.Errorf("compaction_throughput: %d MiB/s is negative", o.CompactionThroughput))
	}
	cl := o.CommitLog
	if cl.Dir == "" {
		cl.Dir = "data/commitlog" // the default; Validate checks the rest
	}
	if err := cl.Validate(); err != nil {
		errs = append(errs, err)
	}
	sst := o.SSTable
	sst.TokenLen = 8
	if o.Partitioner != nil {
		sst.TokenLen = o.Partitioner.TokenBytesLen()
	}
	if err := sst.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// ParseCommitLogSync reads the commitlog_sync setting for Options.CommitLog,
// so that the node configures the commit log through storage.
var ParseCommitLogSync = commitlog.ParseSyncMode

// TableOptions describe a table to the engine.
type TableOptions struct {
	ID       [16]byte
	Keyspace string
	Name     string
	// GCGraceSeconds is how long tombstones are kept (gc_grace_seconds).
	// Default 864000 (10 days); for a grace of zero use NoGCGrace, since 0
	// means the default.
	GCGraceSeconds int64
	// TombstoneGC says when a tombstone may go; the zero value is once
	// GCGraceSeconds have passed.
	TombstoneGC TombstoneGC
	// Compaction holds the strategy's options.
	Compaction CompactionOptions
	// Indexes are the table's secondary indexes (storage-attached: see
	// IndexSpec); Reconfigure may change them.
	Indexes []IndexSpec
}

// TombstoneGCMode is what a tombstone waits for before compaction may
// drop it (ScyllaDB's tombstone_gc modes); the overlap rule of E3 holds
// in every mode.
type TombstoneGCMode uint8

const (
	// GCAfterGrace waits gc_grace_seconds after the deletion, as
	// Cassandra does (ScyllaDB's "timeout").
	GCAfterGrace TombstoneGCMode = iota
	// GCAfterRepair waits until a repair of the partition's token, begun
	// at least PropagationDelay after the deletion, has covered every
	// replica (RepairHistory); never, where none has.
	GCAfterRepair
	// GCNever keeps every tombstone ("disabled").
	GCNever
	// GCImmediately drops a tombstone at the first compaction after the
	// second it was written in ("immediate"): for tables that are never
	// deleted from nor overwritten, or that have one replica.
	GCImmediately
)

// TombstoneGC is a table's rule for dropping tombstones.
type TombstoneGC struct {
	Mode TombstoneGCMode
	// PropagationDelay, in seconds, is how long before a repair began a
	// deletion must be for the repair to count for it under
	// GCAfterRepair: the time a tombstone may take to reach a replica.
	PropagationDelay int64
}

// RepairHistory is where repair has made every replica of a table agree.
type RepairHistory interface {
	// RepairedAt is when (Unix seconds) the last repair of the table that
	// covered token began; false if none has.
	RepairedAt(table mutation.TableID, token partitioner.Token) (int64, bool)
}

// noRepairs is the RepairHistory of an engine given none.
type noRepairs struct{}

func (noRepairs) RepairedAt(mutation.TableID, partitioner.Token) (int64, bool) { return 0, false }

// NoGCGrace is gc_grace_seconds = 0: a tombstone may go at the first
// compaction after the second it was written in, when the overlap rule
// allows.
const NoGCGrace = -1

// EnsureDefaults fills unset fields with their defaults.
func (o *TableOptions) EnsureDefaults() {
	if o.GCGraceSeconds == 0 {
		o.GCGraceSeconds = 864000
	}
	o.Compaction.EnsureDefaults()
}

// Validate reports every problem with the options at once.
func (o *TableOptions) Validate() error {
	var errs []error
	if o.Keyspace == "" || o.Name == "" {
		errs = append(errs, errors.New("storage: a table needs a keyspace and a name"))
	}
	if o.GCGraceSeconds < NoGCGrace {
		errs = append(errs, fmt.Errorf("gc_grace_seconds: %d is negative", o.GCGraceSeconds))
	}
	if o.TombstoneGC.Mode > GCImmediately {
		errs = append(errs, fmt.Errorf("tombstone_gc: unknown mode %d", o.TombstoneGC.Mode))
	}
	if o.TombstoneGC.PropagationDelay < 0 {
		errs = append(errs, fmt.Errorf("tombstone_gc: propagation delay %d is negative", o.TombstoneGC.PropagationDelay))
	}
	if err := o.Compaction.Validate(); err != nil {
		errs = append(errs, err)
	}
	seen := map[string]bool{}
	for _, ix := range o.Indexes {
		switch {
		case !isIndexName(ix.Name):
			errs = append(errs, fmt.Errorf("index %q: a name of word characters is needed", ix.Name))
		case seen[ix.Name]:
			errs = append(errs, fmt.Errorf("index %s: given twice", ix.Name))
		case ix.Terms == nil:
			errs = append(errs, fmt.Errorf("index %s: no Terms", ix.Name))
		}
		seen[ix.Name] = true
	}
	return errors.Join(errs...)
}

// isIndexName reports whether name is word characters only, as index
// names (and so index file names) are.
func isIndexName(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// purgeRule is the part of a table's options that decides when its
// tombstones may go, which may change while the table is open.
type purgeRule struct {
	gcGrace int64 // seconds
	gc      TombstoneGC
}

func (o *TableOptions) purgeRule() *purgeRule {
	r := &purgeRule{gcGrace: o.GCGraceSeconds, gc: o.TombstoneGC}
	if o.GCGraceSeconds == NoGCGrace {
		r.gcGrace = 0
	}
	return r
}

// CompactionStrategy names how a table's SSTables are chosen for
// compaction.
type CompactionStrategy int

const (
	// SizeTiered merges SSTables of similar size
	// (SizeTieredCompactionStrategy, the default).
	SizeTiered CompactionStrategy = iota
	// Leveled keeps levels of non-overlapping SSTables, each level fanout
	// times the size of the one before (LeveledCompactionStrategy).
	Leveled
	// TimeWindow merges SSTables whose newest writes fall in the same time
	// window (TimeWindowCompactionStrategy).
	TimeWindow
)

var strategyNames = [...]string{"SizeTieredCompactionStrategy", "LeveledCompactionStrategy", "TimeWindowCompactionStrategy"}

func (s CompactionStrategy) String() string {
	if s < 0 || int(s) >= len(strategyNames) {
		return fmt.Sprintf("CompactionStrategy(%d)", int(s))
	}
	return strategyNames[s]
}

// CompactionOptions configure a table's compaction strategy. The
// size-tiered fields also shape level 0 of Leveled and the newest window of
// TimeWindow.
type CompactionOptions struct {
	Strategy CompactionStrategy
	// Disabled stops the table's background compactions (the compaction
	// option enabled: false); explicit ones still run.
	Disabled     bool
	MinThreshold int     // default 4
	MaxThreshold int     // default 32
	BucketLow    float64 // default 0.5
	BucketHigh   float64 // default 1.5
	// MinSSTableSize: SSTables below it share one bucket. Default 50 MiB.
	MinSSTableSize int64
	// SSTableSize is the size Leveled cuts its SSTables at
	// (sstable_size_in_mb). Default 160 MiB.
	SSTableSize int64
	// Fanout is how many times larger each level is than the one before
	// (fanout_size). Default 10.
	Fanout int
	// Window is TimeWindow's window (compaction_window_size times
	// compaction_window_unit). Default one day.
	Window time.Duration
	// TimestampUnit is what TimeWindow reads write timestamps in
	// (timestamp_resolution). Default microseconds, as every write Sibyl
	// makes is stamped.
	TimestampUnit time.Duration
}

// EnsureDefaults fills unset fields with their defaults.
func (o *CompactionOptions) EnsureDefaults() {
	if o.MinThreshold == 0 {
		o.MinThreshold = 4
	}
	if o.MaxThreshold == 0 {
		o.MaxThreshold = 32
	}
	if o.BucketLow == 0 {
		o.BucketLow = 0.5
	}
	if o.BucketHigh == 0 {
		o.BucketHigh = 1.5
	}
	if o.MinSSTableSize == 0 {
		o.MinSSTableSize = 50 << 20
	}
	if o.SSTableSize == 0 {
		o.SSTableSize = 160 << 20
	}
	if o.Fanout == 0 {
		o.Fanout = 10
	}
	if o.Window == 0 {
		o.Window = 24 * time.Hour
	}
	if o.TimestampUnit == 0 {
		o.TimestampUnit = time.Microsecond
	}
}

// Validate reports every problem with the options at once.
func (o *CompactionOptions) Validate() error {
	var errs []error
	c := *o
	c.EnsureDefaults()
	if c.Strategy < SizeTiered || c.Strategy > TimeWindow {
		errs = append(errs, fmt.Errorf("compaction class: unknown strategy %d", int(c.Strategy)))
	}
	if c.MinThreshold < 2 {
		errs = append(errs, fmt.Errorf("min_threshold: %d is below 2", c.MinThreshold))
	}
	if c.MaxThreshold < c.MinThreshold {
		errs = append(errs, fmt.Errorf("max_threshold: %d is below min_threshold %d", c.MaxThreshold, c.MinThreshold))
	}
	if c.BucketLow < 0 || c.BucketLow >= c.BucketHigh {
		errs = append(errs, fmt.Errorf("bucket_low %v must be below bucket_high %v", c.BucketLow, c.BucketHigh))
	}
	if c.MinSSTableSize < 0 {
		errs = append(errs, fmt.Errorf("min_sstable_size: %d is negative", c.MinSSTableSize))
	}
	if c.SSTableSize < 0 {
		errs = append(errs, fmt.Errorf("sstable_size_in_mb: %d bytes is negative", c.SSTableSize))
	}
	if c.Fanout < 2 {
		errs = append(errs, fmt.Errorf("fanout_size: %d is below 2", c.Fanout))
	}
	if c.Window < 0 {
		errs = append(errs, fmt.Errorf("compaction_window_size: %v is negative", c.Window))
	}
	if c.TimestampUnit < 0 || c.TimestampUnit > time.Second {
		errs = append(errs, fmt.Errorf("timestamp_resolution: %v is not a unit from nanoseconds to seconds", c.TimestampUnit))
	}
	return errors.Join(errs...)
}

// quarterOfMemoryLimit is a quarter of the Go memory limit (GOMEMLIMIT),
// the share Cassandra gives its memtables and its file cache of the heap,
// and whether a limit is set at all.
func quarterOfMemoryLimit() (int64, bool) {
	limit, ok := MemoryLimit()
	return limit / 4, ok
}

// MemoryLimit is the Go memory limit (GOMEMLIMIT), what a node sizes the
// shares Cassandra takes of its heap from, and whether one is set.
func MemoryLimit() (int64, bool) {
	limit := debug.SetMemoryLimit(-1)
	return limit, limit != math.MaxInt64
}
