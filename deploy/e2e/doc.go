// Package e2e holds Gatehouse's end-to-end journey (journey_test.go): it
// builds the three service binaries, starts them on loopback with temporary
// stores, walks a user's whole path through their REST facades and gRPC
// APIs, and restarts each service to check that its data survived.
package e2e
