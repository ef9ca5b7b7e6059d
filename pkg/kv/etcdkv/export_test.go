package etcdkv

// Queued is how many Updates wait for the committer: tests hold the
// committer in one function until the calls they need are queued, so that
// those form the next batch.
func Queued(e *Engine) int { return e.queue.Len() }

// MaxBatch is how many update functions one batch takes at most.
const MaxBatch = maxBatch

// Reruns is how many batches ran again after a failed compare.
func Reruns(e *Engine) int64 { return e.reruns.Load() }

// SerialReads is how many reads batches made of etcd while running their
// functions one after another (not counting the prefetch).
func SerialReads(e *Engine) int64 { return e.serialReads.Load() }

// CacheMisses is how many Views read etcd because the watch cache had not
// reached etcd's revision in time.
func CacheMisses(e *Engine) int64 { return e.cacheMisses.Load() }

// RevisionReads is how many quorum reads of etcd's revision the watch cache
// made for Views.
func RevisionReads(e *Engine) int64 { return e.cache.revisionReads.Load() }
