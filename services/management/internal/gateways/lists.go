package gateways

import (
	"bufio"
	"net/http"

	"github.com/gatehouse/gatehouse/pkg/metrics"
	"github.com/gatehouse/gatehouse/services/management/internal/gwfields"
	"github.com/gatehouse/gatehouse/services/management/internal/rawjson"
	"github.com/gatehouse/gatehouse/services/management/internal/store"
)

// streamBuffer is how much of a list is gathered before it goes out: the
// first bytes leave after this much, and a store failure before them is
// still answered 503.
const streamBuffer = 64 << 10

// countingWriter tells whether anything reached the client yet.
type countingWriter struct {
	w http.ResponseWriter
	n int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	if c.n == 0 {
		c.w.Header().Set("Content-Type", "application/json")
	}
	n, err := c.w.Write(p)
	c.n += n
	return n, err
}

// stream answers `{"Status":"OK","Message":[item,..],"Nonce":".."}`, the
// items written by each from one store snapshot. A store failure before
// anything was sent is a 503; after, the answer ends early (a complete HTTP
// response holding incomplete JSON): the gateway fails to decode it and
// keeps what it loaded, whereas a dropped connection would send it into a
// re-registration that can stop its reloads (see the package comment).
func (s *Server) stream(w http.ResponseWriter, r *http.Request, what string, each func(tx *store.Tx, item func([]byte) error) error) {
	cw := &countingWriter{w: w}
	bw := bufio.NewWriterSize(cw, streamBuffer)
	bw.WriteString(`{"Status":"OK","Message":[`)
	first := true
	err := s.store.View(r.Context(), func(tx *store.Tx) error {
		return each(tx, func(item []byte) error {
			if !first {
				bw.WriteByte(',')
			}
			first = false
			_, err := bw.Write(item)
			return err
		})
	})
	if err != nil {
		s.log.Warn("gateway list failed", "list", what, "err", err)
		if cw.n == 0 {
			writeJSON(w, http.StatusServiceUnavailable, []byte(`{"Status":"Error","Message":"store unavailable","Meta":null}`))
			return
		}
		bw.Flush()
		return
	}
	bw.WriteString(`],"Nonce":"` + nonce() + `"}`)
	bw.Flush()
}

// apis serves GET /system/apis: every active classic API as stored with
// "oas":null, and every active Tyk OAS API (staged copies and versions
// included) as the classic definition derived from its document, with
// is_oas true, beside the document. A gateway serves whatever it is sent,
// so an inactive API is left out (inactive says which). The derived definition is the one kept with the
// record when it was written (store.API.Derived); only a record without
// one is derived here.
func (s *Server) apis(w http.ResponseWriter, r *http.Request) {
	var item []byte
	s.stream(w, r, "apis", func(tx *store.Tx, emit func([]byte) error) error {
		return tx.EachAPI(func(a store.API) error {
			if inactive(a) {
				return nil
			}
			item = item[:0]
			item = append(item, `{"api_definition":`...)
			if a.Kind == store.Classic {
				if !s.typedAPI(a) {
					return nil
				}
				item = append(item, a.Doc...)
				item = append(item, `,"oas":null}`...)
				return emit(item)
			}
			def, ok := a.Derived, len(a.Derived) > 0 && s.records.Current(a)
			if !ok {
				def, ok = s.derived(a)
			}
			if !ok {
				return nil
			}
			item = append(item, def...)
			item = append(item, `,"oas":`...)
			item = append(item, a.Doc...)
			item = append(item, '}')
			return emit(item)
		})
	})
}

// inactive tells whether an API is switched off: classic `active: false`,
// or a Tyk OAS document's x-tyk-api-gateway.info.state.active false (what
// Tyk's OAS.ExtractTo reads as the classic active). Only an explicit false
// switches an API off: a classic definition without `active` is sent, as
// it always was.
func inactive(a store.API) bool {
	var v []byte
	if a.Kind == store.Classic {
		v, _, _ = rawjson.Lookup(a.Doc, "active")
	} else {
		v, _, _ = rawjson.Lookup(a.Doc, "x-tyk-api-gateway", "info", "state", "active")
	}
	return string(v) == "false"
}

// derived is the classic definition of an OAS API whose record keeps none
// of this build's (written before the store kept them, by another build
// until Rederive rewrites it, or over MaxDerived). An API whose document
// does not derive is left out (the gateway would skip it as invalid) and
// logged.
func (s *Server) derived(a store.API) ([]byte, bool) {
	if !s.records.Derives() {
		return nil, false
	}
	def, err := s.records.GatewayDefinition(a)
	if err != nil {
		s.log.Warn("OAS API left out of /system/apis: no classic definition derives from it", "api_id", a.ID, "err", err)
		return nil, false
	}
	return def, true
}

// policies serves GET /system/policies: every policy as stored (each has
// a 24-hex _id and a non-empty id, the store's rule).
func (s *Server) policies(w http.ResponseWriter, r *http.Request) {
	s.stream(w, r, "policies", func(tx *store.Tx, emit func([]byte) error) error {
		return tx.EachDoc(store.Policies, func(d store.Document) error {
			if !s.decodable("policies", d.DBID, gwfields.Policy, d.Doc) {
				return nil
			}
			return emit(d.Doc)
		})
	})
}

// typedAPI is decodable for a classic API, remembering the revisions found
// decodable: a record is checked once per write and process, not on every
// list (the check walks every token: over 10,000 APIs it took a list from
// 1.2 s to 2.9 s).
func (s *Server) typedAPI(a store.API) bool {
	s.typedMu.Lock()
	rev, seen := s.typed[a.ID]
	s.typedMu.Unlock()
	if seen && rev == a.Revision {
		return true
	}
	if !s.decodable("apis", a.ID, gwfields.Classic, a.Doc) {
		return false
	}
	s.typedMu.Lock()
	if len(s.typed) >= maxTyped {
		clear(s.typed)
	}
	s.typed[a.ID] = a.Revision
	s.typedMu.Unlock()
	return true
}

// maxTyped bounds the revisions typedAPI remembers (a full map is cleared).
const maxTyped = 100_000

// skipped counts the records a list left out because a gateway could not
// decode them (gatehouse_gateway_records_skipped_total{list}).
var skipped = metrics.NewCounterVec("gatehouse_gateway_records_skipped_total",
	"Records left out of /system/apis or /system/policies because a field has a type the gateway cannot decode (stored before management checked the types).", "list")

// decodable tells whether a gateway can decode a record of a list: one
// stored before intake checked the field types (gwfields) and failing them
// would fail the gateway's whole list, so it is left out, logged and
// counted instead.
func (s *Server) decodable(list, id string, fields *gwfields.Checker, doc []byte) bool {
	err := fields.Check(doc)
	if err == nil {
		return true
	}
	skipped.WithLabelValues(list).Inc()
	s.log.Warn("record left out of a gateway list: a gateway cannot decode it", "list", list, "id", id, "err", err)
	return false
}
