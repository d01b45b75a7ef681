package fetch

// A fetch response is read against the request it answers: each of its
// partition entries is looked up among the partitions the request asked
// for, and only those are kept (their blocks). An
// entry the request did not ask for, or one that repeats a partition, is
// skipped without allocating anything, so that what parsing a response
// allocates depends on the request, not on what the broker sent. Brokers
// answer in the order of the request, which the lookup tries first; a
// response in another order is looked up through maps of the request's
// partitions, built once per request.

// tpKey names a partition in reqIndex's maps.
type tpKey struct {
	topic     string
	partition int32
}

// reqIndex finds the partitions of a request in its response. encode
// fills it (reset, then add in the order the partitions go on the wire);
// respParser reads the response with a respCursor over it.
type reqIndex struct {
	parts []reqPart
	// order lists the positions in parts in the order they were encoded.
	order []int32
	// topics and byTP map the request's topic names and partitions to
	// their strings and positions, once built (mapped) for this request.
	topics map[string]string
	byTP   map[tpKey]int32
	mapped bool
}

// reset starts the index of a request for parts.
func (ix *reqIndex) reset(parts []reqPart) {
	ix.parts, ix.order, ix.mapped = parts, ix.order[:0], false
}

// add records that parts[i] was encoded next.
func (ix *reqIndex) add(i int) { ix.order = append(ix.order, int32(i)) }

// build fills the maps for the current request, once.
func (ix *reqIndex) build() {
	if ix.mapped {
		return
	}
	ix.mapped = true
	if ix.topics == nil || len(ix.byTP) < len(ix.parts)/2 {
		// Made for the request's size; cleared, not made, for the next
		// requests of about that size.
		ix.topics, ix.byTP = map[string]string{}, make(map[tpKey]int32, len(ix.parts))
	} else {
		clear(ix.topics)
		clear(ix.byTP)
	}
	for i, rp := range ix.parts {
		tp := rp.ps.tp
		ix.topics[tp.Topic] = tp.Topic
		if _, dup := ix.byTP[tpKey{tp.Topic, tp.Partition}]; !dup {
			ix.byTP[tpKey{tp.Topic, tp.Partition}] = int32(i)
		}
	}
}

// respCursor walks a response's entries against a reqIndex.
type respCursor struct {
	ix *reqIndex
	// next is the position in ix.order of the partition expected next.
	next int
	// topic is the current topic as the request names it; ok is false
	// when the request did not ask for it.
	topic string
	ok    bool
}

// setTopic makes name the current topic.
func (c *respCursor) setTopic(name []byte) {
	ix := c.ix
	if c.next < len(ix.order) {
		if t := ix.parts[ix.order[c.next]].ps.tp.Topic; t == string(name) {
			c.topic, c.ok = t, true
			return
		}
	}
	ix.build()
	c.topic, c.ok = ix.topics[string(name)]
}

// find returns the position in the request of the current topic's
// partition, -1 if the request did not ask for it.
func (c *respCursor) find(partition int32) int {
	if !c.ok {
		return -1
	}
	ix := c.ix
	if c.next < len(ix.order) {
		i := ix.order[c.next]
		if tp := ix.parts[i].ps.tp; tp.Partition == partition && tp.Topic == c.topic {
			c.next++
			return int(i)
		}
	}
	ix.build()
	if i, ok := ix.byTP[tpKey{c.topic, partition}]; ok {
		return int(i)
	}
	return -1
}
