// Package bodylimit is the table of request size limits per operation
// (CONTRACT §0 "Resource bounds"): Large for the operations that carry an API
// definition, an OAS document, a migration request or a page's content,
// Small for every other. The REST facade answers 413 over it before reading
// the body, the gRPC server ResourceExhausted over it, measured on the
// decompressed message.
package bodylimit

import "strings"

// The two limits.
const (
	Small = 1 << 20
	Large = 16 << 20
)

// Message is the text of the refusal, on REST and gRPC alike.
const Message = "request body too large"

// Table gives each operation its limit; the zero Table gives Small to all.
type Table struct {
	large map[string]bool // short method names, such as CreateAPI
}

// New returns a table in which the named methods (short names, such as
// CreateAPI, or full names /pkg.Service/Method) take Large.
func New(large ...string) Table {
	t := Table{large: map[string]bool{}}
	for _, m := range large {
		t.large[short(m)] = true
	}
	return t
}

// Of is the limit of method, given by its short or full name.
func (t Table) Of(method string) int64 {
	if t.large[short(method)] {
		return Large
	}
	return Small
}

func short(method string) string {
	if i := strings.LastIndexByte(method, '/'); i >= 0 {
		return method[i+1:]
	}
	return method
}
