package dev.fencing.agent.instrumentation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The one-pass search answers what one search per marker answered, on real class files and on random bytes. */
class MarkerSetTest {
  private static final List<String> MARKERS = List.of("java/sql/", "loadClass",
      "(Ljakarta/servlet/ServletRequest;Ljakarta/servlet/ServletResponse;)V", "HttpRequestRetryStrategy",
      "AsyncMainClientExec$", "java/util/concurrent/", "ja");

  @Test
  void agreesWithOneSearchPerMarkerOnRealClassFiles() throws IOException {
    MarkerSet set = new MarkerSet(MARKERS);
    int checked = 0;
    for (Class<?> c : List.of(java.sql.DriverManager.class, ClassLoader.class, String.class, java.net.URLClassLoader.class,
        java.util.concurrent.ThreadPoolExecutor.class, MarkerSetTest.class, FencingTransformer.class)) {
      byte[] bytes = classFile(c);
      assertThat(set.find(bytes)).as(c.getName()).isEqualTo(oneByOne(bytes));
      checked++;
    }
    assertThat(checked).isEqualTo(7);
    assertThat(set.find(classFile(java.sql.DriverManager.class)) & 1L).as("DriverManager names java/sql/").isEqualTo(1L);
    assertThat(set.find(classFile(ClassLoader.class)) & 2L).as("ClassLoader declares loadClass").isEqualTo(2L);
  }

  @Test
  void agreesWithOneSearchPerMarkerOnRandomBytes() {
    MarkerSet set = new MarkerSet(MARKERS);
    Random random = new Random(20);
    byte[] alphabet = "java/sqlloadClssHtpRequestyAMinExc$()LV;".getBytes(StandardCharsets.US_ASCII);
    for (int n = 0; n < 20_000; n++) {
      byte[] bytes = new byte[random.nextInt(40)];
      for (int i = 0; i < bytes.length; i++) {
        bytes[i] = alphabet[random.nextInt(alphabet.length)];
      }
      if (random.nextInt(4) == 0 && bytes.length > 12) { // plant a marker, at the very end sometimes
        byte[] m = MARKERS.get(random.nextInt(MARKERS.size())).getBytes(StandardCharsets.US_ASCII);
        int at = random.nextBoolean() ? Math.max(0, bytes.length - m.length) : random.nextInt(bytes.length);
        System.arraycopy(m, 0, bytes, at, Math.min(m.length, bytes.length - at));
      }
      assertThat(set.find(bytes)).as(new String(bytes, StandardCharsets.ISO_8859_1)).isEqualTo(oneByOne(bytes));
    }
  }

  @Test
  void emptyAndTinyInputsFindNothing() {
    MarkerSet set = new MarkerSet(MARKERS);
    assertThat(set.find(new byte[0])).isZero();
    assertThat(set.find(new byte[] {'j'})).isZero();
    assertThat(set.find("ja".getBytes(StandardCharsets.US_ASCII))).isEqualTo(1L << 6);
    assertThat(new MarkerSet(List.of()).find("java/sql/".getBytes(StandardCharsets.US_ASCII))).isZero();
  }

  @Test
  void refusesMarkersItCannotSearch() {
    assertThatThrownBy(() -> new MarkerSet(List.of("x"))).hasMessageContaining("'x' is shorter than two characters");
  }

  private static long oneByOne(byte[] bytes) {
    long found = 0;
    for (int i = 0; i < MARKERS.size(); i++) {
      if (FencingTransformer.contains(bytes, MARKERS.get(i).getBytes(StandardCharsets.US_ASCII))) {
        found |= 1L << i;
      }
    }
    return found;
  }

  private static byte[] classFile(Class<?> c) throws IOException {
    try (InputStream in = c.getResourceAsStream("/" + c.getName().replace('.', '/') + ".class")) {
      return in.readAllBytes();
    }
  }
}
