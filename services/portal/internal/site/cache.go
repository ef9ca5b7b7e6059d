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
	size int
}

func newCache(budget int) *cache {
	return &cache{budget: budget, order: list.New(), entries: map[renderKey]*list.Element{}}
}

func keyOf(kind byte, id uint32, at time.Time) renderKey {
	return renderKey{kind: kind, id: id, at: at.UnixNano()}
}

func (c *cache) get(k renderKey) (Body, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	if !ok {
		return Body{}, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*entry).body, true
}

// put remembers b under k; a body larger than the whole budget is not kept.
func (c *cache) put(k renderKey, b Body) {
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
	c.entries[k] = c.order.PushFront(&entry{key: k, body: b, size: size})
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
