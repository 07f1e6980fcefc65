package textkey

// The collator's key spends two bytes of secondary weight and one of
// tertiary weight on every character, although nearly all of them carry the
// common weight (no accent, lower case). compact rewrites the key with runs
// of common weights folded into one byte, the way UTS #10 suggests
// ("Reducing sort key lengths"), keeping bytes.Compare's order exactly: a
// run of k common weights becomes a "low" byte that grows with k when what
// follows the run sorts below the common weight (or the level ends), and a
// "high" byte that shrinks with k when it sorts above. Every byte used for
// a run lies between the codes of the weights below and above the common
// one, and 0 ends a level.
//
// The collator's key is: primary weights (2 or 3 bytes each, never 00 00),
// 00 00, secondary weights (2 bytes each, never 00 00), 00 00, tertiary
// weights (1 byte each, never 0).

// levelCode is the byte layout of one compacted level.
type levelCode struct {
	common  int // the common weight
	lowRun  byte
	highRun byte // a run of k commons followed by a higher weight: highRun+maxRun-k
	maxRun  int
}

var (
	// Secondary: weights below 0x20 as themselves (1..0x1F), low runs
	// 0x20..0x5F, high runs 0x60..0x9F, higher weights as two bytes from
	// 0xA0 (three from 0xFF beyond 0x5EFF).
	secondary = levelCode{common: 0x20, lowRun: 0x20, highRun: 0x60, maxRun: 64}
	// Tertiary: weight 1 as itself, low runs 0x02..0x21, high runs
	// 0x22..0x41, higher weights as one byte 0x42..0xFD or two from 0xFE.
	tertiary = levelCode{common: 0x02, lowRun: 0x02, highRun: 0x22, maxRun: 32}
)

// compact appends the compacted form of the collator's key k to dst.
func compact(dst, k []byte) []byte {
	// Primary weights, kept as they are, with their 00 00 end.
	i := 0
	for i+1 < len(k) && (k[i] != 0 || k[i+1] != 0) {
		if k[i]&0x80 != 0 {
			i += 3
		} else {
			i += 2
		}
	}
	i = min(i, len(k))
	dst = append(dst, k[:i]...)
	dst = append(dst, 0, 0)
	k = k[min(i+2, len(k)):]

	// Secondary weights, two bytes each, up to 00 00.
	n := 0
	for 2*n+1 < len(k) && (k[2*n] != 0 || k[2*n+1] != 0) {
		n++
	}
	sec := k[:2*n]
	dst = secondary.append(dst, n, func(i int) int { return int(sec[2*i])<<8 | int(sec[2*i+1]) }, secondaryWeight)
	dst = append(dst, 0)
	k = k[min(2*n+2, len(k)):]

	// Tertiary weights, one byte each, to the end.
	dst = tertiary.append(dst, len(k), func(i int) int { return int(k[i]) }, tertiaryWeight)
	return append(dst, 0)
}

// append appends the code of the n weights at(0), ..., at(n-1), runs of
// the common weight folded, using weight for the others.
func (c levelCode) append(dst []byte, n int, at func(int) int, weight func([]byte, int) []byte) []byte {
	for i := 0; i < n; {
		if w := at(i); w != c.common {
			dst = weight(dst, w)
			i++
			continue
		}
		j := i
		for j < n && at(j) == c.common {
			j++
		}
		high := j < n && at(j) > c.common
		for left := j - i; left > 0; {
			run := min(left, c.maxRun)
			if high {
				dst = append(dst, c.highRun+byte(c.maxRun-run))
			} else {
				dst = append(dst, c.lowRun+byte(run-1))
			}
			left -= run
		}
		i = j
	}
	return dst
}

func secondaryWeight(dst []byte, w int) []byte {
	switch {
	case w < 0x20:
		return append(dst, byte(w))
	case w>>8 < 0x5F:
		return append(dst, 0xA0+byte(w>>8), byte(w))
	default:
		return append(dst, 0xFF, byte(w>>8), byte(w))
	}
}

func tertiaryWeight(dst []byte, w int) []byte {
	switch {
	case w < 0x02:
		return append(dst, byte(w))
	case w-3 < 0xFE-0x42:
		return append(dst, 0x42+byte(w-3))
	default:
		return append(dst, 0xFE, byte(w))
	}
}
