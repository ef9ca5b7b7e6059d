package convert

import (
	"bytes"
	"math"
	"slices"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/gatehouse/gatehouse/services/management/internal/rawjson"
)

// A document's per-operation middleware decoded whole costs several times
// its text (issue 32: an import that turns allowList on for 10,000
// operations held 3.7 times the document in the derivation alone). From
// lazyOperationsFrom bytes, the derivation decodes the rest of the document
// without x-tyk-api-gateway.middleware.operations, and then each operation
// on its own when its endpoint is derived: every one is decoded once first,
// in turn, so that one a whole decode would refuse still fails the
// document.

// lazyOperationsFrom is the size of the operations object from which they
// are decoded one at a time (a variable for the tests).
var lazyOperationsFrom = 64 << 10

// rawOperations are the operations' raw values by operationId: where each
// key and value lies in the operations object's text, sorted by key (a map
// of 50,000 operations held 3.7 MB; these positions hold 0.8).
type rawOperations struct {
	text []byte
	at   []operationText
}

// operationText is where one operation's key (without its quotes) and
// value lie in rawOperations.text.
type operationText struct{ key, keyEnd, value, valueEnd int32 }

func (r rawOperations) key(o operationText) []byte { return r.text[o.key:o.keyEnd] }

// operationsApart returns doc without its operations, and them apart, when
// they are large and the decoder would read them from exactly the members
// found here (each key spelled once, in any case, and written without
// escapes); false leaves the document to be decoded whole.
func operationsApart(doc []byte) ([]byte, rawOperations, bool) {
	x := onlyMember(doc, "x-tyk-api-gateway")
	mw := onlyMember(x, "middleware")
	raw := onlyMember(mw, "operations")
	if len(raw) == 0 || len(raw) < lazyOperationsFrom || raw[0] != '{' || len(raw) > math.MaxInt32 {
		return nil, rawOperations{}, false
	}
	ops := rawOperations{text: raw}
	err := rawjson.Each(raw, func(key, value []byte) error {
		// key and value are slices of raw, but for a key with escapes
		k, v := cap(raw)-cap(key), cap(raw)-cap(value)
		if len(key) == 0 || k < 0 || k+len(key) > len(raw) || &raw[k] != &key[0] {
			return rawjson.ErrSyntax
		}
		ops.at = append(ops.at, operationText{int32(k), int32(k + len(key)), int32(v), int32(v + len(value))})
		return nil
	})
	if err != nil {
		return nil, rawOperations{}, false
	}
	slices.SortFunc(ops.at, func(a, b operationText) int { return bytes.Compare(ops.key(a), ops.key(b)) })
	for i, o := range ops.at {
		if i > 0 && bytes.Equal(ops.key(ops.at[i-1]), ops.key(o)) {
			return nil, rawOperations{}, false // a key twice
		}
		if err := json.Unmarshal(raw[o.value:o.valueEnd], new(*xOperation)); err != nil {
			return nil, rawOperations{}, false // the whole decode names the problem
		}
	}
	rest, ok := withoutPathsAndOperations(doc, x)
	if !ok {
		return nil, rawOperations{}, false
	}
	return rest, ops, true
}

// withoutPathsAndOperations is doc without its members named paths, which
// the derivation's decoder skips (it reads the operations' places from
// doc's text), and x, its one x-tyk-api-gateway member, without
// middleware.operations: what is left for the decoder, instead of a copy
// of the whole document for it to copy again.
func withoutPathsAndOperations(doc, x []byte) ([]byte, bool) {
	xRest, removed, err := rawjson.Delete(x, "middleware", "operations")
	if err != nil || !removed {
		return nil, false
	}
	size := len(doc) - len(x) + len(xRest)
	rawjson.Each(doc, func(key, value []byte) error {
		if string(key) == "paths" {
			size -= len(value)
		}
		return nil
	})
	rest := make([]byte, 0, size)
	rest = append(rest, '{')
	err = rawjson.Each(doc, func(key, value []byte) error {
		switch string(key) {
		case "paths":
			return nil
		case "x-tyk-api-gateway": // the only member of that name in any case
			value = xRest
		}
		if len(rest) > 1 {
			rest = append(rest, ',')
		}
		rest = append(rawjson.AppendQuote(rest, string(key)), ':')
		rest = append(rest, value...)
		return nil
	})
	return append(rest, '}'), err == nil
}

// onlyMember is the value of the one member of obj named name (in any
// case, as a decoder matches struct fields), spelled exactly so; nil when
// there is none, or more than one, or another spelling.
func onlyMember(obj []byte, name string) []byte {
	var found []byte
	n := 0
	rawjson.Each(obj, func(key, value []byte) error {
		if strings.EqualFold(string(key), name) {
			n++
			if string(key) == name {
				found = value
			}
		}
		return nil
	})
	if n != 1 {
		return nil
	}
	return found
}

// operation is the operation named id, decoded; nil when there is none.
func (r rawOperations) operation(id string) *xOperation {
	i, ok := slices.BinarySearchFunc(r.at, id, func(o operationText, id string) int {
		return strings.Compare(string(r.key(o)), id)
	})
	if !ok {
		return nil
	}
	var op *xOperation
	json.Unmarshal(r.text[r.at[i].value:r.at[i].valueEnd], &op) // checked by operationsApart
	return op
}
