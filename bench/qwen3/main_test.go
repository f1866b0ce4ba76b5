package main

import (
	"strings"
	"testing"
)

func TestLastJSONLine(t *testing.T) {
	for _, tc := range []struct {
		name, out string
		want      ortResult
		wantErr   string
	}{
		{
			name: "ort line",
			out:  `{"ms":17.26,"max_abs_diff":0.0000010728836059570312,"tol":0.001,"threads":2,"ort_version":"1.30.0","tokens":512,"shape":[1,512,16]}` + "\n",
			want: ortResult{Ms: 17.26, MaxAbsDiff: 1.0728836059570312e-06, Threads: 2, Version: "1.30.0"},
		},
		{
			name: "noise before, last line wins",
			out:  "warning: x\n{\"ms\": 1}\n  {\"ms\": 2.5, \"threads\": 1}  \ntrailing text\n",
			want: ortResult{Ms: 2.5, Threads: 1},
		},
		{
			name: "python json.dumps spacing",
			out:  `{"config": "tiny", "tokens": 512, "ms": 25.7, "threads": 2, "blas_threads": 1, "attn": "inplace"}`,
			want: ortResult{Ms: 25.7, Threads: 2},
		},
		{name: "no json", out: "Traceback ...\nImportError\n", wantErr: "no JSON line"},
		{name: "empty", out: "", wantErr: "no JSON line"},
		{name: "broken json", out: "{\"ms\": \n", wantErr: "parse"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got ortResult
			err := lastJSONLine([]byte(tc.out), &got)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestParseLoad1(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
		ok   bool
	}{
		{"1.91 1.87 1.42 3/90 23365\n", 1.91, true},
		{"0.00 0.01 0.05 1/100 1", 0, true},
		{"12.50 9.00 8.00 10/900 4242", 12.5, true},
		{"", 0, false},
		{"abc 1 2", 0, false},
	} {
		got, err := parseLoad1(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseLoad1(%q) = %v, %v; want %v, ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestCPUInfo(t *testing.T) {
	for _, tc := range []struct {
		name, text, model, avx512 string
	}{
		{
			name:   "avx2 only",
			text:   "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\nflags\t\t: fpu sse2 avx avx2 fma\n\nprocessor\t: 1\nmodel name\t: AMD EPYC\nflags\t\t: fpu sse2 avx avx2 fma\n",
			model:  "AMD EPYC",
			avx512: "no",
		},
		{
			name:   "avx-512",
			text:   "model name\t: AMD EPYC 9R14 96-Core Processor\nflags\t\t: avx2 fma avx512f avx512dq avx512_bf16 xsave\n",
			model:  "AMD EPYC 9R14 96-Core Processor",
			avx512: "avx512f,avx512dq,avx512_bf16",
		},
		{name: "empty", text: "", model: "unknown", avx512: "?"},
		{name: "no flags line (arm)", text: "model name\t: X\nFeatures\t: fp asimd\n", model: "X", avx512: "?"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			model, avx512 := cpuInfo(tc.text)
			if model != tc.model || avx512 != tc.avx512 {
				t.Fatalf("cpuInfo = %q, %q; want %q, %q", model, avx512, tc.model, tc.avx512)
			}
		})
	}
}

func TestONNXName(t *testing.T) {
	a := onnxName("h256", 2048, []byte("v1"))
	b := onnxName("h256", 2048, []byte("v2"))
	c := onnxName("h256", 512, []byte("v1"))
	if !strings.HasPrefix(a, "h256-2048-") || !strings.HasSuffix(a, ".onnx") || len(a) != len("h256-2048-")+8+len(".onnx") {
		t.Fatalf("onnxName = %q", a)
	}
	if a == b || a == c || a != onnxName("h256", 2048, []byte("v1")) {
		t.Fatalf("names not keyed by config, tokens and script: %q %q %q", a, b, c)
	}
}
