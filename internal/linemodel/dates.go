package linemodel

import (
	"slices"
	"strings"
)

// Dates in tool output: git log's and blame's commit dates, log
// timestamps, ls -l's modification times. "Newest edits", "commits from
// November 2021", "what happened after the retry" ask about them in
// words no line holds, so the tool columns read the dates themselves.

// stamp is a date and time as one comparable number:
// YYYYMMDDhhmmss, 0 when unknown.
type stamp int64

func mkStamp(y, mo, d, h, mi, s int) stamp {
	return stamp(((((int64(y)*100+int64(mo))*100+int64(d))*100+int64(h))*100+int64(mi))*100 + int64(s))
}

var monthNames = []string{"january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"}

// monthOf returns 1..12 for a month's name or its three-letter
// abbreviation (any case), 0 otherwise.
func monthOf(w string) int {
	if len(w) < 3 {
		return 0
	}
	lw := strings.ToLower(w)
	for k, m := range monthNames {
		if lw == m || len(lw) == 3 && strings.HasPrefix(m, lw) {
			return k + 1
		}
	}
	return 0
}

// digitsAt parses the n digits at l[i:], -1 when they are not digits.
func digitsAt(l string, i, n int) int {
	if i < 0 || i+n > len(l) {
		return -1
	}
	v := 0
	for k := i; k < i+n; k++ {
		if !isDigit(l[k]) {
			return -1
		}
		v = v*10 + int(l[k]-'0')
	}
	return v
}

// lineDate finds the first date on a line: ISO "2021-11-05" (with an
// optional " 17:30:15" or "T17:30:15"), or a month's abbreviation
// followed by the day and, in either order, a time and a year (git's
// "Fri Nov 5 02:54:15 2021", ls's "Nov  5  2021" or "Nov  5 02:54", the
// latter without a year: 0 for the year). It reads at most maxToolScan
// bytes.
func lineDate(l string) stamp {
	l = l[:min(len(l), maxToolScan)]
	for i := 0; i+10 <= len(l); i++ {
		if l[i] != '1' && l[i] != '2' || i > 0 && isDigit(l[i-1]) {
			continue
		}
		y, mo, d := digitsAt(l, i, 4), digitsAt(l, i+5, 2), digitsAt(l, i+8, 2)
		if y < 1970 || y > 2199 || l[i+4] != '-' || l[i+7] != '-' || mo < 1 || mo > 12 || d < 1 || d > 31 {
			continue
		}
		h, mi, s := 0, 0, 0
		if j := i + 10; j+8 <= len(l) && (l[j] == ' ' || l[j] == 'T') && l[j+3] == ':' {
			if hh, mm := digitsAt(l, j+1, 2), digitsAt(l, j+4, 2); hh >= 0 && mm >= 0 {
				h, mi = hh, mm
				if j+9 <= len(l) && l[j+6] == ':' {
					s = max(0, digitsAt(l, j+7, 2))
				}
			}
		}
		return mkStamp(y, mo, d, h, mi, s)
	}
	// The line's first words, without allocating: this runs on every
	// line of every text.
	var fb [48]string
	fs := fb[:0]
	for i := 0; i < len(l) && len(fs) < len(fb); {
		for i < len(l) && (l[i] == ' ' || l[i] == '\t') {
			i++
		}
		j := i
		for j < len(l) && l[j] != ' ' && l[j] != '\t' {
			j++
		}
		if j > i {
			fs = append(fs, l[i:j])
		}
		i = j
	}
	for k := 0; k+1 < len(fs); k++ {
		if len(fs[k]) != 3 {
			continue
		}
		mo := monthOf(fs[k])
		if mo == 0 {
			continue
		}
		d := digitsAt(fs[k+1], 0, len(fs[k+1]))
		if len(fs[k+1]) > 2 || d < 1 || d > 31 {
			continue
		}
		y, h, mi, s := 0, 0, 0, 0
		for _, t := range fs[k+2 : min(len(fs), k+4)] {
			if v := digitsAt(t, 0, 4); len(t) == 4 && v >= 1970 && v <= 2199 {
				y = v
			} else if len(t) >= 5 && t[2] == ':' {
				h, mi = max(0, digitsAt(t, 0, 2)), max(0, digitsAt(t, 3, 2))
				if len(t) >= 8 && t[5] == ':' {
					s = max(0, digitsAt(t, 6, 2))
				}
			} else {
				break
			}
		}
		return mkStamp(y, mo, d, h, mi, s)
	}
	return 0
}

// dateRange is the span of time a query names: a month of a year
// ("November 2021"), a month of any year ("in March"), a year ("in
// 2019") or a day ("2021-11-05"). lo and hi bound it, inclusive, with the
// year 0 standing for any year.
type dateRange struct {
	anyYear bool
	lo, hi  stamp
}

func (r dateRange) holds(s stamp) bool {
	if r.anyYear {
		s %= 1e10 // drop the year
		if s == 0 {
			return false
		}
	} else if s/1e10 == 0 {
		return false // a date without a year cannot be placed
	}
	return s >= r.lo && s <= r.hi
}

// parseDateRange finds the span of time a query names, if any: a day, a
// month or a year, or, with the words before it, everything since or
// after it ("since March 2023", "after 2021-05-01"), before or until it
// ("before 2020"), or up to a second date ("between 2019 and 2021",
// "from May 2020 to June 2021"; "from May 2020" alone is May 2020). A
// month of any year takes no such words.
func parseDateRange(query string) (dateRange, bool) {
	fs := strings.Fields(query)
	r, k, ok := baseDateRange(fs)
	if !ok || r.anyYear || k == 0 {
		return r, ok
	}
	prev, prev2 := wordAt(fs, k-1), wordAt(fs, k-2)+" "+wordAt(fs, k-1)
	const first, last = stamp(10000000000), stamp(99991231235959) // year 1, year 9999
	switch {
	case prev == "since" || prev == "starting":
		r.hi = last
	case prev == "after" || prev2 == "later than" || prev2 == "newer than":
		r.lo, r.hi = r.hi+1, last
	case prev == "before" || prev2 == "prior to" || prev2 == "earlier than" || prev2 == "older than":
		r.lo, r.hi = first, r.lo-1
	case prev == "until" || prev == "till" || prev == "through" || prev2 == "up to":
		r.lo = first
	case prev == "between" || prev == "from":
		// The second date follows "and" or "to" within a few words.
		for j := k + 1; j < min(len(fs), k+5); j++ {
			if w := wordAt(fs, j); w == "and" || w == "to" || w == "until" {
				r2, _, ok := baseDateRange(fs[j+1:])
				if y := queryYear(wordAt(fs, j+1)); y != 0 {
					r2, ok = dateRange{lo: mkStamp(y, 1, 1, 0, 0, 0), hi: mkStamp(y, 12, 31, 23, 59, 59)}, true
				}
				if ok && !r2.anyYear && r2.hi >= r.lo {
					r.hi = r2.hi
				}
				return r, true
			}
		}
		// "commits from October 2018" are those of October 2018.
	}
	return r, true
}

// countUnits after a number say it counts something, not a year: "in
// 2000 ms", "after 2048 bytes".
var countUnits = []string{"ms", "s", "sec", "secs", "seconds", "minutes", "b", "bytes", "k", "kb", "kib", "m", "mb",
	"lines", "rows", "records", "items", "files", "tests", "times", "requests", "entries", "commits", "users"}

// wordPunct is the punctuation around a query's words.
const wordPunct = ".,;:?!()'\""

// wordAt returns word i of fs, lowercased and without its punctuation; ""
// outside fs.
func wordAt(fs []string, i int) string {
	if i < 0 || i >= len(fs) {
		return ""
	}
	return strings.ToLower(strings.Trim(fs[i], wordPunct))
}

// queryYear returns the year a word names (1970..2199), else 0.
func queryYear(t string) int {
	t = strings.Trim(t, wordPunct)
	if v := digitsAt(t, 0, 4); len(t) == 4 && v >= 1970 && v <= 2199 {
		return v
	}
	return 0
}

// baseDateRange finds the first day, month or year the words fs name and
// the index of its first word.
func baseDateRange(fs []string) (dateRange, int, bool) {
	if s := lineDate(strings.Join(fs, " ")); s != 0 && s/1e10 != 0 {
		day := s / 1e6 * 1e6
		// Its first word: the one that holds a date, a month or a year.
		k := 0
		for k < len(fs)-1 && lineDate(fs[k]) == 0 && monthOf(strings.Trim(fs[k], wordPunct)) == 0 && queryYear(fs[k]) == 0 {
			k++
		}
		return dateRange{lo: day, hi: day + 235959}, k, true
	}
	for k, t := range fs {
		w := strings.Trim(t, wordPunct)
		// "may" and "march" are words too: a month needs a year after
		// it, or a capital (and May a year).
		mo := monthOf(w)
		y := 0
		if k+1 < len(fs) {
			y = queryYear(fs[k+1])
		}
		capital := w != "" && w[0] >= 'A' && w[0] <= 'Z' && w != "May"
		if mo != 0 && (y != 0 || capital) {
			if y == 0 {
				return dateRange{anyYear: true, lo: mkStamp(0, mo, 1, 0, 0, 0), hi: mkStamp(0, mo, 31, 23, 59, 59)}, k, true
			}
			return dateRange{lo: mkStamp(y, mo, 1, 0, 0, 0), hi: mkStamp(y, mo, 31, 23, 59, 59)}, k, true
		}
	}
	for k, t := range fs {
		if y := queryYear(t); y != 0 && k > 0 && !slices.Contains(countUnits, wordAt(fs, k+1)) {
			switch prev := wordAt(fs, k-1); prev {
			case "in", "of", "during", "throughout", "since", "after", "before", "until", "till", "through",
				"between", "from", "starting", "than":
				if prev == "than" && !slices.Contains([]string{"older", "newer", "later", "earlier"}, wordAt(fs, k-2)) {
					continue // "more than 2048 bytes"
				}
				return dateRange{lo: mkStamp(y, 1, 1, 0, 0, 0), hi: mkStamp(y, 12, 31, 23, 59, 59)}, k, true
			}
		}
	}
	return dateRange{}, 0, false
}
