package oasimport

// text is JSON written in blocks, each twice the size of the one before
// from 256 bytes up to textBlock (64 KiB), so a small text is small. An answer is
// written into one, and copied once into a slice of its exact size at the
// end (bytes): a buffer grown by doubling holds its old and new array at
// once while it grows, and its last growth leaves up to half of it unused,
// so the answer of a large import cost up to three times its size.
type text struct{ blocks [][]byte }

const textBlock = 64 << 10

func (t *text) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		last := len(t.blocks) - 1
		if last < 0 || len(t.blocks[last]) == cap(t.blocks[last]) {
			size := 256
			if last >= 0 {
				size = min(textBlock, max(size, 2*cap(t.blocks[last])))
			}
			t.blocks = append(t.blocks, make([]byte, 0, size))
			last++
		}
		k := min(len(p), cap(t.blocks[last])-len(t.blocks[last]))
		t.blocks[last] = append(t.blocks[last], p[:k]...)
		p = p[k:]
	}
	return n, nil
}

func (t *text) WriteByte(c byte) error {
	t.Write([]byte{c})
	return nil
}

// unwrite drops the last byte written.
func (t *text) unwrite() {
	for last := len(t.blocks) - 1; last >= 0; last-- {
		if n := len(t.blocks[last]); n > 0 {
			t.blocks[last] = t.blocks[last][:n-1]
			return
		}
	}
}

// Len is how many bytes t holds.
func (t *text) Len() int {
	n := 0
	for _, b := range t.blocks {
		n += len(b)
	}
	return n
}

// reset empties t, keeping its first block to write into again.
func (t *text) reset() {
	if len(t.blocks) > 0 {
		t.blocks = t.blocks[:1]
		t.blocks[0] = t.blocks[0][:0]
	}
}

// take appends what u holds to t, without copying it; u is left empty.
func (t *text) take(u *text) {
	t.blocks = append(t.blocks, u.blocks...)
	u.blocks = nil
}

// bytes is what t holds in one slice; t is left empty, each block let go
// once copied.
func (t *text) bytes() []byte {
	out := make([]byte, 0, t.Len())
	for i, b := range t.blocks {
		out = append(out, b...)
		t.blocks[i] = nil
	}
	t.blocks = nil
	return out
}

// join is what t holds in one slice, t left as it was.
func (t *text) join() []byte {
	out := make([]byte, 0, t.Len())
	for _, b := range t.blocks {
		out = append(out, b...)
	}
	return out
}
