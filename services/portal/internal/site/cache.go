package site

import (
	"container/list"
	"sync"
	"time"
)

// renderKey names one rendering: a page (or a product's own content) as it
// was at one UpdatedAt. Every change through the API moves UpdatedAt, so an
// entry never goes stale; old versions simply age out.
type renderKey struct {
	kind byte // 'p' page, 'P' product
	id   uint32
	at   int64 // UpdatedAt, Unix nanoseconds
}

// cache keeps the most recently used renderings within a byte budget.
type cache struct {
	mu      sync.Mutex
	budget  int
	size    int
	order   *list.List // front: most recently used; values are *entry
	entries map[renderKey]*list.Element
}

type entry struct {
	key  renderKey
	body Body
	err  error // the rendering failed: kept so that it is not tried again per request
	size int
}

func newCache(budget int) *cache {
	return &cache{budget: budget, order: list.New(), entries: map[renderKey]*list.Element{}}
}

func keyOf(kind byte, id uint32, at time.Time) renderKey {
	return renderKey{kind: kind, id: id, at: at.UnixNano()}
}

// get returns the rendering kept under k, or the error it failed with.
func (c *cache) get(k renderKey) (Body, error, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	if !ok {
		return Body{}, nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*entry).body, e.Value.(*entry).err, true
}

// put remembers b, or the error err the rendering failed with, under k; a
// body larger than the whole budget is not kept.
func (c *cache) put(k renderKey, b Body, err error) {
	size := len(b.HTML) + 64
	for _, h := range b.Headings {
		size += len(h.ID) + len(h.Text) + 32
	}
	if size > c.budget {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[k]; ok {
		c.order.MoveToFront(e)
		return
	}
	c.entries[k] = c.order.PushFront(&entry{key: k, body: b, err: err, size: size})
	c.size += size
	for c.size > c.budget {
		old := c.order.Back()
		e := old.Value.(*entry)
		c.order.Remove(old)
		delete(c.entries, e.key)
		c.size -= e.size
	}
}

// len reports how many renderings are kept.
func (c *cache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// flight runs one read per key at a time: callers that ask while it runs
// get its result.
type flight struct {
	mu    sync.Mutex
	calls map[renderKey]*call
}

type call struct {
	done chan struct{}
	body Body
	err  error
}

func (f *flight) do(k renderKey, read func() (Body, error)) (Body, error) {
	f.mu.Lock()
	if c, ok := f.calls[k]; ok {
		f.mu.Unlock()
		<-c.done
		return c.body, c.err
	}
	if f.calls == nil {
		f.calls = map[renderKey]*call{}
	}
	c := &call{done: make(chan struct{})}
	f.calls[k] = c
	f.mu.Unlock()
	c.body, c.err = read()
	f.mu.Lock()
	delete(f.calls, k)
	f.mu.Unlock()
	close(c.done)
	return c.body, c.err
}
