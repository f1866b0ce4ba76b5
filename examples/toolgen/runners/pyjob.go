package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strings"
	"sync"

	"github.com/prunekit/pruner/examples/toolgen/internal/family"
)

type jobKind struct {
	job, unit, item, field, logger string
}

var jobKinds = []jobKind{
	{"log rotation", "volume", "logfile", "size_bytes", "ops.logrotate"},
	{"image transcode", "preset", "clip", "codec", "media.transcode"},
	{"ETL", "batch", "row", "customer_id", "etl.loader"},
	{"crawler", "host", "url", "content_type", "crawler.fetch"},
	{"queue worker", "lease", "message", "payload", "worker"},
	{"migration", "table", "record", "schema_version", "migrate"},
	{"invoice export", "period", "invoice", "tax_code", "billing.export"},
	{"report render", "tenant", "report", "locale", "reports.render"},
	{"index rebuild", "shard", "document", "language", "search.indexer"},
	{"ledger reconcile", "account", "entry", "amount", "ledger.recon"},
}

var logFormats = []string{
	"%(asctime)s %(levelname)s %(name)s: %(message)s",
	"[%(asctime)s] %(levelname)-8s %(name)s - %(message)s",
	"%(asctime)s | %(levelname)-7s | %(module)s:%(lineno)d | %(message)s",
	"%(levelname)s:%(name)s:%(message)s",
	"%(asctime)s %(process)d %(levelname)s [%(name)s] %(message)s",
	"%(asctime)s %(name)-14s %(levelname)-5s %(message)s",
}

var transientErrs = []string{"read timed out after 30s", "connection reset by peer", "HTTP 503 Service Unavailable", "HTTP 429 Too Many Requests", "temporary failure in name resolution", "upstream closed connection"}

const pyJobSrc = `#!/usr/bin/env python3
"""{JOB} job: walks every {UNIT}, processes its {ITEM}s and reports progress."""
import json
import logging
import os
import sys
import time

log = logging.getLogger("{LOGGER}")
PLAN = json.loads(r'''{PLAN}''')
MAX_ATTEMPTS = PLAN["max_attempts"]
DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


class TransientError(Exception):
    pass


class RecordRejected(Exception):
    pass


class JobError(RuntimeError):
    pass


def fetch_{UNIT}(n, attempt):
    fails = PLAN["flaky"].get(str(n), 0)
    if attempt <= fails:
        raise TransientError(PLAN["flaky_msg"][str(n)])
    return PLAN["units"][str(n)]


def fetch_with_retries(n):
    for attempt in range(1, MAX_ATTEMPTS + 1):
        try:
            items = fetch_{UNIT}(n, attempt)
        except TransientError as exc:
            if attempt == MAX_ATTEMPTS:
                log.error("giving up on {UNIT} %d after %d attempts: %s", n, attempt, exc)
                return None
            delay = 0.5 * 2 ** (attempt - 1)
            log.warning("{UNIT} %d attempt %d/%d failed: %s; retrying in %.1fs", n, attempt, MAX_ATTEMPTS, exc, delay)
            continue
        if attempt > 1:
            log.info("{UNIT} %d fetched after %d attempts", n, attempt)
        return items
    return None


def normalize(rec):
    return {"id": rec["id"], "{FIELD}": rec["{FIELD}"].strip().lower()}


def decode_payload(raw):
    return json.loads(raw)


def completion_ratio(rec):
    return rec["done"] / rec["total"]


def parse_quantity(rec):
    return int(rec["qty"])


def read_blob(rec):
    with open(os.path.join(DATA_DIR, rec["blob"]), "rb") as fh:
        return fh.read()


def decode_label(rec):
    return bytes.fromhex(rec["hex"]).decode("utf-8")


def validate(rec):
    if rec.get("reject"):
        raise RecordRejected("{ITEM} %s: %s" % (rec["id"], rec["reject"]))


def process_{ITEM}(rec):
    validate(rec)
    norm = normalize(rec)
    payload = decode_payload(rec["raw"])
    ratio = completion_ratio(rec)
    qty = parse_quantity(rec)
    if "blob" in rec:
        read_blob(rec)
    label = decode_label(rec)
    log.debug("{ITEM} %s ok: ratio=%.2f qty=%d label=%s keys=%d", norm["id"], ratio, qty, label, len(payload))


def run():
    units = sorted(int(k) for k in PLAN["units"])
    log.info("starting {JOB} run %s: %d {UNIT}s, max_attempts=%d", PLAN["run_id"], len(units), MAX_ATTEMPTS)
    log.info("connecting to %s", PLAN["endpoint"])
    done = skipped = failed = 0
    for n in units:
        log.info("fetching {UNIT} %d/%d", n, len(units))
        items = fetch_with_retries(n)
        if items is None:
            failed += 1
            continue
        for rec in items:
            if rec.get("skip"):
                log.warning("skipping {ITEM} %s: missing field %r", rec["id"], rec["skip"])
                skipped += 1
                continue
            log.debug("processing {ITEM} %s (%d bytes)", rec["id"], rec["size"])
            try:
                process_{ITEM}(rec)
            except RecordRejected:
                log.exception("failed to process {ITEM} %s, continuing", rec["id"])
                failed += 1
                continue
            except Exception as exc:
                log.critical("unrecoverable error on {ITEM} %s in {UNIT} %d, stopping", rec["id"], n)
                if PLAN["chain"] == "from":
                    raise JobError("{ITEM} %s could not be processed" % rec["id"]) from exc
                raise JobError("{ITEM} %s could not be processed" % rec["id"])
            done += 1
        log.info("progress: %d/%d {UNIT}s, %d {ITEM}s done", n, len(units), done)
    log.info("finished: %d {ITEM}s processed, %d skipped, %d failed", done, skipped, failed)


def main():
    logging.basicConfig(level=logging.DEBUG if PLAN["debug"] else logging.INFO,
                        format=PLAN["format"], stream=sys.stderr)
    if PLAN["uncaught"]:
        run()
        return 0
    try:
        run()
    except JobError:
        log.exception("{JOB} run %s aborted", PLAN["run_id"])
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
`

type pyRec map[string]any

func genJobLog(r *rand.Rand, idx int, dir string) (*scenario, error) {
	k := family.Pick(r, jobKinds)
	d := pickDomain(r)
	nUnits := 10 + r.IntN(40)
	maxAtt := 3 + r.IntN(3)
	plan := map[string]any{
		"max_attempts": maxAtt, "run_id": fmt.Sprintf("%x", r.Uint32()), "endpoint": fmt.Sprintf("https://%s.internal.example:%d/v2", d.project, 8000+r.IntN(1000)),
		"debug": r.IntN(10) < 7, "format": family.Pick(r, logFormats), "uncaught": r.IntN(3) == 0,
		"chain": family.Pick(r, []string{"from", "from", "during"}),
	}
	prefix := strings.ToUpper(k.item[:min(3, len(k.item))])
	units := map[string][]pyRec{}
	flaky, flakyMsg := map[string]int{}, map[string]string{}
	var recs []pyRec
	id := 1000 + r.IntN(8000)
	for u := 1; u <= nUnits; u++ {
		var items []pyRec
		for j := 0; j < 2+r.IntN(12); j++ {
			id += 1 + r.IntN(7)
			rec := pyRec{"id": fmt.Sprintf("%s-%d", prefix, id), k.field: family.Pick(r, []string{" EUR", "usd ", "Alpha", "b-2", " x1 "}), "raw": `{"ok": true, "v": 1}`, "done": r.IntN(10), "total": 10, "qty": fmt.Sprint(1 + r.IntN(40)), "hex": "6f6b", "size": 200 + r.IntN(90000)}
			items = append(items, rec)
			recs = append(recs, rec)
		}
		units[fmt.Sprint(u)] = items
	}
	// injected events
	type retryEv struct {
		unit, fails int
		giveUp      bool
	}
	var retries []retryEv
	for i := 0; i < r.IntN(4); i++ {
		u := 1 + r.IntN(nUnits)
		if _, ok := flaky[fmt.Sprint(u)]; ok {
			continue
		}
		ev := retryEv{unit: u, fails: 1 + r.IntN(maxAtt-1)}
		if r.IntN(5) == 0 {
			ev.fails, ev.giveUp = maxAtt, true
		}
		flaky[fmt.Sprint(u)] = ev.fails
		flakyMsg[fmt.Sprint(u)] = family.Pick(r, transientErrs)
		retries = append(retries, ev)
	}
	plan["flaky"], plan["flaky_msg"] = flaky, flakyMsg
	unitOf := func(rec pyRec) int {
		for u, items := range units {
			for _, it := range items {
				if it["id"] == rec["id"] {
					var n int
					fmt.Sscan(u, &n)
					return n
				}
			}
		}
		return 0
	}
	usable := func(rec pyRec) bool { _, f := flaky[fmt.Sprint(unitOf(rec))]; return !f || true }
	_ = usable
	var skips []string
	for i := 0; i < r.IntN(5); i++ {
		rec := family.Pick(r, recs)
		if rec["skip"] == nil && rec["reject"] == nil {
			rec["skip"] = family.Pick(r, []string{k.field, "updated_at", "owner", "region"})
			skips = append(skips, rec["id"].(string))
		}
	}
	var reject pyRec
	if r.IntN(2) == 0 {
		reject = family.Pick(r, recs)
		if reject["skip"] != nil {
			reject = nil
		} else {
			reject["reject"] = family.Pick(r, []string{"quota exceeded for owner", "duplicate key in target", "checksum mismatch", "payload larger than 5 MiB"})
		}
	}
	fatalKind := ""
	var fatal pyRec
	if r.IntN(4) > 0 {
		// fatal in the second half of the run
		cands := recs[len(recs)/2:]
		fatal = family.Pick(r, cands)
		if fatal["skip"] != nil || fatal["reject"] != nil || (reject != nil && fatal["id"] == reject["id"]) {
			fatal = nil
		} else if g, ok := flaky[fmt.Sprint(unitOf(fatal))]; ok && g >= maxAtt {
			fatal = nil
		}
	}
	if fatal != nil {
		fatalKind = family.Pick(r, []string{"keyerror", "json", "zerodiv", "intparse", "fnf", "unicode"})
		switch fatalKind {
		case "keyerror":
			delete(fatal, k.field)
		case "json":
			fatal["raw"] = family.Pick(r, []string{"", "{\"ok\": true,", "<html>502 Bad Gateway</html>"})
		case "zerodiv":
			fatal["total"] = 0
		case "intparse":
			fatal["qty"] = family.Pick(r, []string{"n/a", "12.5", "", "twelve"})
		case "fnf":
			fatal["blob"] = fmt.Sprintf("%s/%s.bin", k.unit, fatal["id"])
		case "unicode":
			fatal["hex"] = "ff6b"
		}
	}
	plan["units"] = units
	pj, err := json.Marshal(plan)
	if err != nil {
		return nil, err
	}
	src := fill(pyJobSrc, "JOB", k.job, "UNIT", k.unit, "ITEM", k.item, "FIELD", k.field, "LOGGER", k.logger)
	src = strings.ReplaceAll(src, "{PLAN}", string(pj))
	script := strings.ReplaceAll(k.job, " ", "_") + ".py"
	if err := writeFile(dir, script, src); err != nil {
		return nil, err
	}
	out := runCmd(dir, []string{"PYTHONUNBUFFERED=1"}, "python3", script)
	text := neutralPython(family.Clean(out, dir))
	ls := family.SplitLines(text)
	if len(ls) > 900 {
		text = family.TruncateLines(text, 900)
		ls = family.SplitLines(text)
		if fatal != nil {
			return nil, fmt.Errorf("too long with fatal")
		}
	}
	var qs []question
	U, I := k.unit, k.item
	// retries
	for _, ev := range retries {
		g := family.FindLines(ls, fmt.Sprintf("%s %d attempt ", U, ev.unit))
		if len(g) != min(ev.fails, maxAtt-1) {
			continue
		}
		if ev.giveUp {
			gu := family.FindLines(ls, fmt.Sprintf("giving up on %s %d after ", U, ev.unit))
			if len(gu) != 1 {
				continue
			}
			g = append(g, gu...)
			qs = append(qs, question{ask(r, []string{"Show the attempts on {u} {n} up to the point the job stopped trying.", "{u} {n} never came through — which log lines show that?"}, []string{"One {u} exhausted its attempt budget; show its warnings and the final give-up line.", "Point me at the {u} that stayed broken despite repeated tries."}, "u", U, "n", fmt.Sprint(ev.unit)), g})
			continue
		}
		ok := family.FindLines(ls, fmt.Sprintf("%s %d fetched after %d attempts", U, ev.unit, ev.fails+1))
		if len(ok) != 1 {
			continue
		}
		g = append(g, ok...)
		qs = append(qs, question{ask(r, []string{"Trace {u} {n} through its flaky fetches until it came through.", "{u} {n} hiccuped — show the warnings and the eventual success."}, []string{"Show me the warning lines for the {u} that only worked on a later try, plus the success line.", "Some {u} came through only after a few warnings — show that sequence."}, "u", U, "n", fmt.Sprint(ev.unit)), g})
	}
	// skips
	if len(skips) > 0 {
		g := family.FindLines(ls, fmt.Sprintf("skipping %s ", I))
		if len(g) == len(skips) {
			qs = append(qs, question{ask(r, []string{"Which {i}s were skipped and why?"}, []string{"Did the job ignore any records? Which ones and for what reason?", "Which inputs were dropped because data was missing?"}, "i", I), g})
		}
	}
	// survived exception
	if reject != nil {
		l := family.FindLines(ls, fmt.Sprintf("failed to process %s %s, continuing", I, reject["id"]))
		if len(l) == 1 {
			if tb := tracebackGold(ls, l[0]); len(tb) > 0 {
				qs = append(qs, question{ask(r, []string{"Why did {i} {id} fail, and did the job continue?"}, []string{"One {i} raised an exception but the run kept going. Which one, and what was the error?", "Which record was rejected with a logged traceback, and for what reason?"}, "i", I, "id", reject["id"].(string)), append(l, tb...)})
			}
		}
	}
	if fatal != nil {
		l := family.FindLines(ls, fmt.Sprintf("unrecoverable error on %s %s in %s ", I, fatal["id"], U))
		if len(l) != 1 {
			return nil, fmt.Errorf("fatal line not found")
		}
		tb := tracebackGold(ls, l[0])
		if len(tb) < 2 {
			return nil, fmt.Errorf("fatal traceback not found")
		}
		g := append([]int{l[0]}, tb...)
		if a := family.FindLines(ls, " aborted"); len(a) == 1 && a[0] > l[0] {
			g = append(g, a[0])
		}
		qs = append(qs, question{ask(r, nil, []string{"Show the crash: the triggering exception, the chained original one, and the frames that raised them.", "The process aborted — pull out the traceback lines that explain it.", "Where did the run die, and on which {i}?", "Give me the exception chain that killed this run."}, "i", I), g})
	} else if f := family.FindLines(ls, "finished: "); len(f) == 1 {
		qs = append(qs, question{family.Pick(r, []string{"Did the job finish, and how many {i}s were processed, skipped and failed?", "What are the final totals of the run?"}), f})
		qs[len(qs)-1].query = fill(qs[len(qs)-1].query, "i", I)
	}
	return &scenario{name: fmt.Sprintf("%s-%04d", strings.ReplaceAll(k.job, " ", "-"), idx), path: strings.ReplaceAll(k.job, " ", "_") + ".log", text: text, qs: chooseQs(r, qs, 20)}, nil
}

// tracebackGold parses the traceback(s) that follow line `after` (1-based)
// and returns the exception lines of every chained traceback plus the last
// project frame before each exception line.
func tracebackGold(ls []string, after int) []int {
	i := after // 0-based index of the line following `after`
	for i < len(ls) && i < after+3 && ls[i] != "Traceback (most recent call last):" {
		i++
	}
	if i >= len(ls) || ls[i] != "Traceback (most recent call last):" {
		return nil
	}
	var g []int
	for i < len(ls) {
		if ls[i] != "Traceback (most recent call last):" {
			break
		}
		lastFrame := -1
		i++
		for i < len(ls) && (strings.HasPrefix(ls[i], " ") || ls[i] == "") {
			if strings.HasPrefix(ls[i], "  File \""+homeDir+"/") {
				lastFrame = i
			}
			i++
		}
		if i >= len(ls) {
			return nil
		}
		if lastFrame >= 0 {
			g = append(g, lastFrame+1)
		}
		g = append(g, i+1) // exception line
		i++
		// chained?
		j := i
		for j < len(ls) && ls[j] == "" {
			j++
		}
		if j < len(ls) && (strings.HasPrefix(ls[j], "During handling of the above exception") || strings.HasPrefix(ls[j], "The above exception was the direct cause")) {
			j++
			for j < len(ls) && ls[j] == "" {
				j++
			}
			i = j
			continue
		}
		break
	}
	return g
}

var pyPaths struct {
	once           sync.Once
	stdlib, prefix []string
}

// neutralPython rewrites the local python installation's paths (e.g.
// /root/.pyenv/versions/3.11.7/lib/python3.11) to a neutral /usr/lib/python3.X.
func neutralPython(s string) string {
	pyPaths.once.Do(func() {
		out, err := exec.Command("python3", "-c", "import sys, sysconfig; print(sysconfig.get_paths()['stdlib']); print(sys.base_prefix); print(sys.prefix); print('%d.%d' % sys.version_info[:2])").Output()
		if err != nil {
			return
		}
		ls := strings.Fields(string(out))
		if len(ls) != 4 {
			return
		}
		pyPaths.stdlib = []string{ls[0], "/usr/lib/python" + ls[3]}
		for _, p := range ls[1:3] {
			if p != "/usr" && p != "/" {
				pyPaths.prefix = append(pyPaths.prefix, p, "/usr")
			}
		}
	})
	if len(pyPaths.stdlib) == 2 && pyPaths.stdlib[0] != pyPaths.stdlib[1] {
		s = strings.ReplaceAll(s, pyPaths.stdlib[0]+"/", pyPaths.stdlib[1]+"/")
	}
	for i := 0; i+1 < len(pyPaths.prefix); i += 2 {
		s = strings.ReplaceAll(s, pyPaths.prefix[i]+"/", pyPaths.prefix[i+1]+"/")
	}
	return s
}
