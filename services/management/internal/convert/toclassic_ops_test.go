package convert

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// manyOperationsDoc is a Tyk OAS document of n operations, each with
// per-operation middleware of several kinds, and one operation the paths
// do not name.
func manyOperationsDoc(n int) []byte {
	var paths, ops strings.Builder
	for i := range n {
		if i > 0 {
			paths.WriteByte(',')
			ops.WriteByte(',')
		}
		fmt.Fprintf(&paths, `"/r%d/{id}":{"get":{"operationId":"op%d","responses":{}},"post":{"operationId":"w%d","responses":{}}}`, i, i, i)
		fmt.Fprintf(&ops, `"op%d":{"allow":{"enabled":true},"rateLimit":{"enabled":true,"rate":%d,"per":"1s"},"transformRequestHeaders":{"enabled":true,"add":[{"name":"X-N","value":"%d"}]}},"w%d":{"block":{"enabled":%v},"cache":{"enabled":true,"timeout":60}}`, i, i+1, i, i, i%2 == 0)
	}
	return fmt.Appendf(nil, `{"openapi":"3.0.3","info":{"title":"Many","version":"1"},"paths":{%s},"x-tyk-api-gateway":{"info":{"id":"many","name":"Many","state":{"active":true}},"upstream":{"url":"http://u.test/"},"server":{"listenPath":{"value":"/many/","strip":true}},"middleware":{"global":{"contextVariables":{"enabled":true}},"operations":{%s,"unnamed":{"allow":{"enabled":true}}}}}}`, paths.String(), ops.String())
}

// TestOperationsApart: the derivation of a document whose operations are
// decoded one at a time is the derivation of the document decoded whole,
// byte for byte; an operation a whole decode refuses fails it either way;
// spellings the decoder would merge are decoded whole.
func TestOperationsApart(t *testing.T) {
	docs := map[string][]byte{"many": manyOperationsDoc(500),
		// an operationId written with an escape is looked up decoded: the operations are decoded whole
		"escaped": bytes.Replace(manyOperationsDoc(20), []byte(`"op3":{`), []byte(`"o\u00703":{`), 1),
		"twice":   bytes.Replace(manyOperationsDoc(20), []byte(`"op3":{`), []byte(`"op4":{`), 1)}
	files, _ := filepath.Glob("testdata/golden/*.json")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var wrapped struct {
			Base json.RawMessage `json:"base"`
		}
		if json.Unmarshal(b, &wrapped) == nil && len(wrapped.Base) > 0 {
			docs[f] = wrapped.Base
		}
	}
	defer func(n int) { lazyOperationsFrom = n }(lazyOperationsFrom)
	apart := 0
	for name, doc := range docs {
		lazyOperationsFrom = 1 << 62
		whole, errWhole := ToClassic(doc)
		lazyOperationsFrom = 0
		if _, _, ok := operationsApart(doc); ok {
			apart++
		}
		got, err := ToClassic(doc)
		if fmt.Sprint(err) != fmt.Sprint(errWhole) || !bytes.Equal(got, whole) {
			t.Errorf("%s: apart %v %s\nwhole %v %s", name, err, got, errWhole, whole)
		}
	}
	if apart < 5 {
		t.Errorf("only %d documents had their operations decoded apart", apart)
	}
	lazyOperationsFrom = 0
	doc := manyOperationsDoc(3)
	bad := bytes.Replace(doc, []byte(`"rate":2,`), []byte(`"rate":"fast",`), 1)
	if _, err := ToClassic(bad); err == nil {
		t.Error("an operation a whole decode refuses was taken")
	}
	for _, spelling := range []string{`"Middleware":{},"middleware"`, `"middleware":{},"MIDDLEWARE"`} {
		twice := bytes.Replace(doc, []byte(`"middleware"`), []byte(spelling), 1)
		if _, _, ok := operationsApart(twice); ok {
			t.Errorf("%s: operations taken apart", spelling)
		}
	}
	if d := manyOperationsDoc(1000); len(d) < 64<<10 {
		t.Fatalf("the large document is %d bytes", len(d))
	}
}

// TestToClassicWithin: a definition within the limit is ToClassic's, byte
// for byte; ErrLarger only for one longer than the limit, and for a
// document whose allow and block entries alone pass it.
func TestToClassicWithin(t *testing.T) {
	for _, n := range []int{1, 10, 500} {
		doc := manyOperationsDoc(n)
		whole, err := ToClassic(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, limit := range []int{0, 100, len(whole) / 2, len(whole) - 1, len(whole), len(whole) + 1} {
			def, err := ToClassicWithin(doc, limit)
			switch {
			case err == ErrLarger && len(whole) <= limit:
				t.Errorf("n=%d limit %d: ErrLarger for a definition of %d bytes", n, limit, len(whole))
			case err == nil && !bytes.Equal(def, whole):
				t.Errorf("n=%d limit %d: not ToClassic's definition", n, limit)
			case err != nil && err != ErrLarger:
				t.Fatal(err)
			}
		}
		if _, err := ToClassicWithin(doc, 100); n == 500 && err != ErrLarger {
			t.Errorf("n=500: %v, want ErrLarger before the definition is written", err)
		}
	}
}
