// JavaAssignorOracle answers, for the tests of the Java-compatible
// assignors, what Kafka's own RangeAssignor and RoundRobinAssignor assign.
// Run it with `java -cp kafka-clients-3.9.x.jar JavaAssignorOracle.java`.
//
// Each input line is one case, fields separated by single spaces:
//   <assignor name> <topics> <member>...
// <topics> is "-" or comma-separated "<topic hex>:<partition count>";
// each <member> is "<member id hex>;<instance id hex or ->;<rack or ->;<topic hex>,..."
// (an empty topic list is "-"). The partitions have no replica racks, so a
// member's rack must not change the result.
//
// For each case the output is one line per member that got partitions,
// "<member id hex> <topic hex>:<p>,<p>,... ...", sorted, then "END".
import java.nio.charset.StandardCharsets;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.*;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.RoundRobinAssignor;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

public class JavaAssignorOracle {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        StringBuilder out = new StringBuilder();
        Node node = new Node(0, "localhost", 9092);
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.split(" ", -1);
            ConsumerPartitionAssignor assignor = f[0].equals("range") ? new RangeAssignor() : new RoundRobinAssignor();
            List<PartitionInfo> parts = new ArrayList<>();
            if (!f[1].equals("-")) {
                for (String tc : f[1].split(",")) {
                    String[] kv = tc.split(":");
                    int n = Integer.parseInt(kv[1]);
                    for (int p = 0; p < n; p++) {
                        parts.add(new PartitionInfo(decode(kv[0]), p, node, new Node[] {node}, new Node[] {node}));
                    }
                }
            }
            Cluster cluster = new Cluster("oracle", List.of(node), parts, Set.of(), Set.of());
            Map<String, ConsumerPartitionAssignor.Subscription> subs = new HashMap<>();
            for (int i = 2; i < f.length; i++) {
                String[] m = f[i].split(";", -1);
                List<String> topics = new ArrayList<>();
                if (!m[3].equals("-")) {
                    for (String t : m[3].split(",")) {
                        topics.add(decode(t));
                    }
                }
                Optional<String> rack = m[2].equals("-") ? Optional.empty() : Optional.of(m[2]);
                ConsumerPartitionAssignor.Subscription s =
                    new ConsumerPartitionAssignor.Subscription(topics, null, List.of(), -1, rack);
                s.setGroupInstanceId(m[1].equals("-") ? Optional.empty() : Optional.of(decode(m[1])));
                subs.put(decode(m[0]), s);
            }
            Map<String, ConsumerPartitionAssignor.Assignment> result =
                assignor.assign(cluster, new ConsumerPartitionAssignor.GroupSubscription(subs)).groupAssignment();
            List<String> lines = new ArrayList<>();
            for (Map.Entry<String, ConsumerPartitionAssignor.Assignment> e : result.entrySet()) {
                TreeMap<String, List<Integer>> byTopic = new TreeMap<>();
                for (TopicPartition tp : e.getValue().partitions()) {
                    byTopic.computeIfAbsent(encode(tp.topic()), k -> new ArrayList<>()).add(tp.partition());
                }
                if (byTopic.isEmpty()) {
                    continue;
                }
                StringBuilder b = new StringBuilder(encode(e.getKey()));
                for (Map.Entry<String, List<Integer>> t : byTopic.entrySet()) {
                    Collections.sort(t.getValue());
                    b.append(' ').append(t.getKey()).append(':');
                    for (int j = 0; j < t.getValue().size(); j++) {
                        b.append(j == 0 ? "" : ",").append(t.getValue().get(j));
                    }
                }
                lines.add(b.toString());
            }
            Collections.sort(lines);
            for (String l : lines) {
                out.append(l).append('\n');
            }
            out.append("END\n");
        }
        System.out.print(out);
        System.out.flush();
    }

    private static String encode(String s) {
        StringBuilder b = new StringBuilder();
        for (byte x : s.getBytes(StandardCharsets.UTF_8)) {
            b.append(String.format("%02x", x));
        }
        return b.toString();
    }

    private static String decode(String hex) {
        byte[] b = new byte[hex.length() / 2];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
        }
        return new String(b, StandardCharsets.UTF_8);
    }
}
