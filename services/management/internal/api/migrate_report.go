package api

import (
	"bytes"
	"strconv"

	"github.com/gatehouse/gatehouse/services/management/internal/rawjson"
)

// migrationReport collects the report of specification 2.6.
type migrationReport struct {
	success  []string
	staged   [][2]string // classic API ID, staged copy ID
	defs     []*item     // dryRun: the converted items
	failures []*reportFailure
	skipped  []*reportSkip
	aborted  bool
	docBytes int
}

type reportFailure struct {
	id   string
	msgs []string
}

type reportSkip struct{ id, key string }

func (r *migrationReport) add(it *item, o outcome, mode string) {
	switch {
	case o.failure != nil:
		r.failures = append(r.failures, &reportFailure{id: it.id, msgs: o.failure})
	case o.skipKey != "":
		r.skipped = append(r.skipped, &reportSkip{id: it.id, key: o.skipKey})
	default:
		r.success = append(r.success, it.id)
		if o.stagedID != "" {
			r.staged = append(r.staged, [2]string{it.id, o.stagedID})
		}
		if mode == modeDryRun {
			r.defs = append(r.defs, it)
			r.docBytes += len(it.res.Base.JSON)
			for _, v := range it.res.Versions {
				r.docBytes += len(v.JSON)
			}
		}
	}
}

// encode writes the report as JSON; every list is present, [] when empty,
// and converted documents are embedded byte for byte.
func (r *migrationReport) encode() []byte {
	b := bytes.NewBuffer(make([]byte, 0, 256+r.docBytes+64*(len(r.success)+len(r.failures)+len(r.skipped))))
	str := func(s string) { b.Write(rawjson.Quote(s)) }
	list := func(n int, each func(i int)) {
		b.WriteByte('[')
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			each(i)
		}
		b.WriteByte(']')
	}
	count := func(n int) { b.WriteString(`"count":` + strconv.Itoa(n)) }

	b.WriteString(`{"success":{`)
	count(len(r.success))
	b.WriteString(`,"apiIDs":`)
	list(len(r.success), func(i int) { str(r.success[i]) })
	b.WriteString(`,"stagedAPIs":`)
	list(len(r.staged), func(i int) {
		b.WriteString(`{"classicAPIID":`)
		str(r.staged[i][0])
		b.WriteString(`,"oasAPIID":`)
		str(r.staged[i][1])
		b.WriteByte('}')
	})
	b.WriteString(`,"definitions":`)
	list(len(r.defs), func(i int) {
		it := r.defs[i]
		b.WriteString(`{"apiID":`)
		str(it.id)
		b.WriteString(`,"baseAPI":`)
		b.Write(it.res.Base.JSON)
		b.WriteString(`,"versions":`)
		list(len(it.res.Versions), func(j int) { b.Write(it.res.Versions[j].JSON) })
		b.WriteByte('}')
	})
	b.WriteString(`},"failure":{`)
	count(len(r.failures))
	b.WriteString(`,"errors":`)
	list(len(r.failures), func(i int) {
		f := r.failures[i]
		b.WriteString(`{"apiID":`)
		str(f.id)
		b.WriteString(`,"message":`)
		list(len(f.msgs), func(j int) { str(f.msgs[j]) })
		b.WriteByte('}')
	})
	b.WriteString(`},"skipped":{`)
	count(len(r.skipped))
	b.WriteString(`,"apis":`)
	list(len(r.skipped), func(i int) {
		s := r.skipped[i]
		b.WriteString(`{"apiID":`)
		str(s.id)
		b.WriteString(`,"message":`)
		str(skipMessages[s.key])
		b.WriteString(`,"key":`)
		str(s.key)
		b.WriteByte('}')
	})
	b.WriteString(`},"abortedOnFailure":`)
	b.WriteString(strconv.FormatBool(r.aborted))
	b.WriteByte('}')
	return b.Bytes()
}
