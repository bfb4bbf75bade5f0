package dev.fencing.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The agent's checks ({@link TokenGrammar}, what it forwards from an inbound request) and the fences' strict reading
 * ({@link TokenHeaders}) are one grammar: whatever a fence accepts, the agent forwards with the same value.
 */
class TokenGrammarTest {

  private static final List<String> TOKENS = List.of("1", "7", "42", "1000000", "9223372036854775807",
      "9223372036854775808", "99999999999999999999", "0", "00", "-1", "+1", "1.0", "1e3", "", " ", "１", "12a", "1,2");
  private static final List<String> GRANTS = List.of("1f2e3d", "!", "~", "a b", "", "x".repeat(64),
      "x".repeat(65), "é", "\t", "lease-7");
  private static final List<String> LOCKS = List.of("ledger", "a.b_c-d", "A9", "x".repeat(128), "x".repeat(129), "",
      "a b", "a/b", "a,b", "ä");

  @Test
  void everyTokenAFenceAcceptsTheAgentReadsAsTheSameValue() {
    for (String t : TOKENS) {
      TokenHeaders.Result fence = TokenHeaders.parse(List.of(t), List.of("ledger"), Set.of("ledger"));
      if (fence.isValid()) {
        assertThat(TokenGrammar.parseToken(t)).as(t).isEqualTo(fence.token());
      }
      if (TokenGrammar.parseToken(t) <= 0) {
        assertThat(fence.isValid()).as("the agent refuses '" + t + "', so must the fence").isFalse();
      }
    }
    assertThat(TokenGrammar.parseToken("9223372036854775807")).isEqualTo(Long.MAX_VALUE);
    assertThat(TokenGrammar.parseToken("9223372036854775808")).isEqualTo(-1);
    assertThat(TokenGrammar.parseToken("0")).isEqualTo(-1);
    assertThat(TokenGrammar.parseToken(null)).isEqualTo(-1);
  }

  @Test
  void aGrantIsWellFormedExactlyWhenTheFencesAcceptIt() {
    TokenHeaders.Result valid = TokenHeaders.parse(List.of("7"), List.of("ledger"), Set.of("ledger"));
    for (String g : GRANTS) {
      boolean fence = TokenHeaders.grant(valid, List.of(g)).isValid();
      // the fences strip blanks around a header value first; the agent forwards the value as it came
      if (g.strip().equals(g)) {
        assertThat(TokenGrammar.wellFormedGrant(g)).as("'" + g + "'").isEqualTo(fence);
      }
    }
    assertThat(TokenGrammar.MAX_GRANT_LENGTH).isEqualTo(TokenHeaders.MAX_GRANT).isEqualTo(64);
  }

  @Test
  void aLockNameIsOneTo128OfTheLockAlphabet() {
    for (String lock : LOCKS) {
      boolean expected = lock.matches("[A-Za-z0-9._-]{1,128}");
      assertThat(TokenGrammar.validLock(lock)).as("'" + lock + "'").isEqualTo(expected);
    }
    assertThat(TokenGrammar.validLock(null)).isFalse();
  }

  @Test
  void aSignatureHasTheShapeTokenSignatureWrites() throws Exception {
    TokenSignature key = TokenSignature.of("0123456789abcdef0123456789abcdef".getBytes(
        java.nio.charset.StandardCharsets.US_ASCII));
    String signature = key.sign("ledger", 42);
    assertThat(TokenGrammar.wellFormedSignature(signature)).as(signature).isTrue();
    assertThat(TokenGrammar.wellFormedSignature(signature.substring(1))).isFalse();
    assertThat(TokenGrammar.wellFormedSignature(signature.substring(1) + "=")).isFalse();
    assertThat(TokenGrammar.wellFormedSignature(null)).isFalse();
  }

  @Test
  void theKafkaHeaderValueIsTokenLockAndGrantSeparatedBySemicolons() {
    assertThat(KafkaHeaderNames.FENCING).isEqualTo("fencing");
    assertThat(TokenGrammar.kafkaValue(42, "orders", "1a2b")).isEqualTo("42;orders;1a2b");
    assertThat(TokenGrammar.kafkaValue(42, "orders", null)).isEqualTo("42;orders");
    assertThat(TokenGrammar.kafkaValue(Long.MAX_VALUE, "a.b_c-d", "x;y")).isEqualTo("9223372036854775807;a.b_c-d;x;y");
    assertThat(TokenGrammar.kafkaFields("42;orders;1a2b")).containsExactly("42", "orders", "1a2b");
    assertThat(TokenGrammar.kafkaFields("42;orders")).containsExactly("42", "orders", null);
    assertThat(TokenGrammar.kafkaFields("42;orders;x;y")).as("a grant may hold ';': it is last")
        .containsExactly("42", "orders", "x;y");
    assertThat(TokenGrammar.kafkaFields("42;orders;")).containsExactly("42", "orders", "");
    assertThat(TokenGrammar.kafkaFields("42")).containsExactly("42", null, null);
    assertThat(TokenGrammar.kafkaFields(";")).containsExactly("", "", null);
    for (String lock : LOCKS) {
      assertThat(lock.indexOf(TokenGrammar.KAFKA_SEPARATOR) < 0 || !TokenGrammar.validLock(lock)).isTrue();
    }
  }

  @Test
  void whatTheKafkaHeaderCannotCarryIsRefusedWhenWritten() {
    assertThatThrownBy(() -> TokenGrammar.kafkaValue(0, "orders", null)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("token 0");
    assertThatThrownBy(() -> TokenGrammar.kafkaValue(7, "a;b", null)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("lock name 'a;b'").hasMessageContaining("[A-Za-z0-9._-]");
    assertThatThrownBy(() -> TokenGrammar.kafkaValue(7, "orders", "a b"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("grant id 'a b'");
  }

  @Test
  void everyValueTheAgentWritesSplitsBackIntoItsFields() {
    for (String t : TOKENS) {
      long token = TokenGrammar.parseToken(t);
      for (String lock : LOCKS) {
        for (String grant : GRANTS) {
          if (token <= 0 || !TokenGrammar.validLock(lock) || !TokenGrammar.wellFormedGrant(grant)) {
            continue;
          }
          assertThat(TokenGrammar.kafkaFields(TokenGrammar.kafkaValue(token, lock, grant)))
              .containsExactly(Long.toString(token), lock, grant);
        }
      }
    }
  }
}
