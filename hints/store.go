package hints

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/vfs"

	"github.com/sibyldb/sibyl/mutation"
)

// ErrHostFull is a hint refused because its replica's hints already take
// max_hints_size_per_host.
var ErrHostFull = errors.New("hints: the replica's hints are at max_hints_size_per_host")

// DefaultMaxFileSize is max_hints_file_size's default, Cassandra's.
const DefaultMaxFileSize = 128 << 20

// Options configure a Store.
type Options struct {
	FS  vfs.FS
	Dir string
	// MaxFileSize is max_hints_file_size: a file that has reached it is
	// closed and the next hint starts a new one; default 128 MiB.
	MaxFileSize int64
	// MaxSizePerHost is max_hints_size_per_host: the space one replica's
	// hints may take, past which its hints are refused; 0 for no bound.
	MaxSizePerHost int64
	// Now is the clock of hints' creation times and expiry.
	Now func() time.Time
}

const (
	formatVersion = 2
	suffix        = ".hints"
	headerLen     = 8  // length, CRC32C
	bodyHeaderLen = 12 // creation ms, gc grace seconds
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// file is one hints file of a replica.
type file struct {
	name    string
	created int64 // ms: its first hint's creation time
	size    int64 // bytes written, or found on disk
	legacy  bool  // the first format: bodies are the mutation alone
}

// replica is what the store holds for one replica.
type replica struct {
	files []*file // oldest first; the last may be the one being written
	// writing is files' last, open for appending; nil once closed.
	writing vfs.File
	// resume is, per file name, where delivery goes on from: the end of
	// the hints its replica has taken.
	resume map[string]int64
	size   int64
}

// Store keeps every replica's hints. Its methods are safe for concurrent
// use; one delivery per replica runs at a time (the caller's to ensure).
type Store struct {
	opts     Options
	mu       sync.Mutex
	replicas map[string]*replica
	lastMS   int64 // the newest file name's time: names only grow
}

// EnsureDefaults fills in what was left out.
func (o *Options) EnsureDefaults() {
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.MaxFileSize == 0 {
		o.MaxFileSize = DefaultMaxFileSize
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// Validate refuses options a Store cannot run with.
func (o *Options) Validate() error {
	switch {
	case o.Dir == "":
		return errors.New("hints: no directory")
	case o.MaxFileSize < 0:
		return fmt.Errorf("hints: max file size %d is negative", o.MaxFileSize)
	case o.MaxSizePerHost < 0:
		return fmt.Errorf("hints: max size per host %d is negative", o.MaxSizePerHost)
	}
	return nil
}

// Open reads the hints already in the directory (creating it).
func Open(opts Options) (*Store, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if err := opts.FS.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("hints: %w", err)
	}
	names, err := opts.FS.List(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("hints: %w", err)
	}
	s := &Store{opts: opts, replicas: map[string]*replica{}}
	for _, name := range names {
		host, f, ok := parseName(name)
		if !ok {
			continue
		}
		st, err := opts.FS.Stat(opts.FS.PathJoin(opts.Dir, name))
		if err != nil {
			return nil, fmt.Errorf("hints: %w", err)
		}
		f.size = st.Size()
		if f.legacy {
			f.created = st.ModTime().UnixMilli()
		}
		r := s.replica(host)
		r.files = append(r.files, f)
		r.size += f.size
		s.lastMS = max(s.lastMS, f.created)
	}
	for _, r := range s.replicas {
		slices.SortFunc(r.files, func(a, b *file) int { return cmp.Compare(a.created, b.created) })
	}
	return s, nil
}

// parseName reads a hints file's name: <replica>-<ms>-<version>.hints, or
// the first format's <replica>.hints. Other files are not the store's.
func parseName(name string) (host string, f *file, ok bool) {
	base, ok := strings.CutSuffix(name, suffix)
	if !ok {
		return "", nil, false
	}
	f = &file{name: name}
	rest, version, found := cutLast(base, "-")
	msText, created, found2 := "", "", false
	if found {
		msText, created, found2 = cutLast(rest, "-")
	}
	ms, errMS := strconv.ParseInt(created, 10, 64)
	v, errV := strconv.Atoi(version)
	if !found || !found2 || errMS != nil || errV != nil {
		f.legacy = true
		msText = base
	} else if v != formatVersion {
		return "", nil, false // a format this build does not know: left alone
	} else {
		f.created = ms
	}
	host, err := url.PathUnescape(msText)
	if err != nil || host == "" {
		return "", nil, false
	}
	return host, f, true
}

func cutLast(s, sep string) (before, after string, found bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

func (s *Store) replica(host string) *replica {
	r := s.replicas[host]
	if r == nil {
		r = &replica{resume: map[string]int64{}}
		s.replicas[host] = r
	}
	return r
}

func (s *Store) path(name string) string { return s.opts.FS.PathJoin(s.opts.Dir, name) }

// Write keeps a hint of m for host, created now, live for gcGrace (the
// table's gc_grace_seconds).
func (s *Store) Write(host string, m *mutation.Mutation, gcGrace time.Duration) error {
	now := s.opts.Now()
	body := binary.BigEndian.AppendUint64(make([]byte, headerLen, headerLen+bodyHeaderLen+64), uint64(now.UnixMilli()))
	body = binary.BigEndian.AppendUint32(body, uint32(min(max(gcGrace/time.Second, 0), 1<<32-1)))
	rec := mutation.AppendMutation(body, m)
	binary.BigEndian.PutUint32(rec[0:4], uint32(len(rec)-headerLen))
	binary.BigEndian.PutUint32(rec[4:8], crc32.Checksum(rec[headerLen:], crcTable))

	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.replica(host)
	if s.opts.MaxSizePerHost > 0 && r.size+int64(len(rec)) > s.opts.MaxSizePerHost {
		return ErrHostFull
	}
	if r.writing != nil && r.files[len(r.files)-1].size >= s.opts.MaxFileSize {
		if err := s.closeWriting(r); err != nil {
			return err
		}
	}
	if r.writing == nil {
		ms := max(now.UnixMilli(), s.lastMS+1)
		name := fmt.Sprintf("%s-%d-%d%s", url.PathEscape(host), ms, formatVersion, suffix)
		w, err := s.opts.FS.Create(s.path(name))
		if err != nil {
			return fmt.Errorf("hints: %w", err)
		}
		s.lastMS = ms
		r.files = append(r.files, &file{name: name, created: ms})
		r.writing = w
	}
	f := r.files[len(r.files)-1]
	n, err := r.writing.Write(rec)
	f.size += int64(n)
	r.size += int64(n)
	if err != nil {
		// What reached the file may be a torn record, which ends the
		// file for delivery: nothing more is written after it.
		return errors.Join(fmt.Errorf("hints: %w", err), s.closeWriting(r))
	}
	return nil
}

// closeWriting closes the file a replica's hints are appended to, so
// that the next hint starts another.
func (s *Store) closeWriting(r *replica) error {
	if r.writing == nil {
		return nil
	}
	err := r.writing.Sync()
	err = errors.Join(err, r.writing.Close())
	r.writing = nil
	if err != nil {
		return fmt.Errorf("hints: %w", err)
	}
	return nil
}

// Has reports whether host has hints waiting.
func (s *Store) Has(host string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.replicas[host]
	return r != nil && len(r.files) > 0
}

// Age is how old host's oldest file of hints is (false when it has
// none): the age max_hint_window bounds, across restarts.
func (s *Store) Age(host string) (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.replicas[host]
	if r == nil || len(r.files) == 0 {
		return 0, false
	}
	return s.opts.Now().Sub(time.UnixMilli(r.files[0].created)), true
}

// Pending is what is kept for one replica, as nodetool listpendinghints
// shows it.
type Pending struct {
	Host  string
	Files int
	Bytes int64
	// Oldest and Newest are the creation times of its oldest and newest
	// files.
	Oldest, Newest time.Time
}

// Pending lists the replicas with hints, by host.
func (s *Store) Pending() []Pending {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Pending
	for host, r := range s.replicas {
		if len(r.files) == 0 {
			continue
		}
		out = append(out, Pending{Host: host, Files: len(r.files), Bytes: r.size,
			Oldest: time.UnixMilli(r.files[0].created), Newest: time.UnixMilli(r.files[len(r.files)-1].created)})
	}
	slices.SortFunc(out, func(a, b Pending) int { return strings.Compare(a.Host, b.Host) })
	return out
}

// Bytes is the space every replica's hints take.
func (s *Store) Bytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	for _, r := range s.replicas {
		n += r.size
	}
	return n
}

// Truncate removes host's hints (every replica's for ""), as nodetool
// truncatehints does. A delivery running for it stops at its next page.
func (s *Store) Truncate(host string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for h, r := range s.replicas {
		if host != "" && h != host {
			continue
		}
		errs = append(errs, s.closeWriting(r))
		for _, f := range r.files {
			errs = append(errs, s.opts.FS.Remove(s.path(f.name)))
		}
		delete(s.replicas, h)
	}
	return errors.Join(errs...)
}

// Close closes the files being written.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, r := range s.replicas {
		errs = append(errs, s.closeWriting(r))
	}
	return errors.Join(errs...)
}

// Hint is one hint read back.
type Hint struct {
	Created  time.Time
	GCGrace  time.Duration
	Mutation *mutation.Mutation
	// Legacy hints (the first format) carry no times and never expire.
	Legacy bool
}

// Live reports whether the hint may still be delivered at now: a hint
// older than its table's gc_grace_seconds could bring back data whose
// tombstones are gone.
func (h Hint) Live(now time.Time) bool {
	return h.Legacy || now.Before(h.Created.Add(h.GCGrace))
}

// decodeBody reads a record's body.
func decodeBody(body []byte, legacy bool) (Hint, error) {
	if legacy {
		m, err := mutation.DecodeMutation(body)
		return Hint{Mutation: m, Legacy: true}, err
	}
	if len(body) < bodyHeaderLen {
		return Hint{}, errors.New("hints: a record shorter than its header")
	}
	m, err := mutation.DecodeMutation(body[bodyHeaderLen:])
	if err != nil {
		return Hint{}, err
	}
	return Hint{Created: time.UnixMilli(int64(binary.BigEndian.Uint64(body))),
		GCGrace: time.Duration(binary.BigEndian.Uint32(body[8:])) * time.Second, Mutation: m}, nil
}
