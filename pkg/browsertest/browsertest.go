// Package browsertest drives a headless Chromium (Debian's chromium
// package; .ci/run installs it) over the DevTools protocol for the tests
// of server-rendered pages: the portal's public site, management's web UI.
// Without Chromium a test using it is skipped.
package browsertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// flags keep Chromium quiet on a closed network: without the
// background-networking flags it keeps trying to reach Google.
func flags(bin, profile string) []chromedp.ExecAllocatorOption {
	return []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1200, 900),
	}
}

// Browser is one headless Chromium tab and where its screenshots go.
type Browser struct {
	T     testing.TB
	Ctx   context.Context
	shots string // "" takes none
	n     int
}

// StepTimeout bounds one step.
const StepTimeout = 30 * time.Second

// Options say where screenshots go.
type Options struct {
	// ShotsEnv names the environment variable holding the screenshots'
	// folder.
	ShotsEnv string
	// AlwaysShoot takes screenshots into the test's temporary folder when
	// the variable is unset; otherwise none are taken then.
	AlwaysShoot bool
}

// New starts Chromium for t, or skips t when it is not installed.
func New(t testing.TB, o Options) *Browser {
	t.Helper()
	bin := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		t.Skip("Chromium is not installed (apt-get install chromium; .ci/run installs it): browser tests skipped")
	}
	shots := ""
	if o.ShotsEnv != "" {
		shots = os.Getenv(o.ShotsEnv)
	}
	if shots == "" && o.AlwaysShoot {
		shots = t.TempDir()
	}
	if shots != "" {
		if err := os.MkdirAll(shots, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshots in %s", shots)
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), flags(bin, t.TempDir())...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("start %s: %v", bin, err)
	}
	return &Browser{T: t, Ctx: ctx, shots: shots}
}

// Step is a context for one step, bounded by StepTimeout.
func (b *Browser) Step() (context.Context, context.CancelFunc) {
	return context.WithTimeout(b.Ctx, StepTimeout)
}

// Do runs actions as one step, failing the test on an error.
func (b *Browser) Do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.T.Helper()
	ctx, cancel := b.Step()
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.T.Fatalf("%s: %v", what, err)
	}
}

// Run runs one action as one step and returns its value, failing the test
// on an error.
func Run[T any](b *Browser, what string, a chromedp.Action[T]) T {
	b.T.Helper()
	ctx, cancel := b.Step()
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		b.T.Fatalf("%s: %v", what, err)
	}
	return v
}

// Open navigates to url and returns the HTTP status of the document.
func (b *Browser) Open(url string) int64 {
	b.T.Helper()
	ctx, cancel := b.Step()
	defer cancel()
	resp, err := chromedp.RunResponse(ctx, chromedp.Navigate(url))
	if err != nil {
		b.T.Fatalf("open %s: %v", url, err)
	}
	return resp.Status
}

// Follow clicks the element matched by css (a link or a submit button)
// and returns the status of the page it loads.
func (b *Browser) Follow(css string) int64 {
	b.T.Helper()
	ctx, cancel := b.Step()
	defer cancel()
	resp, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(css), chromedp.NodeVisible))
	if err != nil {
		b.T.Fatalf("follow %s: %v", css, err)
	}
	return resp.Status
}

// Text is the visible text of the element matched by css.
func (b *Browser) Text(css string) string {
	b.T.Helper()
	return strings.TrimSpace(Run(b, "text of "+css, chromedp.Text(chromedp.CSS(css), chromedp.NodeVisible)))
}

// Type types value into the field matched by css.
func (b *Browser) Type(css, value string) {
	b.T.Helper()
	b.Do("type into "+css, chromedp.SendKeys(chromedp.CSS(css), value, chromedp.NodeVisible))
}

// Click clicks the element matched by css without waiting for a page.
func (b *Browser) Click(css string) {
	b.T.Helper()
	b.Do("click "+css, chromedp.Click(chromedp.CSS(css), chromedp.NodeVisible))
}

// Eval runs a JavaScript expression through DevTools (not subject to the
// page's CSP) and decodes its JSON value.
func Eval[T any](b *Browser, expr string) T {
	b.T.Helper()
	return Run(b, "evaluate "+expr, chromedp.Evaluate[T](expr))
}

// Shot saves a screenshot of the whole page as NN-name.png, when the
// browser takes screenshots.
func (b *Browser) Shot(name string) {
	b.T.Helper()
	if b.shots == "" {
		return
	}
	b.save(name, Run(b, "screenshot "+name, chromedp.FullScreenshot(100)))
}

// ShotView saves a screenshot of what the viewport shows, as Shot does.
func (b *Browser) ShotView(name string) {
	b.T.Helper()
	if b.shots == "" {
		return
	}
	b.save(name, Run(b, "screenshot "+name, chromedp.CaptureScreenshot()))
}

func (b *Browser) save(name string, png []byte) {
	b.T.Helper()
	b.n++
	if err := os.WriteFile(filepath.Join(b.shots, fmt.Sprintf("%02d-%s.png", b.n, name)), png, 0o644); err != nil {
		b.T.Fatal(err)
	}
}

// Viewport sets the page's size in CSS pixels.
func (b *Browser) Viewport(width, height int64) {
	b.T.Helper()
	b.Do(fmt.Sprintf("viewport %dx%d", width, height), chromedp.EmulateViewport(width, height))
}

// Scheme makes the page see prefers-color-scheme: dark or light.
func (b *Browser) Scheme(value string) {
	b.T.Helper()
	b.Do("prefers-color-scheme "+value, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: value}},
		})
		return err
	}))
}

// ScrollTo scrolls the element matched by css into view.
func (b *Browser) ScrollTo(css string) {
	b.T.Helper()
	b.Do("scroll to "+css, chromedp.ScrollIntoView(chromedp.CSS(css)))
}
