// ClientsVersion prints the version of the kafka-clients jar on the class
// path (from the kafka/kafka-version.properties it carries, next to the
// KafkaConsumer class it loads), for TestClientProgramRunsTheRelease.
import java.io.InputStream;
import java.util.Properties;

public class ClientsVersion {
    public static void main(String[] args) throws Exception {
        Class<?> consumer = Class.forName("org.apache.kafka.clients.consumer.KafkaConsumer");
        Properties p = new Properties();
        try (InputStream in = consumer.getResourceAsStream("/kafka/kafka-version.properties")) {
            p.load(in);
        }
        System.out.println(p.getProperty("version"));
    }
}
