package site

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/services/portal/internal/store"
)

// markdown20K is a guide of about 20 KB: headings, prose with links and
// emphasis, fenced Go code, tables and lists.
func markdown20K() string {
	var sb strings.Builder
	for i := 0; sb.Len() < 20<<10; i++ {
		fmt.Fprintf(&sb, "## Step %d\n\nCall the **payments** API with your key; see [the reference](https://example.com/ref/%d) and `GET /charges/%d`.\n\n", i, i, i)
		fmt.Fprintf(&sb, "```go\nfunc step%d(c *payments.Client) error {\n\tres, err := c.Charge(ctx, %d)\n\tif err != nil {\n\t\treturn err\n\t}\n\treturn res.Wait()\n}\n```\n\n", i, i*100)
		sb.WriteString("| Field | Type | Meaning |\n|---|---|---|\n| amount | int | minor units |\n| currency | string | ISO 4217 |\n\n")
		sb.WriteString("- first, check the *signature*\n- then store the event\n\n")
	}
	return sb.String()
}

func BenchmarkRender20KMarkdownCold(b *testing.B) {
	p := store.Page{ID: 1, MarkdownEnabled: true, MarkdownContent: markdown20K(), UpdatedAt: time.Now()}
	b.SetBytes(int64(len(p.MarkdownContent)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Render(p); err != nil {
			b.Fatal(err)
		}
	}
}
