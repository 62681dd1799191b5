package actors

import (
	"log/slog"
	"sync"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"

	"github.com/odin-code/odin/internal/store"
)

// journalSystem is the actor system the journals of the journal tests run
// in, shared as a server's sessions share theirs.
var journalSystem = sync.OnceValue(func() *actor.ActorSystem { return NewActorSystem(slog.New(slog.DiscardHandler)) })

// newJournal starts a journal outside any session, for tests of the
// journal alone.
func newJournal(st store.Store, log zerolog.Logger) *journal {
	return startJournal(journalSystem().Root, "journal", st, log)
}
