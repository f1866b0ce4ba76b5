package main

import (
	"bytes"
	"testing"
)

// TestBF16Encoding checks the EVEX encoder against GNU as 2.40's encodings.
func TestBF16Encoding(t *testing.T) {
	for _, c := range []struct {
		got, want []byte
	}{
		{Vdpbf16ps(0, 24, 26), []byte{0x62, 0x92, 0x3e, 0x40, 0x52, 0xc2}},
		{Vdpbf16ps(23, 25, 31), []byte{0x62, 0x82, 0x36, 0x40, 0x52, 0xff}},
		{Vdpbf16ps(10, 24, 27), []byte{0x62, 0x12, 0x3e, 0x40, 0x52, 0xd3}},
		{Vcvtne2ps2bf16(2, 1, 0), []byte{0x62, 0xf2, 0x77, 0x48, 0x72, 0xd0}},
		{Vcvtne2ps2bf16(20, 9, 17), []byte{0x62, 0xa2, 0x37, 0x48, 0x72, 0xe1}},
	} {
		if !bytes.Equal(c.got, c.want) {
			t.Errorf("got % x, want % x", c.got, c.want)
		}
	}
}
