// Package gatewayreplay holds an end-to-end check of the classic → Tyk OAS converter against a real Tyk
// Gateway (issue 22): `make test-gateway TYK_GATEWAY=<binary>` loads a few classic definitions and their
// migrations into one gateway (file mode, a real Redis started by the test on a free port), replays the same
// requests against both and compares status, body and the headers that matter. Every difference it sees must
// be one the scenario expects and the migration report announces (a warning); everything else must match.
//
// It is not part of `make test`: CI has no gateway binary (the Tyk module is not on the module proxy; see
// ../../../../../shared/notes/toolchain.md, "Redis and a real Tyk Gateway"). Without TYK_GATEWAY the test
// skips and says so.
package gatewayreplay
