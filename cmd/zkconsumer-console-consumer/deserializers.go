package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A deserializer turns the bytes of a key or value into the text that
// Kafka 1.1.1's DefaultMessageFormatter prints for it: the toString of
// what the Java deserializer of that class returns, in UTF-8. It appends
// to buf, or fails as the Java class fails (SerializationException).
type deserializer func(buf, data []byte) ([]byte, error)

// errSerialization is a Kafka SerializationException: data a deserializer
// cannot read.
var errSerialization = errors.New("org.apache.kafka.common.errors.SerializationException")

func sizeError(class string, n int) error {
	return fmt.Errorf("%w: Size of data received by %s is not %d", errSerialization, class, n)
}

const serializationPkg = "org.apache.kafka.common.serialization."

// deserializers are Kafka's deserializers by class name. Kafka 1.1.1 ships
// every one of them but UUIDDeserializer, which Kafka 2.1 added.
var deserializers = map[string]deserializer{
	serializationPkg + "StringDeserializer":    deserializeString,
	serializationPkg + "ByteArrayDeserializer": deserializeByteArray,
	serializationPkg + "ByteBufferDeserializer": func(buf, data []byte) ([]byte, error) {
		// java.nio.HeapByteBuffer's toString.
		return fmt.Appendf(buf, "java.nio.HeapByteBuffer[pos=0 lim=%d cap=%d]", len(data), len(data)), nil
	},
	serializationPkg + "BytesDeserializer": deserializeBytes,
	serializationPkg + "LongDeserializer": func(buf, data []byte) ([]byte, error) {
		if len(data) != 8 {
			return buf, sizeError("LongDeserializer", 8)
		}
		return strconv.AppendInt(buf, int64(binary.BigEndian.Uint64(data)), 10), nil
	},
	serializationPkg + "IntegerDeserializer": func(buf, data []byte) ([]byte, error) {
		if len(data) != 4 {
			return buf, sizeError("IntegerDeserializer", 4)
		}
		return strconv.AppendInt(buf, int64(int32(binary.BigEndian.Uint32(data))), 10), nil
	},
	serializationPkg + "ShortDeserializer": func(buf, data []byte) ([]byte, error) {
		if len(data) != 2 {
			return buf, sizeError("ShortDeserializer", 2)
		}
		return strconv.AppendInt(buf, int64(int16(binary.BigEndian.Uint16(data))), 10), nil
	},
	serializationPkg + "DoubleDeserializer": func(buf, data []byte) ([]byte, error) {
		if len(data) != 8 {
			return buf, sizeError("Deserializer", 8) // sic: Kafka's message
		}
		return appendJavaFloat(buf, math.Float64frombits(binary.BigEndian.Uint64(data)), 64), nil
	},
	serializationPkg + "FloatDeserializer": func(buf, data []byte) ([]byte, error) {
		if len(data) != 4 {
			return buf, sizeError("Deserializer", 4) // sic: Kafka's message
		}
		return appendJavaFloat(buf, float64(math.Float32frombits(binary.BigEndian.Uint32(data))), 32), nil
	},
	serializationPkg + "UUIDDeserializer": deserializeUUID,
}

// lookupDeserializer returns the deserializer of a Java class name, or the
// error Kafka's Class.forName gives for a class it does not have.
func lookupDeserializer(class string) (deserializer, error) {
	d, ok := deserializers[class]
	if !ok {
		return nil, classNotFound(class)
	}
	return d, nil
}

// classNotFound is the error for a class name Kafka could not load either,
// or that this program does not implement.
func classNotFound(class string) error {
	return &usageError{msg: "java.lang.ClassNotFoundException: " + class}
}

// deserializeString decodes data as UTF-8, as Java's new String(data,
// "UTF8") does: each maximal ill-formed subsequence becomes one U+FFFD.
func deserializeString(buf, data []byte) ([]byte, error) {
	return appendJavaUTF8(buf, data), nil
}

// appendJavaUTF8 appends data with each ill-formed sequence replaced as
// Java's UTF-8 decoder replaces it: one U+FFFD for the longest prefix of a
// well-formed sequence (Unicode's "maximal subpart"; Java counts an
// encoded surrogate as one such sequence), and for any other byte on its
// own. Go's decoder would replace the bytes of a truncated sequence one by
// one.
func appendJavaUTF8(buf, data []byte) []byte {
	for len(data) > 0 {
		r, n := utf8.DecodeRune(data)
		if r != utf8.RuneError || n > 1 {
			buf = append(buf, data[:n]...)
			data = data[n:]
			continue
		}
		buf = utf8.AppendRune(buf, utf8.RuneError)
		data = data[maximalSubpart(data):]
	}
	return buf
}

// maximalSubpart is the length, at least 1, of the ill-formed sequence at
// the start of data that gets a single replacement character.
func maximalSubpart(data []byte) int {
	b := data[0]
	var need int
	lo, hi := byte(0x80), byte(0xBF) // range of the second byte
	switch {
	case b >= 0xC2 && b <= 0xDF:
		need = 1
	case b == 0xE0:
		need, lo = 2, 0xA0
	case b >= 0xE1 && b <= 0xEC, b == 0xEE, b == 0xEF:
		need = 2
	case b == 0xED: // Java takes a surrogate's three bytes together
		need = 2
	case b == 0xF0:
		need, lo = 3, 0x90
	case b >= 0xF1 && b <= 0xF3:
		need = 3
	case b == 0xF4:
		need, hi = 3, 0x8F
	default:
		return 1
	}
	n := 1
	for i := 1; i <= need && i < len(data); i++ {
		c := data[i]
		if i == 1 && (c < lo || c > hi) || i > 1 && (c < 0x80 || c > 0xBF) {
			break
		}
		n++
	}
	return n
}

// deserializeByteArray prints what Java prints for a byte[]: "[B@" and an
// identity hash code. Kafka's is a random-looking number; this one is a
// hash of the bytes, so the output has the same shape.
func deserializeByteArray(buf, data []byte) ([]byte, error) {
	var h uint32 = 2166136261
	for _, c := range data {
		h = (h ^ uint32(c)) * 16777619
	}
	buf = append(buf, "[B@"...)
	return strconv.AppendUint(buf, uint64(h&0x7fffffff), 16), nil
}

// deserializeBytes prints Kafka's Bytes.toString: printable ASCII as is,
// every other byte and the backslash as \xHH.
func deserializeBytes(buf, data []byte) ([]byte, error) {
	const hex = "0123456789ABCDEF"
	for _, c := range data {
		if c >= ' ' && c <= '~' && c != '\\' {
			buf = append(buf, c)
		} else {
			buf = append(buf, '\\', 'x', hex[c>>4], hex[c&0xF])
		}
	}
	return buf, nil
}

// deserializeUUID reads a UUID in its text form, as Kafka 2.1+'s
// UUIDDeserializer does (java.util.UUID.fromString, then toString).
func deserializeUUID(buf, data []byte) ([]byte, error) {
	s := string(appendJavaUTF8(nil, data))
	parts := strings.Split(s, "-")
	bad := fmt.Errorf("%w: Error parsing data into UUID: java.lang.IllegalArgumentException: Invalid UUID string: %s", errSerialization, s)
	if len(parts) != 5 || len(s) > 36 {
		return buf, bad
	}
	widths := []int{8, 4, 4, 4, 12}
	var vals [5]uint64
	for i, p := range parts {
		if p == "" {
			return buf, bad
		}
		v, err := strconv.ParseUint(p, 16, 64)
		if err != nil {
			return buf, bad
		}
		vals[i] = v & (1<<(4*widths[i]) - 1)
	}
	for i, v := range vals {
		if i > 0 {
			buf = append(buf, '-')
		}
		digits := strconv.FormatUint(v, 16)
		buf = append(buf, strings.Repeat("0", widths[i]-len(digits))...)
		buf = append(buf, digits...)
	}
	return buf, nil
}

// appendJavaFloat appends f as Java's Double.toString (bits 64) or
// Float.toString (bits 32) writes it: "NaN", "Infinity", decimal notation
// with at least one fractional digit for magnitudes in [1e-3, 1e7), and
// otherwise computerized scientific notation such as "1.0E10" or
// "1.234E-5", with the shortest digits that identify the value (as Java
// 19+ does; older Javas sometimes print one more digit).
func appendJavaFloat(buf []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(buf, "NaN"...)
	case math.IsInf(f, 1):
		return append(buf, "Infinity"...)
	case math.IsInf(f, -1):
		return append(buf, "-Infinity"...)
	case f == 0:
		if math.Signbit(f) {
			return append(buf, "-0.0"...)
		}
		return append(buf, "0.0"...)
	}
	if f < 0 {
		buf = append(buf, '-')
		f = -f
	}
	// Shortest digits d1d2...dn and exponent e: f = 0.d1...dn × 10^e.
	e := strconv.FormatFloat(f, 'e', -1, bits) // d.ddde±XX
	mant, exp, _ := strings.Cut(e, "e")
	x, _ := strconv.Atoi(exp)
	digits := strings.Replace(mant, ".", "", 1)
	if f >= 1e-3 && f < 1e7 {
		point := x + 1 // digits before the decimal point
		switch {
		case point <= 0:
			buf = append(buf, "0."...)
			buf = append(buf, strings.Repeat("0", -point)...)
			buf = append(buf, digits...)
		case point >= len(digits):
			buf = append(buf, digits...)
			buf = append(buf, strings.Repeat("0", point-len(digits))...)
			buf = append(buf, ".0"...)
		default:
			buf = append(buf, digits[:point]...)
			buf = append(buf, '.')
			buf = append(buf, digits[point:]...)
		}
		return buf
	}
	buf = append(buf, digits[0], '.')
	if len(digits) > 1 {
		buf = append(buf, digits[1:]...)
	} else {
		buf = append(buf, '0')
	}
	buf = append(buf, 'E')
	return strconv.AppendInt(buf, int64(x), 10)
}
