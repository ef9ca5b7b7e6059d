package api

import (
	"fmt"
	"strings"
	"unicode/utf8"

	portalv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/portal/v1"
	"github.com/gatehouse/gatehouse/services/portal/internal/store"
)

// Field limits, in characters (Unicode code points). Content, MarkdownContent
// and PreviewContent are bounded only by the 16 MiB body limit.
const (
	maxShort  = 255  // names, titles, paths
	maxLong   = 4096 // ledes and descriptions
	maxLabels = 100  // categories or tags on one page
)

// Page statuses (specification 3); new pages are drafts.
var statuses = []string{"published", "draft", "review"}

const defaultStatus = "draft"

// The checks below come in two kinds. The field checks look at the fields
// present in a request, each on its own; the REST body decoder runs them too,
// so that a body with a wrong type and a bad value gets both messages. The
// handlers add what needs the whole request or the store: required fields
// and the existence of the categories and tags named.

// text checks an optional text field against a maximum length; nonBlank
// refuses "" and whitespace.
func text(msgs []string, name string, v *string, limit int, nonBlank bool) []string {
	if v == nil {
		return msgs
	}
	switch {
	case nonBlank && strings.TrimSpace(*v) == "":
		return append(msgs, name+" must not be empty")
	case utf8.RuneCountInString(*v) > limit:
		return append(msgs, fmt.Sprintf("%s must be at most %d characters", name, limit))
	}
	return msgs
}

// productFieldProblems checks the fields present in a product request.
func productFieldProblems(in *portalv1.ProductInput) []string {
	var msgs []string
	msgs = text(msgs, "Name", in.Name, maxShort, true)
	msgs = text(msgs, "DisplayName", in.DisplayName, maxShort, false)
	msgs = text(msgs, "Description", in.Description, maxLong, false)
	msgs = text(msgs, "Path", in.Path, maxShort, false)
	_, msgs = labelIDs(msgs, "PlanIDs", "plan", in.GetPlanIds())
	if list := in.GetPolicyIds(); list != nil {
		if len(list.GetIds()) > maxLabels {
			msgs = append(msgs, fmt.Sprintf("PolicyIDs may list at most %d policy ids", maxLabels))
		}
		for _, id := range list.GetIds() {
			msgs = text(msgs, "PolicyIDs", &id, maxShort, true)
		}
	}
	return msgs
}

// labelFieldProblems checks a tag or category name when one is given.
func labelFieldProblems(name string) []string {
	if name == "" {
		return nil
	}
	return text(nil, "Name", &name, maxShort, true)
}

// pageFieldProblems checks the fields present in a tutorial page request.
func pageFieldProblems(in *portalv1.TutorialPageInput) []string {
	var msgs []string
	if in.Status != nil && !isStatus(in.GetStatus()) {
		msgs = append(msgs, fmt.Sprintf("Status must be one of published, draft, review; got %s", quote(in.GetStatus())))
	}
	msgs = text(msgs, "Title", in.Title, maxShort, true)
	msgs = text(msgs, "Lede", in.Lede, maxLong, false)
	if in.Path != nil {
		if problem := store.PathProblem(*in.Path); problem != "" {
			msgs = append(msgs, fmt.Sprintf("Path %s; got %s", problem, quote(*in.Path)))
		}
	}
	_, msgs = labelIDs(msgs, "Categories", "category", in.GetCategories())
	_, msgs = labelIDs(msgs, "Tags", "tag", in.GetTags())
	return msgs
}

func isStatus(s string) bool {
	for _, v := range statuses {
		if s == v {
			return true
		}
	}
	return false
}

// labelRef is a category or tag ID as a request wrote it and as read;
// id 0 means one above the uint32 range, which names no label.
type labelRef struct {
	text string
	id   uint32
}

// labelIDs reads a list of category or tag IDs: each a positive decimal
// integer, at most maxLabels of them; duplicates count once.
func labelIDs(msgs []string, field, noun string, list *portalv1.IdList) ([]labelRef, []string) {
	if list == nil {
		return nil, msgs
	}
	raw := list.GetIds()
	if len(raw) > maxLabels {
		return nil, append(msgs, fmt.Sprintf("%s may list at most %d %s IDs", field, maxLabels, noun))
	}
	refs := make([]labelRef, 0, len(raw))
	seen := make(map[string]bool, len(raw))
	for _, s := range raw {
		if seen[s] {
			continue
		}
		seen[s] = true
		id, ok, _ := parseID(s)
		if !ok {
			msgs = append(msgs, fmt.Sprintf("%s: %s is not a %s ID (a positive integer written as a string)", field, quote(s), noun))
			continue
		}
		refs = append(refs, labelRef{s, id})
	}
	return refs, msgs
}

// existingLabels returns the IDs of list, reporting those that name no
// existing label; it runs inside the transaction that stores the page.
func existingLabels(msgs []string, field, noun string, kind store.LabelKind, list *portalv1.IdList, exists store.LabelLookup) ([]uint32, []string) {
	refs, _ := labelIDs(nil, field, noun, list) // syntax problems: reported by pageFieldProblems
	ids := make([]uint32, 0, len(refs))
	for _, r := range refs {
		if r.id == 0 || !exists(kind, r.id) {
			msgs = append(msgs, fmt.Sprintf("%s: there is no %s with ID %s", field, noun, quote(r.text)))
			continue
		}
		ids = append(ids, r.id)
	}
	return ids, msgs
}

// quote writes a client's value into a message: quoted, control characters
// escaped, long values shortened.
func quote(s string) string {
	const limit = 64
	if utf8.RuneCountInString(s) > limit {
		s = string([]rune(s)[:limit]) + "…"
	}
	return fmt.Sprintf("%q", s)
}
