package actors

import (
	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"

	"github.com/odin-code/odin/internal/store"
)

// newJournal starts a journal in an actor system of its own, for tests of
// the journal alone.
func newJournal(st store.Store, log zerolog.Logger) *journal {
	return startJournal(actor.NewActorSystem().Root, "journal", st, log)
}
