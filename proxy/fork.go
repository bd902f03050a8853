package proxy

// forkArgs returns the flag that makes claude --resume resume a copy of
// the conversation (SPEC §3 session/create fork): --fork-session, for a
// session created with fork while it resumes the conversation it was
// created from. Its claude then writes a new Claude session (a new
// session id, which it reports at its first turn) and the original is
// left as it was. A restart once claude has reported the fork's own id
// resumes that one, without the flag; a restart before it (nothing of the
// fork was written yet) forks again.
func (c sessionConfig) forkArgs(resume string) []string {
	if c.fork && resume == c.resume {
		return []string{"--fork-session"}
	}
	return nil
}
