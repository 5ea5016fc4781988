package node

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/sibyldb/sibyl/coordinator"
	"github.com/sibyldb/sibyl/cql/exec"
	"github.com/sibyldb/sibyl/messaging"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/partitioner"
	"github.com/sibyldb/sibyl/ring"
	"github.com/sibyldb/sibyl/schema"
	"github.com/sibyldb/sibyl/storage"
)

// Cassandra's request timeouts (write_request_timeout,
// read_request_timeout, range_request_timeout) at their defaults.
const (
	writeTimeout = 2 * time.Second
	readTimeout  = 5 * time.Second
	rangeTimeout = 10 * time.Second
	// truncateTimeout is truncate_request_timeout.
	truncateTimeout = 60 * time.Second
)

// level is a statement's consistency level for the coordinator; a read
// with none named (ANY: the node's own statements and tests) is at ONE.
func level(cl exec.Consistency, read bool) coordinator.Level {
	if read && cl == exec.ConsistencyAny {
		return coordinator.One
	}
	return coordinator.Level(cl)
}

// placement is where a partition of a table lives: its replicas and how
// the keyspace places them. A table of a system keyspace lives on this
// node alone.
type placement struct {
	replicas []ring.Endpoint
	strategy ring.Strategy
}

func (n *Node) place(t *schema.Table, token partitioner.Token, m *ring.Metadata) (placement, error) {
	if schema.IsSystemKeyspace(t.Keyspace) {
		return placement{replicas: []ring.Endpoint{n.endpoint()}, strategy: ring.LocalStrategy{Local: n.endpoint()}}, nil
	}
	s, err := n.lookups().strategy(t.Keyspace)
	if err != nil {
		return placement{}, err
	}
	return placement{replicas: s.Replicas(m, token), strategy: s}, nil
}

// lookups are the tables by id and the keyspaces' strategies of the
// current schema, made once per schema.
type lookups struct {
	schema     *schema.Schema
	tables     map[mutation.TableID]*schema.Table
	strategies map[string]ring.Strategy
	errs       map[string]error
}

func (l *lookups) strategy(keyspace string) (ring.Strategy, error) {
	if s, ok := l.strategies[keyspace]; ok {
		return s, nil
	}
	if err := l.errs[keyspace]; err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("node: no keyspace %s", keyspace)
}

func (n *Node) lookups() *lookups {
	sch := n.Schema()
	if l := n.lookupCache.Load(); l != nil && l.schema == sch {
		return l
	}
	l := &lookups{schema: sch, tables: map[mutation.TableID]*schema.Table{}, strategies: map[string]ring.Strategy{}, errs: map[string]error{}}
	for _, ks := range sch.Keyspaces() {
		for _, t := range ks.Tables {
			l.tables[t.ID] = t
		}
		if s, err := n.strategy(ks); err != nil {
			l.errs[ks.Name] = err
		} else {
			l.strategies[ks.Name] = s
		}
	}
	n.lookupCache.Store(l)
	return l
}

// liveness answers whether a node is up.
func (n *Node) liveness() func(ring.Endpoint) bool {
	self := n.endpoint()
	if n.gossip == nil {
		return func(e ring.Endpoint) bool { return e == self }
	}
	return func(e ring.Endpoint) bool { return e == self || n.gossip.Alive(string(e)) }
}

// checkAvailable refuses a request whose level its live replicas cannot
// meet, before anything is sent.
func (n *Node) checkAvailable(l coordinator.Level, p placement, alive func(ring.Endpoint) bool, m *ring.Metadata) error {
	return clientError(coordinator.CheckAvailable(l, p.strategy, n.cfg.DataCenter, p.replicas, alive, m.Location))
}

// clientError turns the coordinator's failures into the errors clients
// get, with their protocol fields.
func clientError(err error) error {
	if err == nil {
		return nil // before the targets below, which escape: no allocation on success
	}
	var u *coordinator.Unavailable
	var wt *coordinator.WriteTimeout
	var rt *coordinator.ReadTimeout
	switch {
	case errors.As(err, &u):
		return &exec.Error{Code: exec.Unavailable, Message: u.Error(),
			Replica: &exec.ReplicaFailure{Consistency: uint16(u.Level), BlockFor: int32(u.Required), Received: int32(u.Alive)}}
	case errors.As(err, &wt):
		return &exec.Error{Code: exec.WriteTimeout, Message: wt.Error(),
			Replica: &exec.ReplicaFailure{Consistency: uint16(wt.Level), BlockFor: int32(wt.BlockFor), Received: int32(wt.Received), WriteType: wt.WriteType}}
	case errors.As(err, &rt):
		return &exec.Error{Code: exec.ReadTimeout, Message: rt.Error(),
			Replica: &exec.ReplicaFailure{Consistency: uint16(rt.Level), BlockFor: int32(rt.BlockFor), Received: int32(rt.Received), DataPresent: rt.DataPresent}}
	}
	return err
}

// tableByID finds the table a mutation writes.
func (n *Node) tableByID(id mutation.TableID) *schema.Table { return n.lookups().tables[id] }

// Apply writes mutations at a consistency level: each goes to every
// replica of its partition, and counts once as many acknowledged as the
// level needs. If any partition's live replicas are too few, nothing is
// written (Unavailable); a partition short of acknowledgements after
// write_request_timeout fails the write (WriteTimeout), though replicas
// that got it keep it.
func (n *Node) Apply(ms []*mutation.Mutation, cl exec.Consistency) error {
	n.metrics.writes.Inc()
	return n.metrics.countFailure(n.apply(ms, cl))
}

func (n *Node) apply(ms []*mutation.Mutation, cl exec.Consistency) error {
	l := level(cl, false)
	m := n.ring.Load()
	alive := n.liveness()
	type write struct {
		m *mutation.Mutation
		p placement
	}
	writes := make([]write, 0, len(ms))
	for _, mu := range ms {
		t := n.tableByID(mu.Table)
		if t == nil {
			return fmt.Errorf("node: a write to an unknown table %x", mu.Table)
		}
		p, err := n.place(t, n.engine.Partitioner().Token(mu.Key), m)
		if err != nil {
			return err
		}
		// ANY is never unavailable: a hint counts as the write.
		if l != coordinator.Any {
			if err := n.checkAvailable(l, p, alive, m); err != nil {
				return err
			}
		}
		writes = append(writes, write{mu, p})
	}
	writeType := "SIMPLE"
	if len(ms) > 1 {
		writeType = "UNLOGGED_BATCH"
	}
	if len(writes) == 1 {
		return n.writeReplicas(writes[0].m, writes[0].p, l, alive, writeType)
	}
	errs := make([]error, len(writes))
	concurrently(len(writes), func(i int) {
		errs[i] = n.writeReplicas(writes[i].m, writes[i].p, l, alive, writeType)
	})
	return errors.Join(errs...)
}

// concurrently runs do(0) ... do(count-1) at once and returns when all
// have: one runs on the caller's goroutine, since there is nothing to
// overlap it with.
func concurrently(count int, do func(i int)) {
	if count == 1 {
		do(0)
		return
	}
	var wg sync.WaitGroup
	for i := range count {
		wg.Add(1)
		go func() {
			defer wg.Done()
			do(i)
		}()
	}
	wg.Wait()
}

// sendMutation applies mu on replica r: here, or through messaging with
// payload, mu's encoding (which this node's own write does not need).
func (n *Node) sendMutation(ctx context.Context, r ring.Endpoint, mu *mutation.Mutation, payload []byte) error {
	if r == n.endpoint() {
		return n.applyLocal([]*mutation.Mutation{mu})
	}
	n.metrics.forwardedMutations.Inc()
	_, err := n.messaging.Request(ctx, string(r), messaging.VerbMutation, payload)
	return err
}

// writeReplicas sends one mutation to its live replicas (this node's
// share applied here) and waits for the level's acknowledgements.
func (n *Node) writeReplicas(mu *mutation.Mutation, p placement, l coordinator.Level, alive func(ring.Endpoint) bool, writeType string) error {
	self := n.endpoint()
	if len(p.replicas) == 1 && p.replicas[0] == self {
		return n.applyLocal([]*mutation.Mutation{mu})
	}
	var targets []ring.Endpoint
	for _, r := range p.replicas {
		if alive(r) {
			targets = append(targets, r)
		} else if n.messaging != nil {
			n.hint(r, mu) // it gets the write when it is back
		}
	}
	if len(targets) == 0 && l == coordinator.Any {
		return nil // the hints are the write
	}
	acks := coordinator.NewAcks(coordinator.BlockFor(l, p.strategy, n.cfg.DataCenter), len(targets))
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	payload := encodeMutations([]*mutation.Mutation{mu})
	writeTo := func(r ring.Endpoint) bool {
		err := n.sendMutation(ctx, r, mu, payload)
		if err != nil && r != self {
			n.hint(r, mu) // it failed the write, or did not answer in time
		}
		return err == nil
	}
	if len(targets) == 1 {
		// One replica (RF 1, or the only one alive): nothing to wait for
		// in parallel.
		defer cancel()
		if acks.Ack(writeTo(targets[0])) {
			return nil
		}
		return clientError(acks.Timeout(l, writeType))
	}
	results := make(chan bool, len(targets))
	var sent sync.WaitGroup
	for _, r := range targets {
		sent.Add(1)
		go func() {
			defer sent.Done()
			results <- writeTo(r)
		}()
	}
	// The replicas still on their way get the write after this returns;
	// the context ends when they have answered or timed out.
	go func() { sent.Wait(); cancel() }()
	for range targets {
		select {
		case ok := <-results:
			if acks.Ack(ok) {
				return nil
			}
			if acks.Hopeless() {
				return clientError(acks.Timeout(l, writeType))
			}
		case <-ctx.Done():
			return clientError(acks.Timeout(l, writeType))
		}
	}
	return clientError(acks.Timeout(l, writeType))
}

// ReadPartition reads a slice of one partition at a consistency level:
// from this node when it is a replica, else from a live replica. The
// replicas alive must meet the level. (Reading from as many replicas as
// the level needs, comparing and repairing them, is still to come.)
func (n *Node) ReadPartition(t *schema.Table, key []byte, q exec.PartitionQuery) (*exec.Partition, error) {
	n.metrics.reads.Inc()
	p, err := n.readPartition(t, key, q)
	return p, n.metrics.countFailure(err)
}

func (n *Node) readPartition(t *schema.Table, key []byte, q exec.PartitionQuery) (*exec.Partition, error) {
	l := level(q.Consistency, true)
	m := n.ring.Load()
	alive := n.liveness()
	p, err := n.place(t, n.engine.Partitioner().Token(key), m)
	if err != nil {
		return nil, err
	}
	if err := n.checkAvailable(l, p, alive, m); err != nil {
		return nil, err
	}
	blockFor := coordinator.BlockFor(l, p.strategy, n.cfg.DataCenter)
	contacts := n.contacts(p, alive, blockFor)
	if len(contacts) == 1 && contacts[0] == n.endpoint() || n.messaging == nil {
		return n.readLocal(t, key, q)
	}
	// The first contact sends its data, the others a digest of theirs;
	// only when they differ does everyone's data come, to be merged and
	// the stale replicas repaired.
	digestOnly := make([]bool, len(contacts))
	for i := 1; i < len(contacts); i++ {
		digestOnly[i] = true
	}
	first, err := n.askReplicas(t, key, q, contacts, digestOnly, l, blockFor)
	if err != nil {
		return nil, err
	}
	answers := [][]mutation.Entry{first[0].entries}
	if !digestsAgree(first) {
		n.metrics.digestMismatches.Inc()
		rest, err := n.askReplicas(t, key, q, contacts[1:], make([]bool, len(contacts)-1), l, blockFor)
		if err != nil {
			return nil, err
		}
		for _, a := range rest {
			answers = append(answers, a.entries)
		}
	}
	merged := mergeEntries(answers)
	part := n.engine.Partitioner()
	res, err := storage.ResolvePartition(part, part.TokenBytesLen(), key, merged, storageRead(q))
	if err != nil {
		return nil, err
	}
	if len(answers) > 1 { // with one answer, or digests that agree, no replica is stale
		if err := n.repair(t, key, contacts, answers, merged, l, blockFor); err != nil {
			return nil, err
		}
	}
	if res.IsEmpty() {
		return nil, nil
	}
	return execPartition(res), nil
}

// contacts are the replicas a read at blockFor asks: this node first when
// it is a live replica, then the live ones in ring order.
func (n *Node) contacts(p placement, alive func(ring.Endpoint) bool, blockFor int) []ring.Endpoint {
	var out []ring.Endpoint
	if slices.Contains(p.replicas, n.endpoint()) {
		out = append(out, n.endpoint())
	}
	for _, r := range p.replicas {
		if len(out) >= blockFor {
			break
		}
		if r != n.endpoint() && alive(r) {
			out = append(out, r)
		}
	}
	return out
}

// readAnswer is a replica's answer to a read: its entries, or their
// digest.
type readAnswer struct {
	entries []mutation.Entry
	digest  []byte
}

// askReplicas asks each contact for its raw entries of the partition, or
// for their digest where digestOnly says so (this node reads its own),
// and fails with ReadTimeout when one has not answered by
// read_request_timeout.
func (n *Node) askReplicas(t *schema.Table, key []byte, q exec.PartitionQuery, contacts []ring.Endpoint, digestOnly []bool, l coordinator.Level, blockFor int) ([]readAnswer, error) {
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	answers := make([]readAnswer, len(contacts))
	errs := make([]error, len(contacts))
	ask := func(i int, c ring.Endpoint) {
		if c == n.endpoint() {
			st, err := n.storageTable(t)
			if err == nil {
				answers[i].entries, err = st.ReadPartitionEntries(key, storageRead(q))
			}
			if digestOnly[i] {
				answers[i].digest = entriesDigest(answers[i].entries)
			}
			errs[i] = err
			return
		}
		n.metrics.forwardedReads.Inc()
		out, err := n.messaging.Request(ctx, string(c), messaging.VerbRead, encodeRead(t.ID, key, q, digestOnly[i]))
		switch {
		case err != nil:
		case digestOnly[i]:
			answers[i].digest = out
		default:
			answers[i].entries, err = decodeEntries(out)
		}
		errs[i] = err
	}
	concurrently(len(contacts), func(i int) { ask(i, contacts[i]) })
	received := 0
	for _, err := range errs {
		if err == nil {
			received++
		}
	}
	if received < len(contacts) {
		for _, err := range errs {
			if errors.Is(err, messaging.ErrTimeout) {
				return nil, clientError(&coordinator.ReadTimeout{Level: l, Received: received, BlockFor: blockFor, DataPresent: errs[0] == nil})
			}
		}
		return nil, errors.Join(errs...)
	}
	return answers, nil
}

// digestsAgree reports whether the digests in the answers after the first
// match the first answer's entries.
func digestsAgree(answers []readAnswer) bool {
	if len(answers) == 1 {
		return true
	}
	want := entriesDigest(answers[0].entries)
	for _, a := range answers[1:] {
		if !bytes.Equal(a.digest, want) {
			return false
		}
	}
	return true
}

// mergeEntries merges replicas' entries of one partition, each in key
// order, into one list in key order: entries under one key reconcile.
func mergeEntries(lists [][]mutation.Entry) []mutation.Entry {
	if len(lists) == 1 {
		return lists[0] // one replica's answer, in key order already
	}
	var out []mutation.Entry
	for _, l := range lists {
		out = append(out, l...)
	}
	slices.SortStableFunc(out, func(a, b mutation.Entry) int { return bytes.Compare(a.Key, b.Key) })
	merged := out[:0]
	for i := range out {
		if k := len(merged); k > 0 && bytes.Equal(merged[k-1].Key, out[i].Key) {
			merged[k-1] = *mutation.MergeEntries(&merged[k-1], &out[i])
			continue
		}
		merged = append(merged, out[i])
	}
	return merged
}

// repair sends each contacted replica what the merged answer has and its
// own lacked, and waits for them to apply it (blocking read repair, as
// Cassandra's default): a read at a level then sees what the next read at
// that level will.
func (n *Node) repair(t *schema.Table, key []byte, contacts []ring.Endpoint, answers [][]mutation.Entry, merged []mutation.Entry, l coordinator.Level, blockFor int) error {
	tokenLen := n.engine.Partitioner().TokenBytesLen()
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	type fix struct {
		to ring.Endpoint
		mu *mutation.Mutation
	}
	var fixes []fix
	for i, c := range contacts {
		missing := missingEntries(answers[i], merged)
		if len(missing) == 0 {
			continue
		}
		mu, err := mutation.FromEntries(t.ID, key, missing, tokenLen)
		if err != nil {
			return err
		}
		n.metrics.repaired.Inc()
		fixes = append(fixes, fix{c, mu})
	}
	errs := make([]error, len(fixes))
	concurrently(len(fixes), func(i int) {
		var payload []byte // each stale replica lacks its own entries
		if fixes[i].to != n.endpoint() {
			payload = encodeMutations([]*mutation.Mutation{fixes[i].mu})
		}
		errs[i] = n.sendMutation(ctx, fixes[i].to, fixes[i].mu, payload)
	})
	for _, err := range errs {
		if errors.Is(err, messaging.ErrTimeout) {
			return clientError(&coordinator.ReadTimeout{Level: l, Received: blockFor - 1, BlockFor: blockFor, DataPresent: true})
		}
	}
	return errors.Join(errs...)
}

// missingEntries are the merged entries a replica's answer lacks or holds
// in an older form.
func missingEntries(have, merged []mutation.Entry) []mutation.Entry {
	var out []mutation.Entry
	i := 0
	for _, e := range merged {
		for i < len(have) && bytes.Compare(have[i].Key, e.Key) < 0 {
			i++
		}
		if i < len(have) && bytes.Equal(have[i].Key, e.Key) &&
			bytes.Equal(mutation.AppendEntryValue(nil, &have[i]), mutation.AppendEntryValue(nil, &e)) {
			continue
		}
		out = append(out, e)
	}
	return out
}

// Scan reads a table's partitions in token order at a consistency level.
// In a cluster every live node scans what it holds, and the answers merge
// (rows by their cells' timestamps); a node whose answer was cut by the
// limit bounds how far the merged answer is complete, and the scan asks
// again after that point until the limit is met or every node is done.
func (n *Node) Scan(t *schema.Table, q exec.ScanQuery) ([]*exec.Partition, error) {
	n.metrics.ranges.Inc()
	parts, err := n.scan(t, q)
	return parts, n.metrics.countFailure(err)
}

func (n *Node) scan(t *schema.Table, q exec.ScanQuery) ([]*exec.Partition, error) {
	if schema.IsSystemKeyspace(t.Keyspace) {
		return n.scanLocal(t, q)
	}
	l := level(q.Consistency, true)
	m := n.ring.Load()
	alive := n.liveness()
	for _, tok := range m.SortedTokens() {
		p, err := n.place(t, tok, m)
		if err != nil {
			return nil, err
		}
		if err := n.checkAvailable(l, p, alive, m); err != nil {
			return nil, err
		}
	}
	if n.messaging == nil {
		return n.scanLocal(t, q)
	}
	var nodes []ring.Endpoint
	for _, e := range m.Endpoints() {
		if alive(e) {
			nodes = append(nodes, e)
		}
	}
	var out []*exec.Partition
	rows, want := 0, q.Limit
	for {
		if want > 0 {
			q.Limit = want - rows
		}
		merged, bound, err := n.scanRound(t, q, nodes)
		if err != nil {
			return nil, err
		}
		for _, p := range merged {
			out = append(out, p)
			rows += len(p.Rows)
		}
		if bound == nil || (want > 0 && rows >= want) {
			return out, nil
		}
		// The partition where an answer stopped may go on past it: it is
		// read whole (up to what the limits leave), then the scan goes on
		// after it.
		pq := exec.PartitionQuery{Limit: want - rows, Now: q.Now, Consistency: q.Consistency}
		if q.PerPartitionLimit > 0 && (pq.Limit <= 0 || q.PerPartitionLimit < pq.Limit) {
			pq.Limit = q.PerPartitionLimit
		}
		if want <= 0 && q.PerPartitionLimit <= 0 {
			pq.Limit = 0
		}
		p, err := n.ReadPartition(t, bound, pq)
		if err != nil {
			return nil, err
		}
		if p != nil && (len(p.Rows) > 0 || p.Static != nil) {
			out = append(out, p)
			rows += len(p.Rows)
		}
		if want > 0 && rows >= want {
			return out, nil
		}
		q.After = bound
	}
}

// scanRound asks every node for its part of a scan and merges the
// answers before bound, the first partition where a node's answer stopped
// at the limit (it may hold more from there on); bound is nil when no
// answer stopped short.
func (n *Node) scanRound(t *schema.Table, q exec.ScanQuery, nodes []ring.Endpoint) (merged []*exec.Partition, bound []byte, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), rangeTimeout)
	defer cancel()
	answers := make([][]storage.RawPartition, len(nodes))
	errs := make([]error, len(nodes))
	concurrently(len(nodes), func(i int) {
		if nodes[i] == n.endpoint() {
			answers[i], errs[i] = n.scanEntriesLocal(t, q)
			return
		}
		n.metrics.forwardedRanges.Inc()
		out, err := n.messaging.Request(ctx, string(nodes[i]), messaging.VerbRangeRead, encodeScan(t.ID, q))
		if err == nil {
			answers[i], err = decodeRawPartitions(out)
		}
		errs[i] = err
	})
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	part := n.engine.Partitioner()
	order := func(a, b []byte) int {
		if c := partitioner.Compare(part.Token(a), part.Token(b)); c != 0 {
			return c
		}
		return bytes.Compare(a, b)
	}
	resolve := func(key []byte, entries []mutation.Entry) (*storage.Partition, error) {
		return storage.ResolvePartition(part, part.TokenBytesLen(), key, entries, storage.ReadQuery{Limit: q.PerPartitionLimit, Now: q.Now})
	}
	// The merged answer is complete before the smallest last key of the
	// answers the limit cut.
	if q.Limit > 0 {
		for _, a := range answers {
			rows := 0
			for _, rp := range a {
				p, err := resolve(rp.Key, rp.Entries)
				if err != nil {
					return nil, nil, err
				}
				rows += len(p.Rows)
			}
			if rows >= q.Limit && len(a) > 0 {
				if last := a[len(a)-1].Key; bound == nil || order(last, bound) < 0 {
					bound = last
				}
			}
		}
	}
	byKey := map[string][][]mutation.Entry{}
	var keys [][]byte
	for _, a := range answers {
		for _, rp := range a {
			if bound != nil && order(rp.Key, bound) >= 0 {
				continue
			}
			if _, ok := byKey[string(rp.Key)]; !ok {
				keys = append(keys, rp.Key)
			}
			byKey[string(rp.Key)] = append(byKey[string(rp.Key)], rp.Entries)
		}
	}
	slices.SortFunc(keys, order)
	rows := 0
	for _, k := range keys {
		// The replicas' entries merge with the one reconcile, so a
		// deletion one replica holds hides what a stale one still has.
		sp, err := resolve(k, mergeEntries(byKey[string(k)]))
		if err != nil {
			return nil, nil, err
		}
		if sp.IsEmpty() {
			continue
		}
		p := execPartition(sp)
		if q.Limit > 0 && rows+len(p.Rows) > q.Limit {
			p.Rows = p.Rows[:q.Limit-rows]
		}
		rows += len(p.Rows)
		merged = append(merged, p)
		if q.Limit > 0 && rows >= q.Limit {
			return merged, nil, nil
		}
	}
	return merged, bound, nil
}

// truncateEverywhere truncates a table on every node of the ring, as
// Cassandra does: only when all are up (else Unavailable at ALL), each
// asked to truncate its copy, this node's last.
func (n *Node) truncateEverywhere(t *schema.Table) error {
	m := n.ring.Load()
	alive := n.liveness()
	var peers []ring.Endpoint
	up := 0
	for _, e := range m.Endpoints() {
		if alive(e) {
			up++
		}
		if e != n.endpoint() {
			peers = append(peers, e)
		}
	}
	if up < len(m.Endpoints()) {
		return n.metrics.countFailure(clientError(&coordinator.Unavailable{Level: coordinator.All, Required: len(m.Endpoints()), Alive: up}))
	}
	ctx, cancel := context.WithTimeout(context.Background(), truncateTimeout)
	defer cancel()
	errs := make([]error, len(peers))
	concurrently(len(peers), func(i int) {
		_, errs[i] = n.messaging.Request(ctx, string(peers[i]), messaging.VerbTruncate, t.ID[:])
	})
	if err := errors.Join(errs...); err != nil {
		return &exec.Error{Code: exec.TruncateError, Message: "Error during truncate: " + err.Error()}
	}
	return n.truncateLocal(t)
}
