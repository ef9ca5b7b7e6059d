package migration

import (
	"bytes"
	"strconv"

	"github.com/gatehouse/gatehouse/services/management/internal/convert"
	"github.com/gatehouse/gatehouse/services/management/internal/rawjson"
)

// Report is what a migration did, API by API, in the order they were taken.
type Report struct {
	mode Mode
	// Success lists the migrated APIs' classic IDs.
	Success []string
	// Staged pairs each staged classic API with its staged copy (stage).
	Staged []StagedAPI
	// Definitions are the converted documents (dryRun).
	Definitions []Definition
	// Warnings lists the migrated APIs that behave differently in a gateway from their classic definitions,
	// in the order of Success, each with one message per change.
	Warnings []Warning
	// Failures lists the APIs that failed, each with one message per problem.
	Failures []Failure
	// Skipped lists the APIs left alone, each with its key.
	Skipped []Skip
	// Aborted is set when the run stopped at a failure (abortOnFailure).
	Aborted bool

	docBytes int
	// warned is the JSON of Warnings[:nWarned], entries separated by
	// commas: add encodes each API's warnings as its chunk is reported,
	// while later chunks are still being written, so that JSON, run after
	// the last commit on one core, only copies them (about 12 MB and 30 ms
	// of encoding for 10,000 APIs, BenchmarkReportJSON10k).
	warned  []byte
	nWarned int
}

// StagedAPI is a classic API and its staged copy.
type StagedAPI struct{ ClassicAPIID, OASAPIID string }

// Definition is a dryRun's conversion of one API.
type Definition struct {
	APIID    string
	Base     []byte
	Versions [][]byte
}

// Warning is a migrated API's behaviour changes, one message each.
type Warning struct {
	APIID    string
	Messages []string
}

// Failure is an API that failed.
type Failure struct {
	APIID    string
	Messages []string
}

// Skip is an API left alone; Key is one of the skip keys.
type Skip struct{ APIID, Key string }

// SkipMessages are the report's messages for the skip keys.
var SkipMessages = map[string]string{
	convert.SkipAlreadyMigrated: "API is already a Tyk OAS API",
	convert.SkipGraphQL:         "GraphQL APIs are not migrated to Tyk OAS",
	convert.SkipTCP:             "TCP and TLS APIs are not migrated to Tyk OAS",
	SkipAlreadyStaged:           "API already has a staged copy; set overrideStaged to replace it",
	SkipNotStaged:               "API has no staged copy; stage it first",
}

func newReport(mode Mode) *Report { return &Report{mode: mode} }

func (r *Report) add(it *item, o outcome) {
	switch {
	case o.failure != nil:
		r.Failures = append(r.Failures, Failure{APIID: it.id, Messages: o.failure})
	case o.skipKey != "":
		r.Skipped = append(r.Skipped, Skip{APIID: it.id, Key: o.skipKey})
	default:
		r.Success = append(r.Success, it.id)
		if it.res != nil && len(it.res.Warnings) > 0 {
			r.Warnings = append(r.Warnings, Warning{APIID: it.id, Messages: it.res.Warnings})
			r.encodeWarnings()
		}
		if o.stagedID != "" {
			r.Staged = append(r.Staged, StagedAPI{ClassicAPIID: it.id, OASAPIID: o.stagedID})
		}
		if r.mode == DryRun {
			d := Definition{APIID: it.id, Base: it.res.Base.JSON, Versions: make([][]byte, len(it.res.Versions))}
			r.docBytes += len(d.Base)
			for i, v := range it.res.Versions {
				d.Versions[i] = v.JSON
				r.docBytes += len(v.JSON)
			}
			r.Definitions = append(r.Definitions, d)
		}
	}
}

// encodeWarnings brings warned up to date with Warnings.
func (r *Report) encodeWarnings() {
	for _, w := range r.Warnings[r.nWarned:] {
		if len(r.warned) > 0 {
			r.warned = append(r.warned, ',')
		}
		r.warned = appendMessages(r.warned, w.APIID, w.Messages)
	}
	r.nWarned = len(r.Warnings)
}

// appendMessages appends one API's messages: {"apiID":..,"message":[..]}.
func appendMessages(b []byte, apiID string, msgs []string) []byte {
	b = append(b, `{"apiID":`...)
	b = rawjson.AppendQuote(b, apiID)
	b = append(b, `,"message":[`...)
	for i, m := range msgs {
		if i > 0 {
			b = append(b, ',')
		}
		b = rawjson.AppendQuote(b, m)
	}
	return append(b, "]}"...)
}

// size is about the length of the report's JSON (exact but for escapes),
// so that JSON writes into one buffer: growing a buffer of megabytes (10,000
// APIs' warnings are about 12 MB) costs more than writing it.
func (r *Report) size() int {
	n := 256 + r.docBytes
	for _, id := range r.Success {
		n += len(id) + 3
	}
	n += 64 * (len(r.Staged) + len(r.Definitions) + len(r.Skipped))
	n += len(r.warned)
	for _, w := range r.Warnings[r.nWarned:] {
		n += messagesSize(w.APIID, w.Messages)
	}
	for _, f := range r.Failures {
		n += messagesSize(f.APIID, f.Messages)
	}
	return n
}

// messagesSize is about the JSON length of one API's messages.
func messagesSize(apiID string, msgs []string) int {
	n := len(apiID) + 32
	for _, m := range msgs {
		n += len(m) + 8 // quotes, a comma, a few escapes
	}
	return n
}

// JSON writes the report as CONTRACT §2 spells it: every list present ([]
// when empty), counts equal to lengths, converted documents embedded byte
// for byte.
func (r *Report) JSON() []byte {
	r.encodeWarnings()
	b := bytes.NewBuffer(make([]byte, 0, r.size()))
	str := func(s string) { b.Write(rawjson.AppendQuote(b.AvailableBuffer(), s)) }
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
	count(len(r.Success))
	b.WriteString(`,"apiIDs":`)
	list(len(r.Success), func(i int) { str(r.Success[i]) })
	b.WriteString(`,"stagedAPIs":`)
	list(len(r.Staged), func(i int) {
		b.WriteString(`{"classicAPIID":`)
		str(r.Staged[i].ClassicAPIID)
		b.WriteString(`,"oasAPIID":`)
		str(r.Staged[i].OASAPIID)
		b.WriteByte('}')
	})
	b.WriteString(`,"definitions":`)
	list(len(r.Definitions), func(i int) {
		d := r.Definitions[i]
		b.WriteString(`{"apiID":`)
		str(d.APIID)
		b.WriteString(`,"baseAPI":`)
		b.Write(d.Base)
		b.WriteString(`,"versions":`)
		list(len(d.Versions), func(j int) { b.Write(d.Versions[j]) })
		b.WriteByte('}')
	})
	b.WriteString(`,"warnings":[`)
	b.Write(r.warned)
	b.WriteString(`]},"failure":{`)
	count(len(r.Failures))
	b.WriteString(`,"errors":`)
	list(len(r.Failures), func(i int) { b.Write(appendMessages(b.AvailableBuffer(), r.Failures[i].APIID, r.Failures[i].Messages)) })
	b.WriteString(`},"skipped":{`)
	count(len(r.Skipped))
	b.WriteString(`,"apis":`)
	list(len(r.Skipped), func(i int) {
		s := r.Skipped[i]
		b.WriteString(`{"apiID":`)
		str(s.APIID)
		b.WriteString(`,"message":`)
		str(SkipMessages[s.Key])
		b.WriteString(`,"key":`)
		str(s.Key)
		b.WriteByte('}')
	})
	b.WriteString(`},"abortedOnFailure":`)
	b.WriteString(strconv.FormatBool(r.Aborted))
	b.WriteByte('}')
	return b.Bytes()
}
