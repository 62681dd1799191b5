package sandbox

import (
	"os"
	"testing"
)

func BenchmarkUserTasks(b *testing.B) {
	for b.Loop() {
		userTasks(os.Getuid())
	}
}

func TestUserTasksCountsThreads(t *testing.T) {
	// This test process alone runs several threads (the Go runtime).
	if n := userTasks(os.Getuid()); n < 2 {
		t.Errorf("userTasks = %d", n)
	}
	if n := threadsOf("self"); n < 2 {
		t.Errorf("threadsOf(self) = %d", n)
	}
}
