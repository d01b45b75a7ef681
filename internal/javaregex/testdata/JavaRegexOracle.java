// JavaRegexOracle answers, for the tests of the Java regex translation,
// what java.util.regex.Pattern makes of a pattern: run it with
// `java JavaRegexOracle.java` (Java 11 or later).
//
// Each input line is a pattern and the strings to match, all as hex-encoded
// UTF-8, separated by single spaces (an empty string is "-"). Each output
// line is "E <message>" when Pattern.compile refuses the pattern, or "M "
// followed by one '1' or '0' per string: whether String.matches, which
// Kafka's TopicFilter uses, accepts it.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

public class JavaRegexOracle {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, false, "UTF-8");
        String line;
        while ((line = in.readLine()) != null) {
            String[] fields = line.split(" ", -1);
            Pattern pattern;
            try {
                pattern = Pattern.compile(decode(fields[0]));
            } catch (PatternSyntaxException e) {
                out.println("E " + e.getDescription().replace('\n', ' '));
                continue;
            }
            StringBuilder bits = new StringBuilder("M ");
            for (int i = 1; i < fields.length; i++) {
                bits.append(pattern.matcher(decode(fields[i])).matches() ? '1' : '0');
            }
            out.println(bits);
        }
        out.flush();
    }

    private static String decode(String hex) {
        if (hex.equals("-")) {
            return "";
        }
        byte[] b = new byte[hex.length() / 2];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
        }
        return new String(b, StandardCharsets.UTF_8);
    }
}
