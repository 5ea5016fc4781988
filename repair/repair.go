package repair

import (
	"context"
	"crypto/md5"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/sibyldb/sibyl/coordinator"
	"github.com/sibyldb/sibyl/internal/wire"
	"github.com/sibyldb/sibyl/messaging"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/storage"
)

// Depth is how many times a range is halved for its tree: 32 pieces,
// each hashed whole and streamed whole when replicas differ on it.
const Depth = 5

// maxDepth bounds the depth a request may ask for.
const maxDepth = 16

// Leaves halves range r depth times at its midpoints, the pieces in
// clockwise order; a piece too small to halve stays whole. Every replica
// cuts a range the same way.
func Leaves(p partitioner.Partitioner, r partitioner.Range, depth int) []partitioner.Range {
	leaves := []partitioner.Range{r}
	for range depth {
		next := make([]partitioner.Range, 0, 2*len(leaves))
		for _, l := range leaves {
			mid := p.Midpoint(l.Start, l.End)
			if partitioner.Compare(mid, l.Start) == 0 || partitioner.Compare(mid, l.End) == 0 {
				next = append(next, l)
				continue
			}
			next = append(next, partitioner.Range{Start: l.Start, End: mid}, partitioner.Range{Start: mid, End: l.End})
		}
		leaves = next
	}
	return leaves
}

// Tables is the local engine's tables.
type Tables interface {
	Table(id mutation.TableID) (*storage.Table, error)
}

// Network is the messaging a Service asks others' trees over.
type Network interface {
	Request(ctx context.Context, to string, verb messaging.Verb, payload []byte) ([]byte, error)
}

// Service builds this node's trees and asks others for theirs.
type Service struct {
	Tables      Tables
	Network     Network
	Partitioner partitioner.Partitioner
	// Spans are the engine key spans of a range's tokens.
	Spans func(partitioner.Range) []storage.KeySpan
	// Record keeps, at this replica, that a repair from the node at from,
	// begun at at (Unix seconds), made every replica of table's ranges
	// agree. It must check what it is told: a record purges tombstones.
	Record func(from string, table mutation.TableID, ranges []partitioner.Range, at int64) error
	// Uncommitted are the partitions of a table in a range whose Paxos
	// registers here hold a proposal accepted and not committed.
	Uncommitted func(table mutation.TableID, r partitioner.Range) ([][]byte, error)
}

// Tree hashes table id's data in each of range r's leaves.
func (s *Service) Tree(id mutation.TableID, r partitioner.Range, depth int) ([][]byte, error) {
	t, err := s.Tables.Table(id)
	if err != nil {
		return nil, err
	}
	now := time.Now().Unix()
	var out [][]byte
	var length [binary.MaxVarintLen64]byte
	for _, leaf := range Leaves(s.Partitioner, r, depth) {
		h := md5.New()
		for _, span := range s.Spans(leaf) {
			parts, err := t.ScanEntries(storage.ScanQuery{From: span.From, To: span.To, Now: now})
			if err != nil {
				return nil, err
			}
			for _, p := range parts {
				h.Write(binary.AppendUvarint(length[:0], uint64(len(p.Key))))
				h.Write(p.Key)
				h.Write(coordinator.EntriesDigest(p.Entries))
			}
		}
		out = append(out, h.Sum(nil))
	}
	return out, nil
}

// TreeOf is the tree of table id's range r at the node at to, asked with
// REPAIR_TREE.
func (s *Service) TreeOf(ctx context.Context, to string, id mutation.TableID, r partitioner.Range, depth int) ([][]byte, error) {
	b, err := s.Network.Request(ctx, to, messaging.VerbRepairTree, treeRequest{table: id, r: r, depth: depth}.encode())
	if err != nil {
		return nil, fmt.Errorf("repair: the tree of %s from /%s: %w", r, to, err)
	}
	return decodeList(b)
}

// Handlers are the verbs a Service answers.
func (s *Service) Handlers() map[messaging.Verb]messaging.Handler {
	return map[messaging.Verb]messaging.Handler{messaging.VerbRepairTree: s.handleTree, messaging.VerbRepairRecord: s.handleRecord,
		messaging.VerbRepairPaxos: s.handlePaxos}
}

// UncommittedOf are the partitions of table id's range r whose Paxos
// registers at the node at to hold a proposal left unfinished, asked with
// REPAIR_PAXOS.
func (s *Service) UncommittedOf(ctx context.Context, to string, id mutation.TableID, r partitioner.Range) ([][]byte, error) {
	b, err := s.Network.Request(ctx, to, messaging.VerbRepairPaxos, treeRequest{table: id, r: r}.encode())
	if err != nil {
		return nil, fmt.Errorf("repair: the unfinished Paxos proposals of %s at /%s: %w", r, to, err)
	}
	keys, err := decodeList(b)
	if err != nil {
		return nil, fmt.Errorf("repair: REPAIR_PAXOS from /%s: %w", to, err)
	}
	return keys, nil
}

func (s *Service) handlePaxos(_ context.Context, _ string, payload []byte) ([]byte, error) {
	q, err := decodeTreeRequest(payload, s.Partitioner)
	if err != nil {
		return nil, err
	}
	if s.Uncommitted == nil {
		return nil, errors.New("repair: REPAIR_PAXOS: this node keeps no Paxos state")
	}
	keys, err := s.Uncommitted(q.table, q.r)
	if err != nil {
		return nil, err
	}
	return encodeList(keys), nil
}

// RecordAt asks the replica at to to keep that a repair begun at at made
// every replica of table's ranges agree (REPAIR_RECORD).
func (s *Service) RecordAt(ctx context.Context, to string, table mutation.TableID, ranges []partitioner.Range, at int64) error {
	q := recordRequest{table: table, ranges: ranges, at: at}
	if _, err := s.Network.Request(ctx, to, messaging.VerbRepairRecord, q.encode()); err != nil {
		return fmt.Errorf("repair: recording the repair of %d ranges at /%s: %w", len(ranges), to, err)
	}
	return nil
}

func (s *Service) handleRecord(_ context.Context, from string, payload []byte) ([]byte, error) {
	q, err := decodeRecordRequest(payload, s.Partitioner)
	if err != nil {
		return nil, err
	}
	if s.Record == nil {
		return nil, errors.New("repair: REPAIR_RECORD: this node keeps no repair history")
	}
	return nil, s.Record(from, q.table, q.ranges, q.at)
}

// MaxRecordRanges bounds the ranges of one REPAIR_RECORD: more than any
// node replicates of a table (num_tokens times the replication factor),
// few enough that merging them into the history stays cheap.
const MaxRecordRanges = 8192

// recordRequest is REPAIR_RECORD's payload.
type recordRequest struct {
	table  mutation.TableID
	ranges []partitioner.Range
	at     int64
}

func (q recordRequest) encode() []byte {
	var w wire.Writer
	w.Bytes(q.table[:])
	w.Int(q.at)
	w.Int(int64(len(q.ranges)))
	for _, rg := range q.ranges {
		writeRange(&w, rg)
	}
	return w.B
}

func decodeRecordRequest(b []byte, p partitioner.Partitioner) (recordRequest, error) {
	r := wire.Reader{B: b}
	var q recordRequest
	q.table = readTable(&r)
	q.at = r.Int()
	n := r.Count()
	if n > MaxRecordRanges {
		r.Fail(fmt.Errorf("%d ranges, more than %d", n, MaxRecordRanges))
		n = 0
	}
	for range n {
		rg, err := rangeOf(p, r.Bytes(), r.Bytes())
		if err != nil && r.Err == nil {
			r.Fail(err)
		}
		q.ranges = append(q.ranges, rg)
	}
	if err := r.Done(); err != nil {
		return q, fmt.Errorf("repair: REPAIR_RECORD: %w", err)
	}
	return q, nil
}

func (s *Service) handleTree(_ context.Context, _ string, payload []byte) ([]byte, error) {
	q, err := decodeTreeRequest(payload, s.Partitioner)
	if err != nil {
		return nil, err
	}
	leaves, err := s.Tree(q.table, q.r, q.depth)
	if err != nil {
		return nil, err
	}
	return encodeList(leaves), nil
}

// treeRequest is REPAIR_TREE's payload, and REPAIR_PAXOS's (depth 0).
type treeRequest struct {
	table mutation.TableID
	r     partitioner.Range
	depth int
}

func (q treeRequest) encode() []byte {
	var w wire.Writer
	w.Bytes(q.table[:])
	writeRange(&w, q.r)
	w.Int(int64(q.depth))
	return w.B
}

func decodeTreeRequest(b []byte, p partitioner.Partitioner) (treeRequest, error) {
	r := wire.Reader{B: b}
	var q treeRequest
	q.table = readTable(&r)
	start, end := r.Bytes(), r.Bytes()
	q.depth = int(r.Int())
	if err := r.Done(); err != nil {
		return q, fmt.Errorf("repair: a range request: %w", err)
	}
	var err error
	if q.r, err = rangeOf(p, start, end); err != nil {
		return q, fmt.Errorf("repair: a range request: %w", err)
	}
	if q.depth < 0 || q.depth > maxDepth {
		return q, fmt.Errorf("repair: a range request: depth %d is not between 0 and %d", q.depth, maxDepth)
	}
	return q, nil
}

// writeRange and rangeOf are a range's encoding in this package's verbs.
func writeRange(w *wire.Writer, rg partitioner.Range) {
	w.Bytes(rg.Start.AppendBytes(nil))
	w.Bytes(rg.End.AppendBytes(nil))
}

func rangeOf(p partitioner.Partitioner, start, end []byte) (partitioner.Range, error) {
	var rg partitioner.Range
	var err error
	if rg.Start, err = p.TokenFromBytes(start); err == nil {
		rg.End, err = p.TokenFromBytes(end)
	}
	return rg, err
}

// readTable reads a table id, failing r if it is not one.
func readTable(r *wire.Reader) mutation.TableID {
	var id mutation.TableID
	r.Fixed(id[:], "a table id")
	return id
}

// encodeList and decodeList are the answers of REPAIR_TREE (a tree's
// leaves) and REPAIR_PAXOS (partition keys): a list of byte strings.
func encodeList(items [][]byte) []byte {
	var w wire.Writer
	w.Int(int64(len(items)))
	for _, l := range items {
		w.Bytes(l)
	}
	return w.B
}

func decodeList(b []byte) ([][]byte, error) {
	r := wire.Reader{B: b}
	n := r.Count()
	out := make([][]byte, 0, min(n, 1<<maxDepth))
	for range n {
		out = append(out, r.Bytes())
	}
	if err := r.Done(); err != nil {
		return nil, fmt.Errorf("repair: a list of %d: %w", n, err)
	}
	return out, nil
}
