//go:build !cluster

package main

import (
	"fmt"
	"io"

	"github.com/odin-code/odin/internal/serve"
)

// errNoCluster: this build has no cluster support. The cluster links
// gRPC, whose x/net/trace dependency calls methods by run-time name and
// so keeps every exported method of every linked type (+37 MB, see
// test/e2e/deadcode_test.go); it is built in with -tags cluster.
// clusterBuilt tells tests which build this is.
const clusterBuilt = false

var errNoCluster = &exitError{code: exitUsage, err: fmt.Errorf("this odin was built without cluster support: build it with `go build -tags cluster ./cmd/odin`")}

func runWorker(*globalFlags, *clusterFlags, io.Writer, io.Writer) error { return errNoCluster }

func startClusterFront(_ *globalFlags, f *clusterFlags, _ serveOpener, _, _ io.Writer) (serve.Opener, func(), error) {
	if err := f.check(); err != nil {
		return nil, nil, err
	}
	return nil, nil, errNoCluster
}
