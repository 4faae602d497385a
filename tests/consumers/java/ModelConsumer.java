// A consumer of the installed tensorlife.jar alone, text in and text out, as a Java user writes
// it.  Its arguments: the model (the C tests' tiny model) and the ids the C API drew from the
// same seed.
import java.util.Arrays;
import org.tensorlife.Model;
import org.tensorlife.Sampler;
import org.tensorlife.Session;

public class ModelConsumer {
    public static void main(String[] args) {
        int[] expected = Arrays.stream(args[1].split(",")).mapToInt(Integer::parseInt).toArray();
        StringBuilder text = new StringBuilder();
        try (Model m = Model.open(args[0]); Session s = m.newSession(); Session again = m.newSession()) {
            for (String piece : s.generate("abc ab", expected.length, Sampler.of(0.9f, 5))) text.append(piece);
            again.feedText("abc ab");
            int[] ids = new int[expected.length];
            for (int i = 0; i < ids.length; i++) again.feed(ids[i] = again.sample(Sampler.of(0.9f, 5)));
            if (!Arrays.equals(ids, expected)) {
                System.out.println("tokens " + Arrays.toString(ids) + ", the C API's " + Arrays.toString(expected));
                System.exit(1);
            }
        }
        System.out.println("java model ok: " + expected.length + " tokens as the C API drew them, " + text.length() + " chars");
    }
}
