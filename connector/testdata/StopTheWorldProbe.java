// StopTheWorldProbe runs Kafka Java consumers (KafkaConsumer from the
// kafka-clients jar on the class path) for BenchmarkStopTheWorld, which
// tells it, on stdin, when a member joins or leaves, and reads on stdout
// when each member received records of which partitions. Run it with
// `java -cp '<kafka lib>/*' StopTheWorldProbe.java <bootstrap> <topic> <protocol>`,
// <protocol> one of:
//   range               the classic group protocol, RangeAssignor (eager)
//   cooperative-sticky  the classic group protocol, CooperativeStickyAssignor
//   consumer            group.protocol=consumer (KIP-848), the broker's assignor
// The classic protocols use heartbeat.interval.ms 300 and session.timeout.ms
// 6000; the consumer protocol takes both from the broker.
//
// Commands, one a line:
//   join <member> <group>   a new KafkaConsumer, client.id rb-<member>,
//                           subscribes to <topic> in <group> and polls
//   leave <member>          the member's consumer is closed (it commits its
//                           offsets and leaves the group); "left <member>"
//                           is printed once close returns
// Every consumer commits automatically every second and otherwise runs with
// the client's defaults. Output, one a line, times in microseconds since
// the Unix epoch:
//   ready                                  the commands are read from now on
//   r <member> <time> <p> <p> ...          a poll returned records of these
//                                          partitions at <time>
//   owned <member> <time> <p> <p> ...      after a rebalance callback, what
//                                          the member owns from <time> on
//   left <member>
//   error <member> <message>
// Each poll's line is flushed at once. The program exits when stdin ends,
// closing the consumers still running.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.*;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public class StopTheWorldProbe {
    static final PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
    static String bootstrap, topic, protocol;
    static final Map<String, Member> members = new ConcurrentHashMap<>();

    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: StopTheWorldProbe <bootstrap> <topic> range|cooperative-sticky|consumer");
            System.exit(2);
        }
        bootstrap = args[0];
        topic = args[1];
        protocol = args[2];
        props("probe", "probe-group"); // reject an unknown protocol before reading commands
        emit("ready");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.trim().split(" ");
            if (f.length == 3 && f[0].equals("join")) {
                Member m = new Member(f[1], f[2]);
                members.put(f[1], m);
                m.thread.start();
            } else if (f.length == 2 && f[0].equals("leave")) {
                Member m = members.remove(f[1]);
                if (m == null) {
                    emit("error " + f[1] + " no such member");
                } else {
                    m.leave();
                }
            } else if (!line.isBlank()) {
                emit("error - unknown command: " + line);
            }
        }
        for (Member m : members.values()) {
            m.leave();
        }
        for (Member m : members.values()) {
            m.thread.join();
        }
    }

    static Properties props(String member, String group) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("group.id", group);
        p.put("client.id", "rb-" + member);
        p.put("key.deserializer", ByteArrayDeserializer.class.getName());
        p.put("value.deserializer", ByteArrayDeserializer.class.getName());
        p.put("enable.auto.commit", "true");
        p.put("auto.commit.interval.ms", "1000");
        p.put("auto.offset.reset", "latest");
        switch (protocol) {
            case "range":
            case "cooperative-sticky":
                p.put("group.protocol", "classic");
                p.put("partition.assignment.strategy", protocol.equals("range")
                        ? "org.apache.kafka.clients.consumer.RangeAssignor"
                        : "org.apache.kafka.clients.consumer.CooperativeStickyAssignor");
                p.put("heartbeat.interval.ms", "300");
                p.put("session.timeout.ms", "6000");
                break;
            case "consumer":
                p.put("group.protocol", "consumer");
                break;
            default:
                throw new IllegalArgumentException("unknown protocol " + protocol);
        }
        return p;
    }

    static long micros() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
    }

    static void emit(String line) {
        synchronized (out) {
            out.println(line);
            out.flush();
        }
    }

    static String list(long at, Collection<Integer> ps) {
        StringBuilder sb = new StringBuilder().append(at);
        for (int p : ps) {
            sb.append(' ').append(p);
        }
        return sb.toString();
    }

    static final class Member implements ConsumerRebalanceListener {
        final String id, group;
        final Thread thread;
        final TreeSet<Integer> owned = new TreeSet<>();
        volatile boolean leaving;
        volatile KafkaConsumer<byte[], byte[]> consumer;

        Member(String id, String group) {
            this.id = id;
            this.group = group;
            this.thread = new Thread(this::run, "member-" + id);
        }

        void leave() {
            leaving = true;
            KafkaConsumer<byte[], byte[]> c = consumer;
            if (c != null) {
                c.wakeup();
            }
        }

        void run() {
            try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(props(id, group))) {
                consumer = c;
                c.subscribe(List.of(topic), this);
                while (!leaving) {
                    ConsumerRecords<byte[], byte[]> recs;
                    try {
                        recs = c.poll(Duration.ofMillis(100));
                    } catch (WakeupException e) {
                        break;
                    }
                    if (recs.isEmpty()) {
                        continue;
                    }
                    long at = micros();
                    TreeSet<Integer> ps = new TreeSet<>();
                    for (ConsumerRecord<byte[], byte[]> r : recs) {
                        ps.add(r.partition());
                    }
                    emit("r " + id + " " + list(at, ps));
                }
                // try-with-resources closes the consumer: it commits and
                // leaves the group.
            } catch (Exception e) {
                emit("error " + id + " " + e.toString().replace('\n', ' '));
            }
            emit("left " + id);
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> ps) {
            change(ps, false);
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> ps) {
            change(ps, false);
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> ps) {
            change(ps, true);
        }

        private void change(Collection<TopicPartition> ps, boolean add) {
            for (TopicPartition tp : ps) {
                if (add) {
                    owned.add(tp.partition());
                } else {
                    owned.remove(tp.partition());
                }
            }
            emit("owned " + id + " " + list(micros(), owned));
        }
    }
}
