package zkutil

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const regPath = "/consumers/g/ids/g_c1"

func TestEncodeRegistration(t *testing.T) {
	tests := []struct {
		name string
		r    Registration
		want string
	}{
		{
			name: "static one topic",
			r:    Registration{Version: 1, Subscription: map[string]int{"orders": 2}, Pattern: PatternStatic, Timestamp: 1531000000000},
			want: `{"version":1,"subscription":{"orders":2},"pattern":"static","timestamp":"1531000000000"}`,
		},
		{
			name: "static several topics sorted, version 0 written as 1",
			r:    Registration{Subscription: map[string]int{"payments": 1, "orders": 2, "a.b-c_D": 3}, Pattern: PatternStatic, Timestamp: 1531000000000},
			want: `{"version":1,"subscription":{"a.b-c_D":3,"orders":2,"payments":1},"pattern":"static","timestamp":"1531000000000"}`,
		},
		{
			name: "whitelist regex with a backslash",
			r:    Registration{Subscription: map[string]int{`foo\..*`: 1}, Pattern: PatternWhitelist, Timestamp: 1531000000000},
			want: `{"version":1,"subscription":{"foo\\..*":1},"pattern":"white_list","timestamp":"1531000000000"}`,
		},
		{
			name: "blacklist regex with quote and slash",
			r:    Registration{Subscription: map[string]int{`a"b/c|d`: 4}, Pattern: PatternBlacklist, Timestamp: 0},
			want: `{"version":1,"subscription":{"a\"b\/c|d":4},"pattern":"black_list","timestamp":"0"}`,
		},
		{
			name: "control characters as JSONEscapeString writes them",
			r:    Registration{Subscription: map[string]int{"\x00\x01\b\f\n\r\t\x1f\x7f\u0085\u009f\u00a0é\u2028😀": 1}, Pattern: PatternWhitelist, Timestamp: -5},
			want: `{"version":1,"subscription":{"\u0000\u0001\b\f\n\r\t\u001f\u007f\u0085\u009f` + "\u00a0é\u2028😀" + `":1},"pattern":"white_list","timestamp":"-5"}`,
		},
		{
			name: "max stream count",
			r:    Registration{Subscription: map[string]int{"t": MaxStreams}, Pattern: PatternStatic, Timestamp: 1},
			want: `{"version":1,"subscription":{"t":65536},"pattern":"static","timestamp":"1"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := EncodeRegistration(tt.r)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))

			// A standard JSON decoder reads the keys back unchanged.
			var std struct{ Subscription map[string]int }
			require.NoError(t, json.Unmarshal(got, &std))
			assert.Equal(t, tt.r.Subscription, std.Subscription)

			back, err := DecodeRegistration(regPath, got)
			require.NoError(t, err)
			want := tt.r
			want.Version = 1
			assert.Equal(t, want, back)
		})
	}
}

func TestEncodeRegistrationRejects(t *testing.T) {
	sub := map[string]int{"orders": 1}
	tests := []struct {
		name string
		r    Registration
	}{
		{"zero streams", Registration{Subscription: map[string]int{"orders": 0}, Pattern: PatternStatic}},
		{"negative streams", Registration{Subscription: map[string]int{"orders": 1, "x": -1}, Pattern: PatternStatic}},
		{"2^31 streams", Registration{Subscription: map[string]int{"orders": math.MaxInt32 + 1}, Pattern: PatternStatic}},
		{"2^31-1 streams", Registration{Subscription: map[string]int{"orders": math.MaxInt32}, Pattern: PatternStatic}},
		{"one stream above the limit", Registration{Subscription: map[string]int{"orders": MaxStreams + 1}, Pattern: PatternStatic}},
		{"wildcard above the limit", Registration{Subscription: map[string]int{".*": MaxStreams + 1}, Pattern: PatternWhitelist}},
		{"too many streams in all", Registration{Subscription: countedTopics(MaxThreads/MaxStreams+1, MaxStreams), Pattern: PatternStatic}},
		{"too many topics", Registration{Subscription: countedTopics(MaxTopics+1, 1), Pattern: PatternStatic}},
		{"nil subscription", Registration{Pattern: PatternStatic}},
		{"empty subscription", Registration{Subscription: map[string]int{}, Pattern: PatternStatic}},
		{"whitelist without regex", Registration{Subscription: map[string]int{}, Pattern: PatternWhitelist}},
		{"whitelist with two regexes", Registration{Subscription: map[string]int{"a.*": 1, "b.*": 1}, Pattern: PatternWhitelist}},
		{"blacklist with two regexes", Registration{Subscription: map[string]int{"a.*": 1, "b.*": 1}, Pattern: PatternBlacklist}},
		{"empty pattern", Registration{Subscription: sub}},
		{"unknown pattern", Registration{Subscription: sub, Pattern: "regex"}},
		{"pattern in upper case", Registration{Subscription: sub, Pattern: "STATIC"}},
		{"version 2", Registration{Version: 2, Subscription: sub, Pattern: PatternStatic}},
		{"empty topic", Registration{Subscription: map[string]int{"": 1}, Pattern: PatternStatic}},
		{"invalid UTF-8", Registration{Subscription: map[string]int{"a\xffb": 1}, Pattern: PatternWhitelist}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := EncodeRegistration(tt.r)
			require.Error(t, err)
			assert.Nil(t, got)
			assert.NotRegexp(t, `^zkutil: `, err.Error())
		})
	}
}

func TestDecodeRegistration(t *testing.T) {
	static := func(ts int64, version int, sub map[string]int) Registration {
		return Registration{Version: version, Subscription: sub, Pattern: PatternStatic, Timestamp: ts}
	}
	tests := []struct {
		name string
		data string
		want Registration
	}{
		{
			name: "Scala 1.1.1",
			data: `{"version":1,"subscription":{"orders":2,"payments":1},"pattern":"static","timestamp":"1531000000000"}`,
			want: static(1531000000000, 1, map[string]int{"orders": 2, "payments": 1}),
		},
		{
			name: "Scala 0.8.0 sorted and spaced",
			data: `{ "pattern":"static", "subscription":{ "orders": 2 }, "timestamp":"1385000000000", "version":1 }`,
			want: static(1385000000000, 1, map[string]int{"orders": 2}),
		},
		{
			name: "keys reordered, timestamp a number",
			data: `{"timestamp":1531000000000,"pattern":"static","version":1,"subscription":{"b":1,"a":3}}`,
			want: static(1531000000000, 1, map[string]int{"a": 3, "b": 1}),
		},
		{
			name: "pretty-printed",
			data: "{\n  \"version\" : 1,\n  \"subscription\" : {\n    \"orders\" : 2\n  },\n  \"pattern\" : \"static\",\n  \"timestamp\" : \"7\"\n}\n",
			want: static(7, 1, map[string]int{"orders": 2}),
		},
		{
			name: "version and timestamp missing",
			data: `{"pattern":"static","subscription":{"orders":1}}`,
			want: static(0, 0, map[string]int{"orders": 1}),
		},
		{
			name: "garbage version and timestamp are ignored",
			data: `{"version":"one","pattern":"static","subscription":{"orders":1},"timestamp":"soon"}`,
			want: static(0, 0, map[string]int{"orders": 1}),
		},
		{
			name: "fractional timestamp is ignored",
			data: `{"version":1,"pattern":"static","subscription":{"orders":1},"timestamp":1.5e12}`,
			want: static(0, 1, map[string]int{"orders": 1}),
		},
		{
			name: "whitelist written once-escaped",
			data: `{"version":1,"subscription":{"foo\\..*":1},"pattern":"white_list","timestamp":"1"}`,
			want: Registration{Version: 1, Subscription: map[string]int{`foo\..*`: 1}, Pattern: PatternWhitelist, Timestamp: 1},
		},
		{
			name: "whitelist double-escaped by Scala 1.0.1+ is kept as is",
			data: `{"version":1,"subscription":{"foo\\\\..*":1},"pattern":"white_list","timestamp":"1"}`,
			want: Registration{Version: 1, Subscription: map[string]int{`foo\\..*`: 1}, Pattern: PatternWhitelist, Timestamp: 1},
		},
		{
			name: "blacklist with escaped slash and unicode escape",
			data: `{"version":1,"subscription":{"a\/b\u0041":2},"pattern":"black_list","timestamp":"1"}`,
			want: Registration{Version: 1, Subscription: map[string]int{"a/bA": 2}, Pattern: PatternBlacklist, Timestamp: 1},
		},
		{
			name: "unknown pattern means static",
			data: `{"version":1,"subscription":{"orders":1},"pattern":"regex","timestamp":"1"}`,
			want: static(1, 1, map[string]int{"orders": 1}),
		},
		{
			name: "wildcard with empty subscription means static",
			data: `{"version":1,"subscription":{},"pattern":"white_list","timestamp":"1"}`,
			want: static(1, 1, map[string]int{}),
		},
		{
			name: "duplicate topic, last wins as in Jackson",
			data: `{"pattern":"static","subscription":{"t":1,"t":5}}`,
			want: static(0, 0, map[string]int{"t": 5}),
		},
		{
			name: "extra keys are ignored",
			data: `{"pattern":"static","subscription":{"t":1},"assignment":"roundrobin","extra":[1,{}]}`,
			want: static(0, 0, map[string]int{"t": 1}),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeRegistration(regPath, []byte(tt.data))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// countedTopics returns a subscription of n topics with streams streams
// each.
func countedTopics(n, streams int) map[string]int {
	sub := make(map[string]int, n)
	for i := range n {
		sub["t"+strconv.Itoa(i)] = streams
	}
	return sub
}

// TestRegistrationLimits: the largest registrations within the limits
// round-trip; the decoder refuses the smallest ones beyond them, among them
// the 2^31-1 streams Scala would accept and every member would expand into
// tens of gigabytes of thread ids.
func TestRegistrationLimits(t *testing.T) {
	for _, sub := range []map[string]int{
		{"t": MaxStreams},
		countedTopics(MaxThreads/MaxStreams, MaxStreams),
		countedTopics(MaxTopics, 1),
		countedTopics(MaxTopics, MaxThreads/MaxTopics),
	} {
		r := Registration{Version: 1, Subscription: sub, Pattern: PatternStatic, Timestamp: 1}
		enc, err := EncodeRegistration(r)
		require.NoError(t, err)
		back, err := DecodeRegistration(regPath, enc)
		require.NoError(t, err)
		require.Equal(t, r, back)
	}

	tests := []struct {
		name, data, want string
	}{
		{"2^31-1 streams", `{"version":1,"subscription":{"t":2147483647},"pattern":"static","timestamp":"1"}`,
			`stream count of "t" is 2147483647, more than the limit of 65536`},
		{"one above the stream limit", `{"pattern":"static","subscription":{"a":1,"t":65537}}`,
			`stream count of "t" is 65537, more than the limit of 65536`},
		{"wildcard above the stream limit", `{"pattern":"white_list","subscription":{".*":65537}}`,
			`stream count of ".*" is 65537`},
		{"first bad entry in key order", `{"pattern":"static","subscription":{"z":0,"b":70000,"a":1}}`,
			`stream count of "b" is 70000`},
		{"negative first in key order", `{"pattern":"static","subscription":{"z":70000,"b":-3}}`,
			`stream count of "b" is -3, want at least 1`},
		{"too many streams in all", string(mustJSON(t, countedTopics(MaxThreads/MaxStreams+1, MaxStreams))),
			`registration asks for 1114112 streams in all, more than the limit of 1048576`},
		{"too many topics", string(mustJSON(t, countedTopics(MaxTopics+1, 1))),
			`registration lists 65537 topics, more than the limit of 65536`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeRegistration(regPath, []byte(tt.data))
			requireDecodeError(t, err, regPath)
			require.ErrorContains(t, err, tt.want)
			require.Equal(t, Registration{}, got)
		})
	}
}

// mustJSON returns a static registration of sub.
func mustJSON(t *testing.T, sub map[string]int) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"version": 1, "pattern": "static", "subscription": sub})
	require.NoError(t, err)
	return b
}

func TestDecodeRegistrationRejects(t *testing.T) {
	tests := []struct{ name, data string }{
		{"nil", ""},
		{"blank", " \n"},
		{"null", "null"},
		{"array", `[{"pattern":"static","subscription":{"t":1}}]`},
		{"number", "42"},
		{"string", `"static"`},
		{"truncated", `{"pattern":"static","subscription":{"t":1}`},
		{"trailing garbage", `{"pattern":"static","subscription":{"t":1}} x`},
		{"two objects", `{"pattern":"static","subscription":{"t":1}}{}`},
		{"bad escape", `{"pattern":"static","subscription":{"t\q":1}}`},
		{"single quotes", `{'pattern':'static','subscription':{'t':1}}`},
		{"no pattern", `{"version":1,"subscription":{"t":1},"timestamp":"1"}`},
		{"no subscription", `{"version":1,"pattern":"static","timestamp":"1"}`},
		{"pattern key case differs", `{"Pattern":"static","subscription":{"t":1}}`},
		{"null pattern", `{"pattern":null,"subscription":{"t":1}}`},
		{"numeric pattern", `{"pattern":1,"subscription":{"t":1}}`},
		{"null subscription", `{"pattern":"static","subscription":null}`},
		{"array subscription", `{"pattern":"static","subscription":["t"]}`},
		{"string subscription", `{"pattern":"static","subscription":"t"}`},
		{"zero streams", `{"pattern":"static","subscription":{"orders":0}}`},
		{"negative streams", `{"pattern":"static","subscription":{"orders":2,"x":-1}}`},
		{"fractional streams", `{"pattern":"static","subscription":{"orders":1.5}}`},
		{"float that is an integer", `{"pattern":"static","subscription":{"orders":1.0}}`},
		{"exponent", `{"pattern":"static","subscription":{"orders":1e1}}`},
		{"string streams", `{"pattern":"static","subscription":{"orders":"2"}}`},
		{"null streams", `{"pattern":"static","subscription":{"orders":null}}`},
		{"bool streams", `{"pattern":"static","subscription":{"orders":true}}`},
		{"2^31 streams", `{"pattern":"static","subscription":{"orders":2147483648}}`},
		{"huge streams", `{"pattern":"static","subscription":{"orders":99999999999999999999999}}`},
		{"wildcard with two regexes", `{"pattern":"white_list","subscription":{"a.*":1,"b.*":1}}`},
		{"blacklist with zero streams", `{"pattern":"black_list","subscription":{"a.*":0}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeRegistration(regPath, []byte(tt.data))
			requireDecodeError(t, err, regPath)
			assert.Equal(t, Registration{}, got)
		})
	}
}

func TestNormalizeTopicFilter(t *testing.T) {
	tests := []struct{ raw, want string }{
		{"foo.*", "foo.*"},
		{"  foo.*\t\n", "foo.*"},
		{"a,b, c", "a|b|c"},
		{"a | b", "a|b"},
		{`"foo.*"`, "foo.*"},
		{`'foo.*'`, "foo.*"},
		{`"'foo'"`, "foo"},
		{` " a , b " `, "a|b"},
		{`a"b'c`, `a"b'c`},
		{`""`, ""},
		{"", ""},
		{`foo\..*`, `foo\..*`},
		{"\x00foo\x1f", "foo"},
		{"a\tb", "a\tb"},
		{"foo\"\u2028", "foo\u2028"},
		{"foo'\u0085", "foo\u0085"},
		{"foo\u2028\"", "foo\u2028"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, NormalizeTopicFilter(tt.raw), "NormalizeTopicFilter(%q)", tt.raw)
	}
}

func FuzzDecodeRegistration(f *testing.F) {
	for _, s := range []string{
		`{"version":1,"subscription":{"orders":2,"payments":1},"pattern":"static","timestamp":"1531000000000"}`,
		`{ "pattern":"static", "subscription":{ "orders": 2 }, "timestamp":"1385000000000", "version":1 }`,
		`{"version":1,"subscription":{"foo\\..*":1},"pattern":"white_list","timestamp":"1"}`,
		`{"version":1,"subscription":{"foo\\\\..*":1},"pattern":"black_list","timestamp":1}`,
		`{"version":1,"subscription":{"a\/b\u0000\u0085":2147483647},"pattern":"white_list"}`,
		`{"pattern":"white_list","subscription":{}}`,
		`{"pattern":"static","subscription":{"":1}}`,
		`{"pattern":"white_list","subscription":{"a":1,"b":1}}`,
		`{"pattern":"static","subscription":{"t":0}}`,
		`{"pattern":"static","subscription":{"t":1.0}}`,
		`{"pattern":"static","subscription":{"t":"1"}}`,
		`{"version":1,"subscription":{"t":2147483647},"pattern":"static","timestamp":"1"}`,
		`{"pattern":"static","subscription":{"a":65536,"b":65536,"c":-1}}`,
		`{"pattern":null,"subscription":null}`,
		"{\"pattern\":\"static\",\"subscription\":{\"\xff\":1}}",
		`null`, `[]`, `{`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := DecodeRegistration(regPath, data)
		if err != nil {
			requireDecodeError(t, err, regPath)
			return
		}
		require.Contains(t, []string{PatternStatic, PatternWhitelist, PatternBlacklist}, r.Pattern)
		require.NotNil(t, r.Subscription)
		if r.Pattern != PatternStatic {
			require.Len(t, r.Subscription, 1)
		}
		emptyKey := false
		total := 0
		require.LessOrEqual(t, len(r.Subscription), MaxTopics)
		for k, n := range r.Subscription {
			require.GreaterOrEqual(t, n, 1)
			require.LessOrEqual(t, n, MaxStreams)
			total += n
			emptyKey = emptyKey || k == ""
		}
		require.LessOrEqual(t, total, MaxThreads, "nobody may expand more thread ids than MaxThreads")

		r.Version = 1
		enc, err := EncodeRegistration(r)
		if len(r.Subscription) == 0 || emptyKey {
			require.Error(t, err) // documented refusals
			return
		}
		require.NoError(t, err)
		back, err := DecodeRegistration(regPath, enc)
		require.NoError(t, err)
		require.Equal(t, r, back)
	})
}

// FuzzEncodeRegistration drives the encoder, and so the JSON escaper, with
// arbitrary keys: whatever it accepts must decode to itself, with this
// package's decoder and with encoding/json.
func FuzzEncodeRegistration(f *testing.F) {
	f.Add(PatternStatic, "orders", 2, int64(1531000000000))
	f.Add(PatternWhitelist, `foo\..*`, 1, int64(0))
	f.Add(PatternBlacklist, "a\"b/c\x00\x1f\x7f\u0085\u009f\u00a0\u2028\U0001F600", 3, int64(-1))
	f.Add(PatternWhitelist, "\xff\xfe", 1, int64(1))
	f.Add("", "t", 0, int64(1))
	f.Fuzz(func(t *testing.T, pattern, key string, n int, ts int64) {
		r := Registration{Version: 1, Subscription: map[string]int{key: n}, Pattern: pattern, Timestamp: ts}
		enc, err := EncodeRegistration(r)
		if err != nil {
			require.NotRegexp(t, `^zkutil: `, err.Error())
			return
		}
		back, err := DecodeRegistration(regPath, enc)
		require.NoError(t, err)
		require.Equal(t, r, back)

		var std struct {
			Subscription map[string]int
			Pattern      string
			Timestamp    string
		}
		require.NoError(t, json.Unmarshal(enc, &std))
		require.Equal(t, r.Subscription, std.Subscription)
		require.Equal(t, r.Pattern, std.Pattern)
	})
}

// TestRegistrationAssignmentStrategy: the strategy a zkconsumer member runs
// is a fifth field after Kafka's four, which stay byte for byte what Scala
// writes; it is read back, a registration without it (Scala's) reads as
// none, and a non-string value is refused.
func TestRegistrationAssignmentStrategy(t *testing.T) {
	r := Registration{Version: 1, Pattern: PatternStatic, Subscription: map[string]int{"orders": 2}, Timestamp: 1531000000000}
	plain, err := EncodeRegistration(r)
	if err != nil {
		t.Fatal(err)
	}
	r.AssignmentStrategy = "sticky"
	with, err := EncodeRegistration(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"version":1,"subscription":{"orders":2},"pattern":"static","timestamp":"1531000000000","assignment_strategy":"sticky"}`
	if string(with) != want {
		t.Errorf("encoded %s, want %s", with, want)
	}
	if string(plain) != strings.TrimSuffix(want, `,"assignment_strategy":"sticky"}`)+"}" {
		t.Errorf("without a strategy: %s", plain)
	}
	got, err := DecodeRegistration("p", with)
	if err != nil || got.AssignmentStrategy != "sticky" {
		t.Errorf("decoded %+v, %v", got, err)
	}
	got, err = DecodeRegistration("p", plain)
	if err != nil || got.AssignmentStrategy != "" {
		t.Errorf("decoded Scala's form as %+v, %v", got, err)
	}
	if _, err := DecodeRegistration("p", []byte(`{"pattern":"static","subscription":{"t":1},"assignment_strategy":7}`)); err == nil {
		t.Error("a numeric assignment_strategy was accepted")
	}
}
