package convert

import (
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

// rawOperations are the operations' raw values by operationId, slices of
// the document.
type rawOperations map[string][]byte

// operationsApart returns doc without its operations, and them apart, when
// they are large and the decoder would read them from exactly the members
// found here (each key spelled once, in any case); false leaves the
// document to be decoded whole.
func operationsApart(doc []byte) ([]byte, rawOperations, bool) {
	x := onlyMember(doc, "x-tyk-api-gateway")
	mw := onlyMember(x, "middleware")
	raw := onlyMember(mw, "operations")
	if len(raw) == 0 || len(raw) < lazyOperationsFrom || raw[0] != '{' {
		return nil, nil, false
	}
	ops := rawOperations{}
	err := rawjson.Each(raw, func(key, value []byte) error {
		if _, twice := ops[string(key)]; twice {
			return rawjson.ErrSyntax
		}
		ops[string(key)] = value
		return nil
	})
	if err != nil {
		return nil, nil, false
	}
	for _, v := range ops {
		if err := json.Unmarshal(v, new(*xOperation)); err != nil {
			return nil, nil, false // the whole decode names the problem
		}
	}
	rest, removed, err := rawjson.Delete(doc, "x-tyk-api-gateway", "middleware", "operations")
	if err != nil || !removed {
		return nil, nil, false
	}
	return rest, ops, true
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
	v, ok := r[id]
	if !ok {
		return nil
	}
	var op *xOperation
	json.Unmarshal(v, &op) // checked by operationsApart
	return op
}
