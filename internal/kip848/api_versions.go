package kip848

// APIKeyApiVersions is ApiVersions' API key.
const APIKeyApiVersions = 18

// VersionRange is the versions of one API a broker speaks.
type VersionRange struct{ Min, Max int16 }

// DecodeApiVersionsResponse decodes an ApiVersions version 0 response
// body: its error code and, per API key, the versions the broker speaks.
func DecodeApiVersionsResponse(b []byte) (int16, map[int16]VersionRange, error) {
	d := &decoder{b: b, what: "ApiVersions response"}
	code := d.int16("ErrorCode")
	n := d.int32("ApiKeys length")
	if d.err == nil && (n < -1 || int64(n)*6 > int64(d.remaining())) {
		d.fail("ApiKeys claims %d elements, %d bytes left", n, d.remaining())
	}
	if d.err != nil {
		return 0, nil, d.err
	}
	out := make(map[int16]VersionRange, max(n, 0))
	for range max(n, 0) {
		key := d.int16("ApiKey")
		out[key] = VersionRange{Min: d.int16("MinVersion"), Max: d.int16("MaxVersion")}
	}
	// A broker answering an unsupported version with version 0 may add
	// nothing; anything else left over is a malformed answer.
	if err := d.end(); err != nil {
		return 0, nil, err
	}
	return code, out, nil
}

// EncodeApiVersionsResponse encodes a version 0 response body (tests).
func EncodeApiVersionsResponse(code int16, apis map[int16]VersionRange) []byte {
	var e encoder
	e.int16(code)
	e.int32(int32(len(apis)))
	for k, v := range apis {
		e.int16(k)
		e.int16(v.Min)
		e.int16(v.Max)
	}
	return e.b
}
