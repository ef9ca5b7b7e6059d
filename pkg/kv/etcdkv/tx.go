package etcdkv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gatehouse/gatehouse/pkg/kv"
)

// errRevisionGone: the revision a transaction reads at was compacted away
// meanwhile. Update runs the function again; View reports a conflict.
var errRevisionGone = fmt.Errorf("%w: revision compacted during the transaction", kv.ErrConflict)

// tx is both transactions: a View leaves writable false. A writable tx is
// the state of one batch (batch.go): the update functions of the batch run
// on it one after another, each through its own journal.
type tx struct {
	e        *Engine
	ctx      context.Context // the running function's caller's
	writable bool
	rev      int64 // fixed by the first read; 0 before it

	writes    map[string]*write     // kv key -> buffered write
	seqWrites map[string]uint64     // sequence name -> new value
	keyReads  map[string]int64      // etcd key -> ModRevision seen (0: absent)
	ranges    map[rangeRead]bool    // kv-space ranges scanned or counted
	cache     map[string]cachedRead // etcd key -> what it held at rev (writable only)
	shared    *sharedReads          // the cache of a batch's speculative runs (prefetch), when set
	snap      *snapshot             // the watch cache at rev: records are read there (writable only)

	j    *journal // the running function's, to undo it alone; nil in View
	down error    // the first read that found etcd unavailable
}

// cachedRead is a key as read at the transaction's revision, which no later
// write changes: the functions of a batch read each key from etcd once.
type cachedRead struct {
	value  []byte
	modRev int64
}

// sharedReads is the read cache the speculative runs of a batch's
// functions fill together (prefetch), each from its own goroutine.
type sharedReads struct {
	mu       sync.Mutex
	m        map[string]cachedRead
	inflight map[string]chan struct{} // closed when the fetch of a key ends
}

// journal is what one function of a batch changed in the shared state.
type journal struct {
	writes   map[string]*write // kv key -> buffered write before (nil: none)
	seqs     map[string]seqPrior
	keyReads []string    // keys this function read first
	ranges   []rangeRead // ranges this function read first
}

type seqPrior struct {
	value uint64
	set   bool
}

// begin starts a journal for the next function, whose reads honour ctx.
func (t *tx) begin(ctx context.Context) {
	t.ctx = ctx
	t.j = &journal{}
}

// undo takes back everything the current function changed: its writes, and
// the reads it added to the compares. Cached values stay: they hold at rev.
func (t *tx) undo() {
	for k, w := range t.j.writes {
		if w == nil {
			delete(t.writes, k)
		} else {
			t.writes[k] = w
		}
	}
	for name, p := range t.j.seqs {
		if p.set {
			t.seqWrites[name] = p.value
		} else {
			delete(t.seqWrites, name)
		}
	}
	for _, k := range t.j.keyReads {
		delete(t.keyReads, k)
	}
	for _, r := range t.j.ranges {
		delete(t.ranges, r)
	}
	t.j = nil
}

// rememberWrite journals key's buffered write before its first change.
func (t *tx) rememberWrite(key string) {
	if t.j == nil {
		return
	}
	if t.j.writes == nil {
		t.j.writes = make(map[string]*write)
	}
	if _, ok := t.j.writes[key]; !ok {
		t.j.writes[key] = t.writes[key]
	}
}

type write struct {
	value []byte
	del   bool
}

// rangeRead is a scanned range [from, end) of the kv space (end "" means
// unbounded) and the directory whose guard covers deletes in it.
type rangeRead struct{ from, end, dir string }

func randInt64(n int64) int64 {
	if n <= 0 {
		return 0
	}
	return rand.Int64N(n)
}

// callCtx bounds one call to etcd and makes it fail at once on a member
// without a leader instead of waiting there.
func (e *Engine) callCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(clientv3.WithRequireLeader(ctx), e.cfg.RequestTimeout)
}

// mapErr turns a client error into the kv sentinels. parent is the caller's
// context: when it ended, the caller gave up and gets its context's error;
// otherwise a deadline means etcd did not answer in time, unavailability.
func (e *Engine) mapErr(parent context.Context, err error) error {
	if err == nil {
		return nil
	}
	switch {
	case errors.Is(err, rpctypes.ErrCompacted):
		return errRevisionGone
	case errors.Is(err, rpctypes.ErrNoSpace):
		return fmt.Errorf("%w (etcd NOSPACE alarm)", kv.ErrNoSpace)
	case errors.Is(err, rpctypes.ErrTooManyOps):
		return fmt.Errorf("%w: too many operations for one etcd transaction (--max-txn-ops)", kv.ErrTooLarge)
	case errors.Is(err, rpctypes.ErrRequestTooLarge):
		return fmt.Errorf("%w: the request passed etcd's --max-request-bytes", kv.ErrTooLarge)
	}
	if s, ok := status.FromError(err); ok && s.Code() == codes.ResourceExhausted {
		return fmt.Errorf("%w: the request passed the etcd client's message limit (--max-request-bytes)", kv.ErrTooLarge)
	}
	if parent.Err() != nil {
		return parent.Err()
	}
	var ee rpctypes.EtcdError
	if errors.As(err, &ee) && ee.Code() != codes.Unavailable && ee.Code() != codes.DeadlineExceeded {
		return fmt.Errorf("etcd: %w", err)
	}
	return fmt.Errorf("%w: %v", kv.ErrUnavailable, err)
}

// readErr maps a read's error and notes when etcd did not answer: the
// batch then stops (the next function's reads would wait as long).
func (t *tx) readErr(err error) error {
	err = t.e.mapErr(t.ctx, err)
	if errors.Is(err, kv.ErrUnavailable) && t.down == nil {
		t.down = err
	}
	return err
}

func (t *tx) get(key string) (value []byte, modRev int64, err error) {
	if t.snap != nil && strings.HasPrefix(key, t.e.data) {
		if it, ok := t.snap.tree.Get(cached{key: key[len(t.e.data):]}); ok {
			return it.value, it.modRev, nil
		}
		return nil, 0, nil
	}
	if t.shared != nil {
		c, err := t.shared.get(key, t.fetch)
		return c.value, c.modRev, err
	}
	if c, ok := t.cache[key]; ok {
		return c.value, c.modRev, nil
	}
	if t.writable {
		t.e.serialReads.Add(1)
	}
	c, err := t.fetch(key)
	if err != nil {
		return nil, 0, err
	}
	if t.writable {
		if t.cache == nil {
			t.cache = make(map[string]cachedRead)
		}
		t.cache[key] = c
	}
	return c.value, c.modRev, nil
}

// fetch reads key from etcd at the transaction's revision; the first read
// of a transaction is linearizable and fixes that revision.
func (t *tx) fetch(key string) (cachedRead, error) {
	ctx, cancel := t.e.callCtx(t.ctx)
	defer cancel()
	var opts []clientv3.OpOption
	if t.rev != 0 {
		opts = append(opts, clientv3.WithRev(t.rev))
	}
	resp, err := t.e.cli.Get(ctx, key, opts...)
	if err != nil {
		return cachedRead{}, t.readErr(err)
	}
	if t.rev == 0 {
		t.rev = resp.Header.Revision
	}
	if len(resp.Kvs) == 0 {
		return cachedRead{}, nil
	}
	return cachedRead{value: resp.Kvs[0].Value, modRev: resp.Kvs[0].ModRevision}, nil
}

// get returns key from the cache, fetched once however many runs ask for it
// at the same time (the creates of a batch all read one sequence).
func (s *sharedReads) get(key string, fetch func(string) (cachedRead, error)) (cachedRead, error) {
	s.mu.Lock()
	for {
		if c, ok := s.m[key]; ok {
			s.mu.Unlock()
			return c, nil
		}
		wait, busy := s.inflight[key]
		if !busy {
			break
		}
		s.mu.Unlock()
		<-wait
		s.mu.Lock()
	}
	wait := make(chan struct{})
	s.inflight[key] = wait
	s.mu.Unlock()
	c, err := fetch(key)
	s.mu.Lock()
	if err == nil {
		s.m[key] = c
	}
	delete(s.inflight, key)
	close(wait)
	s.mu.Unlock()
	return c, err
}

func (t *tx) noteKeyRead(key string, modRev int64) {
	if !t.writable {
		return
	}
	if t.keyReads == nil {
		t.keyReads = make(map[string]int64)
	}
	if _, seen := t.keyReads[key]; !seen {
		t.keyReads[key] = modRev
		if t.j != nil {
			t.j.keyReads = append(t.j.keyReads, key)
		}
	}
}

func (t *tx) noteRange(r rangeRead) {
	if !t.writable {
		return
	}
	if t.ranges == nil {
		t.ranges = make(map[rangeRead]bool)
	}
	if !t.ranges[r] {
		t.ranges[r] = true
		if t.j != nil {
			t.j.ranges = append(t.j.ranges, r)
		}
	}
}

// Get reads a record.
func (t *tx) Get(key []byte) ([]byte, error) {
	if w, ok := t.writes[string(key)]; ok {
		if w.del {
			return nil, nil
		}
		return w.value, nil
	}
	full := t.e.data + string(key)
	v, rev, err := t.get(full)
	if err != nil {
		return nil, err
	}
	t.noteKeyRead(full, rev)
	return v, nil
}

// bounds returns the kv-space range of keys under prefix at or after start.
func bounds(prefix, start []byte) (from, end string) {
	from = string(prefix)
	if bytes.Compare(start, prefix) > 0 {
		from = string(start)
	}
	return from, prefixEnd(string(prefix))
}

// prefixEnd is the first string after every string starting with p, "" when
// there is none (p empty or all 0xff).
func prefixEnd(p string) string {
	b := []byte(p)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1])
		}
	}
	return ""
}

// dirOf is key cut after its last '/' ("" for a key without one).
func dirOf(key string) string {
	return key[:strings.LastIndexByte(key, '/')+1]
}

// parentDir is the directory above dir ("" above "" too).
func parentDir(dir string) string {
	if dir == "" {
		return ""
	}
	return dirOf(dir[:len(dir)-1])
}

// etcdEnd maps a kv-space range end to the etcd key space.
func (t *tx) etcdEnd(end string) string {
	if end == "" {
		return prefixEnd(t.e.data)
	}
	return t.e.data + end
}

// Scan pages through the range at the transaction's revision, merging the
// transaction's own buffered writes in key order.
func (t *tx) Scan(prefix, start []byte, fn func(key, value []byte) error) error {
	from, end := bounds(prefix, start)
	t.noteRange(rangeRead{from: from, end: end, dir: dirOf(string(prefix))})
	own := t.ownWrites(from, end)
	// emitOwn passes on the buffered writes before key (all of them when
	// last), skipping deletes.
	emitOwn := func(key string, last bool) error {
		for len(own) > 0 && (last || own[0] < key) {
			k := own[0]
			own = own[1:]
			if w := t.writes[k]; !w.del {
				if err := fn([]byte(k), w.value); err != nil {
					return err
				}
			}
		}
		return nil
	}
	err := t.pages(from, end, false, func(key string, value []byte) error {
		if err := emitOwn(key, false); err != nil {
			return err
		}
		if len(own) > 0 && own[0] == key {
			// The buffered write replaces the stored value.
			own = own[1:]
			if w := t.writes[key]; !w.del {
				return fn([]byte(key), w.value)
			}
			return nil
		}
		return fn([]byte(key), value)
	})
	if err == nil {
		err = emitOwn("", true)
	}
	if errors.Is(err, kv.ErrStop) {
		return nil
	}
	return err
}

// ownWrites lists the buffered keys in [from, end), sorted.
func (t *tx) ownWrites(from, end string) []string {
	var keys []string
	for k := range t.writes {
		if k >= from && (end == "" || k < end) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// pages calls fn for each stored key in [from, end) of the kv space at the
// transaction's revision, pageSize keys per request.
func (t *tx) pages(from, end string, keysOnly bool, fn func(key string, value []byte) error) error {
	if t.snap != nil {
		return snapTx{t.snap}.walk(from, end, fn)
	}
	etcdFrom, etcdEnd := t.e.data+from, t.etcdEnd(end)
	for {
		ctx, cancel := t.e.callCtx(t.ctx)
		opts := []clientv3.OpOption{clientv3.WithRange(etcdEnd), clientv3.WithLimit(pageSize)}
		if t.rev != 0 {
			opts = append(opts, clientv3.WithRev(t.rev))
		}
		if keysOnly {
			opts = append(opts, clientv3.WithKeysOnly())
		}
		resp, err := t.e.cli.Get(ctx, etcdFrom, opts...)
		cancel()
		if err != nil {
			return t.readErr(err)
		}
		if t.rev == 0 {
			t.rev = resp.Header.Revision
		}
		for _, item := range resp.Kvs {
			if err := fn(string(item.Key[len(t.e.data):]), item.Value); err != nil {
				return err
			}
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return nil
		}
		etcdFrom = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

// Count counts the keys under prefix: etcd counts when the transaction wrote
// nothing there, otherwise the keys are walked with the writes merged.
func (t *tx) Count(prefix []byte) (int, error) {
	from, end := bounds(prefix, nil)
	if len(t.ownWrites(from, end)) > 0 {
		n := 0
		err := t.Scan(prefix, nil, func(_, _ []byte) error { n++; return nil })
		return n, err
	}
	t.noteRange(rangeRead{from: from, end: end, dir: dirOf(string(prefix))})
	if t.snap != nil {
		n := 0
		err := snapTx{t.snap}.walk(from, end, func(string, []byte) error { n++; return nil })
		return n, err
	}
	ctx, cancel := t.e.callCtx(t.ctx)
	defer cancel()
	opts := []clientv3.OpOption{clientv3.WithRange(t.etcdEnd(end)), clientv3.WithCountOnly()}
	if t.rev != 0 {
		opts = append(opts, clientv3.WithRev(t.rev))
	}
	resp, err := t.e.cli.Get(ctx, t.e.data+from, opts...)
	if err != nil {
		return 0, t.readErr(err)
	}
	if t.rev == 0 {
		t.rev = resp.Header.Revision
	}
	return int(resp.Count), nil
}

// Put buffers a write.
func (t *tx) Put(key, value []byte) error {
	if t.writes == nil {
		t.writes = make(map[string]*write)
	}
	t.rememberWrite(string(key))
	t.writes[string(key)] = &write{value: value}
	return nil
}

// Delete buffers a delete.
func (t *tx) Delete(key []byte) error {
	if t.writes == nil {
		t.writes = make(map[string]*write)
	}
	t.rememberWrite(string(key))
	t.writes[string(key)] = &write{del: true}
	return nil
}

// NextSeq reads the sequence (a key read like any other, so two concurrent
// transactions advancing it conflict) and buffers its new value.
func (t *tx) NextSeq(name string) (uint64, error) {
	cur, ok := t.seqWrites[name]
	if !ok {
		full := t.e.seqs + name
		v, rev, err := t.get(full)
		if err != nil {
			return 0, err
		}
		t.noteKeyRead(full, rev)
		if v != nil {
			if cur, err = strconv.ParseUint(string(v), 10, 64); err != nil {
				return 0, fmt.Errorf("etcd: sequence %q holds %q: %w", name, v, err)
			}
		}
	}
	if cur == math.MaxUint64 {
		return 0, kv.ErrSeqExhausted
	}
	if t.seqWrites == nil {
		t.seqWrites = make(map[string]uint64)
	}
	if t.j != nil {
		if t.j.seqs == nil {
			t.j.seqs = make(map[string]seqPrior)
		}
		if _, ok := t.j.seqs[name]; !ok {
			prior, set := t.seqWrites[name]
			t.j.seqs[name] = seqPrior{value: prior, set: set}
		}
	}
	t.seqWrites[name] = cur + 1
	return cur + 1, nil
}

// opOverhead bounds the protobuf framing of one operation or compare (field
// tags, lengths, revisions); headerOverhead the rest of the request.
const (
	opOverhead     = 32
	headerOverhead = 1024
)

// fits reports with kv.ErrTooLarge, naming the limit, when the buffered
// writes and the compares on the reads would not pass as one etcd Txn.
func (t *tx) fits() error {
	nops, size := t.measureOps()
	if nops > t.e.cfg.MaxTxnOps {
		return fmt.Errorf("%w: %d operations in one transaction exceed etcd's --max-txn-ops (%d)",
			kv.ErrTooLarge, nops, t.e.cfg.MaxTxnOps)
	}
	_, cmpSize := t.compares()
	if size += cmpSize + headerOverhead; size > t.e.cfg.MaxRequestBytes {
		return fmt.Errorf("%w: a transaction of about %d bytes exceeds etcd's --max-request-bytes (%d bytes)",
			kv.ErrTooLarge, size, t.e.cfg.MaxRequestBytes)
	}
	return nil
}

// commit sends the buffered writes guarded by compares on the reads, bounded
// by ctx. It reports false when a compare failed (another writer came first).
func (t *tx) commit(ctx context.Context) (bool, error) {
	if len(t.writes) == 0 && len(t.seqWrites) == 0 {
		return true, nil // read-only: nothing to make durable
	}
	if err := t.fits(); err != nil {
		return false, err
	}
	ops, size := t.ops()
	cmps, cmpSize := t.compares()
	size += cmpSize + headerOverhead
	// A large request takes longer to write to the members' logs.
	cctx, cancel := context.WithTimeout(clientv3.WithRequireLeader(ctx),
		t.e.cfg.RequestTimeout+time.Duration(size/(256*1024))*time.Second)
	defer cancel()
	resp, err := t.e.cli.Txn(cctx).If(cmps...).Then(ops...).Commit()
	if err != nil {
		return false, t.e.mapErr(ctx, err)
	}
	return resp.Succeeded, nil
}

// measureOps counts the operations ops would list and estimates their size,
// without building them.
func (t *tx) measureOps() (n, size int) {
	guards := make(map[string]bool)
	for k, w := range t.writes {
		n++
		size += len(t.e.data) + len(k) + len(w.value) + opOverhead
		if w.del {
			for dir := dirOf(k); ; dir = parentDir(dir) {
				guards[dir] = true
				if dir == "" {
					break
				}
			}
		}
	}
	for dir := range guards {
		n++
		size += len(t.e.guards) + len(dir) + opOverhead
	}
	for name, v := range t.seqWrites {
		n++
		size += len(t.e.seqs) + len(name) + len(strconv.FormatUint(v, 10)) + opOverhead
	}
	return n, size
}

// ops lists the writes, with one guard write per directory above each
// deleted key, and estimates their encoded size.
func (t *tx) ops() ([]clientv3.Op, int) {
	var ops []clientv3.Op
	size := 0
	guards := make(map[string]bool)
	for _, k := range slices.Sorted(maps.Keys(t.writes)) {
		w := t.writes[k]
		full := t.e.data + k
		if !w.del {
			ops = append(ops, clientv3.OpPut(full, string(w.value)))
			size += len(full) + len(w.value) + opOverhead
			continue
		}
		ops = append(ops, clientv3.OpDelete(full))
		size += len(full) + opOverhead
		for dir := dirOf(k); ; dir = parentDir(dir) {
			guards[dir] = true
			if dir == "" {
				break
			}
		}
	}
	for _, dir := range slices.Sorted(maps.Keys(guards)) {
		ops = append(ops, clientv3.OpPut(t.e.guards+dir, ""))
		size += len(t.e.guards) + len(dir) + opOverhead
	}
	for _, name := range slices.Sorted(maps.Keys(t.seqWrites)) {
		v := strconv.FormatUint(t.seqWrites[name], 10)
		ops = append(ops, clientv3.OpPut(t.e.seqs+name, v))
		size += len(t.e.seqs) + len(name) + len(v) + opOverhead
	}
	return ops, size
}

// compares turns the reads into compares; past the operation limit they are
// coarsened to directories (see the package comment).
func (t *tx) compares() ([]clientv3.Cmp, int) {
	if t.rev == 0 {
		return nil, 0 // nothing was read
	}
	var cmps []clientv3.Cmp
	size := 0
	rangeCmp := func(from, end string) {
		cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(from).WithRange(end), "<", t.rev+1))
		size += len(from) + len(end) + opOverhead
	}
	guardCmp := func(dir string) {
		cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(t.e.guards+dir), "<", t.rev+1))
		size += len(t.e.guards) + len(dir) + opOverhead
	}
	guards := make(map[string]bool)
	for r := range t.ranges {
		guards[r.dir] = true
	}
	if len(t.keyReads)+len(t.ranges)+len(guards) <= t.e.cfg.MaxTxnOps {
		for _, k := range slices.Sorted(maps.Keys(t.keyReads)) {
			cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(k), "=", t.keyReads[k]))
			size += len(k) + opOverhead
		}
		for r := range t.ranges {
			rangeCmp(t.e.data+r.from, t.etcdEnd(r.end))
		}
		for _, dir := range slices.Sorted(maps.Keys(guards)) {
			guardCmp(dir)
		}
		return cmps, size
	}
	// Coarsen: every read becomes its directory (a sequence read becomes
	// the whole sequence space: sequences are never deleted).
	dirs := make(map[string]bool)
	seqs := false
	for k := range t.keyReads {
		if strings.HasPrefix(k, t.e.seqs) {
			seqs = true
		} else {
			dirs[dirOf(k[len(t.e.data):])] = true
		}
	}
	for r := range t.ranges {
		dirs[r.dir] = true
	}
	for {
		dirs = outermost(dirs)
		if 2*len(dirs)+1 <= t.e.cfg.MaxTxnOps {
			break
		}
		up := make(map[string]bool)
		for d := range dirs {
			up[parentDir(d)] = true
		}
		dirs = up
	}
	if seqs {
		rangeCmp(t.e.seqs, prefixEnd(t.e.seqs))
	}
	for _, d := range slices.Sorted(maps.Keys(dirs)) {
		rangeCmp(t.e.data+d, t.etcdEnd(prefixEnd(d)))
		guardCmp(d)
	}
	return cmps, size
}

// outermost drops the directories that lie inside another one of the set.
func outermost(dirs map[string]bool) map[string]bool {
	out := make(map[string]bool)
	for d := range dirs {
		inside := false
		for p := d; p != ""; {
			p = parentDir(p)
			if dirs[p] && p != d {
				inside = true
				break
			}
		}
		if !inside {
			out[d] = true
		}
	}
	return out
}
