package metadata

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/rs/zerolog"

	"github.com/sibyldb/sibyl/messaging"
)

// Applier is what applies the log's changes to the node: the schema lives
// in its system_schema tables, not in this package.
type Applier interface {
	// ApplySchema applies a committed schema change: the mutations the
	// proposer encoded, every timestamp in them moved up by shift, which
	// make the schema of epoch; proposedHere says this node proposed it
	// (its client has been told).
	ApplySchema(mutations []byte, shift int64, epoch uint64, proposedHere bool) error
	// SchemaSnapshot is the whole schema as the node holds it, deletions
	// included, for a snapshot.
	SchemaSnapshot() ([]byte, error)
	// RestoreSchema takes in the schema of a snapshot another member sent,
	// the schema of epoch.
	RestoreSchema(schema []byte, epoch uint64) error
	// ApplyTopology takes the ring's nodes as a committed change (or a
	// snapshot) has made them, at epoch: the ring the node routes by.
	ApplyTopology(nodes map[uint64]NodeRecord, epoch uint64) error
}

// Network is how a member reaches the others: messaging.Service.
type Network interface {
	Send(ctx context.Context, to string, v messaging.Verb, payload []byte) error
	Request(ctx context.Context, to string, v messaging.Verb, payload []byte) ([]byte, error)
}

// noNetwork is a lone node's: it never needs to reach another.
type noNetwork struct{}

var errNoNetwork = errors.New("metadata: no network")

func (noNetwork) Send(context.Context, string, messaging.Verb, []byte) error { return errNoNetwork }
func (noNetwork) Request(context.Context, string, messaging.Verb, []byte) ([]byte, error) {
	return nil, errNoNetwork
}

// Options configure a Log.
type Options struct {
	// Self is this node as a member.
	Self Member
	// FS and Dir are where the log and its snapshot live.
	FS  vfs.FS
	Dir string
	// Network carries the group's messages (METADATA, one way) and
	// requests (METADATA_JOIN, METADATA_WAIT) to the other nodes, whose
	// messaging serves Handlers; nil for a node alone.
	Network Network
	// Applier applies the committed changes.
	Applier Applier
	// TickInterval is Raft's tick: a leader's heartbeat goes out every
	// tick, and a follower that hears nothing for ElectionTicks to twice
	// that stands for election. Default 100ms and 10.
	TickInterval  time.Duration
	ElectionTicks int
	// PartitionedAfter is how long a member may go without hearing from a
	// leader (or, leading, from a majority of the voters: Raft then steps
	// it down) before it counts itself cut off from the group
	// (Status.Partitioned). Default 5s.
	PartitionedAfter time.Duration
	// SnapshotEntries is how many entries apply between snapshots; the
	// log then drops what a snapshot covers. Default 1000.
	SnapshotEntries uint64
	Logger          *zerolog.Logger
}

// EnsureDefaults fills in what was left out.
func (o *Options) EnsureDefaults() {
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.TickInterval == 0 {
		o.TickInterval = 100 * time.Millisecond
	}
	if o.ElectionTicks == 0 {
		o.ElectionTicks = 10
	}
	if o.PartitionedAfter == 0 {
		o.PartitionedAfter = 5 * time.Second
	}
	if o.SnapshotEntries == 0 {
		o.SnapshotEntries = 1000
	}
	if o.Logger == nil {
		nop := zerolog.Nop()
		o.Logger = &nop
	}
	if o.Network == nil {
		o.Network = noNetwork{}
	}
}

// Validate refuses options a Log cannot run with.
func (o *Options) Validate() error {
	switch {
	case o.Self.ID == 0:
		return errors.New("metadata: the node's id is 0")
	case o.Self.Endpoint == "":
		return errors.New("metadata: the node has no endpoint")
	case o.Dir == "":
		return errors.New("metadata: no directory for the log")
	case o.Applier == nil:
		return errors.New("metadata: no Applier")
	case o.PartitionedAfter < 0:
		return fmt.Errorf("metadata: PartitionedAfter %s is negative", o.PartitionedAfter)
	case o.ElectionTicks < 2:
		return fmt.Errorf("metadata: %d election ticks; at least 2", o.ElectionTicks)
	}
	return nil
}
