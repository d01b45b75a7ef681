// RE2JOracle answers, for the tests of the translation of whitelists into
// the regex a KIP-848 group coordinator runs, what RE2/J
// (com.google.re2j.Pattern, which Kafka 4.x's coordinator compiles a
// member's SubscribedTopicRegex with) makes of a pattern: run it with
// `java -cp re2j-<version>.jar RE2JOracle.java`.
//
// The protocol is JavaRegexOracle's: each input line is a pattern and the
// strings to match, all as hex-encoded UTF-8, separated by single spaces
// (an empty string is "-"). Each output line is "E <message>" when
// Pattern.compile refuses the pattern, or "M " followed by one '1' or '0'
// per string: whether Matcher.matches, which the coordinator uses, accepts
// it.
import com.google.re2j.Pattern;
import com.google.re2j.PatternSyntaxException;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

public class RE2JOracle {
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
                out.println("E " + e.getMessage().replace('\n', ' '));
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
