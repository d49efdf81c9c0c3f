package cluster

// NoteUnansweredProbe makes c act as if its failure detector's probe of
// the member id had gone unacknowledged.
func (c *Cluster) NoteUnansweredProbe(id string) { c.suspectProbe(id) }
