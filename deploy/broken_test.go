package deploy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// brokenCases are kustomizations under testdata/broken, each the base (or a
// small manifest) with one rule deliberately broken. Every check must catch its
// case; otherwise a check that can never fail would pass unnoticed.
type brokenCase struct {
	dir        string
	opts       checkOptions
	wantCheck  string // a finding of this check is expected
	wantDecode string // or: render/decode fails with this text
}

var brokenCases = []brokenCase{
	{dir: "decode-unknown-field", wantDecode: `unknown field "spec.template.spec.containers[0].porst"`},
	{dir: "decode-wrong-type", wantDecode: "cannot unmarshal"},
	{dir: "decode-unknown-kind", wantDecode: `no kind "StatefulSett"`},

	{dir: "selector-mismatch", wantCheck: checkSelector},
	{dir: "service-orphan", wantCheck: checkService},
	{dir: "service-undeclared-port", wantCheck: checkService},
	{dir: "service-unnamed-ports", wantCheck: checkService},
	{dir: "governing-not-headless", wantCheck: checkGoverning},
	{dir: "governing-missing", wantCheck: checkGoverning},
	{dir: "probe-named-port-undeclared", wantCheck: checkProbes},
	{dir: "probe-grpc-port-undeclared", wantCheck: checkProbes},
	{dir: "probe-not-grpc", wantCheck: checkProbes},
	{dir: "probe-missing", wantCheck: checkProbes},
	{dir: "resources-no-limits", wantCheck: checkResources},
	{dir: "resources-request-above-limit", wantCheck: checkResources},
	{dir: "security-root-user", wantCheck: checkSecurity},
	{dir: "security-may-run-as-root", wantCheck: checkSecurity},
	{dir: "security-writable-rootfs", wantCheck: checkSecurity},
	{dir: "security-privilege-escalation", wantCheck: checkSecurity},
	{dir: "security-capabilities", wantCheck: checkSecurity},
	{dir: "security-no-seccomp", wantCheck: checkSecurity},
	{dir: "security-no-fsgroup", wantCheck: checkSecurity},
	{dir: "service-account-token-mounted", wantCheck: checkServiceAccount},
	{dir: "service-account-default", wantCheck: checkServiceAccount},
	{dir: "secrets-rendered-secret", wantCheck: checkSecrets},
	{dir: "secrets-token-literal", wantCheck: checkSecrets},
	{dir: "secrets-token-flag", wantCheck: checkSecrets},
	{dir: "secrets-token-missing", wantCheck: checkSecrets},
	{dir: "statefulset-two-replicas", wantCheck: checkStatefulSet},
	{dir: "statefulset-no-claim", wantCheck: checkStatefulSet},
	{dir: "statefulset-db-off-volume", wantCheck: checkStatefulSet},
	{dir: "statefulset-deployment", wantCheck: checkStatefulSet},
	{dir: "grace-too-short", wantCheck: checkGrace},
	{dir: "grace-unset", wantCheck: checkGrace},
	{dir: "grace-no-prestop", wantCheck: checkGrace},
	{dir: "image-latest", wantCheck: checkImage},
	{dir: "image-untagged", wantCheck: checkImage},
	{dir: "netpol-missing", opts: checkOptions{requireNetworkPolicies: true}, wantCheck: checkNetworkPolicy},
	{dir: "netpol-all-ports", opts: checkOptions{requireNetworkPolicies: true}, wantCheck: checkNetworkPolicy},
	{dir: "netpol-other-port", opts: checkOptions{requireNetworkPolicies: true}, wantCheck: checkNetworkPolicy},
	{dir: "netpol-egress-only", opts: checkOptions{requireNetworkPolicies: true}, wantCheck: checkNetworkPolicy},
	{dir: "replicated-max-unavailable", wantCheck: checkReplicated},
	{dir: "replicated-no-budget", wantCheck: checkReplicated},
	{dir: "replicated-even-etcd", wantCheck: checkReplicated},
	{dir: "replicated-bbolt-deployment", wantCheck: checkReplicated},
	{dir: "replicated-one-endpoint", wantCheck: checkReplicated},
	{dir: "replicated-etcd-plaintext", wantCheck: checkReplicated},
	{dir: "replicated-etcd-open", wantCheck: checkReplicated},
	{dir: "tls-plaintext-required", opts: checkOptions{requireTLS: true}, wantCheck: checkTLS},
	{dir: "tls-grpc-probe", wantCheck: checkTLS},
}

func TestChecksCatchBrokenManifests(t *testing.T) {
	for _, tc := range brokenCases {
		t.Run(tc.dir, func(t *testing.T) {
			t.Parallel()
			rs, err := render(filepath.Join("testdata", "broken", tc.dir))
			if tc.wantDecode != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantDecode) {
					t.Fatalf("render error = %v, want one containing %q", err, tc.wantDecode)
				}
				return
			}
			if err != nil {
				t.Fatalf("render: %v (the case should decode and break only a check)", err)
			}
			findings := checkAll(objectsOf(rs), tc.opts)
			if !slices.ContainsFunc(findings, func(f finding) bool { return f.check == tc.wantCheck }) {
				t.Fatalf("no %q finding; got %v", tc.wantCheck, findings)
			}
			for _, f := range findings {
				t.Log(f)
			}
		})
	}
}

// TestBrokenCasesCoverEveryCheck: each check has a case, and each case folder
// is in the table.
func TestBrokenCasesCoverEveryCheck(t *testing.T) {
	for _, c := range allChecks {
		if !slices.ContainsFunc(brokenCases, func(b brokenCase) bool { return b.wantCheck == c }) {
			t.Errorf("check %q has no broken case in testdata/broken", c)
		}
	}
	entries, err := os.ReadDir(filepath.Join("testdata", "broken"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !slices.ContainsFunc(brokenCases, func(b brokenCase) bool { return b.dir == e.Name() }) {
			t.Errorf("testdata/broken/%s is not in brokenCases", e.Name())
		}
	}
}

func TestSecretScanCatchesCommittedValues(t *testing.T) {
	root := filepath.Join("testdata", "committed-secrets")
	for _, tc := range []struct {
		dir  string
		want int // findings
	}{
		{"secret", 1},
		{"generator", 1},
		{"patch", 1},
		{"env", 1},
		{"clean", 0},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			got, err := scanForSecretLiterals(filepath.Join(root, tc.dir), func(string) bool { return false })
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tc.want {
				t.Errorf("got %d findings %v, want %d", len(got), got, tc.want)
			}
		})
	}
}
