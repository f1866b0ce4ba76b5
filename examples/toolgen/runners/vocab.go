package main

import "math/rand/v2"

// domain is a small vocabulary used to name projects, packages and identifiers.
type domain struct {
	project string
	pkgs    []string
	nouns   []string
	fields  []string
}

var domains = []domain{
	{"warehouse", []string{"store", "stock", "shelving", "report", "picking", "dock"}, []string{"item", "sku", "bin", "shelf", "lot", "stock", "order"}, []string{"qty", "price", "name", "code", "weight", "location"}},
	{"billing", []string{"invoice", "ledger", "tax", "payment", "refund", "account"}, []string{"invoice", "charge", "refund", "account", "line", "credit", "plan"}, []string{"amount", "currency", "due", "customer", "period", "status"}},
	{"shipping", []string{"route", "carrier", "parcel", "tracking", "label", "zone"}, []string{"parcel", "route", "stop", "carrier", "label", "manifest", "depot"}, []string{"weight", "dest", "eta", "zip", "service", "cost"}},
	{"telemetry", []string{"metrics", "ingest", "sampler", "export", "series", "alert"}, []string{"metric", "sample", "series", "point", "gauge", "counter", "span"}, []string{"value", "ts", "labels", "unit", "host", "window"}},
	{"calendar", []string{"event", "schedule", "remind", "slot", "tz", "invite"}, []string{"event", "slot", "invite", "room", "attendee", "reminder", "series"}, []string{"start", "end", "title", "owner", "zone", "repeat"}},
	{"library", []string{"catalog", "loan", "member", "search", "holds", "fines"}, []string{"book", "loan", "member", "copy", "hold", "fine", "branch"}, []string{"isbn", "title", "due", "author", "branch", "fee"}},
	{"blog", []string{"post", "comment", "feed", "render", "tags", "authors"}, []string{"post", "comment", "tag", "author", "draft", "feed", "slug"}, []string{"title", "body", "published", "views", "lang", "score"}},
	{"payroll", []string{"employee", "timesheet", "payslip", "bonus", "deduct", "policy"}, []string{"employee", "shift", "payslip", "bonus", "rate", "grade", "team"}, []string{"hours", "salary", "dept", "grade", "overtime", "start"}},
	{"crawler", []string{"fetch", "frontier", "robots", "extract", "store", "dedup"}, []string{"page", "link", "host", "fetch", "crawl", "robot", "anchor"}, []string{"url", "depth", "status", "size", "host", "etag"}},
	{"auth", []string{"session", "token", "user", "policy", "audit", "keys"}, []string{"session", "token", "user", "role", "grant", "key", "scope"}, []string{"subject", "expiry", "issuer", "role", "scope", "nonce"}},
	{"kvstore", []string{"wal", "memtable", "compact", "snapshot", "index", "cache"}, []string{"entry", "segment", "page", "bucket", "record", "block", "cursor"}, []string{"key", "offset", "size", "seq", "crc", "level"}},
	{"chat", []string{"room", "message", "presence", "notify", "history", "bots"}, []string{"message", "room", "member", "thread", "reaction", "mention", "bot"}, []string{"text", "sender", "sent", "room", "edited", "pinned"}},
	{"recipes", []string{"recipe", "pantry", "planner", "nutrition", "shop", "units"}, []string{"recipe", "ingredient", "meal", "serving", "step", "pantry", "list"}, []string{"grams", "kcal", "servings", "name", "unit", "minutes"}},
	{"fleet", []string{"vehicle", "trip", "fuel", "maint", "driver", "geo"}, []string{"vehicle", "trip", "driver", "stop", "tank", "odometer", "fault"}, []string{"vin", "km", "litres", "plate", "driver", "speed"}},
	{"ticketing", []string{"ticket", "queue", "sla", "assign", "escalate", "triage"}, []string{"ticket", "agent", "queue", "comment", "priority", "sla", "tag"}, []string{"subject", "opened", "priority", "assignee", "state", "due"}},
}

var verbs = []string{"load", "parse", "build", "compute", "apply", "merge", "resolve", "validate", "render", "collect", "normalize", "encode", "decode", "lookup", "update", "flush", "sync", "scan", "split", "index"}

func pickDomain(r *rand.Rand) domain { return domains[r.IntN(len(domains))] }
