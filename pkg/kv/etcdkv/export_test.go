package etcdkv

// Queued is how many Updates wait for the committer: tests hold the
// committer in one function until the calls they need are queued, so that
// those form the next batch.
func Queued(e *Engine) int { return len(e.queue) }

// MaxBatch is how many update functions one batch takes at most.
const MaxBatch = maxBatch
