// RegexConsumer is a Kafka 4.x Java consumer (KafkaConsumer from the
// kafka-clients jar on the class path) in a consumer-protocol group
// (group.protocol=consumer, KIP-848) subscribed by a regex that the broker
// evaluates: KafkaConsumer.subscribe(SubscriptionPattern), which sends it
// as ConsumerGroupHeartbeat's SubscribedTopicRegex. Run it with
// `java -cp '<kafka 4 lib>/*' RegexConsumer.java <bootstrap> <group> <client.id> <regex>`.
//
// It reads from the earliest offset, commits automatically every 200 ms,
// and prints one line per record, flushed at once:
//   R <topic> <partition> <offset> <seq>
// where <seq> is the number between "seq=" and ';' of the record's value
// (testcluster's Produce), and "assigned <topic-partition> ..." after each
// assignment change. On SIGTERM it wakes the poll, closes the consumer
// (which commits and leaves the group) and exits.
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.SubscriptionPattern;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public class RegexConsumer {
    public static void main(String[] args) throws Exception {
        if (args.length != 4) {
            System.err.println("usage: RegexConsumer <bootstrap> <group> <client.id> <regex>");
            System.exit(2);
        }
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        Properties p = new Properties();
        p.put("bootstrap.servers", args[0]);
        p.put("group.id", args[1]);
        p.put("client.id", args[2]);
        p.put("group.protocol", "consumer");
        p.put("key.deserializer", ByteArrayDeserializer.class.getName());
        p.put("value.deserializer", ByteArrayDeserializer.class.getName());
        p.put("auto.offset.reset", "earliest");
        p.put("enable.auto.commit", "true");
        p.put("auto.commit.interval.ms", "200");
        KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p);
        CountDownLatch done = new CountDownLatch(1);
        Thread main = Thread.currentThread();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            consumer.wakeup();
            try {
                done.await();
            } catch (InterruptedException e) {
                main.interrupt();
            }
        }));
        try {
            consumer.subscribe(new SubscriptionPattern(args[3]), new ConsumerRebalanceListener() {
                public void onPartitionsRevoked(Collection<TopicPartition> partitions) {}

                public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                    StringBuilder line = new StringBuilder("assigned");
                    for (TopicPartition tp : consumer.assignment()) {
                        line.append(' ').append(tp);
                    }
                    out.println(line);
                    out.flush();
                }
            });
            while (true) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    String v = new String(r.value(), StandardCharsets.UTF_8);
                    out.println("R " + r.topic() + " " + r.partition() + " " + r.offset() + " " + v.substring(4, v.indexOf(';')));
                }
                out.flush();
            }
        } catch (WakeupException e) {
            // SIGTERM
        } finally {
            consumer.close();
            out.println("closed");
            out.flush();
            done.countDown();
        }
    }
}
