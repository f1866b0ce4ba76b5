package evalset

// ShuffleQueries returns a copy of files in which every case carries the
// query of a case from another repository (cases without a repository
// count as their own), so that no line of its text answers it: the
// off-topic control of an eval. The pairing is deterministic: case i of
// the n cases, in file order, takes the query of the first case from
// another repository at or after i + n/2 (cyclically). A case for which no
// other repository exists keeps its query.
func ShuffleQueries(files []File) []File {
	var all []*Case
	out := make([]File, len(files))
	for i, f := range files {
		out[i] = f
		out[i].Cases = append([]Case(nil), f.Cases...)
		for j := range out[i].Cases {
			all = append(all, &out[i].Cases[j])
		}
	}
	n := len(all)
	queries := make([]string, n)
	for i, c := range all {
		queries[i] = c.Query
		for t := range n {
			j := (i + n/2 + t) % n
			if all[j].Repo != c.Repo || c.Repo == "" && j != i {
				queries[i] = all[j].Query
				break
			}
		}
	}
	for i, c := range all {
		c.Query = queries[i]
	}
	return out
}
