package ops

// ReadTracker remembers what a session read (read tracking).
type ReadTracker struct{}
