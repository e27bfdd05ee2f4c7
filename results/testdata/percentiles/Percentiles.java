// Prints "count percentile value" for each histogram in histograms.txt, as HdrHistogram's Java
// library computes it. Run (Java 11+ runs a single source file):
//   java -cp HdrHistogram-2.2.2.jar Percentiles.java histograms.txt > java.txt
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Base64;
import java.util.List;
import java.util.zip.DataFormatException;
import org.HdrHistogram.Histogram;

public class Percentiles {
    static final double[] PS = {0, 25, 50, 90, 99, 99.9, 99.99, 99.999, 100};

    public static void main(String[] args) throws Exception {
        List<String> lines = Files.readAllLines(Paths.get(args[0]));
        for (String line : lines) {
            String[] f = line.trim().split(" ");
            byte[] b = Base64.getDecoder().decode(f[1]);
            Histogram h = Histogram.decodeFromCompressedByteBuffer(ByteBuffer.wrap(b), 0);
            for (double p : PS) {
                System.out.println(f[0] + " " + fmt(p) + " " + h.getValueAtPercentile(p));
            }
        }
    }

    static String fmt(double p) {
        return p == Math.rint(p) ? String.valueOf((long) p) : String.valueOf(p);
    }
}
