package dev.fencing.agent.instrumentation.kafkaclients;

import static dev.fencing.agent.instrumentation.LibraryCheck.invoke;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.KafkaSend;
import dev.fencing.agent.instrumentation.LibraryCheck;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The header writes of {@link SendAdvice} ({@link KafkaSend#tag}) on the real record headers of the oldest (3.9.1)
 * and the latest supported kafka-clients: each header exactly once, replacing what the application set, and
 * read-only headers (a record sent before) refused before anything changed, so the advice tags a copy instead.
 */
class KafkaHeadersTest {
  private static List<String> values(Object headers, String key) throws Exception {
    List<String> values = new ArrayList<>();
    for (Object header : (Iterable<?>) invoke(headers, "headers", key)) {
      values.add(new String((byte[]) invoke(header, "value"), StandardCharsets.UTF_8));
    }
    return values;
  }

  @ParameterizedTest
  @ValueSource(strings = {"oldest", "latest"})
  void aRecordCarriesEachHeaderOnceAndSealedHeadersAreLeftAlone(String end) throws Exception {
    try (URLClassLoader library = LibraryCheck.isolated(LibraryCheck.versionJars("kafka-clients", end))) {
      Object headers = library.loadClass("org.apache.kafka.common.header.internals.RecordHeaders")
          .getConstructor().newInstance();
      invoke(headers, "add", "fencing", "6;orders;old".getBytes(StandardCharsets.US_ASCII));
      invoke(headers, "add", "fencing-token", "6".getBytes(StandardCharsets.US_ASCII));
      invoke(headers, "add", "fencing-lock", "orders".getBytes(StandardCharsets.US_ASCII));
      invoke(headers, "add", "fencing-grant", "old".getBytes(StandardCharsets.US_ASCII));
      invoke(headers, "add", "trace", "t1".getBytes(StandardCharsets.US_ASCII));

      Decision signed = Decision.tag("orders", 7, "c2ln", null);
      KafkaSend.tag(headers, signed);

      assertThat(values(headers, "fencing")).containsExactly("7;orders");
      assertThat(values(headers, "fencing-signature")).containsExactly("c2ln");
      assertThat(values(headers, "fencing-token")).as("the older form is replaced").isEmpty();
      assertThat(values(headers, "fencing-lock")).isEmpty();
      assertThat(values(headers, "fencing-grant")).as("the old grant is not this token's").isEmpty();
      assertThat(values(headers, "trace")).containsExactly("t1");
      Object fencing = invoke(headers, "lastHeader", "fencing");
      assertThat((byte[]) invoke(fencing, "value")).as("each record owns its copy of the value")
          .isNotSameAs(signed.kafkaValue());

      invoke(headers, "setReadOnly");
      assertThatThrownBy(() -> KafkaSend.tag(headers, Decision.tag("orders", 8, null, "1a2b")))
          .isInstanceOf(IllegalStateException.class);
      assertThat(values(headers, "fencing")).containsExactly("7;orders");
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"oldest", "latest"})
  void aRecordWithoutHeadersIsTaggedAndItsSealedHeadersAreLeftEmpty(String end) throws Exception {
    try (URLClassLoader library = LibraryCheck.isolated(LibraryCheck.versionJars("kafka-clients", end))) {
      Class<?> type = library.loadClass("org.apache.kafka.common.header.internals.RecordHeaders");
      Object headers = type.getConstructor().newInstance();

      KafkaSend.tag(headers, Decision.tag("orders", 7, null, "1a2b"));

      assertThat(values(headers, "fencing")).containsExactly("7;orders;1a2b");
      assertThat((Object[]) invoke(headers, "toArray")).as("one header, nothing else").hasSize(1);

      Object sealed = type.getConstructor().newInstance();
      invoke(sealed, "setReadOnly");
      assertThatThrownBy(() -> KafkaSend.tag(sealed, Decision.tag("orders", 8, null, "1a2b")))
          .isInstanceOf(IllegalStateException.class);
      assertThat((Object[]) invoke(sealed, "toArray")).isEmpty();
    }
  }
}
