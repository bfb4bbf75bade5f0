package dev.fencing.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.testing.Gen;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TokenSignatureTest {

  private static final byte[] KEY = new byte[32];

  static {
    for (int i = 0; i < KEY.length; i++) {
      KEY[i] = (byte) i;
    }
  }

  @TempDir
  Path dir;

  @Test
  void matchesAnIndependentHmacSha256() {
    // python3: base64.urlsafe_b64encode(hmac.new(bytes(range(32)), b'fencing-v1:ledger:42', sha256).digest())
    assertThat(TokenSignature.of(KEY).sign("ledger", 42)).isEqualTo("wDrfzDqh6kgnrg5QxReXYX9HWWjM14Mf9wHZLh95GXg");
  }

  @Test
  void verifiesItsOwnSignaturesOnlyForTheSameLockAndToken() {
    TokenSignature s = TokenSignature.of(KEY);
    String sig = s.sign("ledger", Long.MAX_VALUE);
    assertThat(sig).hasSize(TokenSignature.SIGNATURE_CHARS);
    assertThat(s.verify("ledger", Long.MAX_VALUE, sig)).isTrue();
    assertThat(s.verify("ledger", Long.MAX_VALUE - 1, sig)).isFalse();
    assertThat(s.verify("ledgers", Long.MAX_VALUE, sig)).isFalse();
    byte[] other = KEY.clone();
    other[0] = 1;
    assertThat(TokenSignature.of(other).verify("ledger", Long.MAX_VALUE, sig)).isFalse();
  }

  @Test
  void malformedSignaturesNeverVerify() {
    TokenSignature s = TokenSignature.of(KEY);
    String good = s.sign("ledger", 7);
    Gen gen = new Gen(8_4L);
    for (int i = 0; i < 500; i++) {
      String bad = gen.oneOf(
          () -> good + "=",                                           // padded
          () -> good.substring(0, gen.between(0, 42)),                // truncated
          () -> good + gen.chars('A', 'z', 1, 5),                     // extended
          () -> flip(good, gen.between(0, 42), gen),                  // one character changed
          () -> gen.chars(' ', '~', 43, 43),                          // printable junk of the right length
          () -> Base64.getEncoder().withoutPadding().encodeToString(new byte[32]).replace('A', '+'), // other alphabet
          () -> " " + good.substring(1));
      if (!bad.equals(good)) {
        assertThat(s.verify("ledger", 7, bad)).as("signature '%s'", bad).isFalse();
      }
    }
    assertThat(s.verify("ledger", 7, null)).isFalse();
    // Last character with trailing bits set decodes to the same bytes: not the canonical form, refused.
    char last = good.charAt(42);
    String alias = good.substring(0, 42) + (char) (last + 1);
    assertThat(s.verify("ledger", 7, alias)).isFalse();
  }

  private static String flip(String s, int at, Gen gen) {
    char c = s.charAt(at);
    char r = gen.of('A', 'b', '0', '-', '_', 'Z');
    return s.substring(0, at) + (r == c ? 'q' : r) + s.substring(at + 1);
  }

  @Test
  void loadsBase64KeyFilesInEitherAlphabet() throws Exception {
    Path std = write("std.key", Base64.getEncoder().encodeToString(KEY) + "\n");
    Path url = write("url.key", "  " + Base64.getUrlEncoder().withoutPadding().encodeToString(KEY) + "  \nignored\n");
    String expected = TokenSignature.of(KEY).sign("a", 1);
    assertThat(TokenSignature.load(std).sign("a", 1)).isEqualTo(expected);
    assertThat(TokenSignature.load(url).sign("a", 1)).isEqualTo(expected);
    assertThat(TokenSignature.load(std).toString()).isEqualTo(std.toString()).doesNotContain("AAEC");
  }

  @Test
  void badKeyFilesNameThePathAndTheExpectedForm() throws Exception {
    Path shortKey = write("short.key", Base64.getEncoder().encodeToString(new byte[31]));
    Path notBase64 = write("junk.key", "this is not base64!");
    Path empty = write("empty.key", "\n");
    for (Path p : new Path[] {shortKey, notBase64, empty, dir.resolve("missing.key"), dir}) {
      assertThatThrownBy(() -> TokenSignature.load(p)).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining(p.toString()).hasMessageContaining(TokenSignature.EXPECTED_FORM);
    }
    assertThatThrownBy(() -> TokenSignature.load(shortKey)).hasMessageContaining("31 bytes");
    assertThatThrownBy(() -> TokenSignature.of(new byte[16])).hasMessageContaining("at least 32");
  }

  private Path write(String name, String content) throws Exception {
    return Files.writeString(dir.resolve(name), content, StandardCharsets.US_ASCII);
  }
}
